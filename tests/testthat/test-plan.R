# The planning internals of R/plan.R: the GPU budget, the measurement check, the plan's figure.

# A fake of ggmlR's device API: devices 0, 1, ... of the given types, each with `free` bytes.
fake_api <- function(types, free = rep(8e9, length(types)), memory = NULL) {
  list(
    count = function() length(types), get = function(i) i + 1L,
    type = function(d) types[[d]],
    memory = if (is.null(memory)) function(d) c(free = free[[d]], total = 16e9) else memory,
    gpu = 1L, igpu = 2L
  )
}

test_that("the GPU budget is the free memory of the first GPU, else of an integrated one", {
  gpu_free <- agmem:::gpu_free_memory
  expect_identical(gpu_free(fake_api(c(0L, 1L), c(25e9, 6e9))), 6e9)
  expect_identical(gpu_free(fake_api(c(0L, 2L, 1L), c(25e9, 3e9, 7e9))), 7e9)
  expect_identical(gpu_free(fake_api(c(0L, 2L), c(25e9, 3e9))), 3e9)
  expect_identical(gpu_free(fake_api(c(1L, 1L), c(5e9, 7e9))), 5e9)
})

test_that("without ggmlR, without a GPU, or without a reading, a NULL gpu budget is an error", {
  gpu_free <- agmem:::gpu_free_memory
  expect_snapshot(error = TRUE, {
    gpu_free(NULL)
    gpu_free(fake_api(0L, 25e9))
    gpu_free(fake_api(integer(0)))
    gpu_free(fake_api(1L, NA))
    gpu_free(fake_api(1L, memory = function(d) stop("driver lost")))
  })
  # The CPU device's free memory (host RAM) is never taken, whatever it reports.
  expect_error(gpu_free(fake_api(c(0L, 3L), c(25e9, 1e9))), "reports no GPU")
  expect_error(gpu_free(fake_api(1L, -1)), "could not report")
  expect_error(gpu_free(fake_api(1L, memory = function(d) c(total = 1))), "could not report")
})

test_that("the plan's budget reads host RAM only for the cpu", {
  spec <- ag_dense_stack(c(4, 2))
  cpu <- agmem:::make_plan(spec, "cpu", "f32", list())
  gpu <- agmem:::make_plan(spec, "gpu", "f32", list())
  expect_identical(agmem:::plan_budget("1 GB", gpu), 2^30)
  expect_identical(agmem:::plan_budget(2^20, cpu), 2^20)
  skip_if_not_installed("ps")
  expect_true(is.finite(agmem:::plan_budget(NULL, cpu)))
})

test_that("the kind of a plan follows what it is made from", {
  kind <- agmem:::plan_kind
  expect_identical(kind(ag_dense_shapes(c(4, 2))), "formula")
  expect_identical(kind(1e6), "formula")
  expect_identical(kind(list()), "formula")
  expect_identical(kind(ag_dense_stack(c(4, 2))), "model")
  expect_identical(kind(fake_linear(4, 2)), "model")
  expect_identical(kind(fake_sequential(fake_linear(4, 2))), "model")
  expect_identical(kind(list(fake_tensor(c(4, 2)))), "model")
  expect_identical(kind(structure(list(), class = "ag_measured_memory")), "measured")
})

test_that("a measurement's line is read as doubles, and its other line kept for the sweep", {
  m <- structure(list(
    line = list(host = c(fixed = 10L, per_sample = 2L), device = c(fixed = 3, per_sample = 1)),
    device = "gpu"
  ), class = "ag_measured_memory")
  plan <- agmem:::make_plan(m, c("cpu", "gpu"), "f32", list())
  expect_identical(plan$where, "device")
  expect_identical(plan$line, c(fixed = 3, per_sample = 1))
  expect_identical(plan$other$host, c(fixed = 10, per_sample = 2))
  expect_identical(agmem:::plan_figure(plan, "measured", 5, NULL), 8)
})

test_that("batch sizes are checked as the C reader checks them", {
  check <- agmem:::check_batch_sizes
  expect_identical(check(c(1L, 5L)), c(1, 5))
  for (bad in list(NULL, numeric(0), "1", list(1), factor(1))) {
    expect_error(check(bad), "`batch_size` must be a non-empty numeric vector")
  }
  for (bad in list(0, -1, 2.5, NA, NaN, Inf, 2^31)) {
    expect_error(check(c(1, bad)), "`batch_size` must be a whole number from 1 to 2147483647")
  }
})

test_that("a model's sweep shows a refused batch size exactly, as the formula's does", {
  spec <- ag_dense_stack(c(4, 2))
  expect_error(ag_memory_sweep(spec, 1 + 2^-52), "not 1.0000000000000002.", fixed = TRUE)
})
