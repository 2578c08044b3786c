mlp <- ag_dense_shapes(c(784, 512, 512, 10))

test_that("the sweep has one row per optimizer and batch, with the documented columns", {
  sweep <- ag_memory_sweep(mlp)
  expect_s3_class(sweep, c("ag_memory_sweep", "data.frame"), exact = TRUE)
  expect_identical(names(sweep), c("optimizer", "batch_size", "params", "weights", "gradients",
                                   "optimizer_state", "activations", "total"))
  expect_identical(nrow(sweep), 33L)
  expect_identical(sweep$optimizer, rep(c("adam", "sgd", "sgd_plain"), each = 11L))
  expect_identical(sweep$batch_size, rep(2^(0:10), 3L))
  expect_identical(attr(sweep, "activation_frac"), 0.01)
})

test_that("every row is identical to the estimator's figures", {
  set.seed(99)
  for (i in seq_len(iterations(40))) {
    shapes <- random_shapes()
    batches <- sample.int(.Machine$integer.max, sample.int(6L, 1L))
    opts <- sample(c("adam", "sgd", "sgd_plain"), sample.int(3L, 1L))
    frac <- random_frac()
    sweep <- ag_memory_sweep(shapes, batches, opts, frac)
    for (r in seq_len(nrow(sweep))) {
      est <- ag_estimate_training_memory(shapes, sweep$batch_size[[r]], sweep$optimizer[[r]], frac,
                                         quiet = TRUE)
      row <- unlist(sweep[r, c("params", "weights", "gradients", "optimizer_state",
                               "activations", "total")], use.names = FALSE)
      expect_identical(row, unlist(est[figures], use.names = FALSE))
    }
  }
})

test_that("long batch vectors are read and written in full", {
  # Longer than the 16 doubles R serves from its own pools, so that the sanitizer and valgrind
  # steps of CI see every read of the batch sizes and every write of the columns.
  batches <- list(as.double(seq(3, 3000, by = 3)), 1:1000 * 7L)
  for (batch in batches) {
    sweep <- ag_memory_sweep(mlp, batch, c("sgd", "adam"))
    expect_identical(sweep$batch_size, rep(as.double(batch), 2L))
    rows <- c(1L, 999L, 1000L, 1001L, 2000L)
    for (r in rows) {
      est <- ag_estimate_training_memory(mlp, sweep$batch_size[[r]], sweep$optimizer[[r]],
                                         quiet = TRUE)
      expect_identical(sweep$total[[r]], est$total)
    }
  }
  expect_agmem_error(ag_memory_sweep(mlp, c(as.double(1:999), -1)), "`batch_size`.* -1")
  out <- .Call(agmem:::agmem_sweep, mlp, rep(0:2, 10L), 0.01, as.double(1:50))
  expect_identical(lengths(out), rep(1500L, 6L))
  expect_agmem_error(.Call(agmem:::agmem_sweep, mlp, c(rep(0:2, 10L), 3L), 0.01, 1), "not 3")
})

test_that("optimizers are matched as match.arg(several.ok = TRUE) would, without repeats", {
  expect_identical(unique(ag_memory_sweep(mlp, 1, "sgd_p")$optimizer), "sgd_plain")
  expect_identical(ag_memory_sweep(mlp, 1:2, c("sgd", "ad", "sgd"))$optimizer,
                   c("sgd", "sgd", "adam", "adam"))
})

test_that("bad arguments are errors that name them", {
  expect_snapshot(error = TRUE, {
    ag_memory_sweep(mlp, batch_size = c(1, 0))
    ag_memory_sweep(mlp, optimizer = c("adam", "nadam"))
    ag_memory_sweep(mlp, batch_size = numeric(0))
  })
})

test_that("bad arguments are errors that name them, value by value", {
  for (bad in list(NULL, numeric(0), c(1, NA), c(1, 2.5), "1", list(1), factor(1), 2^31)) {
    expect_agmem_error(ag_memory_sweep(mlp, bad), "`batch_size`")
  }
  for (bad in list(character(0), NA_character_, "s", 1)) {
    expect_agmem_error(ag_memory_sweep(mlp, optimizer = bad), "`optimizer`")
  }
  # As match.arg(NULL, choices, several.ok = TRUE): the first choice.
  expect_identical(unique(ag_memory_sweep(mlp, 1, optimizer = NULL)$optimizer), "adam")
  expect_agmem_error(ag_memory_sweep(mlp, activation_frac = NA), "`activation_frac`")
  expect_agmem_error(ag_memory_sweep(list("a")), "shape 1")
  expect_agmem_error(ag_memory_sweep(1e300, activation_frac = 1e10), "overflow")
})

test_that("the .Call entry point checks every argument it reads", {
  call <- function(shapes = mlp, k = 2:0, frac = 0.01, batch = c(1, 8)) {
    .Call(agmem:::agmem_sweep, shapes, k, frac, batch)
  }
  out <- call()
  expect_length(out, 6L)
  expect_identical(lengths(out), rep(6L, 6L))
  for (bad in list(NULL, integer(0), c(2, 5), NA, "a")) expect_agmem_error(call(k = bad),
                                                                           "`multiplier`")
  for (bad in list(NULL, numeric(0), c(1, -1), "a")) expect_agmem_error(call(batch = bad),
                                                                        "`batch_size`")
  expect_agmem_error(call(frac = "a"), "`activation_frac`")
  expect_agmem_error(call(shapes = NULL), "`shapes`")
})

test_that("a sweep of more rows than a vector can hold is refused before any batch is read", {
  skip_if(.Machine$sizeof.pointer < 8L, "no long vectors on a 32-bit build")
  # (2^21 + 1) multipliers times 2^31 - 1 batch sizes (a compact sequence) exceed 2^52 rows.
  multipliers <- rep_len(0:2, 2^21 + 1)
  expect_agmem_error(.Call(agmem:::agmem_sweep, 1, multipliers, 0.01,
                           seq_len(.Machine$integer.max)),
               "too many rows")
})

# ---- sweeps of a model or a measurement ----

test_that("a model's sweep has every figure of ag_training_memory() for its rows", {
  beyond_range_ok({
    set.seed(5)
    for (i in seq_len(iterations(20))) {
      widths <- sample.int(2048L, sample(2:5, 1L))
      spec <- ag_dense_stack(widths, sample(c("relu", "tanh", "none"), 1L))
      device <- sample(c("cpu", "gpu"), 1L)
      dtype <- if (device == "gpu") sample(c("f32", "f16", "bf16"), 1L) else "f32"
      opts <- sample(c("adam", "sgd", "sgd_plain"), sample.int(3L, 1L))
      batches <- sample.int(1e5, sample.int(5L, 1L))
      sweep <- ag_memory_sweep(spec, batches, opts, device = device, dtype = dtype)
      expect_s3_class(sweep, c("ag_memory_sweep", "data.frame"), exact = TRUE)
      expect_identical(names(sweep), c("optimizer", "batch_size", "params",
                                       agmem:::registry_names("components"), "host_peak",
                                       "host_high", "device_peak"))
      expect_identical(sweep$optimizer, rep(opts, each = length(batches)))
      expect_identical(sweep$batch_size, rep(as.double(batches), length(opts)))
      where <- if (device == "gpu") "device" else "host"
      for (r in seq_len(nrow(sweep))) {
        mem <- ag_training_memory(spec, sweep$batch_size[[r]], sweep$optimizer[[r]], device, dtype,
                                  quiet = TRUE)
        expect_identical(sweep$host_peak[[r]], mem$host_peak)
        expect_identical(sweep$host_high[[r]], mem$host_high)
        expect_identical(sweep$device_peak[[r]], mem$device_peak)
        expect_identical(sweep$params[[r]], mem$params)
        here <- mem$components[mem$components$where == where, ]
        for (k in seq_len(nrow(here))) {
          expect_identical(sweep[[here$component[[k]]]][[r]], here$bytes[[k]])
        }
      }
      expect_identical(attr(sweep, "plan")$device, device)
    }
  })
})

test_that("a measurement's sweep holds its line at each batch", {
  m <- structure(list(
    line = list(host = c(fixed = 5e7, per_sample = 1e5), device = c(fixed = 2e7, per_sample = 3e4)),
    device = "gpu"
  ), class = "ag_measured_memory")
  sweep <- ag_memory_sweep(m, c(1, 10, 100))
  expect_identical(names(sweep), c("optimizer", "batch_size", "fixed", "variable", "host_peak",
                                   "device_peak"))
  expect_identical(sweep$optimizer, rep("measured", 3L))
  expect_identical(sweep$fixed, rep(2e7, 3L))
  expect_identical(sweep$variable, 3e4 * c(1, 10, 100))
  expect_identical(sweep$device_peak, 2e7 + 3e4 * c(1, 10, 100))
  expect_identical(sweep$host_peak, 5e7 + 1e5 * c(1, 10, 100))
  m$device <- "cpu"
  expect_identical(ag_memory_sweep(m, 2)$device_peak, 0)
  expect_agmem_error(ag_memory_sweep(m, 2, "adam"), "`optimizer` does not apply")
})

test_that("a model's or a measurement's sweep refuses bad arguments by name", {
  spec <- ag_dense_stack(c(784, 512, 10))
  expect_snapshot(error = TRUE, {
    ag_memory_sweep(spec, batch_size = c(1, 0))
    ag_memory_sweep(spec, batch_size = character(0))
    ag_memory_sweep(spec, optimizer = "nadam")
    ag_memory_sweep(spec, device = "tpu")
    ag_memory_sweep(spec, activation_frac = 0.5)
    ag_memory_sweep(mlp, device = "gpu")
  })
})

test_that("a sweep that would not fit in the memory available is refused before it starts", {
  old <- options(agmem.memory_reader = function() 2^30)
  on.exit(options(old), add = TRUE)
  expect_snapshot(error = TRUE, ag_memory_sweep(list(1), batch_size = 1:1e9))
  expect_agmem_error(ag_memory_sweep(list(1), 1:1e8, "adam"),
                     "needs about 7.45 GiB.*1.00 GiB avail")
  expect_identical(nrow(ag_memory_sweep(list(1), 1:1e6, "adam")), 1000000L)
  # The reader's answer is what decides.
  options(agmem.memory_reader = function() 1e6)
  expect_agmem_error(ag_memory_sweep(list(1), 1:5e3), "`batch_size` makes a sweep of 15 000 rows")
  # Where the memory cannot be read, nothing is refused for it.
  options(agmem.memory_reader = function() stop("cannot open the connection"))
  expect_identical(nrow(ag_memory_sweep(list(1), 1:10)), 30L)
})

test_that("a bad batch size in a vector is named by its position", {
  expect_snapshot(error = TRUE, ag_memory_sweep(mlp, c(1, 2, NA)))
  expect_agmem_error(ag_memory_sweep(mlp, c(1, 2, 1 + 2^-52)), "element 3 is 1.0000000000000002")
  expect_agmem_error(ag_memory_sweep(mlp, c(64L, 0L)), "element 2 is 0")
})

test_that("reading and filling a long sweep can be interrupted", {
  got <- under_expired_time_limit(.Call(agmem:::agmem_sweep, list(1), 2L, 0.01, 1:1e6))
  expect_match(got, "time limit")
  got <- under_expired_time_limit(.Call(agmem:::agmem_sweep, list(1), rep(2L, 2^19), 0.01, 1L))
  expect_match(got, "time limit")
})
