# The estimator's formula evaluated in plain R as ggmlR 0.8.8.1 evaluates it (R/autograd.R of its
# source, ag_estimate_training_memory()): the count is a running double sum, in list order, of
# prod(as.double(shape)), so that each product is accumulated as R's prod() does (in long double
# where R has it); then every figure, left to right. The reference the C figures must equal bit for
# bit.
reference_estimate <- function(shapes, batch_size, copies, activation_frac) {
  if (is.numeric(shapes)) {
    shapes <- list(shapes)
  }
  n <- 0
  for (shape in shapes) {
    n <- n + prod(as.double(shape))
  }
  weights <- n * 8
  gradients <- n * 8
  optimizer <- n * 8 * copies
  activations <- weights * activation_frac * as.double(batch_size)
  total <- weights + gradients + optimizer + activations
  list(
    params = n, weights = weights, gradients = gradients, optimizer = optimizer,
    activations = activations, total = total
  )
}

figures <- c("params", "weights", "gradients", "optimizer", "activations", "total")

# Random shapes for property tests: 1 to `max_shapes` shapes of 1 to 4 dimensions, mostly small
# widths, sometimes large ones whose products round in double.
random_shapes <- function(max_shapes = 8L) {
  lapply(seq_len(sample.int(max_shapes, 1L)), function(i) {
    dims <- sample.int(4L, 1L)
    big <- stats::runif(1) < 0.2
    values <- if (big) floor(stats::runif(dims, 1, 1e7)) else sample.int(2048L, dims, TRUE)
    if (stats::runif(1) < 0.5) as.double(values) else values
  })
}

# A random activation_frac over many magnitudes, sometimes exactly 0.
random_frac <- function() {
  if (stats::runif(1) < 0.05) 0 else stats::runif(1) * 10^stats::runif(1, -6, 1)
}

# How many iterations a property or fuzz loop runs: `n` normally, fewer when AGMEM_TEST_SCALE
# (a fraction) is set, as under the sanitizer, valgrind and gctorture steps of CI; never < 2.
iterations <- function(n) {
  scale <- suppressWarnings(as.numeric(Sys.getenv("AGMEM_TEST_SCALE", "1")))
  if (is.na(scale) || scale <= 0 || scale > 1) scale <- 1
  max(2L, as.integer(ceiling(n * scale)))
}

# Whether long double arithmetic really carries more precision than double here: R accumulates
# sum() in long double, so 2^53 + 1 - 2^53 is 1 with it and 0 without. FALSE under valgrind,
# which runs x87 long double arithmetic in double precision; R's own prod(), strtod() and
# deparse() then round as doubles do, and the tests that show long double's rounding skip.
long_double_exact <- function() {
  isTRUE(capabilities("long.double")) && sum(c(2^53, 1, -2^53)) == 1
}
