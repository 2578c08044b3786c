# fit-long.R: the whole-run figures of src/rules.c, fitted on the long fit grid.
#
#   Rscript inst/validation/fit-long.R [inst/validation/measurements-long-fit.csv]
#   Rscript inst/validation/fit-long.R inst/validation/measurements-long-fit-gpu.csv \
#     inst/validation/measurements-step-max-gpu.csv \
#     inst/validation/measurements-activations-wide-gpu.csv \
#     inst/validation/measurements-host-alloc-gpu.csv \
#     inst/validation/measurements-host-alloc-layers-gpu.csv  # device "gpu", the graph backward
#
# In resident mode (the runs' device "gpu") the host is the RSS growth less the device pools
# (pass_pool and persistent_pool, host memory on ggml's CPU backend), and the figures are
# compared with the rows of device "gpu"; the hidden layers are left out of the live and
# step_max fits (their values are on the device), the retained fit has a term per node in use at
# the run's most and an intercept (the pages of R's nodes) that give node_bytes and node_free, a
# third csv gives the cross-entropy's figures over the fused loss's, a fourth the host's
# allocation (agmem_host_rules, below) and a fifth that of the layers' ops it has not.
# Prints, by least squares on the runs of measure-long.R (100 steps each):
#   - the bytes live at R's full collections (the largest "vectors used" gcinfo() reported after a
#     level-2 collection, less the heap at the start) per parameter for each optimizer and per
#     unit and sample: of the input, of the hidden layers by activation (relu, tanh) and of the
#     output layer by loss (mse, softmax cross-entropy): agmem_live_rules' `bytes`, where a relu
#     layer is "matmul" plus "add" and the others add their difference to it;
#   - the resident memory over R's heap peak (the RSS peak at step 100 less gc()'s "max used"
#     over the start), per parameter for each optimizer and per unit and sample (input, hidden
#     and output units alike): agmem_live_rules' `retained` (the per-unit figure on the "input"
#     and "matmul" rows, one of which every unit has);
#   - the heap in use once R and ggmlR are loaded: the median of the heap at the start less the
#     data set (four mini-batches of input and target, 8 bytes a double): heap_start;
#   - the most the resident memory over R's heap peak went past that fit: kept_excess;
#   - the step's largest live heap (gc()'s "max used" over one step under gctorture(), less the
#     heap at the start; measurements-step-max.csv, the same configurations run for 5 steps and
#     one more under gctorture()), per parameter for each optimizer and per unit and sample as
#     for the live bytes: agmem_live_rules' `step_max`;
#   - on device "cpu", under Adam, both per scalar of the model's largest tensor too (its update
#     holds m_hat, v_hat and the expression's temporaries at once): the per-parameter rows'
#     `largest` and `largest_max`; and the standard deviation of the live bytes' residuals,
#     agmem_gc_rules' live_sd;
#   - where R's trigger ended in its range (between needed / R_VGrowFrac and 1.2 times that plus
#     R_VGrowIncrMin) in the runs whose heap needed passed R_VSIZE, 0 at the bottom and 1 at the
#     top: the median, agmem_gc_rules' trigger_place (both devices);
#   - how the step's largest fit does on the long holdout's configurations, not fitted on
#     (measurements-step-max-holdout.csv), printed only.
# Then it compares them with the table agmem was built with (agmem must be installed); exit
# status 1 when they differ (CI runs it in step 13).

here <- local({
  file_arg <- grep("^--file=", commandArgs(FALSE), value = TRUE)
  if (length(file_arg)) dirname(normalizePath(sub("^--file=", "", file_arg[1L]))) else "."
})
args <- commandArgs(trailingOnly = TRUE)
csv <- if (length(args)) args[[1L]] else file.path(here, "measurements-long-fit.csv")
step_csv <- if (length(args) > 1L) args[[2L]] else file.path(here, "measurements-step-max.csv")
# The runs of a csv, with their units per sample by kind: input, hidden layers by activation,
# output layer by loss (times the batch); `hid` and `out` all hidden and output units.
read_runs <- function(path) {
  m <- utils::read.csv(path, stringsAsFactors = FALSE)
  w <- lapply(strsplit(m$widths, "-", fixed = TRUE), as.numeric)
  m$inp <- vapply(w, function(x) x[1L], 0) * m$batch
  m$hid <- vapply(w, function(x) sum(x[-c(1L, length(x))]), 0) * m$batch
  m$out <- vapply(w, function(x) x[length(x)], 0) * m$batch
  m$hid_relu <- ifelse(m$activation == "relu", m$hid, 0)
  m$hid_tanh <- ifelse(m$activation == "tanh", m$hid, 0)
  m$out_mse <- ifelse(m$loss == "mse", m$out, 0)
  m$out_sce <- ifelse(m$loss == "softmax_cross_entropy", m$out, 0)
  # The scalars of the model's largest tensor (its largest weight) under Adam, whose update of a
  # tensor holds m_hat, v_hat and the expression's temporaries, each of the tensor's size, at once.
  largest <- vapply(w, function(x) max(x[-length(x)] * x[-1L]), 0)
  m$largest_adam <- ifelse(m$optimizer == "adam", largest, 0)
  # The step's largest single vector in doubles: its largest tensor or its widest layer's values.
  m$widest <- pmax(largest, vapply(w, max, 0) * m$batch)
  m
}
m <- read_runs(csv)
device <- unique(m$device)
stopifnot(length(device) == 1L)
m$live <- m$live_full - m$heap0
# The resident memory over R's heap peak: the RSS peak at step 100 less the heap's growth, and
# on device "gpu" less the pools.
over_of <- function(r) {
  pools <- if (device == "gpu") r$pass_pool + r$persistent_pool else 0
  r$peak_100 - pools - (r$heap_max - r$heap0)
}
m$over <- over_of(m)
m$data <- (m$inp + m$out) * 4 * 8

# Live bytes and the step's largest are fitted on the same terms: per parameter by optimizer,
# per unit and sample by kind.
# On device "gpu" the hidden layers' values live on the device: fitted with them, the host's live
# bytes per hidden unit and sample came out at -6.1 (relu, standard error 4.9) and -0.2 (tanh,
# 4.5), so they are fitted without them and their figures are 0.
by_kind <- function(y) {
  hidden <- if (device == "gpu") "" else "hid_relu + hid_tanh +"
  largest <- if (device == "gpu") "" else "+ largest_adam"
  stats::as.formula(paste(y, "~ 0 + params:optimizer + inp +", hidden, "out_mse + out_sce",
                          largest))
}
coef_or_0 <- function(fit, name) if (name %in% names(coef(fit))) coef(fit)[[name]] else 0
live <- stats::lm(by_kind("live"), data = m[!is.na(m$live_full), ])
st <- read_runs(step_csv)
st$most <- st$live_step_max - st$heap0
most <- stats::lm(by_kind("most"), data = st)
m$units <- m$inp + m$hid + m$out
# In resident mode a step makes far more R nodes than vector bytes (the graph's R objects), and
# their pages are part of the resident memory over R's heap: by the most nodes the run had in use
# over the start (gc()'s Ncells "max used" less those at the baseline; R's node trigger in a
# run whose nodes set off its collections, fewer where its vectors did), the fit's term per node
# and its intercept, node_bytes and node_free (agmem_gc_rules: node_bytes times the nodes less
# node_free).
over <- if (device == "gpu") {
  m$nodes <- m$nodes_max - m$nodes0
  stats::lm(over ~ 1 + params:optimizer + units + nodes, data = m)
} else {
  stats::lm(over ~ 0 + params:optimizer + units, data = m)
}
fitted <- c(
  stats::setNames(coef(live)[paste0("params:optimizer", c("adam", "sgd", "sgd_plain"))],
                  c("live adam", "live sgd", "live sgd_plain")),
  `live input` = coef(live)[["inp"]], `live relu layer` = coef_or_0(live, "hid_relu"),
  `live tanh layer` = coef_or_0(live, "hid_tanh"), `live mse output` = coef(live)[["out_mse"]],
  `live softmax_cross_entropy output` = coef(live)[["out_sce"]],
  stats::setNames(coef(over)[paste0("params:optimizer", c("adam", "sgd", "sgd_plain"))],
                  c("retained adam", "retained sgd", "retained sgd_plain")),
  `retained per unit` = coef(over)[["units"]],
  heap_start = stats::median(m$heap0 - m$data),
  kept_excess = max(stats::residuals(over)),
  stats::setNames(coef(most)[paste0("params:optimizer", c("adam", "sgd", "sgd_plain"))],
                  c("step_max adam", "step_max sgd", "step_max sgd_plain")),
  `step_max input` = coef(most)[["inp"]], `step_max relu layer` = coef_or_0(most, "hid_relu"),
  `step_max tanh layer` = coef_or_0(most, "hid_tanh"),
  `step_max mse output` = coef(most)[["out_mse"]],
  `step_max softmax_cross_entropy output` = coef(most)[["out_sce"]]
)
# Where R's trigger ended in its range, for the runs whose heap needed at their largest full
# collection (the live heap gcinfo() reported, the largest single vector, R_MinFreeFrac of
# R_VSIZE) passed R_VSIZE: 0 at needed / R_VGrowFrac, 1 at (1 + R_VGrowIncrFrac) times that plus
# R_VGrowIncrMin, the trigger the larger of the one read at the end and the heap's peak (a
# trigger read after R shrank it is below the heap's peak); the median, agmem_gc_rules'
# trigger_place.
trigger_place <- function(r) {
  needed <- r$live_full + 8 * r$widest + 0.2 * 67108864
  passed <- !is.na(needed) & needed > 67108864
  bottom <- needed[passed] / 0.7
  stats::median((pmax(r$trigger_end, r$heap_max)[passed] - bottom) / (0.2 * bottom + 640000))
}
if (device == "cpu") {
  fitted <- c(fitted, `live adam largest` = coef(live)[["largest_adam"]],
              `step_max adam largest` = coef(most)[["largest_adam"]],
              live_sd = stats::sd(stats::residuals(live)), trigger_place = trigger_place(m))
}
if (device == "gpu") {
  fitted <- c(fitted, node_bytes = coef(over)[["nodes"]],
              node_free = -coef(over)[["(Intercept)"]], trigger_place = trigger_place(m))
}
# The cross-entropy in resident mode (a third csv, measurements-activations-wide-gpu.csv: four
# stacks of wide outputs, each with the fused loss and with ag_cross_entropy_loss(), 100 steps and
# one more under gctorture()): what each pair differs by per output unit and sample, through the
# origin, added to the fused loss's figures above.
if (device == "gpu" && length(args) > 2L) {
  w <- read_runs(args[[3L]])
  base <- w[w$loss == "softmax_cross_entropy", ]
  ce <- w[w$loss == "cross_entropy", ]
  stopifnot(nrow(base) == nrow(ce), all(base$widths == ce$widths & base$batch == ce$batch))
  through <- function(y) sum(ce$out * y) / sum(ce$out^2)
  fitted <- c(fitted,
              `live cross_entropy output` = fitted[["live softmax_cross_entropy output"]] +
                through((ce$live_full - ce$heap0) - (base$live_full - base$heap0)),
              `retained cross_entropy output` = through(over_of(ce) - over_of(base)),
              `step_max cross_entropy output` = fitted[["step_max softmax_cross_entropy output"]] +
                through((ce$live_step_max - ce$heap0) - (base$live_step_max - base$heap0)))
}
cat(sprintf("device %s: %d runs (%d with a full collection); %d runs under gctorture()\n",
            device, nrow(m), sum(!is.na(m$live_full)), nrow(st)))
cat(sprintf("step_max fit: measured / fitted from %.3f to %.3f (median %.3f)\n",
            min(st$most / fitted(most)), max(st$most / fitted(most)),
            stats::median(st$most / fitted(most))))
# The step's largest on the long holdout (measurements-step-max-holdout.csv: its configurations
# run for 5 steps and one more under gctorture()), not fitted on.
held_csv <- file.path(here, "measurements-step-max-holdout.csv")
if (device == "cpu" && length(args) < 2L && file.exists(held_csv)) {
  held <- read_runs(held_csv)
  held_most <- held$live_step_max - held$heap0
  held_fit <- stats::predict(most, held)
  cat(sprintf(paste0("step_max held out (%d runs of the long holdout): measured / fitted from ",
                     "%.3f to %.3f (median %.3f), root mean square error %.2f MiB\n"),
              nrow(held), min(held_most / held_fit), max(held_most / held_fit),
              stats::median(held_most / held_fit), sqrt(mean((held_most - held_fit)^2)) / 2^20))
}
print(round(fitted[names(fitted) != "trigger_place"], 2))
cat(sprintf("trigger_place %.4f\n", fitted[["trigger_place"]]))

if (requireNamespace("agmem", quietly = TRUE)) {
  rules <- agmem:::training_rules()
  l <- rules$live[rules$live$device == device & rules$live$backward == "any", ]
  per <- function(opt, col) l[[col]][is.na(l$op) & l$optimizer == opt]
  op <- function(name) l$bytes[l$op %in% name]
  relu <- op("matmul") + op("add") + op("relu")
  op_max <- function(name) l$step_max[l$op %in% name]
  # a figure of the device's own gc rows (not the host path's in resident mode)
  gc <- rules$gc[rules$gc$device == device & rules$gc$backward == "any", ]
  gc_fig <- function(name) gc$value[gc$figure == name]
  relu_max <- op_max("matmul") + op_max("add") + op_max("relu")
  table <- c(per("adam", "bytes"), per("sgd", "bytes"), per("sgd_plain", "bytes"), op("input"),
             relu, op("matmul") + op("add") + op("tanh"), op("matmul") + op("add") + op("loss_mse"),
             op("matmul") + op("add") + op("loss_softmax_cross_entropy"), per("adam", "retained"),
             per("sgd", "retained"), per("sgd_plain", "retained"),
             l$retained[l$op %in% "matmul"],
             gc_fig("heap_start"), gc_fig("kept_excess"),
             per("adam", "step_max"), per("sgd", "step_max"), per("sgd_plain", "step_max"),
             op_max("input"), relu_max, op_max("matmul") + op_max("add") + op_max("tanh"),
             op_max("matmul") + op_max("add") + op_max("loss_mse"),
             op_max("matmul") + op_max("add") + op_max("loss_softmax_cross_entropy"))
  if (device == "cpu") {
    table <- c(table, per("adam", "largest"), per("adam", "largest_max"),
               gc_fig("live_sd"), gc_fig("trigger_place"))
  }
  if (device == "gpu") {
    table <- c(table, gc_fig("node_bytes"), gc_fig("node_free"), gc_fig("trigger_place"))
  }
  if (length(fitted) > length(table)) {
    table <- c(table, op("matmul") + op("add") + op("loss_cross_entropy"),
               l$retained[l$op %in% "loss_cross_entropy"],
               op_max("matmul") + op_max("add") + op_max("loss_cross_entropy"))
  }
  if (length(table) != length(fitted)) stop("src/rules.c has no such rows for device ", device)
  # figures written to two decimals, the trigger's place (a share) to four
  tolerance <- ifelse(names(fitted) == "trigger_place", 5.1e-5, pmax(0.051, 1e-4 * abs(fitted)))
  off <- abs(table - fitted) > tolerance
  cat(if (any(off)) "differs from src/rules.c:" else "src/rules.c holds these figures",
      names(fitted)[off], "\n")
  if (any(off)) quit(status = 1L)
}

# The host's allocation in resident mode (a fourth csv, measurements-host-alloc-gpu.csv: the fit
# grid's configurations run for 3 and for 8 steps with R's triggers out of reach,
# grid_host_alloc_gpu(), so that nothing is collected): what a run allocated once (gc()'s "max
# used" over the baseline after 3 steps, less 3 steps' worth) and a step (a fifth of the two
# runs' difference), by least squares, once fixed and per parameter for each optimizer, a step
# fixed, per parameter for each optimizer and per unit and sample of the input and of the output
# by loss (the hidden layers' values stay on the device; fitted with them, their figure is
# printed apart): agmem_host_rules.
# The runs of such a csv run for 3 steps, with what each allocated a step and once.
alloc_runs <- function(path) {
  a <- read_runs(path)
  stopifnot(all(a$n_gc == 0))
  three <- a[a$steps == 3, ]
  eight <- a[a$steps == 8, ]
  keys <- function(r) paste(r$widths, r$batch, r$optimizer, r$activation, r$loss, r$variant,
                            r$after)
  stopifnot(identical(keys(three), keys(eight)))
  three$step <- (eight$heap_max - three$heap_max) / 5
  three$once <- three$heap_max - three$heap0 - 3 * three$step
  three
}
if (device == "gpu" && length(args) > 3L) {
  three <- alloc_runs(args[[4L]])
  once <- stats::lm(once ~ 1 + params:optimizer, data = three)
  step_terms <- "step ~ 1 + params:optimizer + inp + out_mse + out_sce"
  step <- stats::lm(stats::as.formula(step_terms), data = three)
  hidden <- stats::lm(stats::as.formula(paste(step_terms, "+ hid")), data = three)
  opts <- paste0("params:optimizer", c("adam", "sgd", "sgd_plain"))
  host <- c(`once fixed` = coef(once)[["(Intercept)"]],
            stats::setNames(coef(once)[opts], paste("once", c("adam", "sgd", "sgd_plain"))),
            `step fixed` = coef(step)[["(Intercept)"]],
            stats::setNames(coef(step)[opts], paste("step", c("adam", "sgd", "sgd_plain"))),
            `step input` = coef(step)[["inp"]], `step mse output` = coef(step)[["out_mse"]],
            `step softmax_cross_entropy output` = coef(step)[["out_sce"]])
  cat(sprintf(paste0("host allocation in resident mode: %d configurations; residuals once %.3f ",
                     "MB, a step %.3f MB at most; a hidden unit and sample fitted apart: %.2f ",
                     "(standard error %.2f)\n"),
              nrow(three), max(abs(stats::residuals(once))) / 1e6,
              max(abs(stats::residuals(step))) / 1e6, coef(hidden)[["hid"]],
              summary(hidden)$coefficients["hid", "Std. Error"]))
  print(round(host, 2))
  if (requireNamespace("agmem", quietly = TRUE)) {
    h <- agmem:::training_rules()$host
    h <- h[h$device == "gpu", ]
    row <- function(opt, op, col) h[[col]][h$optimizer == opt & (if (is.na(op)) is.na(h$op)
                                                                   else h$op %in% op)]
    table <- c(row("any", NA, "once"), row("adam", NA, "once"), row("sgd", NA, "once"),
               row("sgd_plain", NA, "once"), row("any", NA, "step"), row("adam", NA, "step"),
               row("sgd", NA, "step"), row("sgd_plain", NA, "step"), row("any", "input", "step"),
               row("any", "loss_mse", "step"), row("any", "loss_softmax_cross_entropy", "step"))
    if (length(table) != length(host)) stop("src/rules.c has no such host rows for device gpu")
    # fixed bytes written whole, the others to two decimals
    off <- abs(table - host) > ifelse(grepl("fixed", names(host)), 0.51, 0.0051 + 1e-4 * abs(host))
    cat(if (any(off)) "differs from src/rules.c:" else "src/rules.c holds these figures",
        names(host)[off], "\n")
    if (any(off)) quit(status = 1L)
  }
}

# The old garbage of R's node collections in resident mode (agmem_gc_rules' `promoted`): each
# collection R's nodes set off is a level-0 collection, which promotes what it finds live of the
# step's mini-batch; that dies with the step but stays until a level-1 collection. On the runs
# of the fit grid (the first csv) whose race agmem runs (the host's allocation counted) and
# whose heap stays under R's trigger without that garbage, the share of the mini-batch's bytes
# that makes the race's heap (the larger of the heap at the first node collection and at the
# later ones, with their garbage; never over the trigger) come nearest R's heap peak (gc()'s
# "max used" over the start), by least squares; from the race's terms agmem computes
# (node_race(): host_race_first, host_race_later, host_race_old), which do not depend on it.
# agmem and the harness's reading of a run's model, for the fits below that need them (`what`
# says which, in the error when agmem is not installed).
need_agmem <- function(what) {
  if (!requireNamespace("agmem", quietly = TRUE)) {
    stop("fit-long.R needs agmem installed for ", what, call. = FALSE)
  }
  if (!exists("run_spec", mode = "function")) source(file.path(here, "harness.R"))
}
if (device == "gpu" && length(args) > 3L) {
  need_agmem("device gpu (it reads the race's terms)")
  start <- with(agmem:::training_rules()$gc, value[figure == "heap_start" & device == "gpu"])
  terms <- do.call(rbind, lapply(seq_len(nrow(m)), function(i) {
    spec <- run_spec(m$widths[i], m$activation[i], m$loss[i])
    flat <- agmem:::spec_ops(spec)
    run <- agmem:::model_run(spec, 100, 0, agmem:::collector_settings())
    f <- .Call(agmem:::agmem_training_memory, spec$shapes, flat$units, flat$ops, m$batch[i],
               m$optimizer[i], "gpu", "f32", run)
    c(first = f$host_race_first, later = f$host_race_later, old = f$host_race_old,
      room = f$host_trigger - start)
  }))
  raced <- is.finite(terms[, "later"]) &
    pmax(terms[, "first"], terms[, "later"]) < terms[, "room"]
  heap <- (m$heap_max - m$heap0)[raced]
  race_heap <- function(share) {
    t <- terms[raced, , drop = FALSE]
    pmin(t[, "room"], pmax(t[, "first"], t[, "later"] + share * t[, "old"]))
  }
  promoted <- stats::optimize(function(share) sum((heap - race_heap(share))^2), c(0, 2))$minimum
  cat(sprintf(paste0("old garbage of the node collections in resident mode: %d runs; share of ",
                     "the mini-batch promoted %.3f; the race's heap against R's heap peak: ",
                     "root mean square %.2f MB without it, %.2f MB with it; most under %.2f ",
                     "MB and %.2f MB\n"),
              sum(raced), promoted, sqrt(mean((heap - race_heap(0))^2)) / 1e6,
              sqrt(mean((heap - race_heap(promoted))^2)) / 1e6, max(heap - race_heap(0)) / 1e6,
              max(heap - race_heap(promoted)) / 1e6))
  table <- with(agmem:::training_rules()$gc, value[figure == "promoted" & device == "gpu"])
  off <- length(table) != 1L || abs(table - promoted) > 5.1e-4
  cat(if (off) "differs from src/rules.c: promoted" else "src/rules.c holds these figures", "\n")
  if (off) quit(status = 1L)
}

# The same for the ops of the layers' grids that the long fit grid does not have (a fifth csv,
# measurements-host-alloc-layers-gpu.csv, grid_host_alloc_layers_gpu()): what a run allocated
# a step less what the rows above give for it (agmem's reading of its model, op by op: per
# sample, per pair of samples or once, as the op counts), by least squares without an
# intercept on the counts of each op the rows do not have; and what it allocated once less the
# rows' once, printed. The table has rows for dropout, sigmoid, softmax,
# ag_cross_entropy_loss() and the flash call and its mask; the attention's ops are printed,
# not checked: the race with them put more runs of its grids under (design/whole-run.md).
if (device == "gpu" && length(args) > 4L) {
  need_agmem("its fifth csv (it reads the runs' models)")
  three <- alloc_runs(args[[5L]])
  h <- agmem:::training_rules()$host
  h <- h[h$device == "gpu", ]
  ops <- agmem:::registry_names("ops")
  power <- c(table = 0, pairs = 2)
  counted <- list()
  known <- numeric(nrow(three))
  known_once <- numeric(nrow(three))
  fitted_ops <- c("dropout", "sigmoid", "softmax", "loss_cross_entropy", "flash_attention",
                  "flash_causal")
  for (i in seq_len(nrow(three))) {
    r <- three[i, ]
    fixed <- is.na(h$op) & h$optimizer == "any"
    mine <- is.na(h$op) & h$optimizer == r$optimizer
    known[i] <- h$step[fixed] + r$params * h$step[mine]
    known_once[i] <- h$once[fixed] + r$params * h$once[mine]
    flat <- agmem:::spec_ops(run_spec(r$widths, r$activation, r$loss, r$after, 0, r$heads))
    for (k in seq_along(flat$ops)) {
      at <- match(flat$ops[[k]], ops$name)
      op <- if (is.na(ops$rules[at])) ops$name[at] else ops$rules[at]
      pw <- power[ops$kind[at]]
      units <- flat$units[[k]] * r$batch^(if (is.na(pw)) 1 else pw)
      if (op %in% h$op && !op %in% fitted_ops) {
        known[i] <- known[i] + units * h$step[h$op %in% op]
      } else {
        if (is.null(counted[[op]])) counted[[op]] <- numeric(nrow(three))
        counted[[op]][i] <- counted[[op]][i] + units
      }
    }
  }
  x <- do.call(cbind, counted)
  layers <- stats::lm(three$step - known ~ 0 + x)
  fitted <- stats::setNames(stats::coef(layers), colnames(x))
  se <- stats::setNames(summary(layers)$coefficients[, "Std. Error"], colnames(x))
  cat(sprintf(paste0("host allocation of the layers' ops in resident mode: %d configurations; ",
                     "residuals a step %.3f MB at most, once (the rows' once) %.3f MB at most\n"),
              nrow(three), max(abs(stats::residuals(layers))) / 1e6,
              max(abs(three$once - known_once)) / 1e6))
  print(round(rbind(step = fitted, `standard error` = se), 2))
  fitted <- fitted[fitted_ops]
  # a figure within three standard errors of 0 and under one byte is written 0
  fitted[abs(fitted) < 3 * se[fitted_ops] & abs(fitted) < 1] <- 0
  table <- vapply(fitted_ops, function(op) h$step[h$op %in% op], 0)
  off <- abs(table - fitted) > 0.0051 + 1e-4 * abs(fitted)
  cat(if (any(off)) "differs from src/rules.c:" else "src/rules.c holds these figures",
      fitted_ops[off], "\n")
  if (any(off)) quit(status = 1L)
}
