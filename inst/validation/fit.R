# fit.R: the rule figures of src/rules.c, fitted on the fit grid only.
#
#   Rscript inst/validation/fit.R [measurements-fit.csv [fits.rds]]
#
# Host, device "cpu" (and device "gpu", where the host is the RSS growth less the device pools
# and only the optimizer's host side, the uploads and the host-side losses count). The model
# (src/model.c, host_regime()) is
#   the peak is the smaller of max(0, scale x counted + offset) and the larger of headroom and
#   collected,
# where `counted` is the bytes allocated by building the model and 3 steps, counted from ggmlR's
# source (the alloc_step and alloc_once columns of the rule table, read from the installed
# agmem), and `collected` = sum of per-parameter figures (one per optimizer) times the
# parameters plus per-unit-and-sample figures times units x batch: "matmul" + "add" per output
# unit of every layer, one figure per activation per hidden unit, one per loss per output unit,
# one per input unit. The figures are fitted by alternating least squares, relative (weights
# 1 / max(peak, 8 MB)^2): each configuration is assigned to the term that binds, then each term
# is refitted on its configurations, until the assignment is stable.
# Device "gpu": the pass pool and the persistent pool, by least squares on the same features.
# Prints the figures; rules.c takes them (rounded) with this script as their citation. Exit
# status 1 when the installed agmem's table differs from them (CI runs it in step 13).
# Needs agmem installed (for its rule table); base R otherwise.

args <- commandArgs(trailingOnly = TRUE)
options(width = 120)
here <- local({
  file_arg <- grep("^--file=", commandArgs(FALSE), value = TRUE)
  if (length(file_arg)) dirname(normalizePath(sub("^--file=", "", file_arg[1L]))) else "."
})
source(file.path(here, "features.R"))
path <- if (length(args)) args[[1L]] else file.path(here, "measurements-fit.csv")
m <- utils::read.csv(path, stringsAsFactors = FALSE)
m <- cbind(m, config_features(m))
mib <- 2^20

wls <- function(y, x, w) {
  f <- stats::lm.wfit(as.matrix(x), y, w)
  cf <- f$coefficients
  cf[is.na(cf)] <- 0
  cf
}

fit_host <- function(d, xl, iters = 50L) {
  y <- host_measured(d)
  w <- 1 / pmax(y, 8 * mib)^2
  big <- y > 80 * mib
  l <- wls(y[big], xl[big, ], w[big])
  al <- c(scale = 0.7, offset = 0)
  h <- 54 * mib
  reg <- rep("", nrow(d))
  for (it in seq_len(iters)) {
    a_hat <- al[[1]] * d$counted + al[[2]]
    l_hat <- drop(xl %*% l)
    new_reg <- ifelse(a_hat < pmax(h, l_hat), "allocated", ifelse(l_hat > h, "collected",
                                                                   "headroom"))
    if (identical(new_reg, reg)) break
    reg <- new_reg
    r <- reg == "allocated"
    if (sum(r) > 3L) al <- stats::setNames(wls(y[r], cbind(d$counted[r], 1), w[r]), names(al))
    r <- reg == "collected"
    if (sum(r) > ncol(xl)) l <- wls(y[r], xl[r, ], w[r])
    r <- reg == "headroom"
    if (sum(r) > 1L) h <- stats::weighted.mean(y[r], w[r])
  }
  list(alloc = al, collected = l, headroom = h, regime = reg, iterations = it)
}

print_host <- function(f, what, n) {
  cat(sprintf("host (%s), %d configurations, %d iterations\n", what, n, f$iterations))
  print(table(regime = f$regime))
  cat(sprintf(paste0("  alloc_scale  %.4f\n  alloc_offset %.0f B (%.2f MiB)\n",
                     "  headroom     %.0f B (%.2f MiB)\n"),
              f$alloc[["scale"]], f$alloc[["offset"]], f$alloc[["offset"]] / mib,
              f$headroom, f$headroom / mib))
  cat("  collected, bytes per parameter or per unit and sample:\n")
  print(round(f$collected, 2))
}
cpu <- m[m$device == "cpu", ]
f <- fit_host(cpu, collected_features(cpu))
print_host(f, "device \"cpu\"", nrow(cpu))

gpu <- m[m$device == "gpu", ]
xg <- collected_features(gpu)
pass <- wls(gpu$pass_pool, cbind(xg, const = 1), 1 / pmax(gpu$pass_pool, 1e5)^2)
persist <- with(gpu, wls(persistent_pool, cbind(P = P, P_adam = P * (optimizer == "adam"),
                                                const = 1), 1 / pmax(persistent_pool, 1e5)^2))
cat(sprintf("device pools (device \"gpu\"), %d configurations\n", nrow(gpu)))
cat("  pass pool, bytes per parameter or per unit and sample (const: bytes):\n")
print(round(pass, 2))
cat("  persistent pool: bytes per parameter, adam's extra, const:\n")
print(round(persist, 2))
fg <- fit_host(gpu, collected_features_gpu_host(gpu))
print_host(fg, "device \"gpu\", RSS growth less the device pools", nrow(gpu))
if (length(args) > 1L) {
  saveRDS(list(host = f, pass = pass, persistent = persist, gpu_host = fg), args[[2L]])
}

# The figures as rules.c writes them (rounded), next to the installed rule table's.
rule_figures <- function(f, pass, persist) {
  l <- round(f$host$collected)
  hl <- round(f$gpu_host$collected)
  hl[] <- pmax(0, hl)
  pass <- round(pass)
  per <- round(persist)
  mm <- round(l[["matmul_add"]] / 3)
  kib <- function(x) round(x / 1024) * 1024
  rbind(
    c("param", "cpu", "adam", "step_transients", "host", l[["P_adam"]] - 32),
    c("param", "cpu", "sgd", "step_transients", "host", l[["P_sgd"]] - 24),
    c("param", "cpu", "sgd_plain", "step_transients", "host", l[["P_sgd_plain"]] - 24),
    c("unit", "cpu", "input", "activations", "host", l[["input"]]),
    c("unit", "cpu", "matmul", "activations", "host", mm),
    c("unit", "cpu", "add", "activations", "host", l[["matmul_add"]] - mm),
    c("unit", "cpu", "relu", "activations", "host", l[["relu"]]),
    c("unit", "cpu", "sigmoid", "activations", "host", l[["sigmoid"]]),
    c("unit", "cpu", "tanh", "activations", "host", l[["tanh"]]),
    c("unit", "cpu", "loss_mse", "activations", "host", l[["loss_mse"]]),
    c("unit", "cpu", "loss_cross_entropy", "activations", "host", l[["loss_cross_entropy"]]),
    c("unit", "cpu", "loss_softmax_cross_entropy", "activations", "host",
      l[["loss_softmax_cross_entropy"]]),
    c("gc", "cpu", "alloc_scale", "", "", round(f$host$alloc[["scale"]], 3)),
    c("gc", "cpu", "alloc_offset", "", "", kib(f$host$alloc[["offset"]])),
    c("gc", "cpu", "headroom", "", "", kib(f$host$headroom)),
    c("param", "gpu", "any", "weights", "device", per[["P"]]),
    c("param", "gpu", "adam", "optimizer_state", "device", per[["P_adam"]]),
    c("param", "gpu", "any", "gradients+step_transients", "device", pass[["P_adam"]]),
    c("unit", "gpu", "input", "activations", "device", pass[["input"]]),
    c("unit", "gpu", "matmul", "activations", "device", pass[["matmul_add"]] / 2),
    c("unit", "gpu", "add", "activations", "device", pass[["matmul_add"]] / 2),
    c("unit", "gpu", "relu", "activations", "device", pass[["relu"]]),
    c("unit", "gpu", "sigmoid", "activations", "device", pass[["sigmoid"]]),
    c("unit", "gpu", "tanh", "activations", "device", pass[["tanh"]]),
    c("unit", "gpu", "loss_mse", "activations", "device", pass[["loss_mse"]]),
    c("unit", "gpu", "loss_cross_entropy", "activations", "device",
      pass[["loss_cross_entropy"]]),
    c("unit", "gpu", "loss_softmax_cross_entropy", "activations", "device",
      pass[["loss_softmax_cross_entropy"]]),
    c("param", "gpu", "adam", "build_transients", "host", hl[["P_adam"]] - 8),
    c("param", "gpu", "sgd", "step_transients", "host", hl[["P_sgd"]] - 16),
    c("param", "gpu", "sgd_plain", "step_transients", "host", hl[["P_sgd_plain"]] - 16),
    c("unit", "gpu", "input", "activations", "host", hl[["input"]]),
    c("unit", "gpu", "loss_cross_entropy", "activations", "host", hl[["loss_cross_entropy"]]),
    c("unit", "gpu", "loss_softmax_cross_entropy", "activations", "host",
      hl[["loss_softmax_cross_entropy"]]),
    c("gc", "gpu", "alloc_scale", "", "", round(f$gpu_host$alloc[["scale"]], 3)),
    c("gc", "gpu", "alloc_offset", "", "", kib(f$gpu_host$alloc[["offset"]])),
    c("gc", "gpu", "headroom", "", "", kib(f$gpu_host$headroom))
  )
}
fig <- as.data.frame(rule_figures(list(host = f, gpu_host = fg), pass, persist),
                     stringsAsFactors = FALSE)
names(fig) <- c("table", "device", "key", "component", "where", "fitted")
fig$fitted <- as.numeric(fig$fitted)
# The fit grid's dense models take ggmlR's graph backward in resident mode, so a figure of
# device "gpu" is compared with the rows of that path (and of either); rows add up into their
# cell, and the pass pool's figure per parameter, fitted as one, is now two rows (the forward's
# transposed copy of each weight, measured apart for issue 16, and the graph's gradient).
rules <- agmem:::training_rules()
fig$rules_c <- vapply(seq_len(nrow(fig)), function(i) {
  r <- fig[i, ]
  t <- rules[[r$table]]
  path <- if (is.null(t$backward)) TRUE else t$backward %in% c("any", "graph")
  parts <- strsplit(r$component, "+", fixed = TRUE)[[1L]]
  sel <- path & switch(r$table,
    param = t$device == r$device & t$optimizer == r$key & t$component %in% parts &
      t$where == r$where & t$dtype %in% c("any", "f32"),
    unit = t$device == r$device & t$op == r$key & t$component %in% parts &
      t$where == r$where,
    gc = t$device == r$device & t$figure == r$key)
  v <- if (r$table == "gc") t$value[sel] else t$bytes[sel]
  if (length(v) >= 1L) sum(v) else NA_real_
}, numeric(1))
cat("\nrules.c figures: fitted here (rounded) and in the installed agmem\n")
print(fig, row.names = FALSE)
held <- isTRUE(all.equal(fig$fitted, fig$rules_c))
cat(if (held) "all equal\n" else "DIFFERENT\n")
if (!held) quit(status = 1L)
