# measure-one.R: the peak memory of three training steps of one dense stack, in this R process.
#
# Run it in a fresh R process (validate.R does, one process per configuration):
#   Rscript inst/validation/measure-one.R --widths=256,128,10 --batch=64 \
#     --optimizer=adam --activation=relu --loss=mse --device=cpu --after=batch_norm+dropout
#     (any of them may be left out; --after and --embed as in measure-long.R: the layers after
#     each hidden ag_linear(), an ag_embedding() first)
# It prints one line, "RESULT,<name>=<value>,...", with the measured peak and pool sizes.
#
# Protocol (one configuration):
#   1. load ggmlR (and, for device "gpu", call ag_device("gpu")), then warm its code up with
#      three steps of a tiny model of the same activation, loss and optimizer (with an
#      embedding, of 8 tokens: warm_vocab());
#   2. create the data X [input width x batch] and Y [output width x batch] (data_x, data_y);
#   3. gc(), then read VmRSS from /proc/self/status as the baseline, and reset VmHWM to it by
#      writing "5" to /proc/self/clear_refs (checked: VmHWM must drop to within 1 MB of VmRSS);
#   4. build the layers (ag_linear()) and the optimizer;
#   5. run three full steps: the forward pass under with_grad_tape(), backward(), step(),
#      zero_grad(); in device "gpu" read the pool sizes (.ag_tape_mem()) after each step();
#   6. peak = VmHWM - baseline; the pools are the largest seen over the three steps.
# Linux only (reads /proc/self/status).

here <- local({
  file_arg <- grep("^--file=", commandArgs(FALSE), value = TRUE)
  if (length(file_arg)) dirname(normalizePath(sub("^--file=", "", file_arg[1L]))) else "."
})
source(file.path(here, "harness.R"))
opt <- read_args(list(widths = "64,32,8", batch = "16", optimizer = "adam", activation = "relu",
                      loss = "mse", device = "cpu", seed = "1", steps = "3",
                      after = "none", embed = "0",
                      heads = "1"))
widths <- as.integer(strsplit(opt$widths, ",", fixed = TRUE)[[1]])
batch <- as.integer(opt$batch)
steps <- as.integer(opt$steps)
stopifnot(length(widths) >= 2L, all(widths >= 1L), batch >= 1L,
          opt$optimizer %in% c("adam", "sgd", "sgd_plain"),
          opt$activation %in% c("relu", "sigmoid", "tanh", "softmax", "none"),
          opt$loss %in% c("mse", "cross_entropy", "softmax_cross_entropy"),
          opt$device %in% c("cpu", "gpu"))
after <- read_after(opt$after)
embed <- as.integer(opt$embed)
heads <- as.integer(opt$heads)
stopifnot(embed >= 0L, heads >= 1L)

suppressPackageStartupMessages(library(ggmlR))
tape_mem <- get(".ag_tape_mem", asNamespace("ggmlR"))
if (opt$device == "gpu") invisible(capture.output(ag_device("gpu")))

build <- function(widths, activation, vocab = embed) {
  build_layers(widths, activation, after, vocab, heads)
}
make_optimizer <- function(layers, name) {
  params <- unlist(lapply(layers, function(l) {
    if (is.function(l$parameters)) unname(l$parameters()) else l$params()
  }), recursive = FALSE)
  new_optimizer(params, name)
}
loss_fn <- loss_function(opt$loss)
make_data <- function(widths, batch, loss, vocab = embed) {
  d <- make_matrices(widths, batch, loss, vocab)
  list(x = ag_tensor(d$x), y = ag_tensor(d$y))
}
pools <- c(pass = 0, persistent = 0)
train <- function(layers, optimizer, data_x, data_y, steps, read_pools = FALSE) {
  for (s in seq_len(steps)) {
    with_grad_tape({
      h <- data_x
      for (l in layers) h <- l$forward(h)
      loss <- loss_fn(h, data_y)
    })
    grads <- backward(loss)
    optimizer$step(grads)
    if (read_pools) {
      m <- tape_mem()
      pools[["pass"]] <<- max(pools[["pass"]], m$buffer_bytes)
      pools[["persistent"]] <<- max(pools[["persistent"]], m$p_buffer_bytes)
    }
    optimizer$zero_grad()
  }
  invisible(NULL)
}

# 1. warm-up on a tiny model of the same kind
set.seed(as.integer(opt$seed))
warm_w <- warm_widths(widths, after, heads)
warm_e <- warm_vocab(embed)
warm <- build(warm_w, opt$activation, warm_e)
warm_data <- make_data(warm_w, 2L, opt$loss, warm_e)
train(warm, make_optimizer(warm, opt$optimizer), warm_data$x, warm_data$y, 3L)
rm(warm, warm_data, warm_e)

# 2. the data
data <- make_data(widths, batch, opt$loss)
data_x <- data$x
data_y <- data$y
rm(data)

# 3. baseline, and VmHWM reset to it
invisible(gc())
invisible(gc())
baseline <- proc_kb("VmRSS")
reset_ok <- tryCatch({
  cat("5", file = "/proc/self/clear_refs")
  TRUE
}, error = function(e) FALSE, warning = function(w) FALSE)
hwm0 <- proc_kb("VmHWM")
rss0 <- proc_kb("VmRSS")
reset_ok <- reset_ok && (hwm0 - rss0) < 1024^2

# 4-5. model, optimizer, three steps
t0 <- proc.time()[["elapsed"]]
layers <- build(widths, opt$activation)
optimizer <- make_optimizer(layers, opt$optimizer)
train(layers, optimizer, data_x, data_y, steps, read_pools = opt$device == "gpu")
elapsed <- proc.time()[["elapsed"]] - t0

# 6. the peak
hwm <- proc_kb("VmHWM")
rss_end <- proc_kb("VmRSS")
params <- count_params(widths, after, embed)
cat(sprintf(paste0("RESULT,widths=%s,batch=%d,optimizer=%s,activation=%s,loss=%s,device=%s,",
                   "params=%.0f,baseline=%.0f,hwm=%.0f,peak=%.0f,rss_end=%.0f,",
                   "pass_pool=%.0f,persistent_pool=%.0f,reset_ok=%s,seconds=%.2f,after=%s,",
                   "embed=%d,heads=%d\n"),
            paste(widths, collapse = "-"), batch, opt$optimizer, opt$activation, opt$loss,
            opt$device, params, baseline, hwm, hwm - baseline, rss_end,
            pools[["pass"]], pools[["persistent"]], reset_ok, elapsed,
            paste(c(after, if (!length(after)) "none"), collapse = "+"), embed, heads))
