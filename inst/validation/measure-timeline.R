# measure-timeline.R: the live R heap at the marks of one training step, in this R process.
#
#   Rscript inst/validation/measure-timeline.R --widths=128,512,10 --batch=256 \
#     --optimizer=adam --loss=softmax_cross_entropy --after=checkpoint
#     (--after as measure-long.R takes it; --activation, --embed and --heads too)
#
# Builds the model as measure-long.R does, runs three steps of its loop, then a fourth with a full
# collection (gc()) at each mark: the step's start, the forward's end, backward()'s start and end,
# ag_checkpoint()'s replay's start and end (when the model has one; ggmlR's
# .ag_checkpoint_replay(), traced), the optimizer's step and zero_grad(). Prints, for each mark,
# the live heap over the heap after the third step: what the step holds there, exactly (gc()'s
# "used" after a full collection), not where R's own collections happen to fall. Its use: the
# live heap at R's full collections, which sets R's trigger (design/whole-run.md), is a sample
# of these points, and a layer that moves the step's largest point (a checkpoint) changes which.

here <- local({
  file_arg <- grep("^--file=", commandArgs(FALSE), value = TRUE)
  if (length(file_arg)) dirname(normalizePath(sub("^--file=", "", file_arg[1L]))) else "."
})
source(file.path(here, "harness.R"))
opt <- read_args(list(widths = "128,512,10", batch = "256", optimizer = "adam",
                      activation = "relu", loss = "softmax_cross_entropy", after = "none",
                      embed = "0", heads = "1", seed = "1"))
widths <- as.integer(strsplit(opt$widths, ",", fixed = TRUE)[[1]])
batch <- as.integer(opt$batch)
after <- read_after(opt$after)
embed <- as.integer(opt$embed)
heads <- as.integer(opt$heads)
stopifnot(length(widths) >= 2L, batch >= 1L)

suppressPackageStartupMessages(library(ggmlR))
set.seed(as.integer(opt$seed))
model <- ggmlR::ag_sequential(build_layers(widths, opt$activation, after, embed, heads))
optimizer <- new_optimizer(model$parameters(), opt$optimizer)
loss_fn <- loss_function(opt$loss)
data <- make_matrices(widths, 4L * batch, opt$loss, embed)

marks <- list()
marking <- FALSE
live <- function() gc()["Vcells", "used"] * 8
mark <- function(at) {
  if (marking) marks[[length(marks) + 1L]] <<- data.frame(at = at, live = live())
}
ns <- asNamespace("ggmlR")
invisible(suppressMessages({
  trace("backward", where = ns, tracer = quote(mark("backward: start")),
        exit = quote(mark("backward: end")), print = FALSE)
  trace(".ag_checkpoint_replay", where = ns, tracer = quote(mark("checkpoint replay: start")),
        exit = quote(mark("checkpoint replay: end")), print = FALSE)
}))

step <- function() {
  idx <- sample(ncol(data$x), batch)
  xb <- ag_tensor(data$x[, idx, drop = FALSE])
  yb <- data$y[, idx, drop = FALSE]
  mark("step: start")
  with_grad_tape({
    loss <- loss_fn(model$forward(xb), yb)
  })
  mark("forward: end")
  grads <- ggmlR::backward(loss)
  optimizer$step(grads)
  mark("optimizer step: end")
  optimizer$zero_grad()
  mark("zero_grad: end")
}
for (s in 1:3) step()
base <- live()
marking <- TRUE
step()
m <- do.call(rbind, marks)
cat(sprintf("%s, batch %d, %s, after %s: the live R heap at each mark of step 4,\n",
            paste(widths, collapse = "-"), batch, opt$optimizer, opt$after),
    "MB over the heap after step 3\n", sep = "")
for (i in seq_len(nrow(m))) cat(sprintf("  %-26s %8.2f\n", m$at[i], (m$live[i] - base) / 1e6))
