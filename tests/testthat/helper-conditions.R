# expect_error() for the errors agmem signals: the error must be of class "agmem_error" (or the
# subclass given as `class`), and its message must match `regexp` as expect_error() matches it.
expect_agmem_error <- function(object, regexp = NULL, ..., class = "agmem_error") {
  eval.parent(substitute(testthat::expect_error(object, regexp, ..., class = class)))
}
