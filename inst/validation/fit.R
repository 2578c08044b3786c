# fit.R: the rule figures of src/rules.c, fitted on the fit grid only.
#
#   Rscript inst/validation/fit.R [measurements-fit.csv [fits.rds]]
#
# Host, device "cpu" (and device "gpu", where the host is the RSS growth less the device pools
# and only the optimizer's host side, the uploads and the host-side losses count). The model
# (src/model.c, host_regime()) is
#   peak = max(0, min(scale * counted + offset, max(headroom, collected)))
# where `counted` is the bytes allocated by building the model and 3 steps, counted from ggmlR's
# source (the alloc_step and alloc_once columns of the rule table, read from the installed
# agmem), and `collected` = sum of per-parameter figures (one per optimizer) times the
# parameters plus per-unit-and-sample figures times units x batch: "matmul" + "add" per output
# unit of every layer, one figure per activation per hidden unit, one per loss per output unit,
# one per input unit. The figures are fitted by alternating least squares, relative (weights
# 1 / max(peak, 8 MB)^2): each configuration is assigned to the term that binds, then each term
# is refitted on its configurations, until the assignment is stable.
# Device "gpu": the pass pool and the persistent pool, by least squares on the same features.
# Prints the figures; rules.c takes them (rounded) with this script as their citation.
# Needs agmem installed (for its rule table); base R otherwise.

args <- commandArgs(trailingOnly = TRUE)
here <- local({
  file_arg <- grep("^--file=", commandArgs(FALSE), value = TRUE)
  if (length(file_arg)) dirname(normalizePath(sub("^--file=", "", file_arg[1L]))) else "."
})
source(file.path(here, "features.R"))
path <- if (length(args)) args[[1L]] else file.path(here, "measurements-fit.csv")
m <- utils::read.csv(path, stringsAsFactors = FALSE)
m <- cbind(m, config_features(m))
MB <- 2^20

wls <- function(y, x, w) {
  f <- stats::lm.wfit(as.matrix(x), y, w)
  cf <- f$coefficients
  cf[is.na(cf)] <- 0
  cf
}

fit_host <- function(d, XL, iters = 50L) {
  y <- host_measured(d)
  w <- 1 / pmax(y, 8 * MB)^2
  big <- y > 80 * MB
  l <- wls(y[big], XL[big, ], w[big])
  al <- c(scale = 0.7, offset = 0)
  h <- 54 * MB
  reg <- rep("", nrow(d))
  for (it in seq_len(iters)) {
    a_hat <- al[[1]] * d$counted + al[[2]]
    l_hat <- drop(XL %*% l)
    new_reg <- ifelse(a_hat < pmax(h, l_hat), "allocated", ifelse(l_hat > h, "collected",
                                                                   "headroom"))
    if (identical(new_reg, reg)) break
    reg <- new_reg
    r <- reg == "allocated"
    if (sum(r) > 3L) al <- stats::setNames(wls(y[r], cbind(d$counted[r], 1), w[r]), names(al))
    r <- reg == "collected"
    if (sum(r) > ncol(XL)) l <- wls(y[r], XL[r, ], w[r])
    r <- reg == "headroom"
    if (sum(r) > 1L) h <- stats::weighted.mean(y[r], w[r])
  }
  list(alloc = al, collected = l, headroom = h, regime = reg, iterations = it)
}

print_host <- function(f, what, n) {
  cat(sprintf("host (%s), %d configurations, %d iterations\n", what, n, f$iterations))
  print(table(regime = f$regime))
  cat(sprintf("  alloc_scale  %.4f\n  alloc_offset %.0f B (%.2f MiB)\n  headroom     %.0f B (%.2f MiB)\n",
              f$alloc[["scale"]], f$alloc[["offset"]], f$alloc[["offset"]] / MB,
              f$headroom, f$headroom / MB))
  cat("  collected, bytes per parameter or per unit and sample:\n")
  print(round(f$collected, 2))
}
cpu <- m[m$device == "cpu", ]
f <- fit_host(cpu, collected_features(cpu))
print_host(f, "device \"cpu\"", nrow(cpu))

gpu <- m[m$device == "gpu", ]
XG <- collected_features(gpu)
pass <- wls(gpu$pass_pool, cbind(XG, const = 1), 1 / pmax(gpu$pass_pool, 1e5)^2)
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
