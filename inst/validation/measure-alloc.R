# measure-alloc.R: the bytes R allocates in one training step of a model, from Rprofmem().
#
#   Rscript inst/validation/measure-alloc.R --widths=128,256,10 --batch=64 --after=attention \
#     --heads=4 --optimizer=adam --loss=softmax_cross_entropy [--device=gpu]
#   Rscript inst/validation/measure-alloc.R --grid=attention_fit_gpu \
#     --out=measurements-attention-alloc-gpu.csv      # every run of a grid, as a table
#
# Builds the model as measure-long.R does (harness.R's build_layers()), runs two steps of the
# vignette's loop, then one more under Rprofmem(), and prints one line, "RESULT,...,alloc=<bytes>":
# the sum of the sizes Rprofmem() reports for that step (every vector R allocates, small ones
# by their page). The unit rules' `alloc_step` counts these bytes; fit-layers.R fits the
# attention's from the difference of runs with and without it. Needs R built with memory
# profiling (R_MEMORY_PROFILING, as Debian's R is); Linux.

here <- local({
  file_arg <- grep("^--file=", commandArgs(FALSE), value = TRUE)
  if (length(file_arg)) dirname(normalizePath(sub("^--file=", "", file_arg[1L]))) else "."
})
source(file.path(here, "harness.R"))
opt <- read_args(list(widths = "64,32,8", batch = "16", optimizer = "adam", activation = "relu",
                      loss = "softmax_cross_entropy", after = "none", embed = "0", heads = "1",
                      seed = "1", device = "cpu", grid = "", out = ""))

# --grid: each configuration of a grid of grids.R (flash_fit and checkpoint on the CPU;
# attention_fit_gpu, flash_fit_gpu, attention_causal_gpu: the attentions in resident mode) in a
# fresh R process, its RESULT fields written to the table --out.
if (nzchar(opt$grid)) {
  source(file.path(here, "grids.R"))
  g <- switch(opt$grid, flash_fit = cbind(grid_flash_fit(), device = "cpu"),
              checkpoint = cbind(grid_checkpoint(), heads = 1, device = "cpu"),
              attention_fit_gpu = grid_attention_fit_gpu(),
              flash_fit_gpu = grid_flash_fit_gpu(),
              attention_causal_gpu = grid_attention_causal_gpu(),
              stop(paste("`--grid` must be flash_fit, checkpoint, attention_fit_gpu,",
                         "flash_fit_gpu or attention_causal_gpu"),
                   call. = FALSE))
  rscript <- file.path(R.home("bin"), "Rscript")
  rows <- lapply(seq_len(nrow(g)), function(i) {
    r <- g[i, ]
    a <- script_args(file.path(here, "measure-alloc.R"), r,
                     c("widths", "batch", "optimizer", "activation", "loss", "after", "heads",
                       "device"))
    v <- result_fields(system2(rscript, a, stdout = TRUE, stderr = TRUE))
    if (is.null(v)) stop("measure-alloc.R failed: ", paste(a[-1L], collapse = " "))
    message(sprintf("%d/%d %s b%d %s h%s: %s bytes", i, nrow(g), r$widths, r$batch, r$after,
                    r$heads, v[["alloc"]]))
    cbind(r[c("widths", "batch", "optimizer", "after", "heads", "loss", "activation",
              "device")], alloc = as.numeric(v[["alloc"]]),
          params = count_params(as.integer(strsplit(r$widths, "-", fixed = TRUE)[[1]]),
                                read_after(r$after)))
  })
  utils::write.csv(do.call(rbind, rows), opt$out, row.names = FALSE)
  quit(status = 0)
}
widths <- as.integer(strsplit(opt$widths, ",", fixed = TRUE)[[1]])
batch <- as.integer(opt$batch)
after <- read_after(opt$after)
embed <- as.integer(opt$embed)
heads <- as.integer(opt$heads)
suppressPackageStartupMessages(library(ggmlR))
if (opt$device == "gpu") invisible(capture.output(ag_device("gpu")))
set.seed(as.integer(opt$seed))
model <- ag_sequential(build_layers(widths, opt$activation, after, embed, heads))
optimizer <- new_optimizer(model$parameters(), opt$optimizer)
loss_fn <- loss_function(opt$loss)
data <- make_matrices(widths, batch, opt$loss, embed)
step <- function() {
  xb <- ag_tensor(data$x)
  with_grad_tape({
    loss <- loss_fn(model$forward(xb), data$y)
  })
  grads <- backward(loss)
  optimizer$step(grads)
  optimizer$zero_grad()
  invisible(NULL)
}
step()
step()
log <- tempfile()
utils::Rprofmem(log, threshold = 0)
step()
utils::Rprofmem(NULL)
lines <- readLines(log)
sizes <- as.numeric(sub("^([0-9]+) ?:.*$", "\\1", grep("^[0-9]+ ?:", lines, value = TRUE)))
pages <- sum(grepl("^new page", lines)) * 2000
cat(sprintf(paste0("RESULT,widths=%s,batch=%d,optimizer=%s,after=%s,heads=%d,embed=%d,",
                   "device=%s,alloc=%.0f\n"),
            paste(widths, collapse = "-"), batch, opt$optimizer, opt$after, heads, embed,
            opt$device, sum(sizes) + pages))
