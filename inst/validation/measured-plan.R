# measured-plan.R: does the measured path plan a batch whose run fits? (issue 15)
#
#   Rscript inst/validation/measured-plan.R
#
# Measures the real peak of a 784-512-512-10 Adam loop (the vignette's loop, a data set of four
# mini-batches) at batch 128, then asks ag_measure_training_memory() to search for that peak as
# the budget, starting from its default batch sizes, and prints the plan the measurement gives:
# the goal is within 15% of 128, and not above it. Needs ggmlR, processx and agmem; Linux.

step <- function(batch_size) {
  model <- ag_sequential(ag_linear(784L, 512L, activation = "relu"),
                         ag_linear(512L, 512L, activation = "relu"), ag_linear(512L, 10L))
  opt <- optimizer_adam(model$parameters())
  n <- 4L * batch_size
  x <- matrix(stats::rnorm(784 * n), 784)
  y <- matrix(0, 10, n)
  y[cbind(sample.int(10, n, TRUE), seq_len(n))] <- 1
  function() {
    idx <- sample(n, batch_size)
    with_grad_tape(loss <- ag_softmax_cross_entropy_loss(
      model$forward(ag_tensor(x[, idx, drop = FALSE])), y[, idx, drop = FALSE]))
    opt$step(backward(loss))
    opt$zero_grad()
  }
}
started <- proc.time()[["elapsed"]]
# The real peak of batch 128 (a measurement takes two batch sizes at least).
at_128 <- agmem::ag_measure_training_memory(step, c(128L, 129L), quiet = TRUE)
peak_128 <- at_128$measurements$host_peak[[1L]]
cat(sprintf("real peak of the run at batch 128: %.2f MiB\n", peak_128 / 2^20))
m <- agmem::ag_measure_training_memory(step, budget = peak_128, quiet = TRUE)
print(m)
b <- agmem::ag_max_batch_size(m, peak_128)
cat(sprintf("planned for that budget: %d (%.1f%% of 128); %.0f s in all\n", as.integer(b),
            100 * b / 128, proc.time()[["elapsed"]] - started))
quit(status = if (b <= 128 && b >= 128 / 1.15) 0 else 1)
