# fit-layers.R: the figures of src/rules.c for ag_batch_norm() (in training and in eval mode),
# ag_dropout() and ag_layer_norm(), fitted on the layers' fit grids (grids.R, grid_layers_fit()
# and grid_layers_eval_fit()); then ag_embedding(), ag_multihead_attention() and its causal mask,
# ag_flash_attention(), and sigmoid, softmax and ag_cross_entropy_loss() on theirs (each section
# below says which).
#
#   Rscript inst/validation/fit-layers.R [measurements-layers-fit.csv] \
#     [measurements-layers-three.csv] [measurements-layers-three-gpu.csv]
#
# Each section says whether src/rules.c (the installed agmem's table) holds its figures; the exit
# status is 1 when one does not (CI runs it in step 13).
#
# The fit grid pairs each dense stack with itself followed, after each hidden layer, by one of
# the layers. What a pair differs by is what the layer costs, whatever the stack's own figures;
# the layer's units are the hidden units (their sum over the hidden layers) times the batch. Per
# unit and sample, through the origin, by least squares over the ten pairs of each layer:
#   - from the 100-step runs with one more step under gctorture() (validate-long.R --torture):
#     the step's largest live heap (gc()'s "max used" over that step, less the heap at the start):
#     agmem_live_rules' `step_max`; the bytes live at R's full collections (the largest
#     "vectors used" after a level-2 collection, less the heap at the start): its `bytes`; the
#     resident memory over R's heap peak (the RSS peak at step 100 less gc()'s "max used" over
#     the start): its `retained`;
#   - from the three-step runs (validate.R --grid=layers_fit): the bytes allocated per step,
#     from the pairs whose peaks both stay under 80% of the first trigger's headroom, where no
#     collection has run and the peak is the bytes allocated (0.909 of them as counted,
#     agmem_gc_rules' alloc_scale): the unit rules' `alloc_step`; and the peak once R collects,
#     from the pairs whose peaks are both over the headroom: the unit rules' `bytes`;
# The three-step runs on device "gpu" (validate.R --grid=layers_fit_gpu) are not fitted for a
# batch norm or a layer norm: what a pair differs by there is not proportional to the layer's
# units (the host grows by a near fixed amount per model, the device's pass pool shrinks when a
# layer splits the device graph); with one of them in the model, backward() runs on the host and
# the host takes device "cpu"'s figures, with the host path's own in resident mode (fitted last,
# on 100-step runs). The script prints the spread that shows it. A dropout alone keeps the graph
# backward: its figures on device "gpu" are fitted near the end.
# The parameters a layer adds (gamma and beta: twice its width) are taken off at the table's
# per-parameter figures. Then it compares the figures with the table agmem was built with
# (agmem must be installed).

here <- local({
  file_arg <- grep("^--file=", commandArgs(FALSE), value = TRUE)
  if (length(file_arg)) dirname(normalizePath(sub("^--file=", "", file_arg[1L]))) else "."
})
args <- commandArgs(trailingOnly = TRUE)
# A batch norm in eval mode was measured apart, with its own pairs (grid_layers_eval_fit()).
long_csv <- if (length(args)) args[[1L]] else {
  file.path(here, c("measurements-layers-fit.csv", "measurements-layers-eval-fit.csv"))
}
three_csv <- if (length(args) > 1L) args[[2L]] else {
  file.path(here, c("measurements-layers-three.csv", "measurements-layers-eval-three.csv"))
}
gpu_csv <- if (length(args) > 2L) args[[3L]] else {
  file.path(here, "measurements-layers-three-gpu.csv")
}
if (!requireNamespace("agmem", quietly = TRUE) || !requireNamespace("ggmlR", quietly = TRUE)) {
  stop("fit-layers.R needs agmem and ggmlR installed", call. = FALSE)
}
source(file.path(here, "harness.R"))
rules <- agmem:::training_rules()
live <- rules$live[rules$live$device == "cpu" & rules$live$backward == "any", ]
per_param <- function(opt, col) live[[col]][is.na(live$op) & live$optimizer == opt]
# The parameter rules' host figure `col` (bytes or alloc_step) per parameter for an optimizer.
param_host <- function(opt, col, device = "cpu") {
  p <- rules$param[rules$param$device == device & rules$param$where == "host" &
                     rules$param$dtype %in% c("any", "f32") &
                     rules$param$optimizer %in% c("any", opt), ]
  sum(p[[col]])
}
param_alloc <- function(opt) param_host(opt, "alloc_step")
gc_fig <- function(name, device = "cpu") {
  rules$gc$value[rules$gc$device == device & rules$gc$backward == "any" & rules$gc$figure == name]
}
layers <- c("batch_norm", "dropout", "layer_norm", "batch_norm_eval")

# The runs of a csv as pairs: `p`, the runs `is_run()` picks, and `b`, for each, the run
# `is_base()` picks of the same widths, batch and optimizer (and the other columns `by` names);
# with `dparams`, the parameters a run adds, and `hidden`, its widths without the first and the
# last.
paired <- function(path, is_base, is_run, by = character(0)) {
  # Several csvs are read as one (harness.R), each run paired within its own file.
  m <- read_runs_csv(path)
  m$key <- do.call(paste, m[c("file", "widths", "batch", "optimizer", by)])
  base <- m[is_base(m), ]
  p <- m[is_run(m), ]
  b <- base[match(p$key, base$key), ]
  p$hidden <- lapply(strsplit(p$widths, "-", fixed = TRUE), function(x) {
    x <- as.numeric(x)
    x[-c(1L, length(x))]
  })
  p$dparams <- p$params - b$params
  list(p = p, b = b)
}
# The pairs of a layer after each hidden layer (or of the runs `is_run` picks against those
# `is_base` picks, as paired() takes them), `units` the hidden units and samples.
pairs <- function(path, is_base = function(m) m$after == "none",
                  is_run = function(m) m$after %in% layers) {
  got <- paired(path, is_base, is_run)
  got$p$units <- vapply(got$p$hidden, sum, 0) * got$p$batch
  got
}
# The least-squares slope through the origin of y on units, for each layer (NA without data).
slope <- function(p, y, keep = rep(TRUE, length(y))) {
  vapply(layers, function(l) {
    k <- keep & p$after == l & is.finite(y)
    if (!any(k)) NA_real_ else sum(y[k] * p$units[k]) / sum(p$units[k]^2)
  }, 0)
}

lp <- pairs(long_csv)
p <- lp$p
b <- lp$b
over <- function(r) r$peak_100 - (r$heap_max - r$heap0)
# The scalars of the largest tensor of each run of `x`, as agmem reads its model; each model is
# built once (the pairs' figures ask for the same runs' again).
largest_seen <- new.env(parent = emptyenv())
largest_of <- function(x) {
  vapply(seq_len(nrow(x)), function(i) {
    after <- field_of(x, "after", i, "none")
    embed <- field_of(x, "embed", i, 0)
    heads <- field_of(x, "heads", i, 1)
    key <- paste(x$widths[i], x$activation[i], x$loss[i], after, embed, heads)
    if (is.null(largest_seen[[key]])) {
      spec <- run_spec(x$widths[i], x$activation[i], x$loss[i], after, embed, heads)
      largest_seen[[key]] <- agmem:::spec_largest(spec)
    }
    largest_seen[[key]]
  }, 0)
}
# What the runs `r` of pairs hold over their bases `base` for a largest tensor of another size:
# the per-parameter rows' figure per scalar of the largest tensor (`largest`, `largest_max`; none
# for `retained`) times the difference.
over_largest <- function(r, base, col) {
  if (col == "retained") return(0)
  lcol <- if (col == "step_max") "largest_max" else "largest"
  (largest_of(r) - largest_of(base)) * vapply(r$optimizer, per_param, 0, col = lcol)
}
# What the runs `r` of pairs hold over their bases `base`, less the parameters they add at the
# parameter rules of their optimizers: the step's largest live heap (`col` "step_max"), the live
# heap at full collections ("bytes") or what the allocator keeps over R's heap ("retained").
pair_over_params <- function(r, base, col) {
  held <- switch(col, step_max = function(x) x$live_step_max - x$heap0,
                 bytes = function(x) x$live_full - x$heap0, retained = over)
  held(r) - held(base) - r$dparams * vapply(r$optimizer, per_param, 0, col = col) -
    over_largest(r, base, col)
}
d_max <- pair_over_params(p, b, "step_max")
d_live <- pair_over_params(p, b, "bytes")
d_kept <- pair_over_params(p, b, "retained")
fit <- rbind(step_max = slope(p, d_max), bytes = slope(p, d_live), retained = slope(p, d_kept))
off_max <- d_max - p$units * fit["step_max", p$after]

unit <- rules$unit[rules$unit$device == "cpu", ]
# The three-step figures of the CPU from its pairs: the host's allocation per step (pairs that
# end under 80% of the headroom) and peak once R collects (pairs over it).
tp <- pairs(three_csv)
t3 <- tp$p
t3b <- tp$b
headroom <- gc_fig("headroom")
d3 <- t3$peak - t3b$peak
alloc_d <- d3 / (gc_fig("alloc_scale") * gc_fig("steps")) -
  t3$dparams * vapply(t3$optimizer, param_alloc, 0)
under <- t3$peak < 0.8 * headroom & t3b$peak < 0.8 * headroom
overh <- t3$peak > headroom & t3b$peak > headroom
fit <- rbind(fit, alloc_step = slope(t3, alloc_d, under), three_bytes = slope(t3, d3, overh))
cat(sprintf(paste0("%d pairs of 100-step runs; %d pairs of three-step runs (%d under 80%% of ",
                   "the headroom, %d over it)\n"), nrow(p), nrow(t3), sum(under), sum(overh)))

# Device "gpu": per unit and sample, what each pair differs by on the host (RSS growth less the
# device's pools, which ggml's CPU backend keeps in host memory here) and in the pass pool.
gp <- pairs(gpu_csv)
host_of <- function(r) r$peak - r$pass_pool - r$persistent_pool
g_diff <- host_of(gp$p) - host_of(gp$b)
g_host <- g_diff / gp$p$units
g_pool <- (gp$p$pass_pool - gp$b$pass_pool) / gp$p$units
cat("device \"gpu\", three steps, per unit and sample (in the rules for dropout alone, see",
    "above):\n")
for (l in intersect(layers, gp$p$after)) {
  k <- gp$p$after == l
  cat(sprintf("  %-10s host %8.1f to %7.1f bytes, pass pool %7.1f to %6.1f bytes\n", l,
              min(g_host[k]), max(g_host[k]), min(g_pool[k]), max(g_pool[k])))
}

print(round(fit, 2))

# ---- ag_embedding(): its table and its lookup ----
# Pairs of measurements-embed-fit.csv (100 steps and one under gctorture()) and
# measurements-embed-three.csv (three steps): a dense stack on dense inputs of its first width d,
# and the same stack after an ag_embedding(V, d) on token indices. A pair differs by the table
# (V x d scalars: the parameter rules of the optimizer plus the table's own figure, per
# optimizer; an embedding's table costs more per scalar than a dense layer's weights, for the
# dense gradient its backward builds) and by the lookup's d units per sample in place of the
# dense input's d (at the input's figure; the indices are one unit per sample). Fitted by least
# squares over the vocabularies: the table's figure per scalar and the lookup's per unit and
# sample. The 100-step runs are too small for most of them to collect in full, so the live bytes
# take the step's largest; the three-step figures have no optimizer (the unit rules have none).
embed_pairs <- function(path) {
  got <- paired(path, function(m) m$embed == 0, function(m) m$embed > 0)
  d <- as.numeric(sub("-.*", "", got$p$widths))
  got$p$table <- got$p$embed * d
  got$p$look <- d * got$p$batch
  got
}
# The table's figure for each optimizer and the lookup's, by least squares on y.
embed_fit <- function(p, y, keep = rep(TRUE, nrow(p))) {
  d <- data.frame(y = y, look = p$look, adam = p$table * (p$optimizer == "adam"),
                  sgd = p$table * (p$optimizer == "sgd"),
                  sgd_plain = p$table * (p$optimizer == "sgd_plain"))[keep, ]
  stats::coef(stats::lm(y ~ 0 + adam + sgd + sgd_plain + look, data = d))
}
input_fig <- function(col) live[[col]][live$op %in% "input"]
ep <- embed_pairs(file.path(here, "measurements-embed-fit.csv"))
e <- ep$p
eb <- ep$b
opt_of <- function(col) vapply(e$optimizer, per_param, 0, col = col)
# Each measured difference with the parameter rules' share of the table and the dense input's
# share taken off (and the indices' one unit per sample put back).
adjust <- function(diff, col) {
  diff - e$table * opt_of(col) - over_largest(e, eb, col) + (e$look - e$batch) * input_fig(col)
}
e_max <- adjust((e$live_step_max - e$heap0) - (eb$live_step_max - eb$heap0), "step_max")
e_live <- adjust((e$live_full - e$heap0) - (eb$live_full - eb$heap0), "bytes")
e_kept <- adjust(over(e) - over(eb), "retained")
efit <- rbind(step_max = embed_fit(e, e_max), bytes = embed_fit(e, e_live),
              retained = embed_fit(e, e_kept))
# Three steps: the host's allocation per step, from pairs that end under 80% of the headroom.
t3e <- embed_pairs(file.path(here, "measurements-embed-three.csv"))
unit_in <- unit[unit$op %in% "input", ]
e3 <- t3e$p
e3b <- t3e$b
alloc_e <- (e3$peak - e3b$peak) / (gc_fig("alloc_scale") * gc_fig("steps")) -
  e3$table * vapply(e3$optimizer, param_alloc, 0) + (e3$look - e3$batch) * unit_in$alloc_step
# The three-step peak once R collects, with the parameter rules' and the dense input's shares
# taken off as above.
adjust_three <- function(p, b) {
  (p$peak - b$peak) - p$table * vapply(p$optimizer, param_host, 0, col = "bytes") +
    (p$look - p$batch) * unit_in$bytes
}
under_e <- e3$peak < 0.8 * headroom & e3b$peak < 0.8 * headroom
over_e <- e3$peak > headroom & e3b$peak > headroom
# The unit rules have no optimizer: the table's figures are fitted over all three.
one_fit <- function(y, keep) {
  d <- data.frame(y = y, table = e3$table, look = e3$look)[keep, ]
  stats::coef(stats::lm(y ~ 0 + table + look, data = d))
}
efit3 <- rbind(alloc_step = one_fit(alloc_e, under_e),
               three_bytes = one_fit(adjust_three(e3, e3b), over_e))
cat(sprintf(paste0("\nembedding: %d pairs of 100-step runs, %d of three-step runs (%d under ",
                   "80%% of the headroom, %d over it)\n"), nrow(e), nrow(e3), sum(under_e),
            sum(over_e)))
print(round(efit, 2))
print(round(efit3, 2))
# ---- ag_multihead_attention(): its projections and its heads ----
# Pairs of measurements-attention-fit.csv (100 steps and one under gctorture()) and
# measurements-attention-three.csv (three steps): a dense stack alone and with an attention after
# each hidden layer, of two head counts, at batches 64, 256 and 512 (the attention's sequence);
# and the same of a wider attention (d_model 512: measurements-attention-wide.csv, -wide-three.csv
# and -wide-alloc.csv), which tells the slices' term apart from the projections'; and both stacks
# with 8 and 16 heads (measurements-attention-heads.csv, 100 steps and one under gctorture()),
# so that the per-head terms are not fitted on 1 to 4 heads alone.
# A pair differs by the attention's parameters (4 d^2 + d a layer, at the parameter rules), its
# projections (`attention`: d units per sample), its heads (`attention_head`: one per pair of
# samples each), its head slices (`attention_slices`: each head's rows of Q, K and V are taken by
# a product with a constant d_k x d slice matrix, R/ag_layers.R:801-816, 3 d^2 doubles a layer
# and their transposes in the backward, once a step whatever the batch) and, with more than one
# head, the heads' concatenation (R/ag_layers.R:818-846): its constant matrices that place each
# head's rows (`attention_concat`: d^2 doubles a layer, and their transposes) and a block of d
# rows per head with the sum it goes into (`attention_block`: d units per sample per head). The
# head counts, widths and batches separate them, fitted by least squares through the origin.
a_ops <- c(lin = "attention", pairs = "attention_head", square = "attention_slices",
           concat = "attention_concat", blocks = "attention_block")
# The pairs of an attention's runs (by default, each with its stack alone), with the units of
# each term of a_ops.
attn_pairs <- function(path, is_base = function(m) m$after == "none",
                       is_run = function(m) m$after == "attention", by = character(0)) {
  got <- paired(path, is_base, is_run, by)
  h <- got$p$hidden
  multi <- got$p$heads > 1
  got$p$lin <- vapply(h, sum, 0) * got$p$batch
  got$p$pairs <- got$p$heads * got$p$batch^2 * lengths(h)
  got$p$square <- vapply(h, function(x) sum(x^2), 0)
  got$p$concat <- multi * got$p$square
  got$p$blocks <- multi * got$p$heads * got$p$lin
  got
}
# The least-squares slope through the origin of y on x (the finite y that `keep` picks).
through <- function(x, y, keep = rep(TRUE, length(y))) {
  k <- keep & is.finite(y)
  sum(x[k] * y[k]) / sum(x[k]^2)
}
attn_fit <- function(p, y, keep = rep(TRUE, nrow(p))) {
  d <- data.frame(y = y, p[names(a_ops)])[keep, ]
  stats::coef(stats::lm(y ~ 0 + lin + pairs + square + concat + blocks, data = d))
}
# What the table gives the attention's ops of the runs p, from the figures `fig` (named as a_ops).
attn_table <- function(p, fig) {
  Reduce(`+`, lapply(names(a_ops), function(k) p[[k]] * fig[[a_ops[[k]]]]))
}
# Says whether src/rules.c's figures `table` are the fitted figures `written` (as written there,
# to two decimals: within 0.0051 of each), naming `what` and, after it, `where` (a device).
say_held <- function(table, written, what, where = "") {
  held <- isTRUE(all(abs(table - written) <= 0.0051))
  if (!held) all_held <<- FALSE
  cat(if (!held) {
    off <- which(!(abs(table - written) <= 0.0051))
    sprintf("the %s's rows%s differ from src/rules.c: %s\n", what, where,
            paste(sprintf("[%d] %.2f in the table, %.2f fitted", off, table[off], written[off]),
                  collapse = "; "))
  } else {
    sprintf("src/rules.c holds the %s's figures%s\n", what, where)
  })
}
# Whether every table checked so far was held: the script's exit status is 1 when one was not.
all_held <- TRUE
# Whether src/rules.c holds the figures `fit` (rows: step_max, bytes, retained from the live
# rules; alloc_step and three_bytes, the unit rules' alloc_step and bytes; columns: ops), to two
# decimals, a negative figure of the rows `zero` written 0 (the safe side); says which, naming
# `what`.
check_table <- function(fit, zero, what) {
  from <- list(step_max = c("live", "step_max"), bytes = c("live", "bytes"),
               retained = c("live", "retained"), alloc_step = c("unit", "alloc_step"),
               three_bytes = c("unit", "bytes"))
  tab <- t(vapply(rownames(fit), function(r) {
    rule <- get(from[[r]][[1L]])
    vapply(colnames(fit), function(o) rule[[from[[r]][[2L]]]][rule$op %in% o][1L], 0)
  }, numeric(ncol(fit))))
  dim(tab) <- dim(fit)
  written <- round(fit, 2)
  written[zero, ] <- pmax(written[zero, , drop = FALSE], 0)
  say_held(tab, written, what)
}
ap <- attn_pairs(file.path(here, c("measurements-attention-fit.csv",
                                   "measurements-attention-wide.csv",
                                   "measurements-attention-heads.csv")))
a <- ap$p
ab <- ap$b
a_max <- pair_over_params(a, ab, "step_max")
a_kept <- pair_over_params(a, ab, "retained")
afit <- rbind(step_max = attn_fit(a, a_max), retained = attn_fit(a, a_kept))
a_off <- a_max - attn_table(a, stats::setNames(afit["step_max", ], a_ops))
# Allocated per step: Rprofmem() over one step (measure-alloc.R), as pairs.
aa <- attn_pairs(file.path(here, c("measurements-attention-alloc.csv",
                                   "measurements-attention-wide-alloc.csv")))
a_alloc <- (aa$p$alloc - aa$b$alloc) - aa$p$dparams * vapply(aa$p$optimizer, param_alloc, 0)
# Three steps once R collects: the three-step runs with the attention whose peak is over the
# first trigger's headroom, less what the table gives the rest of the model there (the heap
# once R collects, host_regime$collected, less the attention's own rows).
at <- attn_pairs(file.path(here, c("measurements-attention-three.csv",
                                   "measurements-attention-wide-three.csv")))
a3 <- at$p
a3_over <- a3$peak > headroom
unit_bytes <- stats::setNames(unit$bytes[match(a_ops, unit$op)], a_ops)
three_rest <- vapply(seq_len(nrow(a3)), function(i) {
  spec <- run_spec(a3$widths[i], a3$activation[i], a3$loss[i], "attention", 0, a3$heads[i])
  mem <- suppressWarnings(agmem::ag_training_memory(spec, a3$batch[i], a3$optimizer[i],
                                                    quiet = TRUE, steps = 3))
  mem$host_regime$collected - attn_table(a3[i, ], unit_bytes)
}, 0)
afit <- rbind(afit, alloc_step = attn_fit(aa$p, a_alloc),
              three_bytes = attn_fit(a3, a3$peak - three_rest, a3_over))
colnames(afit) <- a_ops
cat(sprintf(paste0("\nattention: %d pairs of 100-step runs (step_max: measured less fitted from ",
                   "%.2f to %.2f MB); %d pairs measured by Rprofmem(); %d three-step runs over ",
                   "the headroom\n"), nrow(a), min(a_off) / 1e6, max(a_off) / 1e6, nrow(aa$p),
            sum(a3_over)))
print(round(afit, 2))
# A negative step's largest is written 0 (the slices' is: a step frees nothing).
check_table(afit, "step_max", "attention")
# The other optimizers: the pairs of measurements-attention-optim.csv (both stacks, each alone
# and with an attention, trained with SGD with and without momentum), the attention's terms at
# the figures above but the slices'. The step's largest point falls before the optimizer's step
# (it is the same to the byte with momentum and without), while the parameter rules (fitted on
# dense stacks, where the optimizer's update shows at that point) count 20 to 22 bytes a
# parameter less than Adam's; what a pair leaves, per d^2 unit, is the slices'
# figure for that optimizer (the attention's 4 d^2 parameters at their step's largest point).
opp <- attn_pairs(file.path(here, "measurements-attention-optim.csv"))
o <- opp$p
ob <- opp$b
o_rest <- function(row) attn_table(o, replace(afit[row, ], "attention_slices", 0))
o_max <- pair_over_params(o, ob, "step_max") - o_rest("step_max")
o_kept <- pair_over_params(o, ob, "retained") - o_rest("retained")
ofit <- vapply(c("sgd", "sgd_plain"), function(opt) {
  k <- o$optimizer == opt
  c(step_max = through(o$square[k], o_max[k]), retained = through(o$square[k], o_kept[k]))
}, numeric(2))
o_per <- o_max / o$square
cat(sprintf(paste0("the slices with SGD: %d pairs (%.2f to %.2f per d^2 each, with momentum ",
                   "and without)\n"), nrow(o), min(o_per), max(o_per)))
print(round(ofit, 2))
slices <- live[live$op %in% "attention_slices", ]
o_tab <- vapply(colnames(ofit), function(opt) {
  r <- slices[slices$optimizer == opt, ]
  c(r$step_max, r$retained, r$bytes)
}, numeric(3))
o_step <- pmax(round(ofit["step_max", ], 2), 0)
o_written <- rbind(o_step, round(ofit["retained", ], 2), o_step)
say_held(o_tab, o_written, "attention under SGD")

lt <- function(opt) live[live$op %in% "embedding_table" & live$optimizer == opt, ]
ll <- live[live$op %in% "embedding", ]
ut <- unit[unit$op %in% "embedding_table", ]
ul <- unit[unit$op %in% "embedding", ]
e_table <- c(vapply(c("adam", "sgd", "sgd_plain"), function(o) lt(o)$step_max, 0), ll$step_max,
             vapply(c("adam", "sgd", "sgd_plain"), function(o) lt(o)$retained, 0), ll$retained,
             ut$alloc_step, ul$alloc_step, ut$bytes, ul$bytes)
e_fitted <- c(pmax(efit["step_max", ], 0), efit["retained", ], efit3["alloc_step", ],
              efit3["three_bytes", ])
say_held(e_table, round(e_fitted, 2), "embedding")

# The table agmem was built with, in the same order.
table_fig <- rbind(
  step_max = vapply(layers, function(l) sum(live$step_max[live$op %in% l]), 0),
  bytes = vapply(layers, function(l) sum(live$bytes[live$op %in% l]), 0),
  retained = vapply(layers, function(l) sum(live$retained[live$op %in% l]), 0),
  alloc_step = vapply(layers, function(l) sum(unit$alloc_step[unit$op %in% l]), 0),
  three_bytes = vapply(layers, function(l) sum(unit$bytes[unit$op %in% l]), 0)
)
# The table rounds to two decimals; a negative fit is written 0 (a layer frees nothing).
off <- abs(table_fig - pmax(round(fit, 2), 0)) > 0.0051
cat(if (any(off)) "differs from src/rules.c\n" else "src/rules.c holds these figures\n")
if (any(off)) print(table_fig)

# ---- ag_dropout() in resident mode (device "gpu"), whose backward stays the graph's ----
# Pairs of measurements-layers-dropout-gpu.csv (validate-long.R --grid=layers_dropout_gpu: the
# fit grid's ten stacks and two wider ones, alone and with ag_dropout(0.3) after each hidden
# layer, 100 steps and one more under gctorture()), per hidden unit and sample, through the
# origin: on the host, the step's largest live heap and the RSS over R's heap peak less the
# device pools (the mask is built in R each step: the input's download, runif(), the comparison,
# the scaling and its matrix(), R/ag_layers.R:183-188); and the pass pool (the mask's upload, the
# product and the backward graph's g * mask). In resident mode most runs end before R's first
# full collection (their heap stays under R's first trigger, and the nodes set off the
# collections), so few pairs have the bytes live at full collections in both: those bytes are
# fitted on each run with the dropout that collected in full, over what agmem's rules give the
# same stack without it (host_regime$live). The bytes a step allocates come from the three-step
# pairs of measurements-layers-three-gpu.csv whose hosts both end under 80% of device "gpu"'s
# first headroom (none of them collects); their peak once R collects is taken as the live bytes
# (the pairs over the headroom both end at it).
dg <- pairs(file.path(here, "measurements-layers-dropout-gpu.csv"))
g <- dg$p
gb <- dg$b
gpu_over <- function(r) over(r) - r$pass_pool - r$persistent_pool
# What agmem's rules give the stack of runs `r` (rows `rows`) on device "gpu", alone or with the
# layers `after` after its hidden layers: the bytes live at R's full collections over a whole run
# (host_regime$live).
gpu_stack_live <- function(r, rows = seq_len(nrow(r)), after = "none") {
  vapply(rows, function(i) {
    spec <- run_spec(r$widths[i], r$activation[i], r$loss[i], after, 0, 1)
    agmem::ag_training_memory(spec, r$batch[i], r$optimizer[i], "gpu",
                              quiet = TRUE)$host_regime$live
  }, 0)
}
through_g <- function(y) slope(g, y)[["dropout"]]
g_alloc <- g_diff / (gc_fig("alloc_scale", "gpu") * gc_fig("steps", "gpu"))
g_under <- gp$p$after == "dropout" & host_of(gp$p) < 0.8 * gc_fig("headroom", "gpu") &
  host_of(gp$b) < 0.8 * gc_fig("headroom", "gpu")
g_full <- which(is.finite(g$live_full))
g_live <- rep(NA_real_, nrow(g))
g_live[g_full] <- (g$live_full[g_full] - g$heap0[g_full]) - gpu_stack_live(g, g_full)
gfit <- c(step_max = through_g((g$live_step_max - g$heap0) - (gb$live_step_max - gb$heap0)),
          bytes = through_g(g_live),
          retained = through_g(gpu_over(g) - gpu_over(gb)),
          pass_pool = through_g(g$pass_pool - gb$pass_pool),
          alloc_step = slope(gp$p, g_alloc, g_under)[["dropout"]])
cat(sprintf(paste0("\ndropout on device \"gpu\" (graph backward): %d pairs of 100-step runs ",
                   "(%d runs with the dropout collected in full: %s bytes live per unit and ",
                   "sample over the stack's rules), %d three-step pairs under 80%% of the ",
                   "headroom\n"), nrow(g), length(g_full),
            paste(sprintf("%.1f", g_live[g_full] / g$units[g_full]), collapse = ", "),
            sum(g_under)))
print(round(gfit, 2))
g_row <- rules$live[rules$live$device == "gpu" & rules$live$op %in% "dropout", ]
g_unit <- rules$unit[rules$unit$device == "gpu" & rules$unit$op %in% "dropout" &
                       rules$unit$backward == "graph", ]
g_table <- c(step_max = g_row$step_max[1L], bytes = g_row$bytes[1L],
             retained = g_row$retained[1L],
             pass_pool = g_unit$bytes[g_unit$where == "device"][1L],
             alloc_step = g_unit$alloc_step[g_unit$where == "host"][1L])
# A negative figure is written 0 (a layer frees nothing).
g_off <- !is.finite(g_table) | abs(g_table - pmax(round(gfit, 2), 0)) > 0.0051
cat(if (any(g_off)) "dropout's rows on device \"gpu\" differ from src/rules.c\n" else
  "src/rules.c holds dropout's figures on device \"gpu\"\n")

# ---- the attention's dropout: ag_dropout()'s rules on each head's pairs ----
# Not fitted: an attention's dropout runs ag_dropout()'s code on each head's weights
# (R/ag_layers.R:750-758 against 182-188 of ggmlR 0.8.8.1), so src/rules.c gives
# "attention_dropout" the rules of "dropout", one unit per head and pair of samples. Checked here
# on pairs of the same attention with its dropout (0.1) and without: the step's largest live
# heap (measurements-attention-dropout-step.csv: validate-long.R --grid=attention_dropout_step
# --steps=5 --torture=true) and the bytes allocated in a step (measurements-attention-dropout-
# alloc.csv: measure-alloc.R), per head and pair, against dropout's step_max and alloc_step.
drop_pairs <- function(path) {
  attn_pairs(path, function(m) m$after == "attention", function(m) m$after == "attention_dropout",
             by = "heads")
}
ds <- drop_pairs(file.path(here, "measurements-attention-dropout-step.csv"))
da <- drop_pairs(file.path(here, "measurements-attention-dropout-alloc.csv"))
d_step <- ((ds$p$live_step_max - ds$p$heap0) - (ds$b$live_step_max - ds$b$heap0)) / ds$p$pairs
d_alloc <- (da$p$alloc - da$b$alloc) / da$p$pairs
d_rule <- c(step_max = live$step_max[live$op %in% "dropout"],
            alloc_step = unit$alloc_step[unit$op == "dropout"])
cat(sprintf(paste0("\nattention dropout, per head and pair of samples (%d pairs each): the step's ",
                   "largest live heap %.2f to %.2f (dropout's rule: %.2f); allocated per step ",
                   "%.2f to %.2f (dropout's rule: %.2f)\n"), nrow(ds$p), min(d_step), max(d_step),
            d_rule[["step_max"]], min(d_alloc), max(d_alloc), d_rule[["alloc_step"]]))
d_off <- c(abs(d_step / d_rule[["step_max"]] - 1), abs(d_alloc / d_rule[["alloc_step"]] - 1))
cat(if (max(d_off) > 0.1) "the attention's dropout is more than 10% from dropout's rules\n" else
  sprintf("dropout's rules hold for the attention's dropout (within %.1f%%)\n", 100 * max(d_off)))

# ---- the causal mask: one op per head, on the pairs of the sequence ----
# An attention called with causal_mask = TRUE adds to each head's scores a seq x seq matrix of
# zeros and -Inf (.ag_causal_mask(), R/ag_layers.R:860-870 of ggmlR 0.8.8.1), the matrix and
# the sum kept on the tape. Fitted on pairs of the same attention with the mask and without,
# measured in one session: 100 steps and one more under gctorture()
# (measurements-attention-causal.csv: validate-long.R --grid=attention_causal_fit --torture=true),
# Rprofmem() over one step (measurements-attention-causal-alloc.csv: measure-alloc.R) and three
# steps (measurements-attention-causal-three.csv: validate.R --grid=attention_causal_fit). Per
# head and pair of samples, through the origin: the step's largest live heap (taken for the live
# bytes too, as the attention's), what the allocator keeps over R's heap peak, the bytes
# allocated per step and the three-step peak of the pairs over the headroom (where R's
# collections, not the mask, decide the peak: it fits below 0).
causal_pairs <- function(path) {
  attn_pairs(path, function(m) m$after == "attention", function(m) m$after == "attention_causal",
             by = "heads")
}
cs <- causal_pairs(file.path(here, "measurements-attention-causal.csv"))
ca <- causal_pairs(file.path(here, "measurements-attention-causal-alloc.csv"))
c3 <- causal_pairs(file.path(here, "measurements-attention-causal-three.csv"))
c_max <- (cs$p$live_step_max - cs$p$heap0) - (cs$b$live_step_max - cs$b$heap0)
c_over <- c3$p$peak > headroom & c3$b$peak > headroom
cfit <- c(step_max = through(cs$p$pairs, c_max),
          retained = through(cs$p$pairs, over(cs$p) - over(cs$b)),
          alloc_step = through(ca$p$pairs, ca$p$alloc - ca$b$alloc),
          three_bytes = through(c3$p$pairs, c3$p$peak - c3$b$peak, c_over))
cat(sprintf(paste0("\ncausal mask, per head and pair of samples: %d pairs of 100-step runs (the ",
                   "step's largest live heap %.2f to %.2f per pair), %d by Rprofmem(), %d ",
                   "three-step pairs over the headroom\n"), nrow(cs$p), min(c_max / cs$p$pairs),
            max(c_max / cs$p$pairs), nrow(ca$p), sum(c_over)))
print(round(cfit, 2))
# A negative figure is written 0, as the layers' are (the safe side).
check_table(cbind(attention_causal = cfit), c("step_max", "three_bytes"), "causal mask")

# ---- ag_flash_attention(): the fused call and its causal mask ----
# Pairs of measurements-flash-fit.csv (grid_flash_fit(): stacks alone and with a block of its
# own around ag_flash_attention(), with causal = TRUE and without; 100 steps and one more under
# gctorture(): validate-long.R --grid=flash_fit --torture=true) and of
# measurements-flash-fit-wide.csv (grid_flash_fit_wide(): eight more stacks, the call alone, at
# batches that collect in full; --grid=flash_fit_wide --torture=true), measurements-flash-alloc.csv
# (Rprofmem(): measure-alloc.R) and measurements-flash-three.csv (three steps: validate.R
# --grid=flash_fit).
# The call (`flash_attention`, d_model units per sample, whatever the heads: the heads are split
# and joined in R around the fused op): a stack alone against it with a block without the mask.
# A pair differs by the block's four ag_linear(w, w) (their parameters at the parameter rules,
# their products and biases at "matmul" and "add"), and by the call, fitted through the origin
# after the table's figures for the rest are taken off; its live bytes from the pairs whose runs
# both collected in full. Its mask (`flash_causal`, one per pair of samples): the block with the
# mask against the same block without it, per pair.
fp <- function(path, causal = FALSE) {
  got <- if (causal) {
    paired(path, function(m) m$after == "flash", function(m) m$after == "flash_causal",
           by = "heads")
  } else {
    paired(path, function(m) m$after == "none", function(m) m$after == "flash")
  }
  got$p$lin <- vapply(got$p$hidden, sum, 0) * got$p$batch
  got$p$pairs <- got$p$batch^2 * lengths(got$p$hidden)
  got
}
lin_fig <- function(col, tab = live) sum(tab[[col]][tab$op %in% c("matmul", "add")])
fl <- fp(file.path(here, c("measurements-flash-fit.csv", "measurements-flash-fit-wide.csv")))
f <- fl$p
fb <- fl$b
f_max <- pair_over_params(f, fb, "step_max") - 4 * f$lin * lin_fig("step_max")
f_kept <- pair_over_params(f, fb, "retained") - 4 * f$lin * lin_fig("retained")
# The bytes live at full collections, from the pairs whose runs both collected in full.
f_live <- pair_over_params(f, fb, "bytes") - 4 * f$lin * lin_fig("bytes")
fa <- fp(file.path(here, "measurements-flash-alloc.csv"))
f_alloc <- (fa$p$alloc - fa$b$alloc) - fa$p$dparams * vapply(fa$p$optimizer, param_alloc, 0) -
  4 * fa$p$lin * lin_fig("alloc_step", unit)
# Three steps once R collects: the runs over the first trigger's headroom, less what the table
# gives the rest of the model there (the heap once R collects, less the call's own row).
ft <- fp(file.path(here, "measurements-flash-three.csv"))
f3 <- ft$p
f3_over <- f3$peak > headroom
f3_rest <- vapply(seq_len(nrow(f3)), function(i) {
  spec <- run_spec(f3$widths[i], f3$activation[i], f3$loss[i], f3$after[i], 0, f3$heads[i])
  mem <- suppressWarnings(agmem::ag_training_memory(spec, f3$batch[i], f3$optimizer[i],
                                                    quiet = TRUE, steps = 3))
  mem$host_regime$collected - f3$lin[i] * unit$bytes[unit$op %in% "flash_attention"]
}, 0)
# The mask, per pair.
fc <- fp(file.path(here, "measurements-flash-fit.csv"), causal = TRUE)
fca <- fp(file.path(here, "measurements-flash-alloc.csv"), causal = TRUE)
fc3 <- fp(file.path(here, "measurements-flash-three.csv"), causal = TRUE)
fc_max <- (fc$p$live_step_max - fc$p$heap0) - (fc$b$live_step_max - fc$b$heap0)
fc3_over <- fc3$p$peak > headroom & fc3$b$peak > headroom
ffit <- cbind(
  flash_attention = c(step_max = through(f$lin, f_max), bytes = through(f$lin, f_live),
                      retained = through(f$lin, f_kept),
                      alloc_step = through(fa$p$lin, f_alloc),
                      three_bytes = through(f3$lin, f3$peak - f3_rest, f3_over)),
  flash_causal = c(step_max = through(fc$p$pairs, fc_max), bytes = NA,
                   retained = through(fc$p$pairs, over(fc$p) - over(fc$b)),
                   alloc_step = through(fca$p$pairs, fca$p$alloc - fca$b$alloc),
                   three_bytes = through(fc3$p$pairs, fc3$p$peak - fc3$b$peak, fc3_over))
)
# The mask's live bytes are its step's largest, as the attention's (its pairs collect in full
# too rarely to fit them).
ffit["bytes", "flash_causal"] <- ffit["step_max", "flash_causal"]
f_res <- f_max - f$lin * ffit["step_max", "flash_attention"]
cat(sprintf(paste0("\nflash attention: %d pairs of 100-step runs (step_max: measured less fitted ",
                   "from %.2f to %.2f MB), %d with the mask and without (%.2f to %.2f per ",
                   "pair); %d and %d pairs by Rprofmem(); %d three-step runs over the headroom\n"),
            nrow(f), min(f_res) / 1e6, max(f_res) / 1e6, nrow(fc$p), min(fc_max / fc$p$pairs),
            max(fc_max / fc$p$pairs), nrow(fa$p), nrow(fca$p), sum(f3_over)))
print(round(ffit, 2))
# A negative step figure is written 0 (the safe side), as the other layers'.
check_table(ffit, c("step_max", "bytes", "three_bytes"), "flash attention")

# ---- sigmoid, softmax and ag_cross_entropy_loss() on the long-run basis ----
# Pairs of measurements-activations-fit.csv (grid_activations_fit(): the layers' ten stacks with
# relu hidden layers and the fused softmax cross-entropy, with sigmoid in place of relu, and with
# ag_cross_entropy_loss() in place of the fused loss) and of measurements-activations-softmax.csv
# (grid_activations_softmax(): the same stacks with relu and with softmax, measured after them)
# and of measurements-activations-wide.csv (grid_activations_wide(): four stacks of wide outputs
# with each loss, whose units the cross-entropy's figures show on; its pairs in the first file
# have 1 or 10 outputs); 100 steps and one more under gctorture() (validate-long.R --torture=true). Per unit and sample,
# through the origin: an activation over relu on the hidden units; cross-entropy over the fused
# loss on the output units, to which the fused loss's own row is added (its figures are over a
# relu layer's, as every loss row's). Their bytes allocated per step and three-step figures are
# issue #10's.
act_pairs <- function(path) {
  got <- paired(path, function(m) m$activation == "relu" & m$loss == "softmax_cross_entropy",
                function(m) m$activation != "relu" | m$loss == "cross_entropy")
  p <- got$p
  hid <- p$activation != "relu"
  out <- as.numeric(sub("^.*-", "", p$widths))
  p$op <- ifelse(hid, p$activation, "loss_cross_entropy")
  p$units <- ifelse(hid, vapply(p$hidden, sum, 0), out) * p$batch
  list(p = p, b = got$b)
}
ap2 <- act_pairs(file.path(here, c("measurements-activations-fit.csv",
                                   "measurements-activations-wide.csv",
                                   "measurements-activations-softmax.csv")))
v <- ap2$p
vb <- ap2$b
v_max <- (v$live_step_max - v$heap0) - (vb$live_step_max - vb$heap0)
v_live <- (v$live_full - v$heap0) - (vb$live_full - vb$heap0)
v_kept <- over(v) - over(vb)
v_ops <- c("sigmoid", "softmax", "loss_cross_entropy")
sce <- live[live$op %in% "loss_softmax_cross_entropy", ]
vfit <- vapply(v_ops, function(o) {
  k <- v$op == o
  f <- c(step_max = through(v$units, v_max, k), bytes = through(v$units, v_live, k),
         retained = through(v$units, v_kept, k))
  if (o == "loss_cross_entropy") f + c(sce$step_max, sce$bytes, sce$retained) else f
}, numeric(3))
cat("\nsigmoid, softmax and cross-entropy (over the fused loss), per unit and sample:\n")
for (o in v_ops) {
  k <- v$op == o
  per <- (v_max / v$units)[k]
  cat(sprintf("  %-18s %d pairs (%d with a full collection in both), step's largest %.2f to %.2f\n",
              o, sum(k), sum(k & is.finite(v_live)), min(per), max(per)))
}
print(round(vfit, 2))
check_table(vfit, c("step_max", "bytes", "retained"), "activations' and cross-entropy")
# Softmax's three-step figures (sigmoid's and the cross-entropy's are issue #10's): its bytes
# allocated per step from Rprofmem() over one step (measurements-activations-softmax-alloc.csv:
# measure-alloc.R), and its peak once R collects from the three-step pairs both over the
# headroom (measurements-activations-softmax-three.csv: validate.R --grid=activations_softmax),
# each over relu's, to which relu's unit rule is added; a negative difference is written 0.
sm_pairs <- function(path) {
  pairs(path, function(m) m$activation == "relu", function(m) m$activation == "softmax")
}
sa <- sm_pairs(file.path(here, "measurements-activations-softmax-alloc.csv"))
s3 <- sm_pairs(file.path(here, "measurements-activations-softmax-three.csv"))
s3_over <- s3$p$peak > headroom & s3$b$peak > headroom
relu_unit <- unit[unit$op %in% "relu", ]
sa_d <- (sa$p$alloc - sa$b$alloc) / sa$p$units
s3_d <- (s3$p$peak - s3$b$peak) / s3$p$units
sfit <- c(alloc_step = through(sa$p$units, sa$p$alloc - sa$b$alloc),
          three_bytes = through(s3$p$units, s3$p$peak - s3$b$peak, s3_over))
cat(sprintf(paste0("softmax over relu, three steps: allocated %.2f to %.2f per unit and sample ",
                   "(%d pairs); the peak once R collects %.2f to %.2f (%d pairs over the ",
                   "headroom)\n"), min(sa_d), max(sa_d), nrow(sa$p), min(s3_d[s3_over]),
            max(s3_d[s3_over]), sum(s3_over)))
print(round(sfit, 2))
check_table(cbind(softmax = pmax(sfit, 0) + c(relu_unit$alloc_step, relu_unit$bytes)),
            character(0), "softmax")
# On device "gpu" (measurements-activations-softmax-gpu.csv: validate.R
# --grid=activations_softmax_gpu), what the pass pool grows by per unit and sample over relu's
# unit rule there; the host (RSS growth less the pools) does not grow with it.
sg <- sm_pairs(file.path(here, "measurements-activations-softmax-gpu.csv"))
sg_pool <- (sg$p$pass_pool - sg$b$pass_pool) / sg$p$units
gpu_unit <- rules$unit[rules$unit$device == "gpu" & rules$unit$where == "device" &
                         rules$unit$backward %in% c("graph", "any"), ]
sg_fig <- gpu_unit$bytes[gpu_unit$op %in% "relu"] + mean(sg_pool)
cat(sprintf(paste0("softmax on device \"gpu\": the pass pool %.2f to %.2f per unit and sample ",
                   "over relu (%d pairs): %.2f in all\n"), min(sg_pool), max(sg_pool),
            nrow(sg$p), sg_fig))
cat(if (abs(gpu_unit$bytes[gpu_unit$op %in% "softmax"] - round(sg_fig)) < 0.5) {
  "src/rules.c holds softmax's figure on device \"gpu\"\n"
} else {
  "softmax's row on device \"gpu\" differs from src/rules.c\n"
})

# ---- the attentions in resident mode (device "gpu") ----
# Every op an attention or a flash call records is one ggmlR's graph backward emits
# (R/ag_backward_graph.R:272-275), so in resident mode the step runs on the device unless another
# layer sends it to the host.
# The pools: measurements-attention-pools-gpu.csv (validate.R --grid=attention_pools_gpu, three
# steps each): agmem's device figure against the pools measured, run by run, and what the pass
# pool grows by over the stack alone, by least squares on its terms (d = d_model, b = the batch,
# h = the heads): per unit and sample (lin), per unit and sample of one head (one), per head,
# unit and sample of more than one (blocks), per head and sample (hb), per head and pair
# (pairs), per d^2 unit (square), and per d^2 of more than one head (concat); less the
# parameters' share (8 bytes each with the graph backward, 4 with the host's).
pools_csv <- file.path(here, "measurements-attention-pools-gpu.csv")
gp_runs <- read_runs_csv(pools_csv)
gp_dev <- vapply(seq_len(nrow(gp_runs)), function(i) {
  spec <- run_spec(gp_runs$widths[i], gp_runs$activation[i], gp_runs$loss[i], gp_runs$after[i], 0,
                   gp_runs$heads[i])
  agmem::ag_training_memory(spec, gp_runs$batch[i], gp_runs$optimizer[i], "gpu", quiet = TRUE,
                            steps = 3)$device_peak
}, 0)
gp_miss <- gp_dev - (gp_runs$pass_pool + gp_runs$persistent_pool)
cat(sprintf(paste0("\nthe attentions in resident mode: agmem's device figure less the pools ",
                   "measured, %d runs of three steps: %.0f to %.0f bytes (%.3f%% to %.3f%%)\n"),
            nrow(gp_runs), min(gp_miss), max(gp_miss),
            100 * min(gp_miss / gp_dev), 100 * max(gp_miss / gp_dev)))
pool_terms <- function(p) {
  d <- vapply(p$hidden, sum, 0)
  multi <- p$heads > 1
  data.frame(lin = d * p$batch, one = (!multi) * d * p$batch,
             blocks = multi * p$heads * d * p$batch, hb = p$heads * p$batch,
             pairs = p$heads * p$batch^2, square = d^2, concat = multi * d^2)
}
for (path in c("graph", "host")) {
  base <- if (path == "graph") "none" else "layer_norm"
  gpp <- paired(pools_csv, function(m) m$after == base,
                function(m) m$after == sub("^none\\+", "", paste0(base, "+attention")))
  share <- if (path == "graph") 8 else 4
  y <- (gpp$p$pass_pool - gpp$b$pass_pool) - share * 4 * vapply(gpp$p$hidden, sum, 0)^2
  fit_pool <- stats::lm.fit(as.matrix(pool_terms(gpp$p)), y)
  cat(sprintf("  pass pool with the %s backward, %d pairs (largest residual %.2f bytes):\n",
              path, nrow(gpp$p), max(abs(fit_pool$residuals))))
  print(round(fit_pool$coefficients, 2))
}

# The host in resident mode with the graph backward: R holds the attention's downloads (Q and K
# for their widths, the whole of Q, K and V for each head's slice, the heads for their
# concatenation), the slice and placement matrices and the graph's R objects; the scores stay on
# the device. Pairs of measurements-attention-fit-gpu.csv (validate-long.R --grid=
# attention_fit_gpu: the fit grids' stacks alone and with an attention, 100 steps; a step under
# gctorture() takes minutes in resident mode, so the step's largest live heap is not measured)
# and measurements-attention-alloc-gpu.csv (Rprofmem() over one step: measure-alloc.R
# --grid=attention_fit_gpu), over the stack's figures and the parameters' (device "gpu"'s per
# parameter), by least squares on the terms lin (d b), hlin (h d b: each head's slices read the
# whole of Q, K and V; "attention_block" with more than one head, "attention_one_head" with
# one), square (d^2) and concat (d^2 with more than one head), a term that fits below 0 dropped
# and the rest fitted again (a layer frees nothing): the bytes allocated per step, the bytes
# live at full collections (the runs that collected in full) and what the allocator keeps over
# R's heap peak. Not measured, so bounded: the step's largest live heap, by the bytes live and
# those the step allocates; the three-step peak once R collects, by the bytes live.
nn_fit <- function(y, x) {
  k <- is.finite(y)
  x <- x[k, , drop = FALSE]
  y <- y[k]
  keep <- colnames(x)
  repeat {
    co <- stats::lm.fit(x[, keep, drop = FALSE], y)$coefficients
    if (all(co >= 0) || length(keep) == 1L) break
    keep <- keep[-which.min(co)]
  }
  stats::setNames(ifelse(colnames(x) %in% keep, pmax(co[match(colnames(x), keep)], 0), 0),
                  colnames(x))
}
host_terms <- function(p) {
  d <- vapply(p$hidden, sum, 0)
  multi <- p$heads > 1
  as.matrix(data.frame(lin = d * p$batch, hlin = p$heads * d * p$batch, square = d^2,
                       concat = multi * d^2))
}
g_live <- rules$live[rules$live$device == "gpu" & rules$live$backward == "any", ]
g_param <- function(opts, col) {
  vapply(opts, function(o) g_live[[col]][is.na(g_live$op) & g_live$optimizer == o], 0)
}
hq <- paired(file.path(here, "measurements-attention-fit-gpu.csv"),
             function(m) m$after == "none", function(m) m$after == "attention")
hp <- hq$p
hb <- hq$b
h_kept <- gpu_over(hp) - gpu_over(hb) - hp$dparams * g_param(hp$optimizer, "retained")
h_live <- (hp$live_full - hp$heap0) - gpu_stack_live(hp) -
  hp$dparams * g_param(hp$optimizer, "bytes")
ha <- paired(file.path(here, "measurements-attention-alloc-gpu.csv"),
             function(m) m$after == "none", function(m) m$after == "attention")
h_alloc <- (ha$p$alloc - ha$b$alloc) -
  ha$p$dparams * vapply(ha$p$optimizer, param_host, 0, col = "alloc_step", device = "gpu")
hfit <- rbind(alloc_step = nn_fit(h_alloc, host_terms(ha$p)),
              bytes = nn_fit(h_live, host_terms(hp)),
              retained = nn_fit(h_kept, host_terms(hp)))
hfit <- rbind(hfit, step_max = hfit["bytes", ] + hfit["alloc_step", ],
              three_bytes = hfit["bytes", ])
cat(sprintf(paste0("  the host with the graph backward: %d pairs of 100-step runs (%d collected in ",
                   "full), %d pairs by Rprofmem()\n"), nrow(hp), sum(is.finite(h_live)),
            nrow(ha$p)))
print(round(hfit, 2))
# The table's rows on device "gpu" with the graph backward: "attention" takes lin, the head's
# block (and the one head's) hlin, the slices square and the concatenation concat.
g_ops <- c(lin = "attention", hlin = "attention_block", square = "attention_slices",
           concat = "attention_concat", hlin = "attention_one_head")
g_unit <- rules$unit[rules$unit$device == "gpu" & rules$unit$where == "host" &
                       rules$unit$backward == "graph", ]
g_tab <- rbind(
  alloc_step = g_unit$alloc_step[match(g_ops, g_unit$op)],
  bytes = g_live$bytes[match(g_ops, g_live$op)],
  retained = g_live$retained[match(g_ops, g_live$op)],
  step_max = g_live$step_max[match(g_ops, g_live$op)],
  three_bytes = g_unit$bytes[match(g_ops, g_unit$op)]
)
say_held(g_tab, round(hfit[, names(g_ops)], 2), "attention", " on device \"gpu\"")

# The flash call in resident mode, on the host: pairs of measurements-flash-fit-gpu.csv
# (validate-long.R --grid=flash_fit_gpu, 100 steps) and measurements-flash-alloc-gpu.csv
# (Rprofmem(): measure-alloc.R --grid=flash_fit_gpu), as fp() pairs them: the call over the
# stack with the block's four ag_linear(w, w) at the table's figures (their parameters at device
# "gpu"'s, their products at "matmul" and "add"), per unit of d_model and sample; the mask over
# the same block without it, per pair of samples; each through the origin, below 0 written 0.
# The mask's live bytes are the seq x seq doubles R builds for it and keeps for the backward
# (.ag_flash_mask(), R/ag_flash_attn.R:83-96): 8 a pair, from the source.
g_lin <- function(col, tab = g_live) sum(tab[[col]][tab$op %in% c("matmul", "add")])
gf <- fp(file.path(here, "measurements-flash-fit-gpu.csv"))
gfa <- fp(file.path(here, "measurements-flash-alloc-gpu.csv"))
gfc <- fp(file.path(here, "measurements-flash-fit-gpu.csv"), causal = TRUE)
gfca <- fp(file.path(here, "measurements-flash-alloc-gpu.csv"), causal = TRUE)
gf_live <- (gf$p$live_full - gf$p$heap0) - gpu_stack_live(gf$p) -
  gf$p$dparams * g_param(gf$p$optimizer, "bytes") - 4 * gf$p$lin * g_lin("bytes")
gf_kept <- gpu_over(gf$p) - gpu_over(gf$b) - gf$p$dparams * g_param(gf$p$optimizer, "retained") -
  4 * gf$p$lin * g_lin("retained")
g_lin_alloc <- sum(g_unit$alloc_step[g_unit$op %in% c("matmul", "add")]) +
  sum(rules$unit$alloc_step[rules$unit$device == "gpu" & rules$unit$where == "host" &
                              rules$unit$backward == "any" & rules$unit$op %in% c("matmul", "add")])
gf_alloc <- (gfa$p$alloc - gfa$b$alloc) -
  gfa$p$dparams * vapply(gfa$p$optimizer, param_host, 0, col = "alloc_step", device = "gpu") -
  4 * gfa$p$lin * g_lin_alloc
pos <- function(x) if (is.finite(x)) max(x, 0) else NA_real_
gffit <- cbind(
  flash_attention = c(alloc_step = pos(through(gfa$p$lin, gf_alloc)),
                      bytes = pos(through(gf$p$lin, gf_live)),
                      retained = pos(through(gf$p$lin, gf_kept))),
  flash_causal = c(alloc_step = pos(through(gfca$p$pairs, gfca$p$alloc - gfca$b$alloc)),
                   bytes = 8,
                   retained = pos(through(gfc$p$pairs, gpu_over(gfc$p) - gpu_over(gfc$b))))
)
gffit <- rbind(gffit, step_max = gffit["bytes", ] + gffit["alloc_step", ],
               three_bytes = gffit["bytes", ])
cat(sprintf(paste0("  the flash call on the host with the graph backward: %d pairs of 100-step ",
                   "runs (%d collected in full), %d with the mask and without; %d and %d pairs by ",
                   "Rprofmem()\n"), nrow(gf$p), sum(is.finite(gf_live)), nrow(gfc$p),
            nrow(gfa$p), nrow(gfca$p)))
print(round(gffit, 2))

# The causal mask in resident mode, on the host, per head and pair of samples: allocated per step,
# from Rprofmem() over a step of the fit grid's attentions with the mask
# (measurements-attention-causal-alloc-gpu.csv: measure-alloc.R --grid=attention_causal_gpu)
# against the same without it (measurements-attention-alloc-gpu.csv); live at full collections,
# from 100-step runs of the same attentions with the mask (measurements-attention-causal-gpu.csv:
# validate-long.R --grid=attention_causal_gpu) over what agmem's rules give the same model
# without it (the runs without it seldom collect in full; through the origin, so the runs of
# many pairs weigh most: at 64 samples the mask is a few kB among MB of error); kept by the
# allocator, over the runs without it (measurements-attention-fit-gpu.csv); the step's largest
# bounded by the bytes live and allocated, the three-step figure taken as the bytes live, as the
# attention's rows in resident mode. Its source: the seq x seq doubles R builds
# for the mask, keeps on the tape until the step ends (.ag_causal_mask(), R/ag_layers.R:860-870)
# and converts for the upload, and the head's scores it reads back into R there.
# The runs of csv `file` (attentions with the mask in resident mode) and, row for row, the same
# attentions without it from csv `base`; `pairs`: each run's heads times its batch squared.
causal_gpu_pairs <- function(file, base) {
  p <- read_runs_csv(file.path(here, file))
  b <- read_runs_csv(file.path(here, base))
  b <- b[b$after == "attention", ]
  b <- b[match(paste(p$widths, p$batch, p$heads), paste(b$widths, b$batch, b$heads)), ]
  list(p = p, b = b, pairs = p$heads * p$batch^2)
}
gca <- causal_gpu_pairs("measurements-attention-causal-alloc-gpu.csv",
                        "measurements-attention-alloc-gpu.csv")
gca_d <- (gca$p$alloc - gca$b$alloc) / gca$pairs
gcp <- causal_gpu_pairs("measurements-attention-causal-gpu.csv",
                        "measurements-attention-fit-gpu.csv")
gcl <- gcp$p
gcl_pairs <- gcp$pairs
gcl_full <- which(is.finite(gcl$live_full))
gcl_rest <- vapply(gcl_full, function(i) {
  spec <- run_spec(gcl$widths[i], gcl$activation[i], gcl$loss[i], "attention", 0, gcl$heads[i])
  agmem::ag_training_memory(spec, gcl$batch[i], gcl$optimizer[i], "gpu",
                            quiet = TRUE)$host_regime$live
}, 0)
gcl_live <- rep(NA_real_, nrow(gcl))
gcl_live[gcl_full] <- (gcl$live_full[gcl_full] - gcl$heap0[gcl_full]) - gcl_rest
gcfit <- c(alloc_step = pos(through(gca$pairs, gca$p$alloc - gca$b$alloc)),
           bytes = pos(through(gcl_pairs, gcl_live)),
           retained = pos(through(gcl_pairs, gpu_over(gcl) - gpu_over(gcp$b))))
gcfit <- c(gcfit, step_max = gcfit[["bytes"]] + gcfit[["alloc_step"]],
           three_bytes = gcfit[["bytes"]])
cat(sprintf(paste0("  the causal mask on the host with the graph backward: allocated %.2f to %.2f ",
                   "per head and pair (%d pairs by Rprofmem()); live %.2f to %.2f over the rules ",
                   "without it (%d of %d 100-step runs collected in full)\n"),
            min(gca_d), max(gca_d), length(gca_d), min(gcl_live / gcl_pairs, na.rm = TRUE),
            max(gcl_live / gcl_pairs, na.rm = TRUE), length(gcl_full), nrow(gcl)))
print(round(gcfit, 2))
gc_tab <- c(alloc_step = g_unit$alloc_step[g_unit$op %in% "attention_causal"],
            bytes = g_live$bytes[g_live$op %in% "attention_causal"],
            retained = g_live$retained[g_live$op %in% "attention_causal"],
            step_max = g_live$step_max[g_live$op %in% "attention_causal"],
            three_bytes = g_unit$bytes[g_unit$op %in% "attention_causal"])
say_held(gc_tab, round(gcfit[names(gc_tab)], 2), "causal mask", " on device \"gpu\"")

# ---- The host path in resident mode: a batch norm or a layer norm with ag_device("gpu") ----
# Either layer is recorded without an op, so backward() runs every record's R closure on the
# host (R/autograd.R:1004-1031), as on device "cpu"; but the forward's values are in the device's
# pass pool, the weights in its persistent pool, and optimizer_adam() keeps its moments there and
# steps them there (R/autograd.R:1517-1528; .ag_opt_zero_like(), 1156-1162). So the host holds
# a share of device "cpu"'s bytes per unit and sample, and per parameter figures of its own.
# Fitted on measurements-layers-host-gpu.csv (validate-long.R --grid=layers_host_gpu: the layers'
# fit grid's runs with a batch norm or a layer norm, 100 steps and one more under gctorture()):
#   - the bytes live at R's full collections, less the start: by least squares, a figure per
#     parameter for Adam and one for SGD (with and without momentum: the four runs without it
#     have 0.1 million parameters, too few to tell them apart) and the share of device "cpu"'s
#     per-unit figures for the run's ops (`unit_share` in agmem_gc_rules);
#   - the step's largest live heap: per parameter, with the units at that share;
#   - the host's RSS over R's heap peak, less the device pools: per parameter, with the units'
#     retained figures at that share, and an intercept: every run reached R's node trigger
#     (the R closures' objects), so the nodes' pages are counted apart, as in resident mode's
#     graph path, and `node_free` is node_bytes times device "cpu"'s node headroom less it.
host_units <- function(r, col) {
  ops <- agmem:::registry_names("ops")
  vapply(seq_len(nrow(r)), function(i) {
    flat <- agmem:::spec_ops(run_spec(r$widths[i], r$activation[i], r$loss[i], r$after[i]))
    sum(vapply(seq_along(flat$ops), function(k) {
      op <- ops$rules[ops$name == flat$ops[[k]]]
      if (is.na(op)) op <- flat$ops[[k]]
      flat$units[[k]] * r$batch[i] * sum(live[[col]][live$op %in% op])
    }, 0))
  }, 0)
}
hg <- read_runs_csv(file.path(here, "measurements-layers-host-gpu.csv"))
hg_adam <- hg$params * (hg$optimizer == "adam")
hg_sgd <- hg$params * (hg$optimizer != "adam")
hg_live <- hg$live_full - hg$heap0
hfit_live <- stats::lm(hg_live ~ 0 + hg_adam + hg_sgd + host_units(hg, "bytes"))
h_share <- round(stats::coef(hfit_live)[[3L]], 2)
hg_units_max <- host_units(hg, "step_max")
hg_max <- (hg$live_step_max - hg$heap0) - h_share * hg_units_max
hfit_max <- stats::lm(hg_max ~ 0 + hg_adam + hg_sgd)
hg_kept <- gpu_over(hg) - h_share * host_units(hg, "retained")
hfit_kept <- stats::lm(hg_kept ~ hg_adam + hg_sgd)
h_free <- gc_fig("node_bytes", "any") * gc_fig("node_headroom") - stats::coef(hfit_kept)[[1L]]
hfit <- rbind(bytes = stats::coef(hfit_live)[1:2], step_max = stats::coef(hfit_max),
              retained = stats::coef(hfit_kept)[2:3])
colnames(hfit) <- c("adam", "sgd")
cat(sprintf(paste0("\nthe host path in resident mode: %d runs of 100 steps (%d collected in full); ",
                   "share of device \"cpu\"'s per-unit figures %.3f (standard error %.3f; the ",
                   "step's largest alone gives %.3f); the nodes' pages %.2f MB (standard error ",
                   "%.2f), node_free %.0f\n"),
            nrow(hg), sum(is.finite(hg_live)), stats::coef(hfit_live)[[3L]],
            summary(hfit_live)$coefficients[3L, 2L],
            stats::coef(stats::lm(I(hg$live_step_max - hg$heap0) ~ 0 + hg_adam + hg_sgd +
                                    hg_units_max))[[3L]],
            stats::coef(hfit_kept)[[1L]] / 1e6, summary(hfit_kept)$coefficients[1L, 2L] / 1e6,
            h_free))
print(round(hfit, 2))
h_rows <- rules$live[rules$live$device == "gpu" & rules$live$backward == "host" &
                       is.na(rules$live$op), ]
h_tab <- vapply(c(adam = "adam", sgd = "sgd", sgd_plain = "sgd_plain"), function(o) {
  unlist(h_rows[h_rows$optimizer == o, c("bytes", "step_max", "retained", "nodes")])
}, numeric(4))
# R's nodes per parameter tensor of the optimizer's step on the host path in resident mode:
# measurements-nodes-host-gpu.csv (measure-nodes.R --grid=nodes --device=gpu --only=host: two
# stacks with a batch norm or a layer norm after each hidden layer, each optimizer, R's triggers
# out of reach), each optimizer's nodes a step over sgd_plain's for the same model, through the
# origin in the parameter tensors (the spec's shapes).
hn <- utils::read.csv(file.path(here, "measurements-nodes-host-gpu.csv"), stringsAsFactors = FALSE)
hn_key <- paste(hn$widths, hn$after)
hn_plain <- hn[hn$optimizer == "sgd_plain", ]
hn_over <- hn$nodes_step - hn_plain$nodes_step[match(hn_key, paste(hn_plain$widths,
                                                                     hn_plain$after))]
hn_tensors <- vapply(seq_len(nrow(hn)), function(i) {
  length(run_spec(hn$widths[i], hn$activation[i], hn$loss[i], hn$after[i])$shapes)
}, 0)
h_nodes <- vapply(c(adam = "adam", sgd = "sgd"), function(o) {
  through(hn_tensors, hn_over, hn$optimizer == o)
}, 0)
cat(sprintf(paste0("  R's nodes a step per parameter tensor over sgd_plain's (%d runs): adam %.1f ",
                   "(%.1f to %.1f by model), sgd %.1f\n"), nrow(hn), h_nodes[["adam"]],
            min((hn_over / hn_tensors)[hn$optimizer == "adam"]),
            max((hn_over / hn_tensors)[hn$optimizer == "adam"]), h_nodes[["sgd"]]))
h_own_gc <- function(name) {
  rules$gc$value[rules$gc$device == "gpu" & rules$gc$backward == "host" & rules$gc$figure == name]
}
say_held(c(h_tab, h_own_gc("unit_share"), round(h_own_gc("node_free"))),
         c(rbind(round(hfit[, c("adam", "sgd", "sgd")], 2),
                 nodes = round(c(h_nodes[["adam"]], h_nodes[["sgd"]], 0))),
           h_share, round(h_free)), "host path", " in resident mode")

# ---- The attentions on the host path in resident mode (a layer norm before them) ----
# With a layer norm (or a batch norm) in the model, backward() runs every record's R closure on
# the host, the attention's too; the host path's share of device "cpu"'s per-unit figures (above)
# was fitted on stacks without an attention. Pairs of measurements-attention-host-gpu.csv
# (validate-long.R --grid=attention_host_gpu: the attentions' fit grid in resident mode with a
# layer norm after the hidden layer of every run, the stack with the layer norm alone each group's
# pair, 100 steps): what a run holds over what agmem's rules give its pair (the pairs at batch 64
# seldom collect in full), less the parameters the attention adds at the host path's
# per-parameter figures, by least squares on the graph path's terms (lin, hlin, square,
# concat) and the heads' pairs of samples (pairs: each head's scores), a term that fits below 0
# dropped: the bytes live at full collections and what the allocator keeps over R's heap peak.
# And the causal mask: the fit grid's stack with it (4 heads at each batch) against the same
# attention without it, per head and pair, through the origin. The step's largest live heap is
# not measured (a step under gctorture() takes minutes in resident mode): it is taken as the
# bytes live, as in device "cpu"'s attention rows.
host_attn_terms <- function(p) cbind(host_terms(p), pairs = p$heads * p$batch^2)
h_param <- function(opts, col) vapply(opts, function(o) h_rows[[col]][h_rows$optimizer == o], 0)
ahq <- paired(file.path(here, "measurements-attention-host-gpu.csv"),
              function(m) m$after == "layer_norm", function(m) m$after == "layer_norm+attention")
ahp <- ahq$p
ahb <- ahq$b
ah_live <- (ahp$live_full - ahp$heap0) - gpu_stack_live(ahb, after = "layer_norm") -
  ahp$dparams * h_param(ahp$optimizer, "bytes")
ah_kept <- gpu_over(ahp) - gpu_over(ahb) - ahp$dparams * h_param(ahp$optimizer, "retained")
ahfit <- rbind(bytes = nn_fit(ah_live, host_attn_terms(ahp)),
               retained = nn_fit(ah_kept, host_attn_terms(ahp)))
ahc <- paired(file.path(here, "measurements-attention-host-gpu.csv"),
              function(m) m$after == "layer_norm+attention" & m$heads == 4,
              function(m) m$after == "layer_norm+attention_causal")
ahc_pairs <- ahc$p$heads * ahc$p$batch^2
ahc_live <- (ahc$p$live_full - ahc$p$heap0) - (ahc$b$live_full - ahc$b$heap0)
ahcfit <- c(bytes = pos(through(ahc_pairs, ahc_live)),
            retained = pos(through(ahc_pairs, gpu_over(ahc$p) - gpu_over(ahc$b))))
cat(sprintf(paste0("\nthe attention on the host path in resident mode: %d pairs of 100-step runs ",
                   "(%d collected in full); the causal mask: %d pairs, %.2f to %.2f per head and ",
                   "pair live\n"),
            nrow(ahp), sum(is.finite(ah_live)), nrow(ahc$p), min(ahc_live / ahc_pairs),
            max(ahc_live / ahc_pairs)))
# The table's own rows on the host path in resident mode: "attention" takes lin, the head's block
# (and the one head's) hlin, the head pairs, the slices square, the concatenation concat and the
# mask causal; the step's largest is the bytes live.
ah_fit <- cbind(ahfit, causal = c(ahcfit[["bytes"]], ahcfit[["retained"]]))
print(round(ah_fit, 2))
ah_ops <- c(lin = "attention", hlin = "attention_block", hlin = "attention_one_head",
            pairs = "attention_head", square = "attention_slices", concat = "attention_concat",
            causal = "attention_causal")
# The host path's own rows of the live rules for `ops`: their bytes, retained and step's largest.
host_own_rows <- function(ops) {
  own <- rules$live[rules$live$device == "gpu" & rules$live$backward == "host", ]
  cols <- c("bytes", "retained", "step_max")
  do.call(rbind, stats::setNames(lapply(cols, function(col) own[[col]][match(ops, own$op)]), cols))
}
say_held(host_own_rows(ah_ops),
         round(rbind(ah_fit, step_max = ah_fit["bytes", ])[, names(ah_ops)], 2),
         "attention", " on the host path in resident mode")

# And the flash call on the host path in resident mode: pairs of measurements-flash-host-gpu.csv
# (validate-long.R --grid=flash_host_gpu: the flash blocks' fit grid in resident mode with a
# layer norm in every run, 100 steps). The call: each run with a block over what agmem's rules
# give the stack with the layer norm alone, less the block's parameters at the host path's
# per-parameter figures and its four ag_linear() products at device "cpu"'s "matmul" and "add"
# at the share, per unit of d_model and sample. The mask: each run with it over the same block
# without it, per pair of samples. Each through the origin, below 0 written 0, the step's
# largest the bytes live.
fh <- paired(file.path(here, "measurements-flash-host-gpu.csv"),
             function(m) m$after == "layer_norm", function(m) m$after == "layer_norm+flash")
fh$p$lin <- vapply(fh$p$hidden, sum, 0) * fh$p$batch
fh_live <- (fh$p$live_full - fh$p$heap0) - gpu_stack_live(fh$b, after = "layer_norm") -
  fh$p$dparams * h_param(fh$p$optimizer, "bytes") - 4 * fh$p$lin * h_share * lin_fig("bytes")
fh_kept <- gpu_over(fh$p) - gpu_over(fh$b) - fh$p$dparams * h_param(fh$p$optimizer, "retained") -
  4 * fh$p$lin * h_share * lin_fig("retained")
fhc <- paired(file.path(here, "measurements-flash-host-gpu.csv"),
              function(m) m$after == "layer_norm+flash",
              function(m) m$after == "layer_norm+flash_causal", by = "heads")
fhc_pairs <- fhc$p$batch^2 * lengths(fhc$p$hidden)
fhc_live <- (fhc$p$live_full - fhc$p$heap0) - (fhc$b$live_full - fhc$b$heap0)
fh_fit <- cbind(flash_attention = c(bytes = pos(through(fh$p$lin, fh_live)),
                                    retained = pos(through(fh$p$lin, fh_kept))),
                flash_causal = c(bytes = pos(through(fhc_pairs, fhc_live)),
                                 retained = pos(through(fhc_pairs,
                                                        gpu_over(fhc$p) - gpu_over(fhc$b)))))
cat(sprintf(paste0("\nthe flash call on the host path in resident mode: %d pairs of 100-step runs ",
                   "(%d collected in full), %.2f to %.2f per unit and sample live; the mask: %d ",
                   "pairs, %.2f to %.2f per pair\n"),
            nrow(fh$p), sum(is.finite(fh_live)), min(fh_live / fh$p$lin, na.rm = TRUE),
            max(fh_live / fh$p$lin, na.rm = TRUE), nrow(fhc$p), min(fhc_live / fhc_pairs),
            max(fhc_live / fhc_pairs)))
print(round(fh_fit, 2))
say_held(host_own_rows(colnames(fh_fit)), round(rbind(fh_fit, step_max = fh_fit["bytes", ]), 2),
         "flash call", " on the host path in resident mode")
if (!all_held) quit(status = 1L)
