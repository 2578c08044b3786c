# measure-long.R: the peak memory of a whole training loop of one dense stack, in this R process.
#
# Run it in a fresh R process (validate.R --long does, one process per configuration):
#   Rscript inst/validation/measure-long.R --widths=784,512,512,10 --batch=128 \
#     --optimizer=adam --activation=relu --loss=softmax_cross_entropy --steps=100 \
#     --variant=grads --after=batch_norm+dropout --embed=0 --heads=1 --device=cpu
#     (any may be left out)
# It prints one line, "RESULT,<name>=<value>,...".
#
# The loop is the one ggmlR's autograd vignette writes: a data set of four mini-batches (or
# --samples samples, when more) held in R, shuffled every epoch; each step subsets a mini-batch,
# wraps it with ag_tensor(), runs the forward pass under with_grad_tape(), backward(), the
# optimizer's step and zero_grad(); the loss is read every 10 steps. --after names the layers that
# follow each hidden ag_linear(), joined by "+": batch_norm (ag_batch_norm(width)), dropout
# (ag_dropout(0.3)) and layer_norm (ag_layer_norm(width)), as ggmlR's autograd vignette puts
# batch norm and dropout after a hidden layer, and the others harness.R's after_layers names;
# "none" (the default) adds none. --embed=V puts an
# ag_embedding(V, first width) first: the data are then token indices; --heads is the number of
# heads of an "attention" in --after (ag_multihead_attention(), the batch its sequence).
# Variant "grads" passes backward()'s result to opt$step(grads); variant "field" calls
# backward() for its side effect and opt$step(), which reads each parameter's $grad.
# --device=gpu calls ag_device("gpu") first (resident mode; ggml's CPU backend here, whose
# device pools are host memory) and reads the pools' sizes (.ag_tape_mem()) after the last step:
# pass_pool and persistent_pool (NA on the CPU).
#
# Protocol:
#   1. load ggmlR, warm its code up with three steps of a tiny model of the same kind (with an
#      embedding, of 8 tokens: warm_vocab());
#   2. make the data set (X: input width x 4 batches, Y: output width x 4 batches); with
#      --pad=BYTES keep a raw vector of that many bytes, and with --pad_nodes=K keep K more of
#      R's nodes (one-element vectors), live to the end: the process's past, changed by a few
#      kilobytes (grid_history());
#   3. gc(reset = TRUE), read VmRSS as the baseline and reset VmHWM to it (clear_refs);
#   4. build the ag_sequential() model and the optimizer, run `steps` steps; after steps 3, 20,
#      100 (and 300, 1000 when run so long) read VmHWM: peak_<s> = VmHWM - baseline;
#   5. at the end, gc(full = FALSE) gives R's vector heap: its largest use ("max used", the
#      exact R heap peak since step 3) and the trigger it grew to (trigger_end; a full gc()
#      would first shrink the trigger by a fifth when the heap left live is under 0.3 of it,
#      R's R_VShrinkFrac, as it is after the loop of a model whose steps hold far more than its
#      parameters; a lighter collection leaves it, unless R's schedule makes it a full one);
#      and R's nodes (cons cells): in use and their trigger at the baseline (nodes0,
#      node_trigger0), and their largest use (nodes_max: with R's triggers out of reach, what
#      the run allocated; measure-nodes.R --grid=once);
#      and `collector`, the start-up settings of R's collector set in its environment
#      (R_GC_MEM_GROW, R_VSIZE, ...; harness.R's collector_vars) as NAME:VALUE joined by ";",
#      "none" when none is; `pad` and `pad_nodes`, the bytes and nodes of step 2.
# Linux only (reads /proc/self/status).

here <- local({
  file_arg <- grep("^--file=", commandArgs(FALSE), value = TRUE)
  if (length(file_arg)) dirname(normalizePath(sub("^--file=", "", file_arg[1L]))) else "."
})
source(file.path(here, "harness.R"))
opt <- read_args(list(widths = "64,32,8", batch = "16", optimizer = "adam", activation = "relu",
                      loss = "softmax_cross_entropy", steps = "100", variant = "grads",
                      seed = "1", gcinfo = "false", samples = "0", torture = "false",
                      after = "none", embed = "0",
                      heads = "1", device = "cpu", pad = "0", pad_nodes = "0"))
widths <- as.integer(strsplit(opt$widths, ",", fixed = TRUE)[[1]])
batch <- as.integer(opt$batch)
steps <- as.integer(opt$steps)
stopifnot(length(widths) >= 2L, all(widths >= 1L), batch >= 1L, steps >= 3L,
          opt$optimizer %in% c("adam", "sgd", "sgd_plain"),
          opt$activation %in% c("relu", "sigmoid", "tanh", "softmax", "none"),
          opt$loss %in% c("mse", "cross_entropy", "softmax_cross_entropy"),
          opt$variant %in% c("grads", "field"), opt$device %in% c("cpu", "gpu"))
after <- read_after(opt$after)
embed <- as.integer(opt$embed)
heads <- as.integer(opt$heads)
stopifnot(embed >= 0L, heads >= 1L)

suppressPackageStartupMessages(library(ggmlR))
if (opt$device == "gpu") invisible(capture.output(ag_device("gpu")))
pools <- c(NA_real_, NA_real_)

build <- function(widths, activation, vocab = embed) {
  ag_sequential(build_layers(widths, activation, after, vocab, heads))
}
make_optimizer <- function(model, name) new_optimizer(model$parameters(), name)
loss_fn <- loss_function(opt$loss)
checkpoints <- c(3L, 20L, 100L, 300L, 1000L)
# The vignette's loop, `steps` steps over x and y in mini-batches of `batch`; calls at(s) after
# each step s. Its step stays inline: xb, yb and grads live until the next step reassigns them,
# as in the vignette; a step in a function of its own peaked up to 46% higher.
train <- function(model, optimizer, x, y, batch, steps, at = function(s) NULL) {
  n <- ncol(x)
  per_epoch <- n %/% batch
  s <- 0L
  while (s < steps) {
    perm <- sample(n)
    for (b in seq_len(per_epoch)) {
      idx <- perm[seq((b - 1L) * batch + 1L, b * batch)]
      xb <- ag_tensor(x[, idx, drop = FALSE])
      yb <- y[, idx, drop = FALSE]
      with_grad_tape({
        loss <- loss_fn(model$forward(xb), yb)
      })
      if (opt$variant == "grads") {
        grads <- backward(loss)
        optimizer$step(grads)
      } else {
        backward(loss)
        optimizer$step()
      }
      optimizer$zero_grad()
      s <- s + 1L
      if (s %% 10L == 0L) last_loss <- loss$data[1]
      at(s)
      if (s >= steps) break
    }
  }
  invisible(NULL)
}

# 1. warm-up on a tiny model of the same kind
set.seed(as.integer(opt$seed))
warm_w <- warm_widths(widths, after, heads)
warm_e <- warm_vocab(embed)
warm <- build(warm_w, opt$activation, warm_e)
warm_data <- make_matrices(warm_w, 8L, opt$loss, warm_e)
train(warm, make_optimizer(warm, opt$optimizer), warm_data$x, warm_data$y, 2L, 3L)
rm(warm, warm_data, warm_e)

# 2. the data set: four mini-batches, or --samples of them when more
data <- make_matrices(widths, max(4L * batch, as.integer(opt$samples)), opt$loss, embed)
x <- data$x
y <- data$y
rm(data)
# --pad and --pad_nodes: what the session did before the loop, changed by a few kilobytes (how
# far the run's peak moves with the process's past)
pad <- raw(as.numeric(opt$pad))
pad_nodes <- lapply(seq_len(as.integer(opt$pad_nodes)), function(j) j)

# 3. baseline, and VmHWM reset to it
gc0 <- gc(reset = TRUE)
invisible(gc(reset = TRUE))
heap0 <- gc0["Vcells", "used"] * 8
trigger0 <- gc0["Vcells", "gc trigger"] * 8
baseline <- proc_kb("VmRSS")
reset_ok <- tryCatch({
  cat("5", file = "/proc/self/clear_refs")
  TRUE
}, error = function(e) FALSE, warning = function(w) FALSE)
reset_ok <- reset_ok && (proc_kb("VmHWM") - proc_kb("VmRSS")) < 1024^2

# 4. model, optimizer, the loop
# R's report of each collection goes to a file: the heap in use after every full collection
# (level 2) is the live heap at that point, which decides how far R raises its trigger.
gc_log <- tempfile()
gc_con <- file(gc_log, open = "wt")
sink(gc_con, type = "message")
invisible(gcinfo(TRUE))
peaks <- stats::setNames(rep(NA_real_, length(checkpoints)), paste0("peak_", checkpoints))
t0 <- proc.time()[["elapsed"]]
gc_t0 <- sum(gc.time()[1:2])
model <- build(widths, opt$activation)
optimizer <- make_optimizer(model, opt$optimizer)
# With --torture=true the loop runs one step more, under gctorture(): R collects before every
# allocation, so "max used" over that step is the largest heap live at any point of a step of
# the loop (plus the allocation being made); the heap after a collection just before it is what
# a step leaves live. The figures of the run itself are read before it.
torture <- identical(opt$torture, "true")
live_between <- live_step_max <- NA_real_
gc1 <- NULL
train(model, optimizer, x, y, batch, steps + torture, at = function(s) {
  if (s %in% checkpoints) peaks[[paste0("peak_", s)]] <<- proc_kb("VmHWM") - baseline
  if (s == steps) {
    peak <<- proc_kb("VmHWM") - baseline
    elapsed <<- proc.time()[["elapsed"]] - t0
    gc_seconds <<- sum(gc.time()[1:2]) - gc_t0
    invisible(gcinfo(FALSE))
    gc1 <<- gc(full = FALSE)
    if (opt$device == "gpu") {
      tm <- get(".ag_tape_mem", asNamespace("ggmlR"))()
      pools <<- c(tm$buffer_bytes, tm$p_buffer_bytes)
    }
    if (torture) {
      live_between <<- gc(reset = TRUE)["Vcells", "used"] * 8
      gctorture(TRUE)
    }
  }
  if (torture && s == steps + 1L) {
    gctorture(FALSE)
    live_step_max <<- gc()["Vcells", "max used"] * 8
  }
})
sink(type = "message")
close(gc_con)
gc_lines <- readLines(gc_log)
level <- as.integer(sub(".*\\(level ([0-9])\\).*", "\\1", grep("^Garbage collection", gc_lines,
                                                             value = TRUE)))
vec_used <- as.numeric(sub("^([0-9.]+) Mbytes of vectors.*", "\\1",
                           grep("Mbytes of vectors used", gc_lines, value = TRUE))) * 2^20
live_full <- if (any(level == 2L)) max(vec_used[level == 2L]) else NA_real_
n_gc <- length(level)
n_full <- sum(level == 2L)
if (identical(opt$gcinfo, "true")) writeLines(gc_lines, stderr())

# 5. the end: the R heap's largest use and its trigger
params <- count_params(widths, after, embed)
# R's start-up settings of its collector this process runs with (harness.R, collector_vars)
settings <- Sys.getenv(collector_vars, unset = NA, names = TRUE)
settings <- settings[!is.na(settings)]
collector <- if (length(settings)) {
  paste0(names(settings), ":", settings, collapse = ";")
} else {
  "none"
}
peak_fields <- paste(sprintf("%s=%.0f", names(peaks), peaks), collapse = ",")
cat(sprintf(paste0("RESULT,widths=%s,batch=%d,optimizer=%s,activation=%s,loss=%s,device=%s,",
                   "variant=%s,steps=%d,params=%.0f,baseline=%.0f,peak=%.0f,%s,heap0=%.0f,",
                   "trigger0=%.0f,heap_max=%.0f,trigger_end=%.0f,reset_ok=%s,seconds=%.2f,",
                   "gc_seconds=%.2f,live_full=%.0f,n_gc=%d,n_full=%d,live_between=%.0f,",
                   "live_step_max=%.0f,after=%s,embed=%d,heads=%d,nodes0=%.0f,",
                   "node_trigger0=%.0f,nodes_max=%.0f,pass_pool=%.0f,persistent_pool=%.0f,",
                   "collector=%s,pad=%.0f,pad_nodes=%d,samples=%d\n"),
            paste(widths, collapse = "-"), batch, opt$optimizer, opt$activation, opt$loss,
            opt$device, opt$variant, steps, params, baseline, peak, peak_fields, heap0, trigger0,
            gc1["Vcells", "max used"] * 8, gc1["Vcells", "gc trigger"] * 8, reset_ok, elapsed,
            gc_seconds, live_full, n_gc, n_full, live_between, live_step_max,
            paste(c(after, if (!length(after)) "none"), collapse = "+"), embed, heads,
            gc0["Ncells", "used"], gc0["Ncells", "gc trigger"], gc1["Ncells", "max used"],
            pools[1L], pools[2L], collector, length(pad), length(pad_nodes), ncol(x)))
