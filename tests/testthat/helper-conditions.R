# expect_error() for the errors agmem signals: the error must be of class "agmem_error" (or the
# subclass given as `class`), and its message must match `regexp` as expect_error() matches it.
expect_agmem_error <- function(object, regexp = NULL, ..., class = "agmem_error") {
  eval.parent(substitute(testthat::expect_error(object, regexp, ..., class = class)))
}

# Evaluates expr with the warnings of class agmem_warning_range muffled, for the tests that plan
# at batch sizes up to .Machine$integer.max, or on models wider than anything measured, on
# purpose (test-ag_training_memory.R checks that the warning is given).
beyond_range_ok <- function(expr) {
  suppressWarnings(expr, classes = "agmem_warning_range")
}
