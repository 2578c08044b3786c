# Validation of ag_measure_training_memory(): for each model, the line fitted on three batch
# sizes predicts the peak at four times the largest of them, where it is then measured. The
# models are written as a user would write them, including one that ag_training_memory() does not
# describe (an embedding, multi-head attention and layer norm). Prints predicted against measured
# with the relative error, and exits with status 1 unless every one is within 10%.
#
# Run: Rscript measure-step.R  (needs agmem, ggmlR and callr; Linux; about six minutes on two
# shared cores, and 2.5 GB of memory). Each batch size runs in a fresh R process, three steps.

for (pkg in c("agmem", "ggmlR", "callr")) {
  if (!requireNamespace(pkg, quietly = TRUE)) {
    message("measure-step.R needs the package ", pkg, ".")
    quit(status = 2L)
  }
}
library(agmem)
options(width = 120)

tolerance <- 0.10

# The steps run in the measuring R process, where ggmlR is attached: its functions are unqualified.
# nolint start: object_usage_linter.

# A dense stack of `layers` ag_linear() layers of `width` units (relu between them), trained with
# mse on random data: the harness's models.
dense_step <- function(batch_size, width, layers, optimizer) {
  make <- function(i) {
    if (i < layers) ag_linear(width, width, activation = "relu") else ag_linear(width, width)
  }
  model <- do.call(ag_sequential, lapply(seq_len(layers), make))
  opt <- if (optimizer == "adam") {
    optimizer_adam(model$parameters())
  } else {
    optimizer_sgd(model$parameters(), lr = 0.01, momentum = 0.9)
  }
  x <- ag_tensor(matrix(stats::rnorm(width * batch_size), width, batch_size))
  y <- ag_tensor(matrix(stats::rnorm(width * batch_size), width, batch_size))
  with_grad_tape(loss <- ag_mse_loss(model$forward(x), y))
  opt$step(backward(loss))
  opt$zero_grad()
}

# A sequence model that ag_training_memory() does not cover: token embedding, multi-head
# self-attention, layer norm, mean over the sequence and a linear head, with adam. ggmlR's
# attention layer takes one sequence ([d, len]), so the batch is a loop over sequences whose
# losses add up on one tape.
attention_step <- function(batch_size, vocab, d, heads, len) {
  emb <- ag_embedding(vocab, d)
  mha <- ag_multihead_attention(d, heads)
  norm <- ag_layer_norm(d)
  head <- ag_linear(d, 1L)
  opt <- optimizer_adam(c(emb$parameters(), mha$parameters(), norm$parameters(), head$params()))
  idx <- matrix(sample.int(vocab, batch_size * len, replace = TRUE) - 1L, len, batch_size)
  y <- matrix(stats::rnorm(batch_size), 1L, batch_size)
  with_grad_tape({
    loss <- NULL
    for (i in seq_len(batch_size)) {
      h <- norm$forward(mha$forward(emb$forward(idx[, i])))
      pred <- head$forward(ag_mean(h, dim = 1L, keepdim = TRUE))
      one <- ag_mse_loss(pred, y[, i, drop = FALSE])
      loss <- if (is.null(loss)) one else ag_add(loss, one)
    }
  })
  opt$step(backward(loss))
  opt$zero_grad()
}
# nolint end

cases <- list(
  list(name = "dense 3 x 256, adam", step = dense_step, device = "cpu",
       batch_size = c(2048L, 4096L, 8192L), args = list(width = 256L, layers = 3L,
                                                        optimizer = "adam")),
  list(name = "dense 2 x 512, sgd", step = dense_step, device = "cpu",
       batch_size = c(1024L, 2048L, 4096L), args = list(width = 512L, layers = 2L,
                                                        optimizer = "sgd")),
  list(name = "dense 4 x 1024, adam", step = dense_step, device = "gpu",
       batch_size = c(32L, 64L, 128L), args = list(width = 1024L, layers = 4L,
                                                   optimizer = "adam")),
  list(name = "embedding + attention", step = attention_step, device = "cpu",
       batch_size = c(8L, 16L, 32L), args = list(vocab = 1000L, d = 128L, heads = 4L,
                                                 len = 64L))
)

rows <- list()
for (case in cases) {
  message("== ", case$name, ", device ", case$device)
  batches <- c(case$batch_size, 4L * max(case$batch_size))
  # With four batch sizes, the check of the result is this validation: a line fitted on the
  # first three, tested at the fourth (four times the largest of the three).
  m <- do.call(ag_measure_training_memory,
               c(list(case$step, batch_size = batches, device = case$device), case$args))
  print(m)
  ck <- m$check
  if (case$device == "gpu") {
    ck <- ck[ck$where == "device", ]
  }
  rows[[length(rows) + 1L]] <- data.frame(
    model = case$name, device = case$device, where = ck$where,
    fitted_on = paste(case$batch_size, collapse = ", "), at = ck$batch_size,
    predicted_MiB = round(ck$predicted / 2^20, 1), measured_MiB = round(ck$measured / 2^20, 1),
    error_pct = round(100 * ck$relative_error, 1), stringsAsFactors = FALSE
  )
}
table <- do.call(rbind, rows)
table$ok <- abs(table$error_pct) <= 100 * tolerance
cat("\nPredicted peak at 4x the largest measured batch size, against a measurement there\n")
cat(sprintf("(ggmlR %s, %s, %s)\n", as.character(utils::packageVersion("ggmlR")),
            R.version.string, utils::osVersion))
print(table, row.names = FALSE)
if (!all(table$ok)) {
  cat(sprintf("FAIL: %d of %d outside %.0f%%\n", sum(!table$ok), nrow(table), 100 * tolerance))
  quit(status = 1L)
}
cat(sprintf("OK: all %d within %.0f%%\n", nrow(table), 100 * tolerance))
