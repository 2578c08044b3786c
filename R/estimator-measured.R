# The estimator of a measurement (ag_measure_training_memory()): the line fitted to the measured
# peaks, fixed + per_sample * batch, on the host for a measurement on the CPU and on the device
# for one on the GPU. The measured step chose its own optimizer and dtype.

# A measured estimator for x, an ag_measured_memory; refuses the arguments that do not apply
# to a measurement when they are given (`given`), and a `device` other than the one measured.
measured_estimator <- function(x, device, given, arg) {
  refuse_frac(given, "a measurement")
  check_measured(x, arg)
  if (isTRUE(given$device) && device != x$device) {
    stop_arg(
      "`device` is \"", device, "\", but `", arg, "` was measured on device \"", x$device,
      "\": leave `device` out to plan on the device measured, or measure again with device = \"",
      device, "\"."
    )
  }
  if (isTRUE(given$dtype)) {
    stop_arg("`dtype` does not apply to a measurement: the measured step chose its own dtype. ",
             "Leave `dtype` out.")
  }
  if (isTRUE(given$optimizer)) {
    stop_arg("`optimizer` does not apply to a measurement: the measured step chose its own ",
             "optimizer. Leave `optimizer` out.")
  }
  where <- planned_place(x$device)
  warn_check(x, where)
  new_estimator(list(
    device = x$device, dtype = NA_character_, where = where, line = line_of(x, where),
    points = measured_points(x, where),
    other = list(host = line_of(x, "host"), device = line_of(x, "device")),
    floor = measured_floor(x, where), other_floor = c(host = measured_floor(x, "host"),
                                                      device = measured_floor(x, "device")),
    column = paste0(where, "_peak"), label = paste(where, "peak")
  ), "agmem_measured")
}

# Warns (agmem_warning_check) when the measurement's check at `where` (the line fitted without
# the largest batch size, tested there; ag_measure_training_memory()) under-predicted by more
# than `check_tolerance`: a plan on the line may not hold. Silent without a check.
warn_check <- function(x, where) {
  ck <- x$check
  if (!is.data.frame(ck) || !all(c("where", "relative_error", "batch_size") %in% names(ck)) ||
    !any(ck$where == where)) {
    return(invisible(NULL))
  }
  row <- ck[ck$where == where, ][1L, ]
  err <- as.double(row$relative_error)
  if (!is.na(err) && err < -check_tolerance) {
    warn(
      "The measured ", where, " line, fitted without batch size ", row$batch_size,
      ", under-predicted its peak there by ", sprintf("%.1f%%", -100 * err), ": the peak grows ",
      "faster than the line, so a plan on it may not hold. Keep a `margin`, or measure batch ",
      "sizes around the one you plan for.",
      class = "check"
    )
  }
  invisible(NULL)
}

# How far a measured line may under-predict its check before the planners warn: the tolerance
# of agmem's validation goal (issue 15: within 15%).
check_tolerance <- 0.15

# The measured peaks at `where`: a data frame of `batch` and `peak`, by batch size (empty when
# the measurement holds none).
measured_points <- function(x, where) {
  m <- x$measurements
  col <- paste0(where, "_peak")
  if (!is.data.frame(m) || !all(c("batch_size", col) %in% names(m))) {
    return(data.frame(batch = numeric(0), peak = numeric(0)))
  }
  keep <- is.finite(m$batch_size) & is.finite(m[[col]])
  pts <- data.frame(batch = as.double(m$batch_size[keep]), peak = as.double(m[[col]][keep]))
  pts[order(pts$batch), , drop = FALSE]
}

# The measured batches that bracket the answer for `limit` bytes: `lo`, the largest measured
# batch up to which every measured peak fits (0 when the smallest does not), and `hi`, the
# smallest measured batch whose peak does not fit (Inf when all fit).
measured_bracket <- function(points, limit) {
  over <- points$batch[points$peak > limit]
  hi <- if (length(over)) min(over) else Inf
  fits <- points$batch[points$batch < hi]
  c(lo = if (length(fits)) max(fits) else 0, hi = hi)
}

# The smallest peak measured at `where` (0 when the measurement holds no peaks there): the
# floor of the measured figure, so that a line fitted with a negative fixed part never
# predicts a peak below what was measured, and no batch fits in nothing.
measured_floor <- function(x, where) {
  peaks <- x$measurements[[paste0(where, "_peak")]]
  peaks <- peaks[is.finite(peaks)]
  if (is.numeric(peaks) && length(peaks) > 0L) max(0, min(peaks)) else 0
}

# The line of a checked measurement at `where`: c(fixed = , per_sample = ), doubles.
line_of <- function(x, where) {
  vapply(c("fixed", "per_sample"), function(n) as.double(x$line[[where]][[n]]), 0)
}

# Checks that x is an ag_measured_memory as ag_measure_training_memory() makes it: `device`
# one of the registry's devices, and `line`, a list with `host` and `device`, each a double
# vector with the finite elements `fixed` and `per_sample`. Returns x; refuses anything else
# naming `arg`.
check_measured <- function(x, arg) {
  bad <- function(why) stop_arg("`", arg, "` is a malformed ag_measured_memory: ", why, ".")
  if (!is.list(x) || !all(c("line", "device") %in% names(x))) {
    bad("it needs the fields `line` and `device`")
  }
  devices <- registry_names("devices")
  if (!is.character(x$device) || length(x$device) != 1L || !x$device %in% devices) {
    bad(paste("`device` must be", choice_text(devices)))
  }
  line <- x$line
  ok_part <- function(p) {
    is.numeric(p) && all(c("fixed", "per_sample") %in% names(p)) &&
      all(is.finite(p[c("fixed", "per_sample")]))
  }
  if (!is.list(line) || !all(c("host", "device") %in% names(line)) ||
    !ok_part(line$host) || !ok_part(line$device)) {
    bad(paste("`line` must be a list of `host` and `device`, each with finite `fixed` and",
              "`per_sample` bytes"))
  }
  where <- planned_place(x$device)
  if (line[[where]][["per_sample"]] < 0) {
    bad(paste0(
      "its ", where, " line falls as the batch grows (per_sample ",
      format(line[[where]][["per_sample"]]), " bytes): measure again at batch sizes further apart"
    ))
  }
  invisible(x)
}

# A measurement has one line: its one "optimizer" is "measured".
#' @export
est_optimizers.agmem_measured <- function(est, optimizer, # nolint: object_name_linter.
                                          several = FALSE) {
  "measured"
}

#' @export
est_peak.agmem_measured <- function(est, b, optimizer) { # nolint: object_name_linter.
  max(est$floor, est$line[["fixed"]] + est$line[["per_sample"]] * b)
}

# The line's answer, kept within what was measured: never below a measured batch whose run (and
# every smaller measured run) fit, never at or above one whose run did not; measured runs are
# facts where the line is a fit.
#' @export
est_max_batch.agmem_measured <- function(est, limit, optimizer) { # nolint: object_name_linter.
  if (est$floor > limit) {
    return(0)
  }
  b <- .Call(agmem_max_batch_line, est$line[["fixed"]], est$line[["per_sample"]], limit)
  if (nrow(est$points) == 0L) {
    return(b)
  }
  br <- measured_bracket(est$points, limit)
  if (b >= br[["hi"]]) {
    b <- br[["hi"]] - 1
  }
  max(b, br[["lo"]])
}

# One row per batch size: the planned line's `fixed` part and its `variable` part
# (per_sample * batch), and both lines' host_peak and device_peak, each at least the smallest
# peak measured there (measured_floor()).
#' @export
est_sweep.agmem_measured <- function(est, batch_size, optimizer) { # nolint: object_name_linter.
  b <- check_batch_sizes(batch_size)
  peak <- function(where) {
    pmax(est$other_floor[[where]],
         est$other[[where]][["fixed"]] + est$other[[where]][["per_sample"]] * b)
  }
  data.frame(
    optimizer = "measured", batch_size = b, fixed = rep(est$line[["fixed"]], length(b)),
    variable = est$line[["per_sample"]] * b, host_peak = peak("host"),
    device_peak = if (est$where == "device") peak("device") else rep(0, length(b)),
    stringsAsFactors = FALSE
  )
}

#' @export
# nolint start: object_name_linter, object_length_linter.
est_zero_columns.agmem_measured <- function(est) {
  "device_peak"
}
# nolint end

#' @export
est_plot_parts.agmem_measured <- function(est) { # nolint: object_name_linter.
  list(
    bands = list(fixed = "fixed", `per sample x batch` = "variable"),
    drop_zero = TRUE,
    title = paste("Measured", est$where, "peak by batch size (fitted line)"),
    ylab = est$label,
    lines = function(optimizers) paste0(est$label, ", measured line"),
    stack_suffix = function(optimizer) ""
  )
}

#' @export
format.agmem_measured <- function(x, what = c("title", "planned"), ...) {
  switch(match.arg(what),
    title = sprintf(
      paste("Measured peak by batch size: the line fitted to a measurement on device \"%s\";",
            "planned on %s"),
      x$device, x$column
    ),
    planned = sprintf("the %s of the measured line (device \"%s\")", x$column, x$device)
  )
}
