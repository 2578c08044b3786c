#' Measure the peak memory of your own training step
#'
#' Runs your training step at a few batch sizes, each in a fresh R process,
#' measures its peak memory there, and fits a straight line through the peaks:
#' `peak = fixed + per_sample * batch_size`, on the host and, with
#' `device = "gpu"`, in the device pools. The line plans any model, including
#' the ones [ag_training_memory()] does not describe (embeddings, attention,
#' layer norm, a loss of your own): [summary()][summary.ag_measured_memory]
#' gives the largest batch for a budget without running it.
#'
#' @param step A function of the batch size that builds your model, its
#'   optimizer and a batch of data with ggmlR and runs one training step
#'   (forward under `with_grad_tape()`, `backward()`, the optimizer's
#'   `step()` and `zero_grad()`). It runs in another R process, so it must be
#'   self-contained: it sees the packages (ggmlR is attached there, so its
#'   functions can be called unqualified) and the arguments in `...`, not the
#'   objects of your session. Its value is ignored.
#' @param batch_size The batch sizes to measure: two or more different whole
#'   numbers from 1 to `.Machine$integer.max`. With three or more, the line
#'   is also checked against the largest (see `check` below).
#' @param device `"cpu"` (the host path) or `"gpu"`: the child process calls
#'   `ggmlR::ag_device("gpu")` before anything else, and the device pools are
#'   measured as well.
#' @param ... Further arguments to `step`, after the batch size. They are
#'   copied to each R process.
#' @param quiet `TRUE` for no progress messages.
#'
#' @details
#' The measurement follows the protocol of agmem's validation. For each
#' batch size, a new R process (package callr) loads ggmlR and warms up its
#' code with two training steps of a tiny dense model (in the same device
#' mode). Then it runs `gc()`, resets the kernel's record of the peak resident
#' memory (`VmHWM`, by writing `5` to `/proc/self/clear_refs`), reads the
#' resident memory (`VmRSS`) as the baseline, and calls `step(batch_size, ...)`
#' three times. The host peak is `VmHWM` minus the baseline: the largest
#' growth of the process's resident memory over the three steps. Where the
#' kernel does not reset `VmHWM`, the peak counts from the start of the
#' process (noted in the result and the report: the warm-up is tiny, so this
#' matters only for a step smaller than it). This needs Linux (`/proc`).
#'
#' Because `step` builds the model and the data, both are inside the peak, as
#' they are in a training script that builds them before its loop; building
#' them outside `step` is not possible, since each batch size runs in its own
#' process.
#'
#' With `device = "gpu"`, the device peak of a step is the size of ggmlR's two
#' device pools (the persistent pool of weights and optimizer state and the
#' pass pool of the tape, read with ggmlR's internal `.ag_tape_mem()`, fields
#' `p_buffer_bytes` and `buffer_bytes`) after the step, the largest of the
#' three steps. The pass pool is only freed when the next tape starts, so
#' after the step it still holds the whole step. Between steps the child
#' switches the device to `"cpu"` and back, which frees the pools of the
#' previous step's model, so that each step starts from empty pools as a
#' training run's single model does. With no GPU, ggmlR runs the device mode
#' on its CPU backend, whose pools are host memory: the host peak then
#' includes them.
#'
#' The host peak includes the garbage R has not collected yet, and R collects
#' late, in steps that grow with the heap. Where the memory that grows with
#' the batch is small against the rest, the line fits that noise: on the
#' validation machine a dense 3 x 256 model with adam peaked at 57 MiB at
#' batch 512 and 59 MiB at 1024, then 132 MiB at 2048, and a dense 4 x 1024
#' model with adam at 254, 254 and 327 MiB at batches 32, 64 and 128, whose
#' line over-predicted batch 512 by 40%. Choose batch sizes over which the
#' host peak at least doubles, so that the step's per-sample memory dominates;
#' the report says when it does not. From batches 2048, 4096 and 8192 (132 to
#' 440 MiB), the 3 x 256 model's line predicted 1.63 GiB at batch 32768,
#' where 1.65 GiB was measured. Not every step is that straight: a dense
#' 2 x 512 model with sgd (momentum 0.9) grew faster than linearly, and its
#' line under-predicted four times the largest batch by 13%, from batches
#' 1024-4096 and from 2048-8192 alike (with adam the same model grew the same
#' way, 51 KiB per sample from batch 2048 to 4096 and 69 KiB from 4096 to
#' 8192); keep a margin. The device pools have no
#' such noise: their line was exact.
#' agmem's validation
#' (`Rscript system.file("validation", "measure-step.R", package = "agmem")`)
#' measures dense models and an embedding plus attention model this way and
#' checks each line at four times the largest measured batch.
#'
#' @return A list of class `"ag_measured_memory"`:
#'   * `measurements`: a data frame with one row per batch size, smallest
#'     first: `batch_size`, `host_peak` and `device_peak` (bytes; `device_peak`
#'     is 0 with `device = "cpu"`), `seconds` (the time of the three steps) and
#'     `peak_reset` (whether the kernel reset `VmHWM` before the steps);
#'   * `line`: a list of `host` and `device`, each a double vector
#'     `c(fixed = , per_sample = )` in bytes, the least-squares line through
#'     all the measurements (through both, with two); zeros for the device
#'     with `device = "cpu"`;
#'   * `check`: with three or more batch sizes, a data frame (a row for the
#'     host and, in gpu mode, one for the device) of a line fitted without the
#'     largest batch size and tested there: `where`, `batch_size`, `measured`,
#'     `predicted` and `relative_error` (`(predicted - measured) / measured`,
#'     positive when the line over-predicts); `NA` with two batch sizes;
#'   * `device`, `steps` (3), `ggmlR_version` (as the child processes loaded
#'     it).
#'
#' @seealso [summary()][summary.ag_measured_memory] for the largest batch for a
#'   budget, [format()][format.ag_measured_memory] for the report, and
#'   [ag_training_memory()] for a prediction without running anything.
#'
#' @examples
#' \donttest{
#' # Needs ggmlR and callr, and Linux; about ten seconds.
#' if (requireNamespace("ggmlR", quietly = TRUE) &&
#'   requireNamespace("callr", quietly = TRUE) && file.exists("/proc/self/status")) {
#' step <- function(batch_size, width = 256L) {
#'   model <- ag_sequential(
#'     ag_linear(width, width, activation = "relu"),
#'     ag_linear(width, 10L)
#'   )
#'   opt <- optimizer_adam(model$parameters())
#'   x <- ag_tensor(matrix(rnorm(width * batch_size), width, batch_size))
#'   y <- ag_tensor(matrix(rnorm(10 * batch_size), 10, batch_size))
#'   with_grad_tape(loss <- ag_mse_loss(model$forward(x), y))
#'   opt$step(backward(loss))
#'   opt$zero_grad()
#' }
#' m <- ag_measure_training_memory(step, batch_size = c(64L, 128L, 256L))
#' m
#' summary(m, budget = "2 GB")
#' }
#' }
#' @export
ag_measure_training_memory <- function(step, batch_size = c(8L, 32L), device = c("cpu", "gpu"),
                                       ..., quiet = FALSE) {
  if (!is.function(step)) {
    stop_arg("`step` must be a function of the batch size that runs one training step.")
  }
  batch_size <- check_measure_batches(batch_size)
  device <- match_choice(device, c("cpu", "gpu"), "device")
  check_flag(quiet, "quiet")
  check_measure_deps()
  args <- list(...)

  steps <- 3L
  started <- proc.time()[["elapsed"]]
  runs <- vector("list", length(batch_size))
  for (i in seq_along(batch_size)) {
    if (!quiet) {
      message(sprintf("Measuring batch size %d (%d of %d) ...", batch_size[[i]], i,
                      length(batch_size)))
    }
    runs[[i]] <- measure_in_child(step, batch_size[[i]], device, steps, args)
    if (!quiet) {
      message(sprintf("  batch size %d: done, %.1f s elapsed", batch_size[[i]],
                      proc.time()[["elapsed"]] - started))
    }
  }
  measurements <- data.frame(
    batch_size = batch_size,
    host_peak = vapply(runs, `[[`, 0, "host_peak"),
    device_peak = vapply(runs, `[[`, 0, "device_peak"),
    seconds = vapply(runs, `[[`, 0, "seconds"),
    peak_reset = vapply(runs, `[[`, NA, "peak_reset")
  )
  measured_memory(measurements, device, runs[[1L]]$ggmlR_version, steps)
}

# Checks `batch_size` for a measurement and returns it as sorted integers: two or more unique
# whole numbers from 1 to .Machine$integer.max.
check_measure_batches <- function(batch_size) {
  expected <- paste(
    "`batch_size` must be two or more different whole numbers from 1 to",
    .Machine$integer.max
  )
  if (!is.numeric(batch_size) || is.object(batch_size) || length(batch_size) < 2L) {
    stop_arg(expected, ".")
  }
  bad <- is.na(batch_size) | batch_size < 1 | batch_size > .Machine$integer.max |
    batch_size != floor(batch_size)
  if (any(bad)) {
    stop_arg(expected, ", not ", format_refused(as.double(batch_size[bad][[1L]])), ".")
  }
  if (anyDuplicated(batch_size)) {
    stop_arg(expected, ": ", format(batch_size[duplicated(batch_size)][[1L]]),
             " is given twice.")
  }
  sort(as.integer(batch_size))
}

# Stops unless the measurement can run here: callr and ggmlR installed, and Linux's /proc.
check_measure_deps <- function(has_callr = requireNamespace("callr", quietly = TRUE),
                               has_ggmlr = nzchar(system.file(package = "ggmlR")),
                               has_proc = file.exists("/proc/self/status")) {
  if (!has_callr) {
    stop_arg(
      "`ag_measure_training_memory()` runs each batch size in a fresh R process with the ",
      "callr package: install it with install.packages(\"callr\")."
    )
  }
  if (!has_ggmlr) {
    stop_arg(
      "`ag_measure_training_memory()` measures training steps of ggmlR, which is not ",
      "installed: install it with install.packages(\"ggmlR\")."
    )
  }
  if (!has_proc) {
    stop_arg(
      "`ag_measure_training_memory()` reads the peak memory from /proc/self/status, which ",
      "this system does not have: it runs on Linux only."
    )
  }
  invisible(TRUE)
}

# Runs the measurement of one batch size in a fresh R process and returns its figures; an error
# in `step` (or a crash of the process) becomes an R error here that shows the child's message.
measure_in_child <- function(step, batch_size, device, steps, args) {
  run <- tryCatch(
    callr::r(measure_child, list(step, batch_size, device, steps, args)),
    callr_error = function(e) {
      child <- e$parent
      if (!is.null(child)) {
        stop_arg("Measuring batch size ", batch_size, " failed in its R process: ",
                 conditionMessage(child))
      }
      output <- unlist(strsplit(paste(e$stderr, collapse = "\n"), "\n", fixed = TRUE))
      tail_lines <- utils::tail(output[nzchar(output)], 5L)
      stop_arg(
        "The R process measuring batch size ", batch_size, " stopped without an R error ",
        "(it crashed, or was killed, perhaps for lack of memory)",
        if (length(tail_lines) > 0L) paste0(". Its last output:\n", paste(tail_lines,
                                                                            collapse = "\n"))
      )
    }
  )
  if (!is.null(run$error)) {
    stop_arg("`step` failed at batch size ", batch_size, ": ", run$error)
  }
  run
}

# The measurement itself, run in the child process (self-contained: callr copies it there). It
# follows the validation protocol: ggmlR loaded and warmed up, gc(), VmHWM reset, VmRSS as the
# baseline, then `steps` calls of step(batch_size, ...); returns the host peak (VmHWM minus the
# baseline), the device peak (pools after a step, largest step), the seconds of the steps,
# whether VmHWM was reset, the ggmlR version, and `error`, the message of an error in step.
# It runs in the callr child, where covr does not trace; the real measurements of the tests
# (with ggmlR and callr installed) run it.
# nocov start
measure_child <- function(step, batch_size, device, steps, args) {
  status <- function() {
    lines <- readLines("/proc/self/status")
    kib <- function(key) {
      as.double(sub("^[^0-9]*([0-9]+).*$", "\\1", lines[startsWith(lines, key)])) * 1024
    }
    c(rss = kib("VmRSS:"), hwm = kib("VmHWM:"))
  }
  # Attached, in this fresh process only, so that `step` can call ggmlR unqualified.
  suppressPackageStartupMessages(attachNamespace("ggmlR"))
  ns <- asNamespace("ggmlR")
  pools <- function() {
    if (device != "gpu") {
      return(0)
    }
    mem <- get(".ag_tape_mem", envir = ns)()
    mem$buffer_bytes + mem$p_buffer_bytes
  }
  # Frees both device pools: ag_device("cpu") releases the backend and its buffers.
  fresh_device <- function() {
    if (device == "gpu") {
      ns$ag_device("cpu")
      ns$ag_device("gpu")
    }
  }
  fresh_device()

  # Warm-up: two steps of a tiny dense model, so that ggmlR's code is loaded and compiled.
  warm_up <- function() {
    l1 <- ns$ag_linear(8L, 8L, activation = "relu")
    l2 <- ns$ag_linear(8L, 1L)
    opt <- ns$optimizer_adam(c(l1$params(), l2$params()))
    for (i in 1:2) {
      x <- ns$ag_tensor(matrix(seq_len(32) / 32, 8L, 4L))
      y <- ns$ag_tensor(matrix(0, 1L, 4L))
      ns$with_grad_tape(loss <- ns$ag_mse_loss(l2$forward(l1$forward(x)), y))
      opt$step(ns$backward(loss))
      opt$zero_grad()
    }
  }
  warm_up()
  fresh_device()

  gc()
  gc()
  reset <- tryCatch(
    {
      writeLines("5", "/proc/self/clear_refs")
      TRUE
    },
    error = function(e) FALSE,
    warning = function(w) FALSE
  )
  base <- status()
  peak_reset <- reset && base[["hwm"]] <= base[["rss"]] + 1024^2

  device_peak <- 0
  started <- proc.time()[["elapsed"]]
  for (i in seq_len(steps)) {
    if (i > 1L) {
      fresh_device()
    }
    error <- tryCatch(
      {
        do.call(step, c(list(batch_size), args))
        NULL
      },
      error = function(e) conditionMessage(e)
    )
    if (!is.null(error)) {
      return(list(error = error))
    }
    device_peak <- max(device_peak, pools())
  }
  seconds <- proc.time()[["elapsed"]] - started
  end <- status()
  list(
    error = NULL, host_peak = end[["hwm"]] - base[["rss"]], device_peak = device_peak,
    seconds = seconds, peak_reset = peak_reset,
    ggmlR_version = as.character(utils::packageVersion("ggmlR"))
  )
}
# nocov end

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
  widths <- pmax(nchar(header), vapply(table, function(col) max(nchar(col)), 0L))
  row_text <- function(cells) {
    paste(sprintf("%*s", widths, cells), collapse = "  ")
  }
  line_text <- function(where, label) {
    l <- x$line[[where]]
    sprintf("  %s = %s + %s x batch", label, bytes(l[["fixed"]]), bytes(l[["per_sample"]]))
  }
  lines <- c(
    sprintf(
      "Measured peak of a training step: device \"%s\", ggmlR %s, %d steps per batch size",
      x$device, x$ggmlR_version, x$steps
    ),
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
#' (device memory is what limits a GPU run). It is what
#' [ag_max_batch_size()] answers for the measurement: exact under the line's
#' double arithmetic, computed in C.
#'
#' @param object An `"ag_measured_memory"` from [ag_measure_training_memory()].
#' @param budget The memory to fit in: bytes as a number, or a string such as
#'   `"16 GB"`, `"512MB"` or `"1.5 GiB"`, read as [ag_max_batch_size()] reads
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
#' summary(m, budget = "1 GB")
#' summary(m, budget = 2^30)$max_batch
#' @export
summary.ag_measured_memory <- function(object, budget = NULL, ...) {
  plan <- make_plan(object, object$device, "f32", given = list(), arg = "object")
  limit <- plan_budget(budget, plan)
  b <- plan_max_batch(plan, NULL, limit, NULL)
  at <- function(l) if (b > 0 && is.finite(b)) l[["fixed"]] + l[["per_sample"]] * b else NA_real_
  structure(list(
    budget = limit, device = object$device, where = plan$where, line = plan$line,
    max_batch = b, peak = at(plan$line),
    host_peak = if (plan$where == "device") at(plan$other$host) else NULL
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
                              bytes(x$line[["fixed"]] + x$line[["per_sample"]])))
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
