# measure-nodes.R: the R cons cells (nodes) a step of ggmlR's training loop allocates, and how
# many R lets a run allocate before it collects them (issue 15).
#
#   Rscript inst/validation/measure-nodes.R --widths=16,8,4 --batch=2 --optimizer=sgd \
#     --activation=relu --loss=mse --variant=grads --after=none     # one run, this process
#   Rscript inst/validation/measure-nodes.R --grid=nodes --out=measurements-nodes.csv
#   Rscript inst/validation/measure-nodes.R --grid=once --out=measurements-nodes-once.csv
#   Rscript inst/validation/measure-nodes.R --fit=inst/validation/measurements-nodes.csv \
#     --once=inst/validation/measurements-nodes-once.csv
#   Rscript inst/validation/measure-nodes.R --grid=nodes --device=gpu --only=dropout \
#     --out=measurements-nodes-dropout-gpu.csv   # a dropout alone in resident mode, fitted by
#   ... --fit=inst/validation/measurements-nodes-gpu.csv \
#     --layers=inst/validation/measurements-nodes-dropout-gpu.csv   # over the dense figures
#   Rscript inst/validation/measure-nodes.R --grid=nodes --only=attention \
#     --out=measurements-nodes-layers.csv   # (and --only=flash, eval, checkpoint, embed: the
#   layers the first table does not have, one table of them all; fitted with --layers;
#   --only=segments: checkpointed segments of 2 to 4 layers, measurements-nodes-segments.csv,
#   fitted with --segments=inst/validation/measurements-nodes-segments.csv)
#   Rscript inst/validation/measure-nodes.R --grid=short --out=measurements-nodes-short.csv
#   Rscript inst/validation/measure-nodes.R --short=inst/validation/measurements-nodes-short.csv
#   (short runs of small models with those layers, judged against agmem: grid_short() below)
#   (--device=gpu: the same in resident mode, ag_device("gpu"), on the models whose backward is
#   the graph's, the dense stacks and a dropout alone: measurements-nodes-gpu.csv,
#   measurements-nodes-once-gpu.csv; --device=gpu --only=host: the host path there, a batch
#   norm or a layer norm with each optimizer, measurements-nodes-host-gpu.csv)
#
# Every object R makes has a node: environments, closures, promises and pairlists are nodes
# alone, and each vector has one for its header. R counts them apart from the vector heap and
# collects when their count reaches its node trigger (R_NSize, src/main/memory.c). A step of the
# loop allocates them by op, not by unit, so a small model's run can end before its vector heap
# reaches its trigger and still grow by what its nodes take.
#
# One run: the state measure-long.R starts its loop in (ggmlR loaded and warmed up on a tiny
# model of the same kind, the data set of four mini-batches made), the model and optimizer, three
# steps, then gc(reset = TRUE) and `steps` steps more (10 by default) with gcinfo() counting the
# collections. With R's triggers set out of reach (the environment variables R_NSIZE and
# R_VSIZE, which --grid sets) nothing is collected, so gc()'s "max used" less the use at the start
# is what those steps allocated: nodes_step, the nodes a step allocates, and vbytes_step, the
# vector heap's bytes. node_trigger0 and nodes0 are R's node trigger and the nodes in use before
# the model is built (where measure-long.R takes its baseline): under R's default triggers (the
# grid's runs with triggers "default") their difference is the headroom a run has before R first
# collects its nodes. nodes_once is what building the model and optimizer and their first three
# steps allocated over three steps of the loop (gc()'s "max used" from before the model to after
# those steps); measure-long.R's loop allocates more once (--grid=once, below).
#
# --grid=nodes runs grid_nodes() below, each configuration in a fresh R process with the
# triggers raised, and three of them again with R's defaults. --fit reads such a table and fits,
# by least squares on the runs that allocated without a collection, the nodes per step of
# src/rules.c: a fixed part (the loop, the input and the optimizer's step, with ag_mse_loss()),
# per op of the model (as agmem_model_spec() lists them), per op and sample where the count grows
# with the batch, and per parameter tensor for optimizer_sgd() with momentum and
# optimizer_adam() over optimizer_sgd() without. Ops that always come together are fitted as one
# (the first named carries them). It prints the headroom too, and with --once the nodes
# measure-long.R's runs allocate once (--grid=once). Linux or not: reads no /proc.

here <- local({
  file_arg <- grep("^--file=", commandArgs(FALSE), value = TRUE)
  if (length(file_arg)) dirname(normalizePath(sub("^--file=", "", file_arg[1L]))) else "."
})
source(file.path(here, "harness.R"))
opt <- read_args(list(widths = "16,8,4", batch = "2", optimizer = "sgd", activation = "relu",
                      loss = "mse", variant = "grads", steps = "10", after = "none",
                      grid = "", out = "", fit = "", once = "", device = "cpu",
                      only = "", layers = "", heads = "1", embed = "0", short = "",
                      segments = ""))

# The configurations: every optimizer and loss on stacks of 1, 2, 3 and 5 layers; the other
# activations; the losses at two output widths and two batches; the layers of issue 16 after the
# hidden layers at two batches; the `field` variant; one wider model at three batches.
grid_nodes <- function() {
  row <- function(widths, batch = 2, optimizer = "sgd", activation = "relu", loss = "mse",
                  variant = "grads", after = "none") {
    data.frame(widths = widths, batch = batch, optimizer = optimizer, activation = activation,
               loss = loss, variant = variant, after = after, heads = 1, embed = 0,
               stringsAsFactors = FALSE)
  }
  depths <- c("16-4", "16-8-4", "16-8-8-4", "16-8-8-8-8-4")
  g <- list()
  for (o in c("adam", "sgd", "sgd_plain")) {
    for (l in c("mse", "softmax_cross_entropy", "cross_entropy")) {
      g[[length(g) + 1L]] <- row(depths, optimizer = o, loss = l)
    }
  }
  for (a in c("tanh", "sigmoid", "softmax", "none")) {
    g[[length(g) + 1L]] <- row(depths[c(2, 4)], activation = a)
  }
  for (l in c("mse", "softmax_cross_entropy", "cross_entropy")) {
    g[[length(g) + 1L]] <- row(rep(c("16-4", "16-100"), each = 2L), batch = c(2, 512, 2, 512),
                               loss = l)
  }
  for (a in c("batch_norm", "dropout", "layer_norm", "attention")) {
    g[[length(g) + 1L]] <- row(rep(depths[c(2, 4)], each = 2L), batch = c(2, 64, 2, 64),
                               after = a)
  }
  g[[length(g) + 1L]] <- row(depths[c(2, 4)], variant = "field")
  g[[length(g) + 1L]] <- row(depths[c(2, 4)], variant = "field", optimizer = "adam")
  g[[length(g) + 1L]] <- row("256-128-10", batch = c(1, 64, 512), optimizer = "adam",
                             loss = "softmax_cross_entropy")
  do.call(rbind, g)
}

# R's node and vector triggers out of reach (the environment of a child process): nothing is
# collected in the steps a run counts.
raised_triggers <- c("R_NSIZE=40000000", "R_VSIZE=16000000000")

# One run in this process: the RESULT line described above.
measure_one <- function(opt) {
  widths <- as.integer(strsplit(opt$widths, ",", fixed = TRUE)[[1]])
  batch <- as.integer(opt$batch)
  steps <- as.integer(opt$steps)
  after <- read_after(opt$after)
  suppressPackageStartupMessages(library(ggmlR))
  if (opt$device == "gpu") invisible(capture.output(ag_device("gpu")))
  loss_fn <- loss_function(opt$loss)
  # The step of measure-long.R's loop, copied, not shared: a step in a function of its own
  # changes what measure-long.R measures (the mini-batch's tensor made inside the tape, `grads`
  # freed before the next step; 512-10 at batch 2048 peaked at 88.6 MB against 60.8 MB).
  one_step <- function(model, optimizer, x, y, idx) {
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
    invisible(NULL)
  }
  set.seed(1L)
  heads <- as.integer(opt$heads)
  embed <- as.integer(opt$embed)
  warm_w <- warm_widths(widths, after, heads)
  warm <- ag_sequential(build_layers(warm_w, opt$activation, after, warm_vocab(embed), heads))
  warm_opt <- new_optimizer(warm$parameters(), opt$optimizer)
  warm_data <- make_matrices(warm_w, 8L, opt$loss, warm_vocab(embed))
  for (i in 1:3) one_step(warm, warm_opt, warm_data$x, warm_data$y, 1:2)
  rm(warm, warm_opt, warm_data)
  data <- make_matrices(widths, 4L * batch, opt$loss, embed)
  # measure-long.R's baseline: two collections, then the model
  invisible(gc(reset = TRUE))
  start <- gc(reset = TRUE)
  model <- ag_sequential(build_layers(widths, opt$activation, after, embed, heads))
  optimizer <- new_optimizer(model$parameters(), opt$optimizer)
  for (i in 1:3) one_step(model, optimizer, data$x, data$y, sample(4L * batch, batch))
  first <- gc()
  g0 <- gc(reset = TRUE)
  log <- tempfile()
  con <- file(log, open = "wt")
  sink(con, type = "message")
  invisible(gcinfo(TRUE))
  for (i in seq_len(steps)) one_step(model, optimizer, data$x, data$y, sample(4L * batch, batch))
  invisible(gcinfo(FALSE))
  sink(type = "message")
  close(con)
  g1 <- gc()
  n_gc <- length(grep("^Garbage collection", readLines(log)))
  nodes_step <- (g1["Ncells", "max used"] - g0["Ncells", "used"]) / steps
  # What building the model and its first three steps allocated over three steps of the loop.
  nodes_once <- first["Ncells", "max used"] - start["Ncells", "used"] - 3 * nodes_step
  cat(sprintf(paste0("RESULT,nodes_step=%.1f,nodes_once=%.0f,vbytes_step=%.1f,n_gc=%d,",
                     "node_trigger0=%.0f,nodes0=%.0f\n"),
              nodes_step, nodes_once,
              (g1["Vcells", "max used"] - g0["Vcells", "used"]) * 8 / steps, n_gc,
              start["Ncells", "gc trigger"], start["Ncells", "used"]))
}

# Each configuration of grid_nodes() in a fresh R process, with R's triggers raised, and the
# first three again with R's defaults; the table, one row per run.
measure_grid <- function(out, device = "cpu", only = "") {
  g <- grid_nodes()
  att <- g[g$after == "attention", ]
  norms <- g[g$after %in% c("batch_norm", "layer_norm") & g$batch == 2, ]
  # The attention's rows (two stacks at batches 2 and 64) with another layer or head count.
  one <- function(layer, heads) {
    r <- att
    r$after <- layer
    r$heads <- heads
    r
  }
  # On device "gpu", the ops whose backward is the graph's (design/layers.md): the dense stacks
  # and a dropout alone.
  if (device == "gpu") g <- g[g$after %in% c("none", "dropout"), ]
  # On either device, --only=attention: the attention's runs at 1, 2 and 4 heads, with its
  # causal mask and its dropout at 1 and 4; --only=flash: a flash block of 1 and 4 heads, and of
  # 4 with its causal mask. On device "cpu", --only=eval: a batch norm in eval mode;
  # --only=checkpoint: two ag_linear(w, w, "relu") run under ag_checkpoint() (the same two
  # plainly are the dense ops of the first table); --only=segments: segments of two, three and
  # four such layers, plainly and under ag_checkpoint() (fitted by fit_segments(): a
  # checkpoint's nodes grow with its segment's layers); --only=embed: an ag_embedding() of 64
  # tokens first.
  sets <- list(
    attention = function() rbind(one("attention", 1), one("attention", 2), one("attention", 4),
                                 one("attention_causal", 1), one("attention_causal", 4),
                                 one("attention_dropout", 1), one("attention_dropout", 4)),
    flash = function() rbind(one("flash", 1), one("flash", 4), one("flash_causal", 4)),
    eval = function() one("batch_norm_eval", 1),
    checkpoint = function() one("checkpoint", 1),
    segments = function() do.call(rbind, lapply(
      c("dense2", "checkpoint", "dense3", "checkpoint3", "dense4", "checkpoint4"), one, 1)),
    embed = function() {
      r <- one("none", 1)
      r$embed <- 64
      r
    }
  )
  if (only %in% names(sets)) g <- sets[[only]]()
  # --only=host, on device "gpu": the host path in resident mode (a batch norm or a layer norm
  # after each hidden layer sends backward() to the host), with each optimizer: what its step
  # makes per parameter tensor (fit-layers.R).
  if (device == "gpu" && identical(only, "host")) {
    g <- do.call(rbind, lapply(c("adam", "sgd", "sgd_plain"), function(o) {
      norms$optimizer <- o
      norms
    }))
  }
  runs <- rbind(cbind(g, triggers = "raised", stringsAsFactors = FALSE),
                cbind(g[1:3, ], triggers = "default", stringsAsFactors = FALSE))
  # --only: the runs with that layer alone (fitted over a first table, --layers).
  if (identical(only, "host")) {
    runs <- runs[runs$triggers == "raised", ]
  } else if (nzchar(only) && !only %in% names(sets)) {
    runs <- runs[startsWith(runs$after, only), ]
  }
  rscript <- file.path(R.home("bin"), "Rscript")
  rows <- lapply(seq_len(nrow(runs)), function(i) {
    r <- runs[i, ]
    env <- if (r$triggers == "raised") raised_triggers else character(0)
    a <- script_args(file.path(here, "measure-nodes.R"), r,
                     c("widths", "batch", "optimizer", "activation", "loss", "variant", "after",
                       "heads", "embed"), list(device = device))
    res <- suppressWarnings(system2(rscript, a, stdout = TRUE, stderr = TRUE, env = env))
    fields <- result_fields(res)
    if (is.null(fields)) {
      message("failed: ", paste(a[-1], collapse = " "), "\n", paste(utils::tail(res, 5),
                                                                    collapse = "\n"))
      return(NULL)
    }
    vals <- stats::setNames(as.numeric(fields), names(fields))
    message(sprintf("%-14s b%-4d %-9s %-8s %-22s %-6s %-11s %-8s %8.0f nodes a step",
                    r$widths, r$batch, r$optimizer, r$activation, r$loss, r$variant, r$after,
                    r$triggers, vals[["nodes_step"]]))
    cbind(r, device = device, as.data.frame(as.list(vals)), stringsAsFactors = FALSE)
  })
  tab <- do.call(rbind, rows)
  if (nzchar(out)) utils::write.csv(tab, out, row.names = FALSE)
  invisible(tab)
}

# What a run of measure-long.R's loop allocates once, besides its steps: building the model and
# optimizer, and R's byte-code compiler on the first calls of the loop's own functions (a loop of
# a user's own compiles too). Each configuration runs measure-long.R for 50 and for 100 steps
# with R's triggers out of reach: nodes_once = 2 * a50 - a100 and nodes_step = (a100 - a50) / 50,
# where a is nodes_max - nodes0. The table, one row per configuration.
grid_once <- function() {
  data.frame(widths = c("128-10", "64-10", "16-8-8-8-8-4", "256-128-10", "16-8-4", "16-8-4"),
             batch = c(2, 128, 2, 64, 2, 2),
             optimizer = c("sgd", "sgd", "adam", "adam", "sgd", "sgd"),
             loss = c("mse", "softmax_cross_entropy", "softmax_cross_entropy",
                      "softmax_cross_entropy", "mse", "mse"),
             after = c("none", "none", "none", "none", "batch_norm", "attention"),
             stringsAsFactors = FALSE)
}

measure_once <- function(out, device = "cpu") {
  g <- grid_once()
  if (device == "gpu") g <- g[g$after == "none", ]
  rscript <- file.path(R.home("bin"), "Rscript")
  allocated <- function(r, steps) {
    a <- script_args(file.path(here, "measure-long.R"), r,
                     c("widths", "batch", "optimizer", "loss", "after"),
                     list(steps = steps, device = device))
    res <- suppressWarnings(system2(rscript, a, stdout = TRUE, stderr = TRUE,
                                    env = raised_triggers))
    v <- result_fields(res)
    if (is.null(v)) stop("measure-long.R failed: ", paste(utils::tail(res, 5), collapse = "\n"))
    if (as.numeric(v[["n_gc"]]) != 0) stop("R collected during ", r$widths)
    as.numeric(v[["nodes_max"]]) - as.numeric(v[["nodes0"]])
  }
  rows <- lapply(seq_len(nrow(g)), function(i) {
    a50 <- allocated(g[i, ], 50L)
    a100 <- allocated(g[i, ], 100L)
    r <- cbind(g[i, ], device = device, nodes_step = (a100 - a50) / 50,
               nodes_once = 2 * a50 - a100)
    message(sprintf("%-14s b%-4d %-5s %-22s %-11s %8.0f a step, %8.0f once", r$widths,
                    r$batch, r$optimizer, r$loss, r$after, r$nodes_step, r$nodes_once))
    r
  })
  tab <- do.call(rbind, rows)
  if (nzchar(out)) utils::write.csv(tab, out, row.names = FALSE)
  invisible(tab)
}

# The runs of a table `tab` of measure_grid() that allocated without a collection, each with the
# ops of its spec and its count of parameter tensors.
counted_runs <- function(tab) {
  counted <- tab[tab$triggers == "raised" & tab$n_gc == 0 & tab$variant == "grads", ]
  counted$ops <- lapply(seq_len(nrow(counted)), function(i) {
    spec <- run_spec(counted$widths[i], counted$activation[i], counted$loss[i],
                     counted$after[i], field_of(counted, "embed", i, 0),
                     field_of(counted, "heads", i, 1))
    list(ops = agmem:::spec_ops(spec)$ops, tensors = length(spec$shapes))
  })
  counted
}

# The node rules from a table of measure_grid(): prints each figure and the fit's residuals.
# With `layers`, a table of runs with a layer the first table does not have (measure_grid()'s
# --only): that layer's nodes per op, by least squares on what its runs made over the
# first table's figures, which it leaves as they are.
fit_nodes <- function(path, once = "", layers = "") {
  tab <- utils::read.csv(path, stringsAsFactors = FALSE)
  counted <- counted_runs(tab)
  ops <- counted$ops
  all_ops <- unique(unlist(lapply(ops, `[[`, "ops")))
  # ag_mse_loss() is the fixed part's; every run has one loss.
  op_cols <- setdiff(all_ops, "loss_mse")
  per_sample <- intersect(c("loss_softmax_cross_entropy", "attention"), all_ops)
  design <- function(run) {
    o <- run$ops[[1L]]
    n <- vapply(op_cols, function(k) sum(o$ops == k), 0)
    s <- vapply(per_sample, function(k) sum(o$ops == k) * run$batch, 0)
    t <- o$tensors
    c(node_step = 1, n, stats::setNames(s, paste0(per_sample, " per sample")),
      "per tensor, sgd" = t * (run$optimizer == "sgd"),
      "per tensor, adam" = t * (run$optimizer == "adam"))
  }
  x <- t(vapply(seq_len(nrow(counted)), function(i) design(counted[i, ]),
                numeric(1L + length(op_cols) + length(per_sample) + 2L)))
  fit <- stats::lm.fit(x, counted$nodes_step)
  coef <- fit$coefficients
  cat("Nodes a step, by least squares on", nrow(counted), "runs without a collection:\n")
  for (k in names(coef)) {
    cat(sprintf("  %-40s %s\n", k, if (is.na(coef[[k]])) "always with another op: 0" else
      sprintf("%.0f", coef[[k]])))
  }
  res <- counted$nodes_step - x %*% ifelse(is.na(coef), 0, coef)
  cat(sprintf("residuals: %.1f to %.1f nodes a step\n", min(res), max(res)))
  head <- tab[tab$triggers == "default", ]
  cat(sprintf("headroom at the loop's start (R's node trigger less the nodes in use): %s\n",
              paste(sprintf("%.0f (%.0f - %.0f)", head$node_trigger0 - head$nodes0,
                            head$node_trigger0, head$nodes0), collapse = ", ")))
  if (nzchar(layers)) {
    lr <- counted_runs(utils::read.csv(layers, stringsAsFactors = FALSE))
    known <- ifelse(is.na(coef), 0, coef)
    over <- lr$nodes_step - vapply(seq_len(nrow(lr)), function(i) {
      sum(design(lr[i, ]) * known)
    }, 0)
    # The new ops by least squares on what their runs made over the figures above (ops that
    # always come together fitted as one, the first named carrying them; an op whose count
    # grows with the batch, per op and sample too).
    new_ops <- setdiff(unique(unlist(lapply(lr$ops, `[[`, "ops"))), all_ops)
    nx <- t(vapply(seq_len(nrow(lr)), function(i) {
      o <- lr$ops[[i]]$ops
      n <- vapply(new_ops, function(k) sum(o == k), 0)
      c(n, stats::setNames(n * lr$batch[i], paste0(new_ops, " per sample")))
    }, numeric(2L * length(new_ops))))
    nfit <- stats::lm.fit(nx, over)
    for (k in names(nfit$coefficients)) {
      v <- nfit$coefficients[[k]]
      cat(sprintf("  %-40s %s\n", k, if (is.na(v)) "always with another op: 0" else
        sprintf("%.0f", v)))
    }
    cat(sprintf("  (over the figures above, %d runs: %s a step more; residuals %.0f to %.0f)\n",
                nrow(lr), paste(sprintf("%.0f", over), collapse = ", "),
                min(nfit$residuals), max(nfit$residuals)))
  }
  if (nzchar(once)) {
    o <- utils::read.csv(once, stringsAsFactors = FALSE)
    cat(sprintf("allocated once by measure-long.R's runs: %s; median %.0f\n",
                paste(sprintf("%.0f", o$nodes_once), collapse = ", "), stats::median(o$nodes_once)))
  }
  invisible(coef)
}

# A checkpoint's nodes by the length of its segment, from a table of --only=segments: for each
# model and segment length, the nodes a step under ag_checkpoint() over the same layers run
# plainly, per segment (one after each hidden layer), and the line in the segment's layers
# fitted to them by least squares. src/rules.c takes its value at one layer for "checkpoint"
# and its slope for each "checkpoint_layer". Returns the line's coefficients.
fit_segments <- function(path) {
  m <- utils::read.csv(path, stringsAsFactors = FALSE)
  m <- stats::aggregate(nodes_step ~ widths + after, m, mean)
  m$layers <- segment_layers[m$after]
  m$segments <- lengths(strsplit(m$widths, "-", fixed = TRUE)) - 2
  ck <- m[!grepl("^dense", m$after), ]
  plain <- m[grepl("^dense", m$after), ]
  at <- match(paste(ck$widths, ck$layers), paste(plain$widths, plain$layers))
  ck$more <- (ck$nodes_step - plain$nodes_step[at]) / ck$segments
  line <- stats::lm(more ~ layers, ck)
  for (i in seq_len(nrow(ck))) {
    cat(sprintf("%-14s segments of %d layers (%d of them): %7.1f nodes a step more each\n",
                ck$widths[i], ck$layers[i], ck$segments[i], ck$more[i]))
  }
  b <- stats::coef(line)
  cat(sprintf(paste0("line: %.1f + %.1f per layer (residuals %.0f to %.0f): %.0f for a segment ",
                     "with its first layer, %.0f for each more\n"),
              b[[1]], b[[2]], min(stats::residuals(line)), max(stats::residuals(line)),
              b[[1]] + b[[2]], b[[2]]))
  invisible(b)
}

# Short runs of small models with the layers whose nodes --only measured: there the nodes' pages
# are much of the peak, as a run of 10 or 30 steps can end before R first collects them
# (model.c, node_growth()); a long run's nodes reach R's node trigger in every model with such a
# layer, so the long grids do not see these figures. Each configuration, at batch 8 with Adam,
# runs measure-long.R for 10 and for 30 steps in a fresh R process under R's defaults; the table,
# one row per run, its peak the RSS growth over the baseline. Nothing is fitted on them.
grid_short <- function() {
  g <- data.frame(
    widths = c("16-8-4", "16-8-8-8-8-4", "64-64-10", "64-64-64-64-10", "32-32-10", "32-32-32-10",
               "32-32-10", "32-32-32-32-10", "16-8-4", "16-8-8-8-8-4", "64-32-10", "64-32-32-10"),
    after = c("attention", "attention", "checkpoint", "checkpoint", "flash_causal", "flash",
              "batch_norm_eval", "batch_norm_eval", "attention_causal", "attention_dropout",
              "none", "none"),
    heads = c(4, 2, 1, 1, 4, 2, 1, 1, 4, 4, 1, 1), embed = c(rep(0, 10), 500, 200),
    batch = 8, optimizer = "adam", activation = "relu", loss = "mse", variant = "grads",
    stringsAsFactors = FALSE)
  rbind(cbind(g, steps = 10), cbind(g, steps = 30))
}

# Runs each configuration of grid_short() in a fresh R process (measure-long.R, R's defaults);
# returns the table, one row per run with its peak and count of collections, and writes it to
# `out` when given. A run that fails is left out, with a message.
measure_short <- function(out) {
  g <- grid_short()
  rows <- lapply(seq_len(nrow(g)), function(i) {
    v <- run_long(g[i, ], list(steps = g$steps[i]))
    if (is.null(v)) return(NULL)
    r <- cbind(g[i, ], peak = v$peak, n_gc = v$n_gc)
    message(sprintf("%-14s %-17s %d heads, embedding %3.0f, %2.0f steps: %6.2f MiB, %d collections",
                    r$widths, r$after, r$heads, r$embed, r$steps, r$peak / 2^20, r$n_gc))
    r
  })
  tab <- do.call(rbind, rows)
  if (nzchar(out)) utils::write.csv(tab, out, row.names = FALSE)
  invisible(tab)
}

# agmem's host_peak for each run of a table of measure_short() (judge_runs(): its steps, and the
# data set of four mini-batches as data_size), against the measured peak: prints the table and
# the share within max(15%, 8 MB).
judge_short <- function(path) {
  m <- utils::read.csv(path, stringsAsFactors = FALSE)
  # judge_runs() judges the peak at step 100; a short run's is its peak at its last step.
  m$peak_100 <- m$peak
  m <- judge_runs(m)
  cat(sprintf("%-14s %-17s %5s %5s %5s %9s %9s %5s\n", "widths", "after", "heads", "embed",
              "steps", "measured", "agmem", "a/m"))
  for (i in seq_len(nrow(m))) {
    cat(sprintf("%-14s %-17s %5d %5d %5d %9.2f %9.2f %5.2f%s\n", m$widths[i], m$after[i],
                as.integer(m$heads[i]), as.integer(m$embed[i]), as.integer(m$steps[i]),
                m$peak[i] / 2^20, m$agmem[i] / 2^20, m$agmem[i] / m$peak[i],
                if (m$under15[i]) "  under" else if (!m$within[i]) "  *" else ""))
  }
  cat(sprintf("(MiB) %d runs: %d within max(15%%, 8 MB), %d under-predicted by more than 15%%\n",
              nrow(m), sum(m$within), sum(m$under15)))
}

if (nzchar(opt$fit)) {
  fit_nodes(opt$fit, opt$once, opt$layers)
} else if (nzchar(opt$segments)) {
  fit_segments(opt$segments)
} else if (nzchar(opt$short)) {
  judge_short(opt$short)
} else if (identical(opt$grid, "short")) {
  measure_short(opt$out)
} else if (identical(opt$grid, "nodes")) {
  measure_grid(opt$out, opt$device, opt$only)
} else if (identical(opt$grid, "once")) {
  measure_once(opt$out, opt$device)
} else {
  measure_one(opt)
}
