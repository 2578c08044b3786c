# The "ag_measured_memory" class: a measurement of ag_measure_training_memory() (measure.R), its
# fitted lines, its report and its summary (the largest batch for a budget, through the measured
# estimator of estimator-measured.R).

# Builds the "ag_measured_memory" object from the measurements (a data frame sorted by
# batch_size, as ag_measure_training_memory() makes it): the lines fitted in C and the check.
measured_memory <- function(measurements, device, ggmlr_version, steps = 3L) {
  places <- if (device == "gpu") c("host", "device") else "host"
  fit <- function(rows, where) {
    .Call(agmem_line_fit, measurements$batch_size[rows],
          measurements[[paste0(where, "_peak")]][rows])
  }
  all_rows <- seq_len(nrow(measurements))
  line <- list(host = fit(all_rows, "host"), device = c(fixed = 0, per_sample = 0))
  if (device == "gpu") {
    line$device <- fit(all_rows, "device")
  }
  check <- NA
  if (nrow(measurements) >= 3L) {
    last <- nrow(measurements)
    check <- do.call(rbind, lapply(places, function(where) {
      held_out <- fit(all_rows[-last], where)
      b <- measurements$batch_size[[last]]
      measured <- measurements[[paste0(where, "_peak")]][[last]]
      predicted <- held_out[["fixed"]] + held_out[["per_sample"]] * b
      data.frame(
        where = where, batch_size = b, measured = measured, predicted = predicted,
        relative_error = if (measured > 0) (predicted - measured) / measured else NA_real_,
        stringsAsFactors = FALSE
      )
    }))
  }
  structure(list(
    measurements = measurements, line = line, check = check, device = device,
    steps = steps, ggmlR_version = ggmlr_version
  ), class = "ag_measured_memory")
}

# The host peak should at least double over the measured batch sizes, or the line mostly fits R's
# garbage collection. Measured with inst/validation/measure-step.R (three batch sizes, checked
# at 4x the largest): where the peak grew 1.3x (dense 4 x 1024 adam, batch 32-128: 254 to 327
# MiB), 1.6x (dense 2 x 512 sgd, 256-1024) or 1.3x (embedding + attention, d = 64), the line
# missed by 40%, 12% and 49%; where it grew 3.3x (dense 3 x 256 adam, 2048-8192) or 3.2x
# (attention, d = 128), by 1-5%.
min_host_growth <- 2

#' Report of a measured training-step peak
#'
#' Writes a measurement of [ag_measure_training_memory()] as a report: the
#' peaks at each batch size, the fitted line and its check.
#'
#' @param x An `"ag_measured_memory"` from [ag_measure_training_memory()].
#' @inheritParams format.ag_training_memory
#'
#' @return `format()`: the lines of the report, a character vector.
#'   `print()`: `x`, invisibly, after writing the report.
#'
#' @examples
#' # A measurement as ag_measure_training_memory() returns it (figures from a
#' # run of a dense 1024-1024-10 model with adam):
#' m <- structure(list(
#'   measurements = data.frame(
#'     batch_size = c(64L, 128L, 256L),
#'     host_peak = c(71.2, 82.9, 106.1) * 2^20, device_peak = 0,
#'     seconds = c(0.4, 0.6, 1.1), peak_reset = TRUE
#'   ),
#'   line = list(host = c(fixed = 59.6 * 2^20, per_sample = 0.182 * 2^20),
#'               device = c(fixed = 0, per_sample = 0)),
#'   check = data.frame(where = "host", batch_size = 256L, measured = 106.1 * 2^20,
#'                      predicted = 106.3 * 2^20, relative_error = 0.0019),
#'   device = "cpu", steps = 3L, ggmlR_version = "0.8.8.1"
#' ), class = "ag_measured_memory")
#' m
#' print(m, units = "si")
#' @export
format.ag_measured_memory <- function(x, units = "iec", ...) {
  check_units(units)
  m <- x$measurements
  if (!is.data.frame(m) || nrow(m) == 0L) {
    return(c(sprintf("Measured peak of a training step: device \"%s\"", x$device),
             "  no batch size was measured: nothing to report"))
  }
  gpu <- x$device == "gpu"
  bytes <- function(v) format_bytes_scaled(v, units)
  table <- data.frame(
    batch = formatC(m$batch_size, format = "d", big.mark = " "),
    host = bytes(m$host_peak),
    device = if (gpu) bytes(m$device_peak) else rep("-", nrow(m)),
    seconds = formatC(m$seconds, format = "f", digits = 2),
    stringsAsFactors = FALSE
  )
  header <- c(batch = "batch size", host = "host peak", device = "device peak",
              seconds = "seconds")
  if (!is.null(m$steps)) {
    # A run that reached its most steps with its peak still rising is marked.
    table$steps <- paste0(m$steps, ifelse(m$settled, " ", "*"))
    header[["steps"]] <- "steps "
  }
  widths <- pmax(nchar(header), vapply(table, function(col) max(nchar(col)), 0L))
  row_text <- function(cells) {
    paste(sprintf("%*s", widths, cells), collapse = "  ")
  }
  line_text <- function(where, label) {
    l <- x$line[[where]]
    sprintf("  %s = %s + %s x batch", label, bytes(l[["fixed"]]), bytes(l[["per_sample"]]))
  }
  lines <- c(
    if (is.null(m$steps)) {
      sprintf("Measured peak of a training step: device \"%s\", ggmlR %s, %d steps per batch size",
              x$device, x$ggmlR_version, x$steps)
    } else {
      sprintf(paste("Measured peak of a training run: device \"%s\", ggmlR %s; each batch",
                    "size ran until its peak settled (at most %d steps)"),
              x$device, x$ggmlR_version, x$steps)
    },
    row_text(header),
    vapply(seq_len(nrow(table)), function(i) row_text(unlist(table[i, ])), ""),
    "Fitted line (least squares over all batch sizes):",
    line_text("host", "host peak  "),
    if (gpu) line_text("device", "device peak") else "  device peak: none (device \"cpu\")"
  )
  if (is.data.frame(x$check)) {
    ck <- x$check
    lines <- c(
      lines,
      sprintf("Check: a line fitted without batch size %s predicts there",
              formatC(ck$batch_size[[1L]], format = "d", big.mark = " ")),
      sprintf("  %-7s predicted %s, measured %s (%s)", paste0(ck$where, ":"),
              bytes(ck$predicted), bytes(ck$measured),
              ifelse(is.na(ck$relative_error), "relative error not defined",
                     sprintf("%+.1f%%", 100 * ck$relative_error)))
    )
  } else {
    lines <- c(lines, paste(
      "Check: none (two batch sizes; give three or more to test the line on the largest)"
    ))
  }
  if (max(m$host_peak) < min_host_growth * min(m$host_peak)) {
    lines <- c(lines, paste(
      "Note: the host peak less than doubles over these batch sizes, so R's garbage",
      "collection weighs on the line: measure larger batch sizes, further apart."
    ))
  }
  negative <- vapply(x$line, function(l) l[["fixed"]] < 0, logical(1))
  if (any(negative)) {
    lines <- c(lines, paste(
      "Note: the fitted", paste(names(x$line)[negative], collapse = " and "), "line has a",
      "negative fixed part; agmem never plans below the smallest peak measured, which stands",
      "for the line wherever the line is lower."
    ))
  }
  if (!is.null(m$settled) && !all(m$settled)) {
    lines <- c(lines, paste0(
      "Note: * the peak was still rising when the run stopped at batch size ",
      paste(m$batch_size[!m$settled], collapse = ", "), ": give a larger `steps`."
    ))
  }
  if (!all(m$peak_reset)) {
    lines <- c(lines, paste0(
      "Note: the kernel did not reset the peak (VmHWM) before the steps at batch size ",
      paste(m$batch_size[!m$peak_reset], collapse = ", "),
      "; the peak there counts from the start of its process."
    ))
  }
  trimws(lines, which = "right")
}

#' @rdname format.ag_measured_memory
#' @export
print.ag_measured_memory <- function(x, units = "iec", ...) {
  cat(format(x, units = units), sep = "\n")
  invisible(x)
}

#' The largest batch for a budget, from a measured line
#'
#' Solves the line of [ag_measure_training_memory()] for a budget: the largest
#' whole batch size `b` with `fixed + per_sample * b <= budget`, on the host
#' line with `device = "cpu"` and on the device line with `device = "gpu"`
#' (device memory is what limits a GPU run), exact under the line's double
#' arithmetic, computed in C. The measured runs are facts where the line is a
#' fit, so the answer is kept between them: never below a measured batch size
#' whose run fitted the budget (with every smaller one measured), never at or
#' above one whose run did not. At a measured batch size the peak reported is
#' the one measured. It is what [ag_max_batch_size()] answers for the
#' measurement.
#'
#' @param object An `"ag_measured_memory"` from [ag_measure_training_memory()].
#' @param budget The memory to fit in: bytes as a number, or a string such as
#'   `"16 GiB"`, `"16 GB"` or `"512MiB"`, read as [ag_max_batch_size()] reads
#'   it. `NULL`, the default, means the host memory available now with
#'   `device = "cpu"`, and the GPU's free memory as ggmlR reports it with
#'   `device = "gpu"` (an error where it cannot).
#' @param ... Ignored.
#'
#' @return A list of class `"summary.ag_measured_memory"`: `budget` (bytes),
#'   `device`, `where` (`"host"` or `"device"`: the line solved), `line` (that
#'   line), `max_batch` (the largest batch size; `0` when not even batch 1
#'   fits; `Inf` when the line does not grow with the batch), `peak` (the
#'   line's peak at `max_batch`, `NA` when it is 0 or `Inf`) and,
#'   in gpu mode, `host_peak` (the host line at `max_batch`).
#'
#' @examples
#' m <- structure(list(
#'   measurements = data.frame(
#'     batch_size = c(64L, 128L), host_peak = c(71.2, 82.9) * 2^20,
#'     device_peak = 0, seconds = c(0.4, 0.6), peak_reset = TRUE
#'   ),
#'   line = list(host = c(fixed = 59.5 * 2^20, per_sample = 0.183 * 2^20),
#'               device = c(fixed = 0, per_sample = 0)),
#'   check = NA, device = "cpu", steps = 3L, ggmlR_version = "0.8.8.1"
#' ), class = "ag_measured_memory")
#' summary(m, budget = "1 GiB")
#' summary(m, budget = 2^30)$max_batch
#' @export
summary.ag_measured_memory <- function(object, budget = NULL, ...) {
  est <- measured_estimator(object, object$device, given = list(), arg = "object")
  limit <- plan_budget(budget, est)
  b <- est_max_batch(est, limit, "measured")
  # At a measured batch, the peak measured there; elsewhere the line's.
  at <- function(l, floor, points = NULL) {
    if (!(b > 0 && is.finite(b))) {
      return(NA_real_)
    }
    i <- if (is.null(points)) NA else match(b, points$batch)
    if (!is.na(i)) {
      return(points$peak[[i]])
    }
    max(floor, l[["fixed"]] + l[["per_sample"]] * b)
  }
  structure(list(
    budget = limit, device = object$device, where = est$where, line = est$line,
    max_batch = b, peak = at(est$line, est$floor, est$points), floor = est$floor,
    host_peak = if (est$where == "device") at(est$other$host, est$other_floor[["host"]]) else NULL
  ), class = "summary.ag_measured_memory")
}

#' @rdname summary.ag_measured_memory
#' @param x A `"summary.ag_measured_memory"`.
#' @inheritParams format.ag_training_memory
#' @export
format.summary.ag_measured_memory <- function(x, units = "iec", ...) {
  check_units(units)
  bytes <- function(v) format_bytes_scaled(v, units)
  label <- if (x$where == "device") "device peak" else "host peak"
  lines <- c(
    sprintf("Largest batch for a budget of %s (%s, device \"%s\"), by the measured line",
            bytes(x$budget), x$where, x$device),
    sprintf("  %s = %s + %s x batch", label, bytes(x$line[["fixed"]]),
            bytes(x$line[["per_sample"]]))
  )
  if (x$max_batch == 0) {
    lines <- c(lines, sprintf("  largest batch: none (batch size 1 needs %s)",
                              bytes(max(x$floor, x$line[["fixed"]] + x$line[["per_sample"]]))))
  } else {
    lines <- c(
      lines,
      if (is.finite(x$max_batch)) {
        c(sprintf("  largest batch: %s", formatC(x$max_batch, format = "d", big.mark = " ")),
          sprintf("  %s there: %s", label, bytes(x$peak)))
      } else {
        "  largest batch: any (the line does not grow with the batch)"
      }
    )
    if (!is.null(x$host_peak) && is.finite(x$max_batch)) {
      lines <- c(lines, sprintf("  host peak there: %s", bytes(x$host_peak)))
    }
  }
  if (x$line[["per_sample"]] <= 0) {
    lines <- c(lines, paste(
      "  Note: the measured per-sample cost is not positive, so the line does not bound the",
      "batch; measure at larger batch sizes."
    ))
  }
  lines
}

#' @rdname summary.ag_measured_memory
#' @export
print.summary.ag_measured_memory <- function(x, units = "iec", ...) {
  cat(format(x, units = units), sep = "\n")
  invisible(x)
}
