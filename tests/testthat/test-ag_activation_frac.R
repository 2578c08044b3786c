test_that("the calibration round trip reproduces the measurement", {
  set.seed(7)
  exact <- c(own = 0L, any = 0L)
  runs <- iterations(1000)
  for (i in seq_len(runs)) {
    shapes <- random_shapes()
    batch <- sample.int(4096L, 1L)
    own <- i %% 2 == 0
    measured <- if (own) {
      ag_estimate_training_memory(shapes, batch, activation_frac = random_frac(),
                                  quiet = TRUE)$activations
    } else {
      stats::runif(1, 0, 1e10)
    }
    frac <- ag_activation_frac(measured, shapes, batch)
    back <- ag_estimate_training_memory(shapes, batch, activation_frac = frac,
                                        quiet = TRUE)$activations
    expect_lte(abs(back - measured), 4 * .Machine$double.eps * measured)
    kind <- if (own) "own" else "any"
    exact[[kind]] <- exact[[kind]] + (back == measured)
  }
  # A figure the estimator made is always reproduced exactly: the fraction that made it exists.
  expect_identical(exact[["own"]], runs %/% 2L)
  # An arbitrary measurement mostly is too; where no double does it, the closest is taken.
  expect_gt(exact[["any"]], 0.8 * (runs - runs %/% 2L))
})

test_that("a fraction the estimator used is recovered from its own figure", {
  shapes <- ag_dense_shapes(c(784, 128, 128, 128, 10))
  act <- ag_estimate_training_memory(shapes, 32, activation_frac = 0.01, quiet = TRUE)$activations
  frac <- ag_activation_frac(act, shapes, 32)
  expect_equal(frac, 0.01, tolerance = 1e-15)
  expect_identical(
    ag_estimate_training_memory(shapes, 32, activation_frac = frac, quiet = TRUE)$activations, act
  )
})

test_that("ag_tape_memory()'s list is read through bytes_snapshots", {
  shapes <- ag_dense_shapes(c(100, 50, 10))
  tape <- list(bytes_params = 1, bytes_snapshots = 123456, bytes_total = 2)
  expect_identical(ag_activation_frac(tape, shapes, 16), ag_activation_frac(123456, shapes, 16))
  expect_identical(ag_activation_frac(0, shapes, 16), 0)
})

test_that("bad measurements are errors that name `measured`", {
  shapes <- ag_dense_shapes(c(100, 50, 10))
  expect_snapshot(error = TRUE, {
    ag_activation_frac(list(bytes_total = 5), shapes, 16)
    ag_activation_frac(-1, shapes, 16)
    ag_activation_frac(NA, shapes, 16)
  })
})

test_that("bad measurements are errors that name `measured`, value by value", {
  shapes <- ag_dense_shapes(c(100, 50, 10))
  for (bad in list(-1, NA, NA_real_, Inf, NaN, "5", c(1, 2), NULL, list(), list(a = 1),
                   list(bytes_snapshots = -1), list(bytes_snapshots = "x"), factor(1), TRUE)) {
    expect_agmem_error(ag_activation_frac(bad, shapes, 16), "`measured`")
  }
  expect_agmem_error(ag_activation_frac(5, shapes, 0), "`batch_size`")
  expect_error(ag_activation_frac(5, shapes), "batch_size")
  expect_agmem_error(ag_activation_frac(5, list(-1), 1), "positive")
  expect_agmem_error(.Call(agmem:::agmem_activation_frac, 5, shapes, "1"), "`batch_size`")
  expect_agmem_error(.Call(agmem:::agmem_activation_frac, 5, 1e308 * 10, 1), "`shapes`")
})

test_that("a model description stands for its shapes", {
  spec <- ag_dense_stack(c(784, 128, 128, 10))
  expect_identical(ag_activation_frac(9.5 * 1024^2, spec, 32),
                   ag_activation_frac(9.5 * 1024^2, spec$shapes, 32))
})
