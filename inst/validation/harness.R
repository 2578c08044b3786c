# harness.R: what the validation scripts share (measure-one.R, measure-long.R, measure-alloc.R,
# measure-nodes.R, measure-timeline.R, validate.R, validate-long.R, plan-holds.R, fit-layers.R);
# each sources it.

# The script's arguments, --name=value, over the defaults in the list `opt` (strings); stops on
# an argument it does not know.
read_args <- function(opt) {
  for (a in commandArgs(trailingOnly = TRUE)) {
    kv <- regmatches(a, regexec("^--([a-z_]+)=(.*)$", a))[[1]]
    if (length(kv) != 3L || !kv[2] %in% names(opt))
      stop("unknown argument: ", a, call. = FALSE)
    opt[[kv[2]]] <- kv[3]
  }
  opt
}

# A field of /proc/self/status (VmRSS, VmHWM), in bytes.
proc_kb <- function(field) {
  st <- readLines("/proc/self/status")
  line <- grep(paste0("^", field, ":"), st, value = TRUE)
  as.numeric(sub("^[^0-9]*([0-9]+).*$", "\\1", line)) * 1024
}

# Data of n samples for a stack of `widths` trained with `loss`: x (input width x n, normal) and
# y (output width x n: normal for mse, one-hot columns of random classes otherwise). With
# `embed` (a vocabulary size) the model starts with an embedding: x is then 1 x n token indices
# (integers from 0 to embed - 1), as ag_embedding() takes them.
make_matrices <- function(widths, n, loss, embed = 0L) {
  n_in <- widths[1L]
  n_out <- widths[length(widths)]
  x <- if (embed > 0L) {
    matrix(sample.int(embed, n, replace = TRUE) - 1L, 1L, n)
  } else {
    matrix(stats::rnorm(n_in * n), n_in, n)
  }
  y <- if (loss == "mse") {
    matrix(stats::rnorm(n_out * n), n_out, n)
  } else {
    y <- matrix(0, n_out, n)
    y[cbind(sample.int(n_out, n, replace = TRUE), seq_len(n))] <- 1
    y
  }
  list(x = x, y = y)
}

# The layers --after may name, each a function of the width w of the hidden layer it follows
# and the attention's heads: "batch_norm" (ag_batch_norm()), "batch_norm_eval" (the same in eval
# mode, ag_eval(): its running statistics in place of the batch's), "dropout" (ag_dropout(0.3)),
# "layer_norm" (ag_layer_norm()) and "attention" (ag_multihead_attention() of `heads` heads,
# whose sequence is the batch; "attention_dropout", the same with its attention dropout at 0.1;
# "attention_causal", the same called with causal_mask = TRUE by a module of its own, as a
# GPT-style block calls it: ag_sequential() never does; agmem reads it by
# ag_causal_attention()). Every attention's name begins with "attention". "flash" is a block of
# its own around ggmlR's fused ag_flash_attention() of `heads` heads (its sequence the batch),
# as ggmlR's documentation suggests writing one: Q, K and V by three ag_linear(w, w), the call,
# and an ag_linear(w, w) after it; "flash_causal", the same with causal = TRUE. "dense2" is two
# ag_linear(w, w, "relu") in an ag_sequential(); "checkpoint" the same two run under
# ag_checkpoint() by a module of its own, described to agmem by ag_checkpoint_segment();
# "dense3", "checkpoint3", "dense4" and "checkpoint4" the same with three and four layers.
after_layers <- list(
  batch_norm = function(w, heads) ggmlR::ag_batch_norm(w),
  batch_norm_eval = function(w, heads) ggmlR::ag_eval(ggmlR::ag_batch_norm(w)),
  dropout = function(w, heads) ggmlR::ag_dropout(0.3),
  layer_norm = function(w, heads) ggmlR::ag_layer_norm(w),
  attention = function(w, heads) ggmlR::ag_multihead_attention(w, heads),
  attention_dropout = function(w, heads) ggmlR::ag_multihead_attention(w, heads, dropout = 0.1),
  attention_causal = function(w, heads) causal_module(ggmlR::ag_multihead_attention(w, heads)),
  flash = function(w, heads) flash_module(w, heads, causal = FALSE),
  flash_causal = function(w, heads) flash_module(w, heads, causal = TRUE),
  dense2 = function(w, heads) dense_k(w, 2L),
  checkpoint = function(w, heads) checkpoint_module(dense_k(w, 2L)),
  dense3 = function(w, heads) dense_k(w, 3L),
  checkpoint3 = function(w, heads) checkpoint_module(dense_k(w, 3L)),
  dense4 = function(w, heads) dense_k(w, 4L),
  checkpoint4 = function(w, heads) checkpoint_module(dense_k(w, 4L))
)

# `k` ag_linear(w, w, "relu") in an ag_sequential().
dense_k <- function(w, k) {
  do.call(ggmlR::ag_sequential,
          lapply(seq_len(k), function(i) ggmlR::ag_linear(w, w, activation = "relu")))
}

# A module of its own that runs the ag_sequential() `seg` under ag_checkpoint() (its activations
# not kept, the segment run again in the backward); described as a user describes it,
# ag_checkpoint_segment(seg).
checkpoint_module <- function(seg) {
  module <- new.env(parent = emptyenv())
  module$describe <- function() list(agmem::ag_checkpoint_segment(seg))
  module$forward <- function(x) ggmlR::ag_checkpoint(function(h) seg$forward(h), x)
  module$parameters <- function() seg$parameters()
  module
}

# The layers of a dense stack of `widths` for ggmlR (in forward order): an ag_linear() per
# pair of widths, with `activation` on the hidden ones ("none": none), each hidden one followed
# by the layers of after_layers that `after` names. With `embed` (a vocabulary size), an
# ag_embedding(embed, widths[1]) comes first, so the stack's input is its output.
build_layers <- function(widths, activation, after = character(0), embed = 0L, heads = 1L) {
  n <- length(widths) - 1L
  first <- if (embed > 0L) list(ggmlR::ag_embedding(embed, widths[1L]))
  do.call(c, c(list(first), lapply(seq_len(n), function(i) {
    act <- if (i < n && activation != "none") activation else NULL
    w <- widths[i + 1L]
    extra <- if (i < n) lapply(after, function(a) after_layers[[a]](w, heads))
    c(list(ggmlR::ag_linear(widths[i], w, activation = act)), extra)
  })))
}

# A module of its own that calls the attention `attn` with a causal mask; its describe() gives
# the layers run_spec() describes it by, as a user would.
causal_module <- function(attn) {
  module <- new.env(parent = emptyenv())
  module$describe <- function() list(agmem::ag_causal_attention(attn))
  module$forward <- function(x) attn$forward(x, causal_mask = TRUE)
  module$parameters <- function() attn$parameters()
  module
}

# A block of its own around ag_flash_attention(): three ag_linear(w, w) projections, the fused
# call of `heads` heads (with `causal`), an ag_linear(w, w) after it.
flash_module <- function(w, heads, causal) {
  proj <- lapply(1:4, function(i) ggmlR::ag_linear(w, w))
  module <- new.env(parent = emptyenv())
  module$describe <- function() {
    c(proj[1:3], list(agmem::ag_flash_attention_call(w, heads, causal)), proj[4])
  }
  module$forward <- function(x) {
    att <- ggmlR::ag_flash_attention(proj[[1]]$forward(x), proj[[2]]$forward(x),
                                     proj[[3]]$forward(x), n_heads = heads, causal = causal)
    proj[[4]]$forward(att)
  }
  # Named apart: ag_sequential()'s parameters() keys each by the layer and its name
  # (R/ag_layers.R:108-116), so four projections' W and b under the same names leave the
  # optimizer three of them short (their $grad is then never cleared).
  module$parameters <- function() {
    do.call(c, lapply(seq_along(proj), function(i) {
      p <- proj[[i]]$params()
      stats::setNames(p, paste0("proj", i, "_", names(p)))
    }))
  }
  module
}

# The layers of --after: "none" is none; else names of after_layers joined by "+".
read_after <- function(after) {
  a <- if (identical(after, "none")) character(0) else strsplit(after, "+", fixed = TRUE)[[1]]
  stopifnot(all(a %in% names(after_layers)))
  a
}

# The parameters of the model build_layers() makes: the dense stack's, gamma and beta of each
# norm, the embedding's table, each attention's W_q, W_k, W_v, W_o and b_o, and each flash
# block's four ag_linear(w, w), and the k ag_linear(w, w) of each densek or checkpointk (k = 2
# for "dense2" and "checkpoint").
count_params <- function(widths, after = character(0), embed = 0L) {
  hidden <- as.double(widths[-c(1L, length(widths))])
  sum(as.double(widths[-length(widths)]) * widths[-1L] + widths[-1L]) +
    2 * sum(after %in% c("batch_norm", "batch_norm_eval", "layer_norm")) * sum(hidden) +
    as.double(embed) * widths[1L] + has_attention(after) * sum(4 * hidden^2 + hidden) +
    has_flash(after) * sum(4 * hidden^2 + 4 * hidden) +
    sum(segment_layers[after], na.rm = TRUE) * sum(hidden^2 + hidden)
}

# The ag_linear(w, w) layers of each dense or checkpointed segment --after may name.
segment_layers <- c(dense2 = 2, checkpoint = 2, dense3 = 3, checkpoint3 = 3, dense4 = 4,
                    checkpoint4 = 4)

# Whether the layers of --after have an attention (with its dropout, its causal mask, or neither).
has_attention <- function(after) any(startsWith(after, "attention"))
# Whether they have a flash block (with its causal mask or without).
has_flash <- function(after) any(startsWith(after, "flash"))

# The widths of the tiny model a measuring script warms ggmlR up on, of the same depth: hidden
# width 3, or two per head with an attention or a flash block after it.
warm_widths <- function(widths, after = character(0), heads = 1L) {
  hidden <- if (has_attention(after) || has_flash(after)) 2L * heads else 3L
  c(4L, rep(hidden, max(0L, length(widths) - 2L)), 2L)
}
# The vocabulary of the warm-up model's embedding: a few tokens, whatever the run's. On device
# "gpu" the warm-up's table and its optimizer state stay in the persistent pool, which is never
# freed: with the run's vocabulary they added 16 bytes per token to it (48 with Adam).
warm_vocab <- function(embed) {
  min(as.integer(embed), 8L)
}

# The agmem spec of a measured run's model, from the widths as "-"-joined text: its dense stack,
# or, with layers after the hidden ones or an embedding first, the layers of the ggmlR model the
# measuring scripts trained (build_layers()), read by ag_model_spec() (ggmlR must be installed).
# `after` is as --after takes it ("none", or names joined by "+").
run_spec <- function(widths, activation, loss, after = "none", embed = 0, heads = 1) {
  w <- as.numeric(strsplit(widths, "-", fixed = TRUE)[[1]])
  if (after == "none" && embed == 0) {
    return(agmem::ag_dense_stack(w, activation, loss))
  }
  # A module of its own is described as a user describes it, by its describe().
  layers <- lapply(build_layers(w, activation, read_after(after), embed, heads), function(l) {
    if (is.environment(l) && is.function(l[["describe"]])) l$describe() else list(l)
  })
  agmem::ag_model_spec(do.call(c, layers), loss)
}

# A run's model as the validation tables show it: its widths, then the layers after each hidden
# one (an attention with its heads), and an embedding first with its vocabulary; then the data
# set it held when that was more than its four mini-batches ("holding 60000 samples", for a run
# of `batch`), its steps when not 100 ("3 steps") and the settings of R's collector it ran with,
# if any ("with R_GC_MEM_GROW=3").
run_label <- function(widths, after = "none", embed = 0, heads = 1, collector = "none",
                      samples = NA, batch = NA, steps = 100) {
  after <- after_label(after, heads)
  label <- if (after == "none") widths else paste0(widths, " +", after)
  if (embed > 0) label <- paste0("embedding(", embed, ") ", label)
  if (!is.na(samples) && !is.na(batch) && samples > 4 * batch) {
    label <- paste0(label, " holding ", format(samples, scientific = FALSE), " samples")
  }
  if (!is.na(steps) && steps != 100) label <- paste0(label, ", ", steps, " steps")
  if (is.na(collector) || identical(collector, "none")) return(label)
  paste0(label, " with ", gsub(";", ", ", gsub(":", "=", collector, fixed = TRUE), fixed = TRUE))
}

# --after as the tables show it: an attention (of any kind) with its heads,
# "attention(4)+layer_norm".
after_label <- function(after, heads) {
  sub("((attention|flash)[a-z_]*)", paste0("\\1(", heads, ")"), after)
}

# The bytes of a data set of `samples` samples for a model of `widths` ("-"-joined text) held in
# R: the input (one integer token index a sample with an embedding, else doubles) and the target.
data_bytes <- function(widths, samples, embed = 0) {
  w <- as.numeric(strsplit(widths, "-", fixed = TRUE)[[1]])
  input <- if (embed > 0) 4 else w[1L] * 8
  (input + w[length(w)] * 8) * samples
}

# Column `name` of a measurements table `m` at row i, or `default` when the table has no such
# column (measured before it existed) or the value is NA.
field_of <- function(m, name, i, default) {
  v <- m[[name]]
  if (is.null(v) || is.na(v[i])) default else v[i]
}

# ggmlR's optimizer `name` over the ag_param tensors `params`, as the measuring scripts train:
# "adam" (lr 1e-3), "sgd" (momentum 0.9, lr 1e-2) and "sgd_plain" (no momentum).
new_optimizer <- function(params, name) {
  switch(name,
         adam = ggmlR::optimizer_adam(params, lr = 1e-3),
         sgd = ggmlR::optimizer_sgd(params, lr = 1e-2, momentum = 0.9),
         sgd_plain = ggmlR::optimizer_sgd(params, lr = 1e-2))
}

# ggmlR's loss function of a loss's name.
loss_function <- function(name) {
  switch(name, mse = ggmlR::ag_mse_loss, cross_entropy = ggmlR::ag_cross_entropy_loss,
         softmax_cross_entropy = ggmlR::ag_softmax_cross_entropy_loss)
}

# The command line that runs the measuring script at path `script` on one configuration `cfg` (a
# grid's row or a list): "--<name>=<value>" for each name of `flags` that cfg has a value for
# (widths written with commas, numbers in full), then those of `extra` (named values), which
# win. A flag cfg lacks, or has NA, is left out, so the script keeps its default; one of extra
# is always written (an NA one as "NA", which the script refuses).
script_args <- function(script, cfg, flags, extra = list()) {
  vals <- as.list(cfg)[intersect(flags, names(cfg))]
  vals <- Filter(function(v) length(v) == 1L && !is.na(v), vals)
  vals[names(extra)] <- extra
  if (!is.null(vals$widths)) vals$widths <- gsub("-", ",", vals$widths, fixed = TRUE)
  text <- vapply(vals, function(v) format(v, scientific = FALSE, trim = TRUE), "")
  c(script, paste0("--", names(vals), "=", text))
}

# Runs measure-long.R (in the folder `here` of the script that sources this file) on one
# configuration `cfg` (a grid's row or a list: the fields it has of the flags below; those of
# `extra`, named values such as steps, win) in a fresh R process, with the configuration's
# settings of R's collector (its `collector` field, grid_collector()) in that process's
# environment, as a user sets them before R starts. Returns the run's RESULT fields as a one-row
# data frame (numbers as numbers; a checkpoint the run did not reach, NA), or NULL with a
# message naming the run and the end of its output when the process failed.
run_long <- function(cfg, extra = list()) {
  a <- script_args(file.path(here, "measure-long.R"), cfg,
                   c("widths", "batch", "optimizer", "activation", "loss", "variant", "after",
                     "embed", "heads", "device", "pad", "pad_nodes", "samples"), extra)
  env <- collector_env(field_of(cfg, "collector", 1L, "none"))
  out <- suppressWarnings(system2(file.path(R.home("bin"), "Rscript"), a, stdout = TRUE,
                                  stderr = TRUE, env = env))
  vals <- result_fields(out)
  if (is.null(vals)) {
    message("failed: ", paste(a[-1L], collapse = " "), "\n",
            paste(utils::tail(out, 5), collapse = "\n"))
    return(NULL)
  }
  vals <- as.list(vals)
  chr <- c("widths", "optimizer", "activation", "loss", "device", "variant", "reset_ok", "after",
           "collector")
  num <- setdiff(names(vals), chr)
  vals[num] <- lapply(vals[num], function(v) if (identical(v, "NA")) NA_real_ else as.numeric(v))
  vals$reset_ok <- as.logical(vals$reset_ok)
  as.data.frame(vals, stringsAsFactors = FALSE)
}

# The fields of the one "RESULT,<name>=<value>,..." line among a measuring script's output lines
# `out`, as a named character vector; NULL when the script printed none, or more than one.
result_fields <- function(out) {
  line <- grep("^RESULT,", out, value = TRUE)
  if (length(line) != 1L) return(NULL)
  kv <- strsplit(strsplit(sub("^RESULT,", "", line), ",", fixed = TRUE)[[1]], "=", fixed = TRUE)
  stats::setNames(vapply(kv, `[`, "", 2L), vapply(kv, `[`, "", 1L))
}

# Whether the predicted peaks `pred` are within the goal's tolerance of the `measured` ones,
# max(15%, 8 MB), and whether they are under them by more than 15%.
within_tolerance <- function(pred, measured) abs(pred - measured) <= pmax(0.15 * measured, 8e6)
under_by_15 <- function(pred, measured) pred < 0.85 * measured

# The runs of one or more measurements tables, as one: the columns of all (NA where a table has
# none: measured before the column existed), with `file`, the table's name.
read_runs_csv <- function(paths) {
  ms <- lapply(paths, function(p) {
    cbind(utils::read.csv(p, stringsAsFactors = FALSE), file = basename(p),
          stringsAsFactors = FALSE)
  })
  cols <- unique(unlist(lapply(ms, names)))
  do.call(rbind, lapply(ms, function(m) {
    m[setdiff(cols, names(m))] <- NA
    m[cols]
  }))
}

# R's start-up settings of its collector that a run may be measured with (grid_collector()), in
# the order measure-long.R writes them.
collector_vars <- c("R_VSIZE", "R_GC_MEM_GROW", "R_GC_GROWFRAC", "R_GC_GROWINCRFRAC",
                    "R_GC_VGROWINCRFRAC", "R_NSIZE", "R_GC_NGROWINCRFRAC", "R_MAX_VSIZE")

# The settings of a run's `collector` field ("none", or "NAME:VALUE" joined by ";": a RESULT
# line's fields are NAME=VALUE) as the "NAME=VALUE" strings system2()'s `env` takes.
collector_env <- function(x) {
  if (is.na(x) || identical(x, "none")) return(character(0))
  sub(":", "=", strsplit(x, ";", fixed = TRUE)[[1]], fixed = TRUE)
}

# Evaluates `expr` with the settings of a run's `collector` field in the environment (agmem reads
# them there, as R reads them at start-up), then restores the environment as it was.
with_collector <- function(x, expr) {
  env <- collector_env(x)
  if (!length(env)) return(expr)
  names <- sub("=.*", "", env)
  old <- Sys.getenv(names, unset = NA, names = TRUE)
  on.exit({
    set <- !is.na(old)
    if (any(set)) do.call(Sys.setenv, as.list(old[set]))
    if (any(!set)) Sys.unsetenv(names[!set])
  })
  do.call(Sys.setenv, stats::setNames(as.list(sub("^[^=]*=", "", env)), names))
  expr
}

# The runs of a measurements table judged against agmem's whole-run model: each run's model as
# run_spec() describes it, with the data set the loop holds in R (four mini-batches); adds
# `agmem` (host_peak), `high` (host_high), `agmem_device` (device_peak), `pools` (the device
# pools measured, 0 on the CPU), `measured` (the host's peak at step 100: the RSS growth less the
# pools), `ratio`, `within` (max(15%, 8 MB)), `under15`, `ops` (the ops of its spec and its
# loss's) and `modelled` (FALSE where agmem lists a layer as not modelled: its figure is then a
# lower bound). Each run is judged with the settings of R's collector it ran with (its
# `collector` field) in the environment, or, with `collector = FALSE`, as if it had run with R's
# defaults (what agmem answered before it read them).
judge_runs <- function(m, collector = TRUE) {
  if (!collector) m$collector <- NULL
  got <- lapply(seq_len(nrow(m)), function(i) {
    spec <- run_spec(m$widths[i], m$activation[i], m$loss[i], field_of(m, "after", i, "none"),
                     field_of(m, "embed", i, 0), field_of(m, "heads", i, 1))
    mem <- with_collector(field_of(m, "collector", i, "none"), suppressWarnings(
      agmem::ag_training_memory(
        spec, m$batch[i], m$optimizer[i], device = field_of(m, "device", i, "cpu"), quiet = TRUE,
        steps = m$steps[i],
        data_size = data_bytes(m$widths[i], field_of(m, "samples", i, 4 * m$batch[i]),
                               field_of(m, "embed", i, 0))
      )
    ))
    list(peak = mem$host_peak, high = mem$host_high, device = mem$device_peak,
         ops = c(unique(unlist(spec$ops)), paste0("loss_", m$loss[i])),
         modelled = length(mem$uncovered) == 0L)
  })
  m$modelled <- vapply(got, `[[`, TRUE, "modelled")
  m$agmem <- vapply(got, `[[`, 0, "peak")
  m$high <- vapply(got, `[[`, 0, "high")
  m$agmem_device <- vapply(got, `[[`, 0, "device")
  m$ops <- lapply(got, `[[`, "ops")
  # In resident mode the host is the RSS growth less the device pools, which ggml's CPU backend
  # keeps in host memory here (a GPU keeps them in its own).
  m$pools <- if (is.null(m$pass_pool)) 0 else ifelse(is.na(m$pass_pool), 0,
                                                      m$pass_pool + m$persistent_pool)
  # the peak at step 100, or at a shorter run's last step
  m$measured <- ifelse(m$steps < 100, m$peak, m$peak_100) - m$pools
  m$ratio <- m$agmem / m$measured
  m$within <- within_tolerance(m$agmem, m$measured)
  m$under15 <- under_by_15(m$agmem, m$measured)
  m
}

# What each op of the rule table a run may have stands for, in the order of the table by layer.
layer_ops <- c(
  relu = "relu", tanh = "tanh", sigmoid = "sigmoid", softmax = "softmax",
  loss_mse = "ag_mse_loss()", loss_cross_entropy = "ag_cross_entropy_loss()",
  loss_softmax_cross_entropy = "ag_softmax_cross_entropy_loss()",
  batch_norm = "ag_batch_norm()", batch_norm_eval = "ag_batch_norm(), eval mode",
  dropout = "ag_dropout()", layer_norm = "ag_layer_norm()", embedding = "ag_embedding()",
  attention_head = "ag_multihead_attention()", attention_dropout = "its attention dropout",
  attention_causal = "its causal mask", flash_attention = "ag_flash_attention()",
  flash_causal = "its causal mask (flash)",
  checkpoint = "ag_checkpoint(), as ag_checkpoint_segment()"
)

# Prints, for each op of layer_ops the judged runs m have (judge_runs()), the number of runs and
# their shares within tolerance and at or under host_high; in Markdown with `markdown`.
print_by_layer <- function(m, markdown = FALSE) {
  has <- lapply(names(layer_ops), function(o) vapply(m$ops, function(x) o %in% x, TRUE))
  names(has) <- layer_ops
  has <- has[vapply(has, any, TRUE)]
  rows <- data.frame(
    what = names(has), runs = vapply(has, sum, 0),
    within = vapply(has, function(k) 100 * mean(m$within[k]), 0),
    under15 = vapply(has, function(k) sum(m$under15[k]), 0),
    high = vapply(has, function(k) sum(m$measured[k] <= m$high[k]), 0)
  )
  if (markdown) {
    cat("| layer, activation or loss | runs | within max(15%, 8 MB) | under by more than 15% |",
        "at or under host_high |\n|---|---:|---:|---:|---:|\n")
    cat(sprintf("| %s | %d | %.0f%% | %d | %d |\n", rows$what, rows$runs, rows$within,
                rows$under15, rows$high), sep = "")
  } else {
    cat(sprintf("%-42s %5s %7s %8s %6s\n", "layer, activation or loss", "runs", "within",
                "under15", "high"))
    cat(sprintf("%-42s %5d %6.0f%% %8d %6d\n", rows$what, rows$runs, rows$within, rows$under15,
                rows$high), sep = "")
  }
  from <- if (is.null(m$file)) "" else paste0(" (", paste(unique(m$file), collapse = ", "), ")")
  cat(sprintf("%d runs in all%s\n", nrow(m), from))
}
