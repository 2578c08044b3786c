#' Measure the peak memory of your own training run
#'
#' Runs your training loop at a few batch sizes, each in a fresh R process,
#' until its peak memory stops rising, and fits a straight line through the
#' peaks: `peak = fixed + per_sample * batch_size`, on the host and, with
#' `device = "gpu"`, in the device pools. The line plans any model, including
#' the ones [ag_training_memory()] does not describe (embeddings, attention,
#' layer norm, a loss of your own): [summary()][summary.ag_measured_memory]
#' gives the largest batch for a budget without running it.
#'
#' @param step A function of the batch size. Either it sets the run up (builds
#'   your model, its optimizer and the data with ggmlR) and returns the loop
#'   body, a function of no arguments that runs one training step (forward
#'   under `with_grad_tape()`, `backward()`, the optimizer's `step()` and
#'   `zero_grad()`), as your training script's loop does; or it does all of
#'   that and runs one step itself, and returns anything but a function: it is
#'   then called for every step, building everything anew each time. It runs
#'   in another R process, so it must be self-contained: it sees the packages
#'   (ggmlR is attached there, so its functions can be called unqualified) and
#'   the arguments in `...`, not the objects of your session.
#' @param batch_size The batch sizes to measure: two or more different whole
#'   numbers from 1 to `.Machine$integer.max`. With three or more, the line
#'   is also checked against the largest (see `check` below). The default,
#'   64, 256 and 1024, spans a factor of 16, over which a dense model's peak
#'   grows well past R's collector noise.
#' @param device `"cpu"` (the host path) or `"gpu"`: the child process calls
#'   `ggmlR::ag_device("gpu")` before anything else, and the device pools are
#'   measured as well.
#' @param ... Further arguments to `step`, after the batch size. They are
#'   copied to each R process.
#' @param steps The most training steps one batch size runs: a whole number
#'   from 20. Each batch size runs until its peak has not risen by more than
#'   1 MiB over 20 steps, or for `steps` steps.
#' @param budget `NULL` (the default), or a budget (bytes, or a size such as
#'   `"2 GiB"`) to search for: after `batch_size`, up to 8 more batch sizes are
#'   measured, halving below, quadrupling above and bisecting between the
#'   measured runs that fit the budget and the ones that do not, until they
#'   bracket the largest batch whose run fits within a factor of 1.15. The
#'   planners then keep their answer within the runs measured (see
#'   [summary()][summary.ag_measured_memory]).
#' @param timeout The seconds one batch size may take (its warm-up and its
#'   run): a single number > 0, `Inf` for no limit. A child that runs longer
#'   is killed, with every process it started, and the call is an error.
#' @param quiet `TRUE` for no progress messages.
#'
#' @details
#' The measurement follows the protocol of agmem's validation. For each
#' batch size, a new R process (started with package processx) loads ggmlR and warms up its
#' code with two training steps of a tiny dense model (in the same device
#' mode). Then it runs `gc()`, resets the kernel's record of the peak resident
#' memory (`VmHWM`, by writing `5` to `/proc/self/clear_refs`), reads the
#' resident memory (`VmRSS`) as the baseline, calls `step(batch_size, ...)` and
#' runs the loop. The host peak is `VmHWM` minus the baseline: the largest
#' growth of the process's resident memory over the whole run, setup
#' included, as in a training script that builds its model before its loop.
#' A run's peak climbs as R's garbage collector raises its trigger, so a
#' measurement of a few steps would plan far too large a batch; each batch
#' size therefore runs until its peak settles (`steps` and `settled` in
#' `measurements` say how long it ran and whether it settled). Where the
#' kernel does not reset `VmHWM`, the peak counts from the start of the
#' process (noted in the result and the report: the warm-up is tiny, so this
#' matters only for a step smaller than it). This needs Linux (`/proc`).
#'
#' **When the child fails.** Every batch size's figures come from its own R
#' process, or the call is an error of class `agmem_error_measurement` (see
#' [agmem_conditions]) that names the batch size and says what happened: the
#' step's own error, with its class and message (a missing object gets a
#' reminder that the step runs in a fresh process, where data must come
#' through `...`); a quit or an abort in the step; a signal (SIGSEGV for a
#' crash, SIGKILL from the system's out-of-memory killer); or the `timeout`.
#' The child, and every process it started (even one started in the
#' background), is killed when its measurement ends, when this call is
#' interrupted, and (on Linux, by the kernel) when this R process dies.
#' The step's printed output is discarded; its warnings are signalled again
#' here, as warnings of class `agmem_warning_step`. A condition the step only
#' signals (`signalCondition()`) is not an error.
#'
#' **The line's floor.** The planners, the sweep and `summary()` never take a
#' peak below the smallest one measured: below the smallest batch size
#' measured, and wherever a line fitted with a negative fixed part would go
#' lower, the smallest measured peak stands for the line, so that no batch
#' fits in nothing.
#'
#' Because `step` builds the model and the data, both are inside the peak, as
#' they are in a training script that builds them before its loop; building
#' them outside `step` is not possible, since each batch size runs in its own
#' process. Hold the data in the setup as your script holds it (the whole
#' training set, if it keeps the whole set in R): R's collector grows its
#' trigger with the heap in use, data included.
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
#'     is 0 with `device = "cpu"`), `seconds` (the time of the run),
#'     `peak_reset` (whether the kernel reset `VmHWM` before the run), `steps`
#'     (the training steps run) and `settled` (whether the peak stopped rising
#'     before `steps`);
#'   * `line`: a list of `host` and `device`, each a double vector
#'     `c(fixed = , per_sample = )` in bytes, the least-squares line through
#'     all the measurements (through both, with two); zeros for the device
#'     with `device = "cpu"`;
#'   * `check`: with three or more batch sizes, a data frame (a row for the
#'     host and, in gpu mode, one for the device) of a line fitted without the
#'     largest batch size and tested there: `where`, `batch_size`, `measured`,
#'     `predicted` and `relative_error` (`(predicted - measured) / measured`,
#'     positive when the line over-predicts); `NA` with two batch sizes;
#'   * `device`, `steps` (the most steps a batch size could run),
#'     `ggmlR_version` (as the child processes loaded it).
#'
#' @seealso [summary()][summary.ag_measured_memory] for the largest batch for a
#'   budget, [format()][format.ag_measured_memory] for the report, and
#'   [ag_training_memory()] for a prediction without running anything.
#'
#' @examples
#' \donttest{
#' # Needs ggmlR and processx, and Linux; about ten seconds.
#' if (requireNamespace("ggmlR", quietly = TRUE) &&
#'   requireNamespace("processx", quietly = TRUE) && file.exists("/proc/self/status")) {
#' # The setup, then the loop body as a function: the run is measured as a
#' # training script runs it.
#' step <- function(batch_size, width = 256L) {
#'   model <- ag_sequential(
#'     ag_linear(width, width, activation = "relu"),
#'     ag_linear(width, 10L)
#'   )
#'   opt <- optimizer_adam(model$parameters())
#'   x <- matrix(rnorm(width * 4 * batch_size), width)
#'   y <- matrix(rnorm(10 * 4 * batch_size), 10)
#'   function() {
#'     idx <- sample(ncol(x), batch_size)
#'     with_grad_tape(loss <- ag_mse_loss(model$forward(ag_tensor(x[, idx])),
#'                                        y[, idx, drop = FALSE]))
#'     opt$step(backward(loss))
#'     opt$zero_grad()
#'   }
#' }
#' m <- ag_measure_training_memory(step, batch_size = c(64L, 128L, 256L))
#' m
#' summary(m, budget = "2 GiB")
#' }
#' }
#' @export
ag_measure_training_memory <- function(step, batch_size = c(64L, 256L, 1024L),
                                       device = c("cpu", "gpu"), ..., steps = 300L,
                                       budget = NULL, timeout = 600, quiet = FALSE) {
  if (!is.function(step)) {
    stop_arg("`step` must be a function of the batch size that runs one training step.")
  }
  batch_size <- check_measure_batches(batch_size)
  device <- match_choice(device, registry_names("devices"), "device")
  check_flag(quiet, "quiet")
  check_timeout(timeout)
  if (!is.numeric(steps) || is.object(steps) || length(steps) != 1L || is.na(steps) ||
    steps < measure_settle || steps > 1e6 || steps != floor(steps)) {
    stop_arg("`steps` must be one whole number of training steps from ", measure_settle,
             " to 1e6.")
  }
  limit <- if (is.null(budget)) NULL else parse_budget(budget)
  check_measure_deps()
  args <- list(...)

  started <- proc.time()[["elapsed"]]
  runs <- list()
  measure_one <- function(b, label) {
    if (!quiet) {
      message(sprintf("Measuring batch size %d (%s) ...", b, label))
    }
    run <- measure_in_child(step, b, device, as.integer(steps), measure_settle, args, timeout)
    if (!quiet) {
      message(sprintf("  batch size %d: done, %.1f s elapsed", b,
                      proc.time()[["elapsed"]] - started))
    }
    run
  }
  for (i in seq_along(batch_size)) {
    runs[[i]] <- measure_one(batch_size[[i]], sprintf("%d of %d", i, length(batch_size)))
  }
  if (!is.null(limit)) {
    place <- if (device == "gpu") "device_peak" else "host_peak"
    for (k in seq_len(measure_search_runs)) {
      points <- data.frame(batch = batch_size, peak = vapply(runs, `[[`, 0, place))
      b <- next_search_batch(points, limit)
      if (is.na(b)) {
        break
      }
      runs[[length(runs) + 1L]] <- measure_one(b, sprintf("search for the budget, %d", k))
      batch_size <- c(batch_size, b)
    }
    o <- order(batch_size)
    batch_size <- batch_size[o]
    runs <- runs[o]
  }
  measurements <- data.frame(
    batch_size = batch_size,
    host_peak = vapply(runs, `[[`, 0, "host_peak"),
    device_peak = vapply(runs, `[[`, 0, "device_peak"),
    seconds = vapply(runs, `[[`, 0, "seconds"),
    peak_reset = vapply(runs, `[[`, NA, "peak_reset"),
    steps = vapply(runs, `[[`, 0L, "steps"),
    settled = vapply(runs, `[[`, NA, "settled")
  )
  measured_memory(measurements, device, runs[[1L]]$ggmlR_version, as.integer(steps))
}

# The most runs a search for a budget adds (ag_measure_training_memory(budget = )).
measure_search_runs <- 8L

# The next batch size a search for `limit` bytes measures, from the runs so far (`points`: batch
# and peak), or NA when the search is done: when the measured batches bracket the answer within
# a factor of 1.15 (the largest batch whose run fits, with every smaller one, against the smallest
# whose run does not), when batch size 1 does not fit, or when the next would pass
# .Machine$integer.max. Below the bracket it halves, above it quadruples, inside it takes the
# geometric mean.
next_search_batch <- function(points, limit) {
  br <- measured_bracket(points, limit)
  lo <- br[["lo"]]
  hi <- br[["hi"]]
  b <- if (lo == 0) {
    if (hi <= 1) NA_real_ else floor(hi / 2)
  } else if (!is.finite(hi)) {
    if (lo * 4 > .Machine$integer.max) NA_real_ else lo * 4
  } else if (hi / lo <= 1.15 || hi - lo <= 1) {
    NA_real_
  } else {
    round(sqrt(lo * hi))
  }
  if (is.na(b) || b %in% points$batch) {
    return(NA_integer_)
  }
  as.integer(b)
}

# The steps over which the peak of a measured run must not rise for the run to count as settled
# (and the fewest steps a measurement runs): in the long runs of inst/validation
# (measurements-long-fit.csv), the peak at step 20 was within 10% of the peak at step 100 in
# most runs, and R's trigger grows in steps of 20%.
measure_settle <- 20L

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
  # Each value as every entry point checks batch sizes (the C reader); then two or more, once.
  batch_size <- check_batch_sizes(batch_size)
  if (anyDuplicated(batch_size)) {
    stop_arg(expected, ": ", format(batch_size[duplicated(batch_size)][[1L]]),
             " is given twice.")
  }
  sort(as.integer(batch_size))
}

# The seconds one batch size may take: a single positive number (Inf for no limit).
check_timeout <- function(timeout) {
  if (!is.numeric(timeout) || is.object(timeout) || length(timeout) != 1L || is.na(timeout) ||
    timeout <= 0) {
    stop_arg("`timeout` must be a single number of seconds > 0 (Inf for no limit).")
  }
  invisible(timeout)
}

# Stops unless the measurement can run here: processx and ggmlR installed, and Linux's /proc.
check_measure_deps <- function(has_processx = requireNamespace("processx", quietly = TRUE),
                               has_ggmlr = nzchar(system.file(package = "ggmlR")),
                               has_proc = file.exists("/proc/self/status")) {
  if (!has_processx) {
    abort(
      "`ag_measure_training_memory()` runs each batch size in a fresh R process with the ",
      "processx package: install it with install.packages(\"processx\").",
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

# The script a measuring R process runs: it reads the payload (measure_child() and its
# arguments) from the file named by its first argument, runs it at top level, and writes the
# result to the file named by its second. An error that unwinds (not a condition merely
# signalled) reaches the `error` option, which writes its class and message there instead and
# ends the process with status 70. Nothing else is written: the step's output is discarded by
# the parent.
child_script <- c(
  "args <- commandArgs(TRUE)",
  "payload <- readRDS(args[[1L]])",
  "# Killed by the kernel if the measuring R process dies (Linux), so as not to run on.",
  "invisible(.Call(agmem:::agmem_die_with_parent, payload$parent))",
  "last <- NULL",
  "options(error = function() {",
  "  e <- last",
  "  saveRDS(list(failed = TRUE,",
  "               class = if (is.null(e)) \"error\" else class(e)[[1L]],",
  "               message = if (is.null(e)) geterrmessage() else conditionMessage(e)),",
  "          args[[2L]])",
  "  quit(save = \"no\", status = 70L)",
  "})",
  "# One top-level expression: an abort restart in the step ends it, writing nothing.",
  "{",
  "  result <- withCallingHandlers(do.call(payload$run, payload$args),",
  "                                error = function(e) last <<- e)",
  "  saveRDS(result, args[[2L]])",
  "}"
)

# Runs the measurement of one batch size in a fresh R process (Rscript through processx, its
# output discarded, its error stream kept in a file) and returns its figures. The process, and
# every process it started, is killed when it ends, when it runs past `timeout` seconds, and
# when this call is interrupted; the kernel kills it if this R process dies (child.c). Every
# way the child can fail is a classed error (agmem_error_measurement) that names the batch size
# and says what happened: the step's own error (its class and message), a quit, a signal, a
# timeout, or a result that is not a measurement. The step's warnings are signalled again here.
measure_in_child <- function(step, batch_size, device, steps, settle, args, timeout) {
  dir <- tempfile("agmem-measure-")
  dir.create(dir)
  on.exit(unlink(dir, recursive = TRUE), add = TRUE)
  files <- file.path(dir, c("child.R", "input.rds", "output.rds", "stderr.txt"))
  writeLines(child_script, files[[1L]])
  run <- measure_child
  environment(run) <- globalenv()
  saveRDS(list(run = run, args = list(step, batch_size, device, steps, settle, args),
               parent = Sys.getpid()), files[[2L]])
  env <- c(Sys.getenv(), R_LIBS = paste(.libPaths(), collapse = .Platform$path.sep))
  p <- processx::process$new(
    file.path(R.home("bin"), "Rscript"), c("--no-init-file", files[1:3]),
    stdout = NULL, stderr = files[[4L]], env = env, cleanup_tree = TRUE
  )
  on.exit(p$kill_tree(), add = TRUE, after = FALSE)
  p$wait(if (is.finite(timeout)) as.integer(min(timeout * 1000, .Machine$integer.max)) else -1L)
  timed_out <- p$is_alive()
  p$kill_tree()
  p$wait()
  child_result(batch_size, timed_out, timeout, p$get_exit_status(), files[[3L]], files[[4L]])
}

# The figures of one child, or the classed error that says what it did instead (see
# measure_in_child()): `status` is its exit status (negative: the signal that ended it).
child_result <- function(batch_size, timed_out, timeout, status, output, stderr) {
  fail <- function(...) {
    abort("Measuring batch size ", batch_size, ": ", ..., class = "measurement",
          fields = list(batch_size = batch_size))
  }
  if (timed_out) {
    fail("the step ran past `timeout` (", format(timeout), " s) and its R process was killed, ",
         "with every process it started. Give a larger `timeout`, or a smaller batch size.")
  }
  run <- if (file.exists(output)) tryCatch(readRDS(output), error = function(e) NULL) else NULL
  if (isTRUE(run$failed)) {
    message <- if (nzchar(run$message)) sub("([^.!?])$", "\\1.", run$message) else
      "(its message is empty)."
    hint <- if (grepl("object '.*' not found|could not find function", run$message)) {
      paste0(" The step runs in a fresh R process, which sees none of the objects of your ",
             "session: build them in the step, or pass them through `...`.")
    } else {
      ""
    }
    fail("the step failed with an error of class \"", run$class, "\": ", message, hint)
  }
  if (is.na(status) || status < 0) {
    signal <- -status
    name <- c(`6` = "SIGABRT", `9` = "SIGKILL", `11` = "SIGSEGV", `15` = "SIGTERM")
    fail("its R process was killed by signal ", signal,
         if (!is.na(name[as.character(signal)])) paste0(" (", name[as.character(signal)], ")"),
         if (identical(signal, 9L)) ", which the system's out-of-memory killer sends" else "",
         last_lines(stderr))
  }
  if (!is_measurement(run)) {
    fail("its R process ended with status ", status, " before the step returned (a quit(), ",
         "or an abort restart, in the step?)", last_lines(stderr))
  }
  for (w in run$warnings) {
    warn("The step warned at batch size ", batch_size, ": ", w, class = "step")
  }
  run
}

# Whether x is the list measure_child() returns: finite peaks and seconds, a flag, a version.
is_measurement <- function(x) {
  number <- function(v) is.numeric(v) && length(v) == 1L && is.finite(v)
  flag <- function(v) is.logical(v) && length(v) == 1L && !is.na(v)
  is.list(x) && number(x$host_peak) && number(x$device_peak) && number(x$seconds) &&
    flag(x$peak_reset) && flag(x$settled) && is.integer(x$steps) && length(x$steps) == 1L &&
    is.character(x$ggmlR_version) && length(x$ggmlR_version) == 1L
}

# The last non-empty lines (at most five) of a child's error stream, for a message; "" when
# there are none.
last_lines <- function(file) {
  lines <- if (file.exists(file)) readLines(file, warn = FALSE) else character(0)
  lines <- utils::tail(lines[nzchar(trimws(lines))], 5L)
  if (length(lines) == 0L) "." else paste0(". Its last output:\n", paste(lines, collapse = "\n"))
}

# The measurement itself, run in the child process (self-contained: measure_in_child() saves it
# with the global environment as its own, and child_script runs it). It
# follows the validation protocol: ggmlR loaded and warmed up, gc(), VmHWM reset, VmRSS as the
# baseline, then step(batch_size, ...): when it returns a function, that function (the loop
# body) runs on; otherwise step runs again; until the peak settles (see below) or `steps` steps;
# returns the host peak (VmHWM minus the baseline), the device peak (pools after a step, largest
# step), the seconds of the run, whether VmHWM was reset, the steps run, whether the peak
# settled, the ggmlR version and the step's warnings.
# It runs in the child, where covr does not trace; the real measurements of the tests (with
# ggmlR and processx installed) run it.
# nocov start
measure_child <- function(step, batch_size, device, steps, settle, args) {
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

  warnings <- character(0)
  keep_warning <- function(w) {
    warnings <<- unique(c(warnings, conditionMessage(w)))
    invokeRestart("muffleWarning")
  }
  started <- proc.time()[["elapsed"]]
  # An error unwinds to the child script's `error` option; warnings are kept and muffled.
  first <- withCallingHandlers(do.call(step, c(list(batch_size), args)), warning = keep_warning)
  # A step that returns a function has run its setup; the function is the loop body. Any other
  # step is the whole step, built anew each time (on the GPU, on fresh pools).
  body <- if (is.function(first)) first else function() {
    fresh_device()
    do.call(step, c(list(batch_size), args))
  }
  device_peak <- pools()
  # The run goes on until the peak has not risen (by more than 1 MiB) for `settle` steps, at
  # least `settle` steps and at most `steps`: R raises its collector's trigger as a run goes on.
  done <- if (is.function(first)) 0L else 1L
  peak <- status()[["hwm"]]
  risen_at <- done
  while (done < steps && done - risen_at < settle) {
    withCallingHandlers(body(), warning = keep_warning)
    done <- done + 1L
    device_peak <- max(device_peak, pools())
    now <- status()[["hwm"]]
    if (now > peak + 1024^2) {
      risen_at <- done
    }
    peak <- max(peak, now)
  }
  seconds <- proc.time()[["elapsed"]] - started
  end <- status()
  list(
    host_peak = end[["hwm"]] - base[["rss"]], device_peak = device_peak,
    seconds = seconds, peak_reset = peak_reset, steps = done,
    settled = done - risen_at >= settle,
    ggmlR_version = as.character(utils::packageVersion("ggmlR")), warnings = warnings
  )
}
# nocov end
