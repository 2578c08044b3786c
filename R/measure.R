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
#' summary(m, budget = "2 GiB")
#' }
#' }
#' @export
ag_measure_training_memory <- function(step, batch_size = c(8L, 32L), device = c("cpu", "gpu"),
                                       ..., quiet = FALSE) {
  if (!is.function(step)) {
    stop_arg("`step` must be a function of the batch size that runs one training step.")
  }
  batch_size <- check_measure_batches(batch_size)
  device <- match_choice(device, registry_names("devices"), "device")
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
    abort(
      "`ag_measure_training_memory()` runs each batch size in a fresh R process with the ",
      "callr package: install it with install.packages(\"callr\").",
      class = "unavailable"
    )
  }
  if (!has_ggmlr) {
    abort(
      "`ag_measure_training_memory()` measures training steps of ggmlR, which is not ",
      "installed: install it with install.packages(\"ggmlR\").",
      class = "unavailable"
    )
  }
  if (!has_proc) {
    abort(
      "`ag_measure_training_memory()` reads the peak memory from /proc/self/status, which ",
      "this system does not have: it runs on Linux only.",
      class = "unavailable"
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
        abort("Measuring batch size ", batch_size, " failed in its R process: ",
              conditionMessage(child), class = "measurement")
      }
      output <- unlist(strsplit(paste(e$stderr, collapse = "\n"), "\n", fixed = TRUE))
      tail_lines <- utils::tail(output[nzchar(output)], 5L)
      abort(
        "The R process measuring batch size ", batch_size, " stopped without an R error ",
        "(it crashed, or was killed, perhaps for lack of memory)",
        if (length(tail_lines) > 0L) paste0(". Its last output:\n", paste(tail_lines,
                                                                            collapse = "\n")),
        class = "measurement"
      )
    }
  )
  if (!is.null(run$error)) {
    abort("`step` failed at batch size ", batch_size, ": ", run$error, class = "measurement")
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
