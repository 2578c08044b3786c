# The memory there is to plan on (R/memory.R): the GPU budget and the estimator's budget.

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
  expect_agmem_error(gpu_free(fake_api(c(0L, 3L), c(25e9, 1e9))), "reports no GPU")
  expect_agmem_error(gpu_free(fake_api(1L, -1)), "could not report")
  expect_agmem_error(gpu_free(fake_api(1L, memory = function(d) c(total = 1))), "could not report")
})

test_that("an estimator's NULL budget reads host RAM only for the cpu", {
  spec <- ag_dense_stack(c(4, 2))
  cpu <- agmem:::as_estimator(spec, "cpu", "f32", list(), 0.01)
  gpu <- agmem:::as_estimator(spec, "gpu", "f32", list(), 0.01)
  expect_identical(agmem:::plan_budget("1 GiB", gpu), 2^30)
  expect_identical(agmem:::plan_budget(2^20, cpu), 2^20)
  expect_agmem_error(agmem:::plan_budget(NULL, gpu), class = "agmem_error_unavailable")
  skip_if_not_installed("ps")
  expect_true(is.finite(agmem:::plan_budget(NULL, cpu)))
})
