# ag_within_budget(): a run held to its budget by R's own vector heap cap.

test_that("the value of the run comes back, and the cap is restored after it", {
  before <- mem.maxVSize()
  # A budget above R's current trigger, whatever the tests before have grown it to (R does not
  # cap its heap below the trigger, and says so with a warning).
  budget <- agmem:::vector_heap()[["trigger"]] + 2^26
  expect_identical(ag_within_budget(1 + 1, budget), 2)
  expect_identical(mem.maxVSize(), before)
  x <- 0
  ag_within_budget(for (i in 1:3) x <- x + i, budget)
  expect_identical(x, 6)
})

test_that("a run that outgrows its budget stops with a classed error, the session intact", {
  before <- mem.maxVSize()
  kept <- runif(10)
  budget <- agmem:::vector_heap()[["trigger"]] + 2^26
  e <- tryCatch(ag_within_budget(numeric(budget / 8 + 1e6), budget), error = identity)
  expect_s3_class(e, "agmem_error_budget")
  expect_match(conditionMessage(e), "reached its memory budget of")
  expect_identical(e$budget, budget)
  expect_identical(mem.maxVSize(), before)
  expect_length(kept, 10L)
  # Within the budget, an allocation of half of it runs.
  half <- as.integer(budget %/% 16)
  expect_length(ag_within_budget(numeric(half), budget), half)
})

test_that("other errors pass through unchanged, and the cap is restored", {
  before <- mem.maxVSize()
  expect_error(ag_within_budget(stop("my own"), "1 GiB"), "my own", class = "simpleError")
  expect_identical(mem.maxVSize(), before)
})

test_that("a lower cap already set is kept", {
  before <- mem.maxVSize()
  on.exit(mem.maxVSize(before), add = TRUE)
  heap <- agmem:::vector_heap()
  # R 4.5 also refuses a cap below its current usage, with a warning: skip where it does.
  low <- suppressWarnings(mem.maxVSize(heap[["trigger"]] / 2^20 + 32))
  skip_if(identical(low, before), "this R did not take the lower cap")
  expect_agmem_error(ag_within_budget(numeric(heap[["trigger"]] / 8 + 8e6), "1 GiB"),
                     class = "agmem_error_budget")
  expect_identical(mem.maxVSize(), low)
})

test_that("a budget below R's collector trigger is capped at the trigger, with a warning", {
  before <- mem.maxVSize()
  expect_warning(ag_within_budget(1, "1 MiB"), "collector trigger", class = "agmem_warning_cap")
  expect_identical(mem.maxVSize(), before)
})

test_that("a bad budget is an error that names it", {
  expect_agmem_error(ag_within_budget(1, "2 Gb"), "`budget`", class = "agmem_error_argument")
  expect_agmem_error(ag_within_budget(1, -1), "`budget`", class = "agmem_error_argument")
})

test_that("R's heap-limit error is recognised as R 4.2 and as R 4.3 and later word it", {
  is_limit <- agmem:::is_heap_limit_error
  expect_true(is_limit("vector memory exhausted (limit reached?)"))
  expect_true(is_limit("vector memory limit of 16.0 Gb reached, see mem.maxVSize()"))
  expect_true(is_limit("vector memory limit of 256.0 Mb reached, see mem.maxVSize()"))
  expect_false(is_limit("vector memory limit of lots reached"))
  expect_false(is_limit("my own"))
})
