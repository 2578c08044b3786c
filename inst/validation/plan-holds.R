# plan-holds.R: does a real run at the batch ag_max_batch_size() plans stay within its budget?
#
#   Rscript inst/validation/plan-holds.R [--margin=0.1] [--markdown] [--layers] [--rows=9,10]
#   Rscript inst/validation/plan-holds.R --collector[=ignore] [--markdown]
#   Rscript inst/validation/plan-holds.R --plan-only [--layers] ...   # the batches alone
#
# For each model and budget below (none of them in the long fit grid), asks
# ag_max_batch_size() for the batch, with the run's data set (8192 samples of input and target
# held in R) as `data_size`, then runs 100 steps of the vignette's loop at that batch in a fresh R
# process (measure-long.R) and compares the peak with the budget. The goal (issue 15): every
# peak within its budget, and at least 70% of it used. Exit status 1 when it is missed. With
# --layers the models have batch norm, dropout or layer norm after each hidden layer (issue 16;
# none of them in the layers' fit grid; and an embedding before a dense stack), read from the
# ggmlR model by ag_model_spec(). --rows runs those rows of the table only (by number).
# --plan-only asks for the batches and runs nothing (the real peaks are NA, the exit status 0):
# what docs-hold.R checks the guide's plan tables against. With
# --collector each run's R process starts with one of R's collector settings in its environment
# (R_GC_MEM_GROW, R_VSIZE), and agmem plans with the same settings set; --collector=ignore plans
# as if R's defaults held (what agmem answered before it read them) and runs with the settings.
# Needs ggmlR and agmem installed; Linux.

here <- local({
  file_arg <- grep("^--file=", commandArgs(FALSE), value = TRUE)
  if (length(file_arg)) dirname(normalizePath(sub("^--file=", "", file_arg[1L]))) else "."
})
args <- commandArgs(trailingOnly = TRUE)
margin_arg <- c(grep("^--margin=", args, value = TRUE), "--margin=")[1L]
margin <- as.numeric(sub("^--margin=", "", margin_arg))
margin <- if (is.na(margin)) formals(agmem::ag_max_batch_size)$margin else margin
markdown <- "--markdown" %in% args
plan_only <- "--plan-only" %in% args
samples <- 8192L
source(file.path(here, "harness.R"))

plans <- data.frame(
  widths = c("784-512-512-10", "784-512-512-10", "784-1024-1024-10", "256-1024-1024-1024-10",
             "512-256-10", "1024-2048-512-10", "128-512-512-128", "784-256-256-10"),
  optimizer = c("adam", "adam", "sgd", "sgd", "sgd_plain", "adam", "adam", "sgd"),
  activation = c("relu", "relu", "relu", "tanh", "relu", "tanh", "relu", "relu"),
  loss = c("softmax_cross_entropy", "softmax_cross_entropy", "softmax_cross_entropy", "mse",
           "softmax_cross_entropy", "softmax_cross_entropy", "mse", "softmax_cross_entropy"),
  budget = c("256 MiB", "160 MiB", "512 MiB", "384 MiB", "192 MiB", "640 MiB", "256 MiB",
             "128 MiB"),
  after = "none", embed = 0, heads = 1, stringsAsFactors = FALSE
)
collector_arg <- sub("^--collector=?", "", grep("^--collector", args, value = TRUE))
collector_mode <- if (length(collector_arg) == 0L) "" else if (nzchar(collector_arg[[1L]])) {
  collector_arg[[1L]]
} else {
  "read"
}
if (!collector_mode %in% c("", "read", "ignore")) {
  stop("`--collector` must be given alone or as --collector=ignore", call. = FALSE)
}
plans$collector <- "none"
if (nzchar(collector_mode)) {
  # Models of the table above with R's collector settings that move their peak most: growth of
  # 40% (R_GC_MEM_GROW=3), of 640 000 bytes (0), and a first trigger of 256 MiB.
  plans <- data.frame(
    widths = c("784-512-512-10", "784-1024-1024-10", "512-256-10", "784-512-512-10"),
    optimizer = c("adam", "sgd", "sgd_plain", "adam"),
    activation = "relu",
    loss = "softmax_cross_entropy",
    budget = c("384 MiB", "768 MiB", "192 MiB", "384 MiB"),
    after = "none", embed = 0, heads = 1,
    collector = c("R_GC_MEM_GROW:3", "R_GC_MEM_GROW:3", "R_GC_MEM_GROW:0", "R_VSIZE:256M"),
    stringsAsFactors = FALSE
  )
}
if ("--layers" %in% args) {
  plans <- data.frame(
    widths = c("784-512-256-10", "784-512-256-10", "256-1024-1024-10", "512-512-512-10"),
    optimizer = c("adam", "adam", "sgd", "sgd_plain"),
    activation = c("relu", "relu", "relu", "tanh"),
    loss = c("softmax_cross_entropy", "softmax_cross_entropy", "mse", "softmax_cross_entropy"),
    budget = c("256 MiB", "512 MiB", "384 MiB", "192 MiB"),
    after = c("batch_norm+dropout", "batch_norm+dropout", "layer_norm", "dropout"),
    embed = 0, heads = 1, collector = "none", stringsAsFactors = FALSE
  )
  # And an embedding of 5000 tokens before a dense stack, and a small language model: an
  # embedding of 2000 tokens, a layer, attention of 4 heads and layer norm over the sequence
  # (the batch), and a layer back to the 2000 tokens; and that model with its attention
  # dropout on (0.1), and with a causal mask (a block of its own calls the attention with
  # causal_mask = TRUE, described by ag_causal_attention()); and the same with a block around
  # ggmlR's fused ag_flash_attention(causal = TRUE) in place of the attention (described by its
  # layers and ag_flash_attention_call()).
  plans <- rbind(plans, data.frame(
    widths = c("256-512-10", rep("256-256-2000", 4L)), optimizer = "adam",
    activation = "relu", loss = "softmax_cross_entropy",
    budget = c("256 MiB", rep("384 MiB", 4L)),
    after = c("none", "attention+layer_norm", "attention_dropout+layer_norm",
              "attention_causal+layer_norm", "flash_causal+layer_norm"),
    embed = c(5000, rep(2000, 4L)), heads = c(1, rep(4, 4L)), collector = "none",
    stringsAsFactors = FALSE
  ))
}

rows_arg <- sub("^--rows=", "", grep("^--rows=", args, value = TRUE))
if (length(rows_arg)) {
  keep <- as.integer(strsplit(rows_arg[[1L]], ",", fixed = TRUE)[[1L]])
  if (anyNA(keep) || any(keep < 1L | keep > nrow(plans)))
    stop("`--rows` must be row numbers from 1 to ", nrow(plans), call. = FALSE)
  plans <- plans[keep, ]
}
rows <- lapply(seq_len(nrow(plans)), function(i) {
  p <- plans[i, ]
  spec <- run_spec(p$widths, p$activation, p$loss, p$after, p$embed, p$heads)
  data_size <- data_bytes(p$widths, samples, p$embed)
  plan <- function() {
    suppressWarnings(agmem::ag_max_batch_size(spec, p$budget, p$optimizer, margin = margin,
                                              data_size = data_size))
  }
  b <- if (collector_mode == "read") with_collector(p$collector, plan()) else plan()
  fields <- if (!plan_only) run_long(p, list(batch = b, steps = 100, samples = samples))
  peak <- if (is.null(fields)) NA_real_ else fields$peak_100
  budget <- agmem:::parse_budget(p$budget)
  message(sprintf("%s %s %s %s: batch %d, peak %.1f MiB of %.0f MiB", p$widths, p$after,
                  p$optimizer, p$budget, as.integer(b), peak / 2^20, budget / 2^20))
  data.frame(p, batch = b, peak = peak, used = peak / budget, stringsAsFactors = FALSE)
})
r <- do.call(rbind, rows)
r$model <- ifelse(r$embed > 0, paste0("embedding(", r$embed, ") ", r$widths), r$widths)
r$after <- mapply(after_label, r$after, r$heads, USE.NAMES = FALSE)
# the runs with R's collector settings: the model's label names them, as validate-long.R's does
r$model <- mapply(function(m, x) run_label(m, collector = x), r$model, r$collector,
                  USE.NAMES = FALSE)
if (markdown) {
  cat("| model (widths) | after each hidden layer | optimizer | activation | loss | budget | ",
      "planned batch | real peak (MiB) | share of the budget |\n",
      "|---|---|---|---|---|---:|---:|---:|---:|\n", sep = "")
  cat(sprintf("| %s | %s | %s | %s | %s | %s | %d | %.1f | %.0f%% |\n", gsub("-", " ", r$model),
              gsub("+", ", ", r$after, fixed = TRUE), r$optimizer, r$activation, r$loss,
              r$budget, as.integer(r$batch), r$peak / 2^20, 100 * r$used), sep = "")
} else {
  print(transform(r, peak = round(peak / 2^20, 1), used = round(used, 3)), row.names = FALSE)
}
if (plan_only) quit(status = 0L)
held <- !is.na(r$used) & r$used <= 1
cat(sprintf("\nmargin %.2f: %d of %d plans held (peak within the budget); %d used at least 70%%\n",
            margin, sum(held), nrow(r), sum(held & r$used >= 0.7)))
quit(status = if (all(held & r$used >= 0.7)) 0 else 1)
