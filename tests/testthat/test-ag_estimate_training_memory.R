mlp <- list(c(512, 784), 512, c(512, 512), 512, c(10, 512), 10)

test_that("the figures match a hand-checked case", {
  est <- ag_estimate_training_memory(list(c(256, 128), 128), quiet = TRUE)
  expect_identical(est$params, 32896)
  expect_identical(est$weights, 263168)
  expect_identical(est$gradients, 263168)
  expect_identical(est$optimizer, 526336)
  expect_equal(est$activations, 84213.76, tolerance = 1e-12)
  expect_equal(est$total, 1136885.76, tolerance = 1e-12)
  expect_identical(est$bytes_per_scalar, 8)
})

test_that("the 3-layer MLP of the example has the figures worked out by hand", {
  est <- ag_estimate_training_memory(mlp, 64L, quiet = TRUE)
  expect_identical(est$params, 512 * 784 + 512 + 512 * 512 + 512 + 10 * 512 + 10)
  expect_identical(est$params, 669706)
  expect_identical(est$weights, 669706 * 8)
  expect_identical(est$optimizer, 669706 * 16)
  expect_equal(est$activations, 669706 * 8 * 0.01 * 64)
})

test_that("the list has exactly the documented fields, in order, all doubles but the note", {
  est <- ag_estimate_training_memory(mlp, quiet = TRUE)
  expect_identical(names(est), c(figures, "bytes_per_scalar", "note"))
  expect_identical(names(attributes(est)), "names")
  for (field in c(figures, "bytes_per_scalar")) {
    expect_true(is.double(est[[field]]) && length(est[[field]]) == 1L, label = field)
  }
  expect_true(is.character(est$note) && length(est$note) == 1L)
})

test_that("the note carries the double / f32 / ag_dtype() caveat", {
  note <- ag_estimate_training_memory(1, quiet = TRUE)$note
  expect_match(note, "double", fixed = TRUE)
  expect_match(note, "f32", fixed = TRUE)
  expect_match(note, "ag_dtype()", fixed = TRUE)
})

test_that("each optimizer keeps its multiple of the weights", {
  copies <- c(adam = 2, sgd = 1, sgd_plain = 0)
  for (opt in names(copies)) {
    est <- ag_estimate_training_memory(mlp, optimizer = opt, quiet = TRUE)
    expect_identical(est$optimizer, est$weights * copies[[opt]], label = opt)
    expect_identical(est$total, est$weights + est$gradients + est$optimizer + est$activations)
  }
})

test_that("the optimizer is matched as match.arg() would", {
  full <- ag_estimate_training_memory(mlp, quiet = TRUE)
  expect_identical(full, ag_estimate_training_memory(mlp, optimizer = "adam", quiet = TRUE))
  expect_identical(full, ag_estimate_training_memory(mlp, optimizer = "ad", quiet = TRUE))
  expect_identical(
    ag_estimate_training_memory(mlp, optimizer = "sgd_p", quiet = TRUE)$optimizer, 0
  )
  expect_identical(
    ag_estimate_training_memory(mlp, optimizer = "sgd", quiet = TRUE)$optimizer,
    full$weights
  )
  expect_agmem_error(ag_estimate_training_memory(mlp, optimizer = "s"), "`optimizer`")
  # match.arg(NULL, choices) is the first choice, and so is ggmlR's optimizer = NULL.
  expect_identical(ag_estimate_training_memory(mlp, optimizer = NULL, quiet = TRUE), full)
  expect_output(ag_estimate_training_memory(mlp, optimizer = NULL), "(adam, batch 32)",
                fixed = TRUE)
})

test_that("the signature is ggmlR's", {
  f <- formals(ag_estimate_training_memory)
  expect_identical(names(f), c("shapes", "batch_size", "optimizer", "activation_frac", "quiet"))
  expect_identical(f$batch_size, 32L)
  expect_identical(eval(f$optimizer), c("adam", "sgd", "sgd_plain"))
  expect_identical(f$activation_frac, 0.01)
  expect_false(f$quiet)
})

test_that("activations follow the batch size and nothing else moves", {
  one <- ag_estimate_training_memory(mlp, 1, quiet = TRUE)
  for (b in c(2, 7, 64, 1000, .Machine$integer.max)) {
    est <- ag_estimate_training_memory(mlp, b, quiet = TRUE)
    expect_identical(est[c("params", "weights", "gradients", "optimizer")],
                     one[c("params", "weights", "gradients", "optimizer")])
    expect_identical(est$activations, one$weights * 0.01 * b)
  }
  no_activations <- ag_estimate_training_memory(mlp, 5, activation_frac = 0, quiet = TRUE)
  expect_identical(no_activations$activations, 0)
})

test_that("every scalar costs 8 bytes per copy, twice f32's 4", {
  est <- ag_estimate_training_memory(c(1000, 1000), quiet = TRUE)
  expect_identical(est$weights, 1e6 * 8)
  expect_identical(est$gradients / est$params, 8)
  expect_identical(est$weights, 2 * (1e6 * 4))
})

test_that("a bare vector is a list of one; integers, names and matrices are fine", {
  ref <- ag_estimate_training_memory(list(c(256, 128)), quiet = TRUE)
  expect_identical(ag_estimate_training_memory(c(256, 128), quiet = TRUE), ref)
  expect_identical(ag_estimate_training_memory(c(256L, 128L), quiet = TRUE), ref)
  expect_identical(ag_estimate_training_memory(list(w = c(256L, 128L)), quiet = TRUE), ref)
  expect_identical(ag_estimate_training_memory(list(matrix(c(256, 128), 1)), quiet = TRUE), ref)
  expect_identical(ag_estimate_training_memory(list(1:10), quiet = TRUE)$params, factorial(10))
})

test_that("batch_size may be an integer or a whole double", {
  expect_identical(
    ag_estimate_training_memory(mlp, 64L, quiet = TRUE),
    ag_estimate_training_memory(mlp, 64, quiet = TRUE)
  )
})

test_that("each shape's product is rounded as prod() rounds it, not as a double loop would", {
  # Where R accumulates prod() in long double, these products round differently from a left to
  # right product in double; the count must be prod()'s.
  shapes <- list(c(5559060566555523, 3486784401, 3), 5559060566555523)
  want <- prod(shapes[[1]]) + shapes[[2]]
  expect_identical(ag_estimate_training_memory(shapes, quiet = TRUE)$params, want)
  set.seed(253)
  cases <- c(
    list(shapes[[1]]), # one case that differs, however few iterations run
    replicate(iterations(2000), floor(stats::runif(3, 1, 2^stats::runif(3, 10, 40))),
              simplify = FALSE)
  )
  got <- vapply(cases, function(s) ag_estimate_training_memory(s, quiet = TRUE)$params, 1)
  expect_identical(got, vapply(cases, function(s) prod(s), 1))
  loop <- vapply(cases, function(s) (s[[1]] * s[[2]]) * s[[3]], 1)
  if (long_double_exact()) {
    expect_true(any(got != loop)) # the sample does reach the cases where the two differ
  }
})

test_that("figures are bit-identical to ggmlR's formula in R: prod(), then left to right", {
  set.seed(20261202)
  copies <- c(adam = 2, sgd = 1, sgd_plain = 0)
  for (i in seq_len(iterations(3000))) {
    shapes <- random_shapes()
    batch <- sample.int(if (stats::runif(1) < 0.5) 4096L else .Machine$integer.max, 1L)
    opt <- sample(names(copies), 1L)
    frac <- random_frac()
    got <- ag_estimate_training_memory(shapes, batch, opt, frac, quiet = TRUE)[figures]
    want <- reference_estimate(shapes, batch, copies[[opt]], frac)
    if (!identical(got, want)) {
      expect_identical(got, want, label = paste("case", i))
    }
  }
  # One expectation for the whole run, so that success is counted too.
  expect_identical(
    ag_estimate_training_memory(shapes, batch, opt, frac, quiet = TRUE)[figures],
    reference_estimate(shapes, batch, copies[[opt]], frac)
  )
})

test_that("the report is written to standard output", {
  expect_snapshot(ag_estimate_training_memory(mlp, batch_size = 64L))
  expect_snapshot(ag_estimate_training_memory(list(c(1e5, 1e5), 1e5), 1, "sgd_plain", 0.5))
})

test_that("the report is ggmlR's layout, line for line", {
  lines <- capture.output(est <- ag_estimate_training_memory(mlp, 64L, "sgd"))
  expect_identical(lines[1:7], c(
    "Training memory estimate (sgd, batch 64)",
    "  parameters      : 669 706",
    "  weights         :     5.11 MB",
    "  gradients       :     5.11 MB",
    "  optimizer (x1)  :     5.11 MB",
    "  activations     :     3.27 MB",
    "  total           :    18.60 MB"
  ))
  expect_identical(lines[[8]], paste0("  note: ", est$note))
  expect_length(lines, 8L)
  expect_identical(sprintf("  total           : %8.2f MB", est$total / 1024^2), lines[[7]])
  wide <- capture.output(ag_estimate_training_memory(1e12, .Machine$integer.max, "sgd_plain"))
  expect_identical(wide[[1]], "Training memory estimate (sgd_plain, batch 2147483647)")
  expect_identical(wide[[4]], "  gradients       : 7629394.53 MB")
})

test_that("the parameter count is grouped in threes and never in scientific notation", {
  lines <- capture.output(ag_estimate_training_memory(list(c(1e10, 1e5)), 1, activation_frac = 0))
  expect_identical(lines[[2]], "  parameters      : 1 000 000 000 000 000")
  lines <- capture.output(ag_estimate_training_memory(2^60 + 2^12, 1, activation_frac = 0))
  expect_identical(lines[[2]], "  parameters      : 1 152 921 504 606 851 072")
  huge <- capture.output(ag_estimate_training_memory(1e300, 1, "sgd_plain", 0))[[2]]
  expect_match(huge, "^  parameters      : 1 000 000 000 000 000 [0-9 ]+$")
  expect_identical(nchar(gsub("[^0-9]", "", huge)), 301L)
})

test_that("quiet = TRUE prints, messages and warns nothing; the result is invisible", {
  expect_silent(ag_estimate_training_memory(mlp, quiet = TRUE))
  expect_invisible(ag_estimate_training_memory(mlp, quiet = TRUE))
  expect_output(expect_invisible(ag_estimate_training_memory(mlp)), "Training memory estimate")
})

test_that("bad shapes are errors that name the argument and the shape", {
  expect_snapshot(error = TRUE, {
    ag_estimate_training_memory(list())
    ag_estimate_training_memory("256")
    ag_estimate_training_memory(NULL)
    ag_estimate_training_memory(factor(c(2, 3)))
    ag_estimate_training_memory(data.frame(a = 1:2))
    ag_estimate_training_memory(list(c(2, 3), 4, "5"))
    ag_estimate_training_memory(list(c(2, 3), 4, c(5, -1)))
    ag_estimate_training_memory(list(c(2, 3), 4, numeric(0)))
    ag_estimate_training_memory(numeric(0))
  })
})

test_that("bad shapes are errors that name the argument and the shape, value by value", {
  non_empty <- list(list(), "a", NULL, TRUE, factor(1), new.env(), sum, mean, 1i, as.raw(1))
  for (bad in non_empty) {
    expect_agmem_error(ag_estimate_training_memory(bad), "non-empty",
                       class = "agmem_error_argument")
  }
  bad_shapes <- list(
    "5", TRUE, factor(c(2, 3)), 1i, as.raw(2), NULL, list(2), new.env(), sum, numeric(0),
    integer(0), NA, NA_real_, NA_integer_, NaN, Inf, -Inf, 0, 0L, -3, -3L, 2.5, c(2, 0.5),
    c(4, NA), structure(3, class = "units"), Sys.Date()
  )
  for (bad in bad_shapes) {
    expect_agmem_error(
      ag_estimate_training_memory(list(c(2, 3), 4, bad), quiet = TRUE),
      "shape 3.*positive|positive.*shape 3"
    )
  }
})

test_that("a dimension is whole exactly when R's floor() says so, at every magnitude", {
  # Around 2^52 the spacing of doubles goes from 0.5 to 1: the edge of the whole-number test.
  edge <- c(2^51 + 0.5, 2^52 - 0.5, 2^52, 2^52 + 1, 2^52 + 2, 2^53, 2^63, 2^64, 1e300,
            .Machine$double.xmax, 1 + 2^-52, 1 - 2^-53, 2^31 + 0.5, 2^62 + 2^10)
  set.seed(52)
  random <- 2^stats::runif(iterations(3000), -2, 60)
  random <- c(random, floor(random), random + 0.5)
  outcome <- function(v) {
    tryCatch(ag_estimate_training_memory(list(v), quiet = TRUE)$params, error = function(e) {
      if (grepl("positive whole", conditionMessage(e))) "refused" else conditionMessage(e)
    })
  }
  values <- c(edge, random)
  got <- lapply(values, outcome)
  whole <- values >= 1 & values == floor(values)
  # A whole dimension is counted, unless its byte counts overflow (only near double.xmax).
  counted <- mapply(function(g, v) identical(g, v) || grepl("overflow", g), got, values)
  right <- ifelse(whole, counted, vapply(got, identical, TRUE, "refused"))
  expect_identical(sprintf("%.17g", values[!right]), character(0))
  expect_true(any(whole) && any(!whole))
})

test_that("a figure that would not be finite is an error, not Inf", {
  expect_agmem_error(ag_estimate_training_memory(list(c(1e308, 10))), "more scalars than a double")
  expect_agmem_error(ag_estimate_training_memory(list(1e308, 1e308)), "more scalars than a double")
  expect_agmem_error(ag_estimate_training_memory(1e307 * 3), "overflow a double")
  expect_agmem_error(ag_estimate_training_memory(1e307, optimizer = "adam"), "total")
  expect_agmem_error(ag_estimate_training_memory(1e300, activation_frac = 1e10), "activation")
  expect_agmem_error(ag_estimate_training_memory(list(1:1e6)), "`shapes`")
  expect_identical(ag_estimate_training_memory(1e307, optimizer = "sgd_plain", activation_frac = 0,
                                               quiet = TRUE)$total, 1.6e308)
})

test_that("bad scalar arguments are errors that name them", {
  expect_snapshot(error = TRUE, {
    ag_estimate_training_memory(mlp, batch_size = 0)
    ag_estimate_training_memory(mlp, batch_size = 2.5)
    ag_estimate_training_memory(mlp, batch_size = c(1, 2))
    ag_estimate_training_memory(mlp, batch_size = "64")
    ag_estimate_training_memory(mlp, activation_frac = -0.1)
    ag_estimate_training_memory(mlp, activation_frac = NA)
    ag_estimate_training_memory(mlp, optimizer = "rmsprop")
    ag_estimate_training_memory(mlp, optimizer = c("adam", "sgd"))
    ag_estimate_training_memory(mlp, quiet = NA)
  })
})

test_that("bad scalar arguments are errors that name them, value by value", {
  bad_batch <- list(NULL, NA, NA_integer_, 0, -1, 1.5, 2^31, Inf, NaN, "1", TRUE, 1:2, factor(1),
                    numeric(0), list(1))
  for (bad in bad_batch) {
    expect_agmem_error(ag_estimate_training_memory(mlp, bad, quiet = TRUE), "`batch_size`")
  }
  for (bad in list(NULL, NA, -1, Inf, NaN, "0.1", c(0.1, 0.2), TRUE, numeric(0))) {
    expect_agmem_error(ag_estimate_training_memory(mlp, activation_frac = bad, quiet = TRUE),
                 "`activation_frac`")
  }
  for (bad in list(1, NA, NA_character_, "", "s", "Adam", c("sgd", "adam"), character(0),
                   factor("adam"))) {
    expect_agmem_error(ag_estimate_training_memory(mlp, optimizer = bad, quiet = TRUE),
                       "`optimizer`")
  }
  for (bad in list(NULL, NA, 1, "TRUE", c(TRUE, FALSE), logical(0))) {
    expect_agmem_error(ag_estimate_training_memory(mlp, quiet = bad), "`quiet`")
  }
})

test_that("the .Call entry point checks every argument it reads", {
  call <- function(shapes = mlp, k = 2L, frac = 0.01, batch = 32L) {
    .Call(agmem:::agmem_estimate, shapes, k, frac, batch)
  }
  expect_identical(call(), unlist(reference_estimate(mlp, 32L, 2, 0.01), use.names = FALSE))
  for (bad in list(NULL, "2", 3, -1, 1.5, NA, NA_integer_, c(1, 2), integer(0), factor(2),
                   list(2))) {
    expect_agmem_error(call(k = bad), "`multiplier`")
  }
  for (bad in list(NULL, "a", -1, NA, c(1, 2), factor(1), list(0.1))) {
    expect_agmem_error(call(frac = bad), "`activation_frac`")
  }
  for (bad in list(NULL, "a", 0, 2^31, NA_integer_, c(1, 2), factor(1), list(1), 1i)) {
    expect_agmem_error(call(batch = bad), "`batch_size`")
  }
  for (bad in list(NULL, new.env(), sum, quote(x), as.name("y"), list(quote(x)), 1i,
                   list(list(1)), expression(1))) {
    expect_agmem_error(call(shapes = bad), "`shapes`")
  }
})

test_that("long shape vectors and long lists are read correctly", {
  long_dims <- rep(c(1, 1, 1, 2), 250)       # 1000 dimensions, product 2^250
  expect_identical(ag_estimate_training_memory(list(long_dims), quiet = TRUE)$params, 2^250)
  expect_agmem_error(ag_estimate_training_memory(list(c(long_dims, 0))), "element 1001 is 0")
  expect_agmem_error(ag_estimate_training_memory(list(c(rep(1L, 5000), NA))), "element 5001 is NA")
  many <- rep(list(c(3, 5)), 1e5)
  expect_identical(ag_estimate_training_memory(many, quiet = TRUE)$params, 1.5e6)
  many[[99999]] <- c(3, NaN)
  expect_agmem_error(ag_estimate_training_memory(many), "shape 99999 .* NaN")
})

test_that("refused values are written so that they are visibly not whole", {
  expect_agmem_error(ag_estimate_training_memory(list(c(3 + 4e-15, 2))),
               "element 1 is 3.000000000000004.", fixed = TRUE)
  expect_agmem_error(ag_estimate_training_memory(1, 1 + 2^-52), "not 1.0000000000000002.",
                     fixed = TRUE)
  expect_agmem_error(ag_estimate_training_memory(1, 2^31 - 0.5), "not 2147483647.5.", fixed = TRUE)
  expect_agmem_error(ag_estimate_training_memory(list(c(2, 2.5))), "element 2 is 2.5.",
                     fixed = TRUE)
})

test_that("ALTREP compact sequences are read without being expanded", {
  # .Internal(inspect()) marks a compact sequence "(compact)" until something expands it.
  is_compact <- function(x) {
    any(grepl("(compact)", utils::capture.output(.Internal(inspect(x))), fixed = TRUE))
  }
  ints <- 1:1e6
  reals <- as.double(1:1e6)
  expect_true(is_compact(ints) && is_compact(reals))
  expect_agmem_error(ag_estimate_training_memory(list(ints)), "more scalars than a double")
  expect_agmem_error(ag_estimate_training_memory(list(reals)), "more scalars than a double")
  short <- 1:20
  expect_identical(ag_estimate_training_memory(list(short), quiet = TRUE)$params, prod(1:20))
  expect_true(is_compact(ints))
  expect_true(is_compact(reals))
  expect_true(is_compact(short))
  expect_identical(ag_estimate_training_memory(list(1:20), quiet = TRUE)$params, prod(1:20))
  expect_agmem_error(ag_estimate_training_memory(list(0:1e6)), "element 1 is 0")
  expect_agmem_error(ag_estimate_training_memory(list(c(1, 2), 1:1e6)), "`shapes`")
  est <- ag_estimate_training_memory(list(seq(1, 600, by = 1)[1:3]), quiet = TRUE)
  expect_identical(est$params, 6)
  # as.double() of a compact integer sequence is a compact double sequence.
  expect_identical(ag_estimate_training_memory(list(as.double(1:20)), quiet = TRUE)$params,
                   prod(1:20))
  expect_agmem_error(ag_estimate_training_memory(list(as.double(0:1e6))), "element 1 is 0")
  expect_agmem_error(ag_estimate_training_memory(list(2, as.double(1:1e6))),
               "more scalars than a double")
})

# A random valid input for the comparison with ggmlR: 1 to 6 shapes of 1 to 4 dimensions, small
# or up to 2^60 wide (products from 1 to far above 2^53), stored as integers where they fit or as
# doubles, sometimes one bare vector; a batch size up to .Machine$integer.max; any optimizer
# (NULL and partial names included); a fraction from 0 to 1e300.
oracle_input <- function() {
  shapes <- lapply(seq_len(sample.int(6L, 1L)), function(i) {
    dims <- sample.int(4L, 1L)
    values <- if (stats::runif(1) < 0.4) {
      as.double(sample.int(4096L, dims, TRUE))
    } else {
      floor(2^stats::runif(dims, 0, 60))
    }
    if (all(values <= .Machine$integer.max) && stats::runif(1) < 0.5) as.integer(values) else values
  })
  if (length(shapes) == 1L && stats::runif(1) < 0.5) shapes <- shapes[[1L]]
  batch <- switch(sample.int(3L, 1L),
    sample.int(256L, 1L),
    sample.int(.Machine$integer.max, 1L),
    as.double(sample(c(1, .Machine$integer.max, sample.int(.Machine$integer.max, 1L)), 1L))
  )
  frac <- switch(sample.int(4L, 1L),
    0,
    stats::runif(1),
    stats::runif(1) * 10^stats::runif(1, -12, 12),
    10^stats::runif(1, 0, 300)
  )
  optimizer <- sample(list("adam", "sgd", "sgd_plain", "sgd_p", "ad", NULL), 1L)[[1L]]
  list(shapes = shapes, batch = batch, optimizer = optimizer, frac = frac)
}

test_that("figures and report lines are ggmlR's own on 20,000 random valid inputs", {
  skip_if_not_installed("ggmlR")
  ggmlr_estimate <- getExportedValue("ggmlR", "ag_estimate_training_memory")
  set.seed(20261203)
  n <- iterations(20000)
  compared <- 0L
  overflowed <- 0L
  above_2_53 <- 0L
  scientific <- 0L
  for (i in seq_len(n)) {
    input <- oracle_input()
    call <- function(f) {
      f(input$shapes, input$batch, input$optimizer, input$frac, quiet = FALSE)
    }
    want_lines <- utils::capture.output(want <- call(ggmlr_estimate))
    if (!all(is.finite(unlist(want[figures])))) {
      # ggmlR returns Inf or NaN figures; agmem refuses them.
      overflowed <- overflowed + 1L
      got <- tryCatch(utils::capture.output(call(ag_estimate_training_memory)), error = identity)
      if (!inherits(got, "error")) expect_s3_class(got, "error")
      next
    }
    got_lines <- utils::capture.output(got <- call(ag_estimate_training_memory))
    same <- identical(got[figures], want[figures]) &&
      identical(got$bytes_per_scalar, want$bytes_per_scalar)
    # ggmlR writes the count with format(), which turns to scientific notation when that is
    # shorter; agmem writes every digit. Both must then name the same count.
    if (grepl("e+", want_lines[[2L]], fixed = TRUE)) {
      scientific <- scientific + 1L
      digits <- gsub(" ", "", sub("^  parameters      : ", "", got_lines[[2L]]), fixed = TRUE)
      same <- same && identical(as.double(digits), got$params) &&
        identical(want_lines[[2L]], sprintf("  parameters      : %s", format(got$params)))
      want_lines[[2L]] <- got_lines[[2L]]
    }
    same <- same && length(got_lines) == 8L && identical(got_lines[-8L], want_lines[-8L]) &&
      startsWith(got_lines[[8L]], "  note: ")
    if (!same) {
      expect_identical(list(got[figures], got_lines[-8L]), list(want[figures], want_lines[-8L]),
                       label = paste("case", i))
    }
    compared <- compared + 1L
    above_2_53 <- above_2_53 + (got$params > 2^53)
  }
  expect_identical(compared + overflowed, n)
  # The full sample reaches every kind of case: exact counts, rounded ones, and overflow.
  skip_if(n < 20000, "a scaled-down run (AGMEM_TEST_SCALE) need not reach every kind of case")
  expect_gt(above_2_53, n / 4)
  expect_gt(compared - above_2_53, n / 10)
  expect_gt(scientific, 0L)
  expect_gt(overflowed, 0L)
})

test_that("reading many shapes, or one long shape, can be interrupted", {
  call <- function(shapes) .Call(agmem:::agmem_estimate, shapes, 2L, 0.01, 1L)
  expect_match(under_expired_time_limit(call(rep(list(1), 2^19))), "time limit")
  expect_match(under_expired_time_limit(call(list(rep(1, 2^19)))), "time limit")
  expect_match(under_expired_time_limit(call(list(rep(1L, 2^19)))), "time limit")
  expect_identical(call(rep(list(1), 2^19))[[1]], 2^19)
})

test_that("a shape stops being read once its product is above what a double holds", {
  # 1:1e10 is a compact sequence: read in full it would take seconds (1:1e15, days).
  elapsed <- system.time(
    expect_agmem_error(ag_estimate_training_memory(list(1:1e10)), "more scalars than a double")
  )[["elapsed"]]
  expect_lt(elapsed, 2)
  expect_agmem_error(ag_estimate_training_memory(list(1:1e15)), "more scalars than a double")
  expect_agmem_error(ag_estimate_training_memory(list(2, as.double(1:1e15), "x")), "more scalars")
  expect_agmem_error(ag_memory_sweep(list(1:1e15), 1), "more scalars than a double")
})

# Compiles a double ALTREP class for the test below, or returns NULL where that cannot be done:
# make(n, step) is a vector of n elements, 2 at every third position (from the first) and 1
# elsewhere, with no data in memory; its get_region method gives at most `step` elements a call
# (0 or a negative `step` is returned as is, as a broken class would).
short_reads_class <- function() {
  dir <- tempfile("agmem_altrep")
  dir.create(dir)
  src <- file.path(dir, "short_reads.c")
  writeLines(c(
    "#define R_NO_REMAP",
    "#include <Rinternals.h>",
    "#include <R_ext/Altrep.h>",
    "#include <R_ext/Rdynload.h>",
    "static R_altrep_class_t cls;",
    "static R_xlen_t size(SEXP x) { return (R_xlen_t) REAL(R_altrep_data1(x))[0]; }",
    "static double value(SEXP x, R_xlen_t i) { return i % 3 == 0 ? 2.0 : 1.0; }",
    "static const void *or_null(SEXP x) { return NULL; }",
    "static void *ptr(SEXP x, Rboolean w) { Rf_error(\"expanded\"); return NULL; }",
    "static R_xlen_t region(SEXP x, R_xlen_t i, R_xlen_t n, double *buf) {",
    "  R_xlen_t step = (R_xlen_t) REAL(R_altrep_data2(x))[0];",
    "  if (step <= 0) return step;",
    "  R_xlen_t k = n < step ? n : step;",
    "  for (R_xlen_t j = 0; j < k; j++) buf[j] = value(x, i + j);",
    "  return k;",
    "}",
    "static Rboolean inspect(SEXP x, int pre, int deep, int pvec,",
    "                        void (*f)(SEXP, int, int, int)) { return FALSE; }",
    "SEXP make(SEXP n, SEXP step) { return R_new_altrep(cls, n, step); }",
    "void R_init_short_reads(DllInfo *dll) {",
    "  cls = R_make_altreal_class(\"short_reads\", \"agmemtest\", dll);",
    "  R_set_altrep_Length_method(cls, size);",
    "  R_set_altrep_Inspect_method(cls, inspect);",
    "  R_set_altvec_Dataptr_method(cls, ptr);",
    "  R_set_altvec_Dataptr_or_null_method(cls, or_null);",
    "  R_set_altreal_Elt_method(cls, value);",
    "  R_set_altreal_Get_region_method(cls, region);",
    "}"
  ), src)
  status <- suppressWarnings(system2(
    file.path(R.home("bin"), "R"), c("CMD", "SHLIB", shQuote(src)), stdout = FALSE, stderr = FALSE
  ))
  lib <- sub("\\.c$", .Platform$dynlib.ext, src)
  if (status != 0 || !file.exists(lib)) {
    return(NULL)
  }
  dll <- dyn.load(lib)
  function(n, step) .Call(getNativeSymbolInfo("make", dll), as.double(n), as.double(step))
}

test_that("ALTREP region reads advance by the count returned, and refuse a count below 1", {
  make <- short_reads_class()
  skip_if(is.null(make), "no C compiler to build a test ALTREP class")
  for (step in c(1, 7, 512, 1000)) {
    x <- make(3000, step)
    expect_identical(ag_estimate_training_memory(list(x), quiet = TRUE)$params, 2^1000,
                     label = paste("reads of", step))
  }
  expect_identical(ag_estimate_training_memory(list(make(30, 7), 3), quiet = TRUE)$params,
                   2^10 + 3)
  for (step in c(0, -1)) {
    expect_agmem_error(ag_estimate_training_memory(list(4, make(30, step))),
                 "`shapes`: shape 2 could not be read: its ALTREP class gave")
  }
})

test_that("a model description or a ggmlR model stands for its shapes in the formula", {
  spec <- ag_dense_stack(c(784, 512, 10), loss = "softmax_cross_entropy")
  expect_identical(ag_estimate_training_memory(spec, 64L, "sgd", quiet = TRUE),
                   ag_estimate_training_memory(spec$shapes, 64L, "sgd", quiet = TRUE))
  model <- fake_sequential(fake_linear(784, 512, "relu"), fake_linear(512, 10))
  expect_identical(ag_estimate_training_memory(model, quiet = TRUE),
                   ag_estimate_training_memory(ag_dense_shapes(c(784, 512, 10)), quiet = TRUE))
  # So does a list of its layers in forward order.
  expect_identical(ag_estimate_training_memory(model$layers, quiet = TRUE),
                   ag_estimate_training_memory(model, quiet = TRUE))
  measured <- structure(list(line = list(host = c(fixed = 1, per_sample = 1),
                                         device = c(fixed = 0, per_sample = 0)),
                             device = "cpu"), class = "ag_measured_memory")
  expect_snapshot(error = TRUE, ag_estimate_training_memory(measured))
})

test_that("a table of numbers is not read as the dimensions of one tensor", {
  df <- data.frame(a = 1:3, b = 4:6)
  expect_agmem_error(ag_estimate_training_memory(as.matrix(df), quiet = TRUE),
                     "`shapes` is a matrix or array of 3 x 2 numbers",
                     class = "agmem_error_argument")
  expect_agmem_error(ag_estimate_training_memory(array(1, c(2, 2, 2)), quiet = TRUE),
                     "2 x 2 x \\.\\.\\. numbers")
  # A matrix of one row or one column is a vector of dimensions, as before.
  expect_identical(ag_estimate_training_memory(matrix(c(2, 3), 1), quiet = TRUE)$params, 6)
  expect_identical(ag_estimate_training_memory(matrix(c(2, 3), 2), quiet = TRUE)$params, 6)
})
