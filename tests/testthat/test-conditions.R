# The conditions agmem signals (R/conditions.R, src/conditions.c).

test_that("abort() signals a classed error with the message and no call", {
  e <- tryCatch(agmem:::abort("`x` is ", 1, "."), error = identity)
  expect_s3_class(e, c("agmem_error_argument", "agmem_error", "error", "condition"), exact = TRUE)
  expect_identical(conditionMessage(e), "`x` is 1.")
  expect_null(conditionCall(e))
  e <- tryCatch(agmem:::abort("gone", class = "unavailable", fields = list(what = "ps")),
                error = identity)
  expect_s3_class(e, "agmem_error_unavailable")
  expect_identical(e$what, "ps")
  expect_error(agmem:::abort("x", class = "nonsense"))
})

test_that("the C code's errors are classed conditions too", {
  e <- tryCatch(.Call(agmem:::agmem_estimate, list(2), 2, 0.01, 0), error = identity)
  expect_s3_class(e, c("agmem_error_argument", "agmem_error", "error", "condition"), exact = TRUE)
  expect_match(conditionMessage(e), "^`batch_size` must be a whole number")
  expect_null(conditionCall(e))
  e <- tryCatch(.Call(agmem:::agmem_estimate, list(1e308, 1e10), 2, 0.01, 1), error = identity)
  expect_s3_class(e, "agmem_error_overflow")
  # It prints as an error of R's own would, with no call.
  expect_identical(tryCatch(stop(e), error = conditionMessage), conditionMessage(e))
  expect_match(paste(utils::capture.output(print(e)), collapse = ""), "^<agmem_error_overflow")
})

test_that("every subclass is on the help page, and the C code uses only listed ones", {
  rd <- tools::Rd_db("agmem")[["agmem_conditions.Rd"]]
  text <- paste(utils::capture.output(tools::Rd2txt(rd, options = list(underline_titles = FALSE))),
                collapse = " ")
  for (cls in names(agmem:::error_classes)) {
    expect_match(text, paste0("agmem_error_", cls), fixed = TRUE, label = cls)
  }
  for (cls in names(agmem:::warning_classes)) {
    expect_match(text, paste0("agmem_warning_", cls), fixed = TRUE, label = cls)
  }
  expect_true(all(c("argument", "overflow") %in% names(agmem:::error_classes)))
})

test_that("the errors of the exported functions are agmem errors, under tryCatch by class", {
  spec <- ag_dense_stack(c(4, 2))
  caught <- function(expr) tryCatch(expr, agmem_error = function(e) class(e)[[1L]])
  expect_identical(caught(ag_training_memory(spec, 0)), "agmem_error_argument")
  expect_identical(caught(ag_max_batch_size(spec, "1 parsec")), "agmem_error_argument")
  expect_identical(caught(ag_memory_sweep(spec, optimizer = "adagrad")), "agmem_error_argument")
  expect_identical(caught(ag_estimate_training_memory(list(1e308, 1e10), quiet = TRUE)),
                   "agmem_error_overflow")
})
