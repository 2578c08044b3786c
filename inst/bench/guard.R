# What ag_within_budget() costs and what peak it yields: a training loop as users write it
# (shuffled mini-batches, forward under with_grad_tape(), backward(), the optimizer's step() and
# zero_grad(), the loss read every 10 steps), run uncapped and then under budgets, each in a
# fresh R process. Prints, per run, the seconds of the loop, the peak RSS growth over the
# process before the model existed (VmHWM less the baseline, reset through
# /proc/self/clear_refs), R's collections, and how the run ended.
#
# Run with agmem and ggmlR installed, on Linux:  Rscript inst/bench/guard.R
# Environment: AGMEM_GUARD_STEPS (default 100), AGMEM_GUARD_BATCH (default 256).

steps <- as.integer(Sys.getenv("AGMEM_GUARD_STEPS", "100"))
batch <- as.integer(Sys.getenv("AGMEM_GUARD_BATCH", "256"))
widths <- c(784L, 512L, 512L, 10L)

# One run in this process: `budget` NULL for none. Prints one line.
run_one <- function(budget) {
  suppressPackageStartupMessages({
    library(agmem)
    library(ggmlR)
  })
  kib <- function(key) {
    st <- readLines("/proc/self/status")
    as.numeric(sub("^[^0-9]*([0-9]+).*$", "\\1", st[startsWith(st, key)])) * 1024
  }
  set.seed(1)
  n <- 4096L
  x_all <- matrix(runif(widths[[1L]] * n), widths[[1L]], n)
  y_all <- matrix(0, widths[[4L]], n)
  y_all[cbind(sample.int(widths[[4L]], n, TRUE), seq_len(n))] <- 1
  invisible(gc())
  writeLines("5", "/proc/self/clear_refs")
  base <- kib("VmRSS:")
  model <- ag_sequential(ag_linear(widths[[1L]], widths[[2L]], activation = "relu"),
                         ag_linear(widths[[2L]], widths[[3L]], activation = "relu"),
                         ag_linear(widths[[3L]], widths[[4L]]))
  opt <- optimizer_adam(model$parameters(), lr = 1e-3)
  loop <- function() {
    for (s in seq_len(steps)) {
      idx <- sample.int(n, batch)
      xb <- ag_tensor(x_all[, idx, drop = FALSE])
      yb <- ag_tensor(y_all[, idx, drop = FALSE])
      with_grad_tape(loss <- ag_softmax_cross_entropy_loss(model$forward(xb), yb))
      grads <- backward(loss)
      opt$step(grads)
      opt$zero_grad()
      if (s %% 10L == 0L) invisible(loss$data)
    }
  }
  gcs <- gc.time()
  t0 <- proc.time()[["elapsed"]]
  ended <- tryCatch(
    {
      if (is.null(budget)) loop() else ag_within_budget(loop(), budget)
      "completed"
    },
    agmem_error_budget = function(e) "stopped at its budget (agmem_error_budget)",
    error = function(e) paste("error:", conditionMessage(e))
  )
  seconds <- proc.time()[["elapsed"]] - t0
  cat(sprintf("%-10s %8.1f s  peak %8.1f MiB  gc time %5.2f s  %s\n",
              if (is.null(budget)) "uncapped" else budget, seconds,
              (kib("VmHWM:") - base) / 2^20, (gc.time() - gcs)[[1L]], ended))
}

args <- commandArgs(trailingOnly = TRUE)
if (length(args) == 1L) {
  run_one(if (args[[1L]] == "none") NULL else args[[1L]])
} else {
  cat(sprintf("784-512-512-10, adam, batch %d, %d steps; each run in a fresh R process\n",
              batch, steps))
  spec <- agmem::ag_dense_stack(widths, loss = "softmax_cross_entropy")
  predicted <- agmem::ag_training_memory(spec, batch, quiet = TRUE, steps = steps)$host_peak
  cat(sprintf("ag_training_memory() host_peak: %.1f MiB\n", predicted / 2^20))
  me <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
  for (budget in c("none", "512 MiB", "256 MiB", "160 MiB", "96 MiB")) {
    system2(file.path(R.home("bin"), "Rscript"), c(me, shQuote(budget)))
  }
}
