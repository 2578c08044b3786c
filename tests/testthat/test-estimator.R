# The estimators (R/estimator*.R): which one a planner gets, and their shared generics.

test_that("the estimator follows what it is made from", {
  est <- function(x) class(agmem:::as_estimator(x, c("cpu", "gpu"), "f32", list(), 0.01))[[1L]]
  expect_identical(est(ag_dense_shapes(c(4, 2))), "agmem_formula")
  expect_identical(est(1e6), "agmem_formula")
  expect_identical(est(list()), "agmem_formula")
  expect_identical(est(ag_dense_stack(c(4, 2))), "agmem_model")
  expect_identical(est(fake_linear(4, 2)), "agmem_model")
  expect_identical(est(fake_sequential(fake_linear(4, 2))), "agmem_model")
  expect_agmem_error(est(list(fake_tensor(c(4, 2)))), "no layers", class = "agmem_error_unmodelled")
  m <- structure(list(
    line = list(host = c(fixed = 1, per_sample = 1), device = c(fixed = 0, per_sample = 0)),
    device = "cpu"
  ), class = "ag_measured_memory")
  expect_identical(est(m), "agmem_measured")
  for (x in list(ag_dense_shapes(c(4, 2)), ag_dense_stack(c(4, 2)), m)) {
    expect_s3_class(agmem:::as_estimator(x, "cpu", "f32", list(), 0.01), "agmem_estimator")
  }
})

test_that("a measurement's line is read as doubles, and its other line kept for the sweep", {
  m <- structure(list(
    line = list(host = c(fixed = 10L, per_sample = 2L), device = c(fixed = 3, per_sample = 1)),
    device = "gpu"
  ), class = "ag_measured_memory")
  est <- agmem:::as_estimator(m, c("cpu", "gpu"), "f32", list(), 0.01)
  expect_identical(est$where, "device")
  expect_identical(est$line, c(fixed = 3, per_sample = 1))
  expect_identical(est$other$host, c(fixed = 10, per_sample = 2))
  expect_identical(agmem:::est_peak(est, 5, "measured"), 8)
  expect_identical(agmem:::est_optimizers(est, c("adam", "sgd")), "measured")
})

test_that("every estimator's largest batch fits, and one more does not, by its own peak", {
  m <- structure(list(
    line = list(host = c(fixed = 1e6, per_sample = 3e3), device = c(fixed = 0, per_sample = 0)),
    device = "cpu"
  ), class = "ag_measured_memory")
  inputs <- list(ag_dense_shapes(c(64, 32, 10)), ag_dense_stack(c(64, 32, 10)), m)
  for (x in inputs) {
    est <- agmem:::as_estimator(x, "cpu", "f32", list(), 0.01)
    opt <- agmem:::est_optimizers(est, NULL)
    b <- agmem:::est_max_batch(est, 2^27, opt)
    expect_true(b >= 1 && is.finite(b), label = class(est)[[1L]])
    expect_lte(agmem:::est_peak(est, b, opt), 2^27)
    expect_gt(agmem:::est_peak(est, b + 1, opt), 2^27)
  }
})

test_that("each estimator says what it plans on, and what its plot draws", {
  m <- structure(list(
    line = list(host = c(fixed = 1, per_sample = 1), device = c(fixed = 0, per_sample = 0)),
    device = "cpu"
  ), class = "ag_measured_memory")
  for (x in list(ag_dense_shapes(c(4, 2)), ag_dense_stack(c(4, 2)), m)) {
    est <- agmem:::as_estimator(x, "cpu", "f32", list(), 0.01)
    expect_type(format(est, what = "title"), "character")
    expect_type(format(est, what = "planned"), "character")
    parts <- agmem:::est_plot_parts(est)
    expect_named(parts, c("bands", "drop_zero", "title", "ylab", "lines", "stack_suffix"))
  }
  expect_snapshot({
    for (x in list(ag_dense_shapes(c(4, 2)), ag_dense_stack(c(4, 2)), m)) {
      est <- agmem:::as_estimator(x, "cpu", "f32", list(), 0.01)
      print(c(format(est, what = "title"), format(est, what = "planned")))
    }
  })
})

test_that("an argument that does not apply to the estimator is refused when given", {
  m <- structure(list(
    line = list(host = c(fixed = 1, per_sample = 1), device = c(fixed = 0, per_sample = 0)),
    device = "cpu"
  ), class = "ag_measured_memory")
  spec <- ag_dense_stack(c(4, 2))
  expect_agmem_error(agmem:::as_estimator(spec, "cpu", "f32", list(activation_frac = TRUE), 0.1),
               "`activation_frac`", class = "agmem_error_argument")
  expect_agmem_error(agmem:::as_estimator(m, "cpu", "f32", list(optimizer = TRUE), 0.1),
               "`optimizer`", class = "agmem_error_argument")
  expect_agmem_error(agmem:::as_estimator(1e6, "gpu", "f32", list(), 0.1),
               "`device`", class = "agmem_error_argument")
})

test_that("batch sizes are checked by the C reader, with its messages", {
  check <- agmem:::check_batch_sizes
  expect_identical(check(c(1L, 5L)), c(1, 5))
  for (bad in list(NULL, numeric(0), "1", list(1), factor(1))) {
    expect_agmem_error(check(bad), "`batch_size` must be a non-empty numeric vector",
                 class = "agmem_error_argument")
  }
  for (bad in list(0, -1, 2.5, NA, NaN, Inf, 2^31)) {
    expect_agmem_error(check(c(1, bad)),
                       "`batch_size` must hold whole numbers from 1 to 2147483647",
                 class = "agmem_error_argument")
  }
})

test_that("a model's sweep shows a refused batch size exactly, as the formula's does", {
  spec <- ag_dense_stack(c(4, 2))
  expect_agmem_error(ag_memory_sweep(spec, 1 + 2^-52), "not 1.0000000000000002.", fixed = TRUE)
  expect_agmem_error(ag_memory_sweep(spec, c(1, 1 + 2^-52)), "is 1.0000000000000002.", fixed = TRUE)
})
