# Measurements built by hand, as ag_measure_training_memory() builds them from its child
# processes: the line and the check are computed by the package's own code (measured_memory()).
measurements <- function(batch_size, host_peak, device_peak = 0, reset = TRUE) {
  data.frame(
    batch_size = as.integer(batch_size), host_peak = host_peak, device_peak = device_peak,
    seconds = seq_along(batch_size) * 0.25, peak_reset = reset
  )
}
mib <- 2^20
cpu3 <- measured_memory(
  measurements(c(64, 128, 256, 1024), c(71.25, 82.5, 106, 290) * mib), "cpu", "0.8.8.1"
)
cpu2 <- measured_memory(measurements(c(8, 32), c(40, 100) * mib), "cpu", "0.8.8.1")
gpu3 <- measured_memory(
  measurements(c(32, 64, 128), c(100, 180, 340) * mib, c(150, 190, 270) * mib), "gpu", "0.8.8.1"
)

# ---- the .Call entry points ----

test_that("the fit through two points is the line through them", {
  expect_identical(.Call(agmem_line_fit, c(8L, 32L), c(100, 400)),
                   c(fixed = 0, per_sample = 12.5))
  expect_identical(.Call(agmem_line_fit, c(32, 8), c(400, 100)),
                   c(fixed = 0, per_sample = 12.5))
})

test_that("the fit is least squares: it agrees with lm() on random points", {
  set.seed(20)
  agreed <- 0L
  for (i in seq_len(iterations(200))) {
    n <- sample(2:12, 1L)
    x <- sample.int(4096L, n)
    y <- stats::runif(1, 0, 1e9) + stats::runif(1, 0, 1e6) * x + stats::rnorm(n, sd = 1e6)
    fit <- .Call(agmem_line_fit, x, y)
    ref <- unname(stats::coef(stats::lm(y ~ x)))
    ok <- isTRUE(all.equal(unname(fit), ref, tolerance = 1e-9))
    if (!ok) {
      expect_equal(unname(fit), ref, tolerance = 1e-9, label = sprintf("case %d", i))
    }
    agreed <- agreed + ok
  }
  expect_identical(agreed, iterations(200))
})

test_that("the fit refuses malformed arguments with an R error", {
  expect_snapshot(error = TRUE, {
    .Call(agmem_line_fit, "8", c(1, 2))
    .Call(agmem_line_fit, factor(1:2), c(1, 2))
    .Call(agmem_line_fit, c(1, 2), list(1, 2))
    .Call(agmem_line_fit, c(1, 2), c(1, 2, 3))
    .Call(agmem_line_fit, 1, 1)
    .Call(agmem_line_fit, numeric(0), numeric(0))
    .Call(agmem_line_fit, c(1, NA), c(1, 2))
    .Call(agmem_line_fit, c(1, 2), c(1, Inf))
    .Call(agmem_line_fit, c(1L, NA), c(1, 2))
    .Call(agmem_line_fit, c(4, 4, 4), c(1, 2, 3))
    .Call(agmem_line_fit, NULL, NULL)
  })
})

test_that("a fit that overflows a double is an error, not Inf", {
  huge <- c(-1.7e308, 1.7e308) # named, so that the snapshot does not deparse the numbers
  expect_snapshot(error = TRUE, {
    .Call(agmem_line_fit, c(1, 2), huge)
  })
  expect_equal(.Call(agmem_line_fit, c(1, 2), c(-1e307, 1e307)),
               c(fixed = -3e307, per_sample = 2e307))
})

# ---- the result ----

test_that("the line is fitted on all points and checked on the largest without it", {
  expect_identical(cpu3$line$host, .Call(agmem_line_fit, c(64L, 128L, 256L, 1024L),
                                         c(71.25, 82.5, 106, 290) * mib))
  expect_identical(cpu3$line$device, c(fixed = 0, per_sample = 0))
  held_out <- unname(stats::coef(stats::lm(c(71.25, 82.5, 106) * mib ~ c(64, 128, 256))))
  expect_equal(cpu3$check$predicted, held_out[[1]] + held_out[[2]] * 1024)
  expect_identical(cpu3$check$measured, 290 * mib)
  expect_identical(cpu3$check$batch_size, 1024L)
  expect_equal(cpu3$check$relative_error, (cpu3$check$predicted - 290 * mib) / (290 * mib))
  expect_identical(cpu3$check$where, "host")
  expect_identical(gpu3$check$where, c("host", "device"))
  # Through two points the device line is exact: 150 MiB at 32, 190 MiB at 64.
  expect_equal(gpu3$check$predicted[[2]], (110 + 1.25 * 128) * mib)
  expect_true(is.na(cpu2$check))
  expect_identical(cpu2$line$host, c(fixed = 20 * mib, per_sample = 2.5 * mib))
})

test_that("format() and print() write the report in scaled units", {
  expect_snapshot({
    print(cpu3)
    print(cpu2)
    print(gpu3)
    print(gpu3, units = "si")
    print(cpu2, units = "MiB")
  })
  expect_identical(format(cpu3), utils::capture.output(print(cpu3)))
  utils::capture.output(shown <- withVisible(print(cpu2)))
  expect_false(shown$visible)
  expect_identical(shown$value, cpu2)
})

test_that("the report notes a peak the kernel did not reset", {
  m <- measured_memory(measurements(c(8, 32), c(40, 100) * mib, reset = c(TRUE, FALSE)), "cpu",
                       "0.8.8.1")
  expect_snapshot(print(m))
})

test_that("the report says when the host peak grows too little to trust the line", {
  flat <- measured_memory(measurements(c(8, 16, 32), c(250, 260, 320) * mib), "cpu", "0.8.8.1")
  expect_snapshot(print(flat))
  expect_false(any(grepl("less than doubles", format(cpu3), fixed = TRUE)))
  expect_false(any(grepl("less than doubles", format(gpu3), fixed = TRUE)))
})

test_that("format() refuses a bad unit", {
  expect_snapshot(error = TRUE, format(cpu2, units = "furlongs"))
})

# ---- summary() ----

test_that("summary() gives the largest batch for a budget by the line", {
  s <- summary(cpu2, budget = "1 GiB")
  expect_s3_class(s, "summary.ag_measured_memory")
  # 20 MiB + 2.5 MiB * b <= 1024 MiB: b <= 401.6.
  expect_identical(s$max_batch, 401)
  expect_identical(s$peak, 1022.5 * mib)
  expect_identical(s$where, "host")
  expect_null(s$host_peak)
  g <- summary(gpu3, budget = 2^30)
  expect_identical(g$where, "device")
  expect_identical(g$max_batch, ag_max_batch_size(gpu3, budget = 2^30))
  expect_equal(g$host_peak, gpu3$line$host[["fixed"]] + gpu3$line$host[["per_sample"]] *
                 g$max_batch)
})

test_that("summary() prints what fits", {
  flat <- measured_memory(measurements(c(8, 32), c(40, 40) * mib), "cpu", "0.8.8.1")
  expect_snapshot({
    summary(cpu2, budget = "1 GiB")
    summary(cpu2, budget = "16GiB")
    print(summary(cpu3, budget = "512 MiB"), units = "si")
    summary(gpu3, budget = "8 GiB")
    summary(cpu2, budget = "20 MiB")
    summary(flat, budget = "1 GiB")
  })
})

test_that("summary() refuses a bad budget, and NULL for the device", {
  expect_snapshot(error = TRUE, {
    summary(cpu2, budget = "lots")
    summary(cpu2, budget = -1)
  })
  # NULL on the device is the GPU's free memory, which this machine either cannot report
  # (no ggmlR, or no GPU) or reports: then the answer is ag_max_batch_size()'s.
  free <- tryCatch(gpu_free_memory(), error = function(e) NULL)
  if (is.null(free)) {
    expect_agmem_error(summary(gpu3), "`budget` is NULL, which for device \"gpu\"")
  } else {
    expect_identical(summary(gpu3)$max_batch, ag_max_batch_size(gpu3))
  }
})

# ---- arguments ----

test_that("bad arguments are errors that name the argument", {
  step <- function(batch_size) NULL
  expect_snapshot(error = TRUE, {
    ag_measure_training_memory("step")
    ag_measure_training_memory(step, batch_size = 8L)
    ag_measure_training_memory(step, batch_size = c(8, NA))
    ag_measure_training_memory(step, batch_size = c(0, 8))
    ag_measure_training_memory(step, batch_size = c(8, 16.5))
    ag_measure_training_memory(step, batch_size = c(8, 2^31))
    ag_measure_training_memory(step, batch_size = c(8, 16, 8))
    ag_measure_training_memory(step, batch_size = c("8", "16"))
    ag_measure_training_memory(step, device = "tpu")
    ag_measure_training_memory(step, quiet = NA)
  })
})

test_that("batch sizes come back sorted integers", {
  expect_identical(check_measure_batches(c(32, 8, 16)), c(8L, 16L, 32L))
})

test_that("a missing processx, ggmlR or /proc is a clear error", {
  expect_snapshot(error = TRUE, {
    check_measure_deps(has_processx = FALSE, has_ggmlr = TRUE, has_proc = TRUE)
    check_measure_deps(has_processx = TRUE, has_ggmlr = FALSE, has_proc = TRUE)
    check_measure_deps(has_processx = TRUE, has_ggmlr = TRUE, has_proc = FALSE)
  })
  expect_true(check_measure_deps(TRUE, TRUE, TRUE))
})

# ---- real measurements (ggmlR and processx) ----

tiny_step <- function(batch_size, width = 64L) {
  layer <- ggmlR::ag_linear(width, width)
  opt <- ggmlR::optimizer_sgd(layer$params(), lr = 0.01)
  x <- ggmlR::ag_tensor(matrix(stats::rnorm(width * batch_size), width, batch_size))
  ggmlR::with_grad_tape(loss <- ggmlR::ag_mse_loss(layer$forward(x), x))
  opt$step(ggmlR::backward(loss))
  opt$zero_grad()
}

test_that("a real measurement of a tiny model", {
  skip_if_not_installed("ggmlR")
  skip_if_not_installed("processx")
  skip_on_os(c("windows", "mac", "solaris"))
  msgs <- character()
  m <- withCallingHandlers(
    ag_measure_training_memory(tiny_step, batch_size = c(16L, 4L), width = 32L),
    message = function(e) {
      msgs <<- c(msgs, conditionMessage(e))
      invokeRestart("muffleMessage")
    }
  )
  expect_s3_class(m, "ag_measured_memory")
  expect_identical(m$measurements$batch_size, c(4L, 16L))
  expect_true(all(m$measurements$host_peak >= 0))
  expect_identical(m$measurements$device_peak, c(0, 0))
  expect_true(all(m$measurements$peak_reset))
  expect_identical(m$ggmlR_version, as.character(utils::packageVersion("ggmlR")))
  expect_true(is.na(m$check))
  expect_length(msgs, 4L)
  expect_match(msgs[[1]], "batch size 4 (1 of 2)", fixed = TRUE)
  expect_match(msgs[[4]], "batch size 16: done, [0-9.]+ s elapsed")
})

test_that("a step that returns its loop body runs as a training loop until its peak settles", {
  skip_if_not_installed("ggmlR")
  skip_if_not_installed("processx")
  skip_on_os(c("windows", "mac", "solaris"))
  loop_step <- function(batch_size, width) {
    layer <- ggmlR::ag_linear(width, width)
    opt <- ggmlR::optimizer_sgd(layer$params(), lr = 0.01)
    x <- matrix(stats::rnorm(width * 4 * batch_size), width)
    # The child counts the calls of the body in a file, which this test reads back.
    function() {
      cat("x", file = counter, append = TRUE)
      xb <- ggmlR::ag_tensor(x[, sample(ncol(x), batch_size), drop = FALSE])
      ggmlR::with_grad_tape(loss <- ggmlR::ag_mse_loss(layer$forward(xb), xb))
      opt$step(ggmlR::backward(loss))
      opt$zero_grad()
    }
  }
  counter <- tempfile()
  environment(loop_step) <- list2env(list(counter = counter), parent = globalenv())
  m <- ag_measure_training_memory(loop_step, c(4L, 8L), width = 32L, steps = 40L, quiet = TRUE)
  runs <- m$measurements$steps
  expect_true(all(runs >= 20L & runs <= 40L))
  # The body ran once per step of both runs, and the setup's call is no step.
  expect_identical(nchar(readLines(counter, warn = FALSE)), sum(runs))
  expect_identical(m$steps, 40L)
  expect_type(m$measurements$settled, "logical")
  expect_identical(m$measurements$settled, runs < 40L | m$measurements$settled)
  expect_match(format(m)[[1L]], "each batch size ran until its peak settled (at most 40 steps)",
               fixed = TRUE)
  # A step that returns anything else is called for every step.
  unlink(counter)
  whole_step <- function(batch_size) {
    cat("x", file = counter, append = TRUE)
    invisible(NULL)
  }
  environment(whole_step) <- environment(loop_step)
  m2 <- ag_measure_training_memory(whole_step, c(1L, 2L), steps = 25L, quiet = TRUE)
  expect_identical(nchar(readLines(counter, warn = FALSE)), sum(m2$measurements$steps))
  expect_true(all(m2$measurements$steps >= 20L))
  for (bad in list(19, 2.5, NA, "30", c(30, 40), 2e6)) {
    expect_agmem_error(ag_measure_training_memory(whole_step, c(1L, 2L), steps = bad),
                       "`steps` must be one whole number", class = "agmem_error_argument")
  }
})

test_that("a real measurement in device mode reads the pools, quietly", {
  skip_if_not_installed("ggmlR")
  skip_if_not_installed("processx")
  skip_on_os(c("windows", "mac", "solaris"))
  expect_silent(m <- ag_measure_training_memory(tiny_step, c(4L, 8L), "gpu", quiet = TRUE))
  # The pools hold at least the layer's f32 weights (64 x 64 + 64).
  expect_true(all(m$measurements$device_peak >= (64 * 64 + 64) * 4))
  expect_gt(m$line$device[["per_sample"]], 0)
})

test_that("an error in the step comes back with the child's message", {
  skip_if_not_installed("ggmlR")
  skip_if_not_installed("processx")
  skip_on_os(c("windows", "mac", "solaris"))
  failing <- function(batch_size) {
    if (batch_size > 4L) stop("no data for batch ", batch_size)
  }
  expect_snapshot(error = TRUE, {
    ag_measure_training_memory(failing, c(4L, 8L), quiet = TRUE)
  })
})

# The running processes this R process started, at any depth (needs ps).
running_children <- function() {
  kids <- ps::ps_children(ps::ps_handle(), recursive = TRUE)
  kids[vapply(kids, ps::ps_is_running, logical(1))]
}

# The faults of a child, each with its own process; every one is an agmem_error_measurement
# that names the batch size, and no row of the result comes from another batch's child.
measure_quietly <- function(step, ...) {
  ag_measure_training_memory(step, c(2L, 4L), quiet = TRUE, ...)
}

test_that("a step that quits, aborts or crashes is an error that says so", {
  skip_if_not_installed("ggmlR")
  skip_if_not_installed("processx")
  skip_on_os(c("windows", "mac", "solaris"))
  at4 <- function(f) function(batch_size) if (batch_size == 4L) f()
  expect_agmem_error(measure_quietly(at4(function() quit(save = "no"))),
                     "batch size 4: its R process ended with status 0 before the step returned",
                     class = "agmem_error_measurement")
  expect_agmem_error(measure_quietly(at4(function() invokeRestart("abort"))),
                     "batch size 4: its R process ended", class = "agmem_error_measurement")
  expect_agmem_error(measure_quietly(at4(function() tools::pskill(Sys.getpid(), 11L))),
                     "batch size 4: its R process was killed by signal 11 \\(SIGSEGV\\)",
                     class = "agmem_error_measurement")
  expect_agmem_error(measure_quietly(at4(function() tools::pskill(Sys.getpid(), 9L))),
                     "signal 9 \\(SIGKILL\\), which the system's out-of-memory killer sends",
                     class = "agmem_error_measurement")
  e <- tryCatch(measure_quietly(at4(function() quit(save = "no"))), error = identity)
  expect_identical(e$batch_size, 4L)
})

test_that("the step's own error keeps its class and message, empty or not", {
  skip_if_not_installed("ggmlR")
  skip_if_not_installed("processx")
  skip_on_os(c("windows", "mac", "solaris"))
  expect_agmem_error(measure_quietly(function(b) stop()),
                     paste("batch size 2: the step failed with an error of class",
                           "\"simpleError\": \\(its message is empty\\)"),
                     class = "agmem_error_measurement")
  custom <- function(b) {
    stop(structure(class = c("my_error", "error", "condition"),
                   list(message = "custom trouble", call = NULL)))
  }
  expect_agmem_error(measure_quietly(custom), "of class \"my_error\": custom trouble")
  expect_agmem_error(measure_quietly(function(b) print(x_tr)),
                     "object 'x_tr' not found. The step runs in a fresh R process")
  # A condition that is only signalled is not an error.
  m <- measure_quietly(function(b) signalCondition(simpleError("only signalled")))
  expect_s3_class(m, "ag_measured_memory")
})

test_that("a step that hangs is killed at the timeout, with what it started", {
  skip_if_not_installed("ggmlR")
  skip_if_not_installed("processx")
  skip_if_not_installed("ps")
  skip_on_os(c("windows", "mac", "solaris"))
  before <- length(running_children())
  started <- proc.time()[["elapsed"]]
  expect_agmem_error(measure_quietly(function(b) Sys.sleep(60), timeout = 8),
                     "ran past `timeout` \\(8 s\\)", class = "agmem_error_measurement")
  expect_lt(proc.time()[["elapsed"]] - started, 40)
  expect_identical(length(running_children()), before)
  # A background process started by the step neither blocks the measurement nor outlives it.
  # Its duration names this test process, so that no other run on the machine is counted.
  nap <- sprintf("300.%d", Sys.getpid())
  started <- proc.time()[["elapsed"]]
  m <- measure_quietly(function(b) system(paste("sleep", nap, "&")))
  expect_s3_class(m, "ag_measured_memory")
  expect_lt(proc.time()[["elapsed"]] - started, 120)
  Sys.sleep(0.5)
  leftover <- suppressWarnings(system2("pgrep", c("-f", shQuote(paste0("^sleep ", nap, "$"))),
                                       stdout = TRUE, stderr = FALSE))
  expect_length(leftover, 0L)
  expect_agmem_error(measure_quietly(function(b) NULL, timeout = 0), "`timeout`")
  expect_agmem_error(measure_quietly(function(b) NULL, timeout = "1"), "`timeout`")
})

test_that("the step's output is discarded at no cost, and its warnings are passed on", {
  skip_if_not_installed("ggmlR")
  skip_if_not_installed("processx")
  skip_on_os(c("windows", "mac", "solaris"))
  started <- proc.time()[["elapsed"]]
  m <- measure_quietly(function(b) cat(strrep("x", 1e6), "\n"))
  expect_lt(proc.time()[["elapsed"]] - started, 60)
  expect_warning(measure_quietly(function(b) if (b == 2L) warning("careful at ", b)),
                 "The step warned at batch size 2: careful at 2", class = "agmem_warning_step")
})

test_that("a refused batch size is shown exactly", {
  step <- function(batch_size) NULL
  expect_agmem_error(ag_measure_training_memory(step, c(1, 1 + 2^-52)), " 1.0000000000000002.",
               fixed = TRUE)
})

test_that("a line with a negative fixed part never predicts a peak below the smallest measured", {
  neg <- measured_memory(measurements(c(8, 64), c(10, 100) * mib), "cpu", "0.8.8.1")
  expect_lt(neg$line$host[["fixed"]], 0)
  expect_match(format(neg), "negative fixed part", all = FALSE)
  sweep <- ag_memory_sweep(neg, c(1, 2, 8, 64))
  expect_true(all(sweep$host_peak >= 10 * mib))
  expect_identical(sweep$host_peak[[1L]], 10 * mib)
  # Nothing fits in less than the smallest peak measured; above it, the line plans.
  expect_agmem_error(ag_max_batch_size(neg, 5 * mib), "smallest budget that fits it is 10.00 MiB",
                     class = "agmem_error_budget")
  s <- summary(neg, budget = 5 * mib)
  expect_identical(s$max_batch, 0)
  expect_output(print(s), "batch size 1 needs 10.00 MiB")
  s <- summary(neg, budget = 50 * mib)
  expect_gt(s$max_batch, 1)
  expect_lte(s$peak, 50 * mib)
})

test_that("a measurement interrupted in its wait leaves no process behind", {
  skip_if_not_installed("ggmlR")
  skip_if_not_installed("processx")
  skip_if_not_installed("ps")
  skip_on_os(c("windows", "mac", "solaris"))
  before <- length(running_children())
  on.exit(setTimeLimit(), add = TRUE)
  e <- tryCatch({
    setTimeLimit(elapsed = 6, transient = TRUE)
    ag_measure_training_memory(function(b) Sys.sleep(60), c(2L, 4L), quiet = TRUE)
  }, error = identity)
  setTimeLimit()
  expect_match(conditionMessage(e), "time limit")
  Sys.sleep(0.5)
  expect_identical(length(running_children()), before)
})

test_that("an empty measurement prints a clear line, not an error about `x`", {
  empty <- structure(list(
    measurements = data.frame(batch_size = integer(0), host_peak = numeric(0),
                              device_peak = numeric(0), seconds = numeric(0),
                              peak_reset = logical(0)),
    line = list(host = c(fixed = 0, per_sample = 0), device = c(fixed = 0, per_sample = 0)),
    check = NA, device = "cpu", steps = 3L, ggmlR_version = "0.8.8.1"
  ), class = "ag_measured_memory")
  expect_output(print(empty), "no batch size was measured")
})

test_that("a measuring child dies with the R process that measures", {
  skip_if_not_installed("ggmlR")
  skip_if_not_installed("processx")
  skip_if_not_installed("ps")
  skip_on_os(c("windows", "mac", "solaris"))
  parent <- processx::process$new(
    file.path(R.home("bin"), "Rscript"),
    c("-e", paste("agmem::ag_measure_training_memory(function(b) Sys.sleep(120), c(2L, 4L),",
                  "quiet = TRUE)")),
    env = c(Sys.getenv(), R_LIBS = paste(.libPaths(), collapse = .Platform$path.sep)),
    stdout = NULL, stderr = NULL, cleanup_tree = TRUE
  )
  on.exit(parent$kill_tree(), add = TRUE)
  child <- NULL
  for (i in 1:100) {
    kids <- ps::ps_children(parent$as_ps_handle())
    if (length(kids) > 0L) {
      child <- kids[[1L]]
      break
    }
    Sys.sleep(0.2)
  }
  expect_false(is.null(child))
  Sys.sleep(1)
  parent$kill()
  for (i in 1:50) {
    if (!ps::ps_is_running(child)) break
    Sys.sleep(0.2)
  }
  expect_false(ps::ps_is_running(child))
  expect_agmem_error(.Call(agmem:::agmem_die_with_parent, "1"), "`parent`")
})

test_that("a line that under-predicted its check warns wherever it plans", {
  m <- structure(list(
    measurements = data.frame(batch_size = c(64L, 256L, 1024L),
                              host_peak = c(100, 130, 300) * 2^20, device_peak = 0,
                              seconds = 1, peak_reset = TRUE),
    line = list(host = c(fixed = 80 * 2^20, per_sample = 0.2 * 2^20),
                device = c(fixed = 0, per_sample = 0)),
    check = data.frame(where = "host", batch_size = 1024L, measured = 300 * 2^20,
                       predicted = 234 * 2^20, relative_error = -0.22),
    device = "cpu", steps = 300L, ggmlR_version = "0.8.8.1"
  ), class = "ag_measured_memory")
  expect_warning(ag_max_batch_size(m, "1 GiB"), "under-predicted its peak there by 22.0%",
                 class = "agmem_warning_check")
  expect_warning(summary(m, budget = "1 GiB"), class = "agmem_warning_check")
  expect_warning(ag_memory_sweep(m, c(1, 2)), class = "agmem_warning_check")
  # Within 15%, or over-predicting, it is silent.
  m$check$relative_error <- -0.1
  expect_no_warning(ag_max_batch_size(m, "1 GiB"))
  m$check$relative_error <- 0.3
  expect_no_warning(ag_max_batch_size(m, "1 GiB"))
})

test_that("a search for a budget halves, quadruples and bisects until the runs bracket it", {
  pts <- function(batch, peak) data.frame(batch = batch, peak = peak)
  # Every run fits: four times the largest.
  expect_identical(next_search_batch(pts(c(64, 256, 1024), c(90, 130, 200)), 500), 4096L)
  # None fits: half the smallest; batch size 1 not fitting ends the search.
  expect_identical(next_search_batch(pts(c(64, 256), c(90, 130)), 50), 32L)
  expect_identical(next_search_batch(pts(c(1, 2), c(90, 130)), 50), NA_integer_)
  # Between the largest that fits and the smallest that does not: their geometric mean.
  expect_identical(next_search_batch(pts(c(64, 256, 1024), c(98, 132, 208)), 104), 128L)
  expect_identical(next_search_batch(pts(c(64, 128, 256), c(98, 104, 132)), 110), 181L)
  # A bracket within a factor of 1.15 is done.
  expect_identical(next_search_batch(pts(c(128, 147), c(104, 111)), 110), NA_integer_)
  # A run that fits above one that does not counts for nothing: the bracket is the first miss.
  expect_identical(next_search_batch(pts(c(64, 256, 1024), c(98, 140, 120)), 130), 128L)
  for (bad in list("2 Gb", -1, "many")) {
    expect_agmem_error(ag_measure_training_memory(function(b) NULL, c(1L, 2L), budget = bad),
                       "`budget`", class = "agmem_error_argument")
  }
})

test_that("a plan on a measurement stays within the runs measured", {
  m <- structure(list(
    measurements = data.frame(batch_size = c(64L, 128L, 256L, 1024L),
                              host_peak = c(98.4, 103.7, 132.1, 207.6) * 2^20, device_peak = 0,
                              seconds = 1, peak_reset = TRUE),
    line = list(host = c(fixed = 97 * 2^20, per_sample = 0.1094 * 2^20),
                device = c(fixed = 0, per_sample = 0)),
    check = NA, device = "cpu", steps = 300L, ggmlR_version = "0.8.8.1"
  ), class = "ag_measured_memory")
  # The line alone answers 61 for the peak measured at batch 128; the run at 128 fitted.
  expect_identical(ag_max_batch_size(m, 103.7 * 2^20), 128)
  s <- summary(m, budget = 103.7 * 2^20)
  expect_identical(s$max_batch, 128)
  expect_identical(s$peak, 103.7 * 2^20)
  # The line alone answers far past 256, whose run did not fit 130 MiB: 255.
  m$line$host <- c(fixed = 10 * 2^20, per_sample = 0.2 * 2^20)
  expect_identical(ag_max_batch_size(m, 130 * 2^20), 255)
  # Between the runs' bracket, the line answers: 140 MiB fits the run at 256, not the one at 1024.
  expect_identical(ag_max_batch_size(m, 140 * 2^20), 650)
  # Below the smallest peak measured, nothing fits (the floor).
  expect_agmem_error(ag_max_batch_size(m, 50 * 2^20), class = "agmem_error_budget")
})
