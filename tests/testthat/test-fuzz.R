# Fuzz: every exported function and every .Call entry point, called with generated arguments of
# every kind, must return a result that satisfies its contract or signal an R error with a
# message; never a warning but agmem's classed ones, never a crash.

# `shapes = TRUE` for a shapes argument, the only place a million-long sequence is cheap to
# refuse or accept (elsewhere it would be a legitimate sweep of a million rows).
fuzz_value <- function(shapes = FALSE) {
  specials <- c(NA, NaN, Inf, -Inf, 0, -1, 0.5, 1e308, 1, 2, 3, 64, 2^31, 1e-300)
  switch(sample.int(22L, 1L),
    NULL,
    sample(c(TRUE, FALSE, NA), sample.int(3L, 1L), TRUE),
    sample(c("1", "16 GiB", "adam", NA, ""), sample.int(2L, 1L)),
    complex(real = stats::runif(2)),
    as.raw(sample.int(255L, 2L)),
    factor(sample(c(2, 3), 2L, TRUE)),
    as.list(sample(specials, sample.int(4L, 1L), TRUE)),
    list(list(2, 3), 4),
    new.env(),
    function(x) x,
    data.frame(a = 1:2, b = c(3, 4)),
    structure(c(2, 3), class = "foo"),
    sample(specials, sample.int(4L, 1L), TRUE),
    sample(c(-2L, 0L, 1L, 7L, NA), sample.int(3L, 1L), TRUE),
    numeric(0),
    stats::runif(sample.int(4000L, 1L) + 1000L, 1, 1.001),        # long, not whole
    rep(c(1, 1, 2), if (shapes) sample.int(1500L, 1L) else 3L),   # long and valid
    rep(list(c(3, 4), 5L), sample.int(1500L, 1L)),                # long valid list
    c(rep(list(2), sample.int(2000L, 1L)), list("x")),            # long list, bad at the end
    if (shapes) 1:1e6 else 1:50,                                  # ALTREP compact sequence
    structure(sample.int(9L, 2L), dim = c(1L, 2L), names = c("a", "b")),
    stats::setNames(as.list(sample.int(50L, 3L)), c("w", "b", "z"))
  )
}

valid_shapes <- function() random_shapes(4L)

# Half the time an argument is valid, so that deeper paths are reached too.
maybe <- function(valid, shapes = FALSE) {
  if (stats::runif(1) < 0.5) valid else fuzz_value(shapes)
}

fuzz_spec <- ag_dense_stack(c(16, 8, 4))
fuzz_flat <- agmem:::spec_ops(fuzz_spec)

is_count <- function(x) is.double(x) && length(x) == 1L && !is.na(x) && x >= 0

fuzz_calls <- list(
  estimate = list(
    call = function() {
      ag_estimate_training_memory(maybe(valid_shapes(), TRUE), maybe(sample.int(64L, 1L)),
                                  maybe("adam"), maybe(0.01), maybe(TRUE))
    },
    ok = function(r) {
      is.list(r) && identical(names(r), c(figures, "bytes_per_scalar", "note")) &&
        all(vapply(r[figures], function(x) is_count(x) && is.finite(x), TRUE)) &&
        r$total == r$weights + r$gradients + r$optimizer + r$activations
    }
  ),
  max_batch = list(
    call = function() {
      ag_max_batch_size(maybe(valid_shapes(), TRUE), maybe("1 GiB"), maybe("sgd"), maybe(0.01),
                        maybe(0.1))
    },
    ok = function(r) is_count(r) && (is.infinite(r) || (r == floor(r) && r <= 2^31 - 1))
  ),
  activation_frac = list(
    call = function() ag_activation_frac(maybe(1e6), maybe(valid_shapes(), TRUE), maybe(32)),
    ok = function(r) is_count(r) && is.finite(r)
  ),
  dense_shapes = list(
    call = function() ag_dense_shapes(maybe(c(10, 5, 2)), maybe(TRUE)),
    ok = function(r) is.list(r) && all(vapply(r, is.double, TRUE))
  ),
  sweep = list(
    call = function() {
      ag_memory_sweep(maybe(valid_shapes(), TRUE), maybe(c(1, 8)), maybe("adam"), maybe(0.01))
    },
    ok = function(r) inherits(r, "ag_memory_sweep") && all(is.finite(r$total))
  ),
  call_estimate = list(
    call = function() {
      .Call(agmem:::agmem_estimate, maybe(valid_shapes(), TRUE), maybe(2L), maybe(0.01), maybe(8))
    },
    ok = function(r) is.double(r) && length(r) == 6L && all(is.finite(r))
  ),
  call_max_batch = list(
    call = function() {
      .Call(agmem:::agmem_max_batch, maybe(valid_shapes(), TRUE), maybe(1L), maybe(0.01),
            maybe(2^30))
    },
    ok = function(r) is_count(r)
  ),
  call_activation_frac = list(
    call = function() {
      .Call(agmem:::agmem_activation_frac, maybe(1e5), maybe(valid_shapes(), TRUE), maybe(4L))
    },
    ok = function(r) is_count(r) && is.finite(r)
  ),
  max_batch_model = list(
    call = function() {
      ag_max_batch_size(maybe(fuzz_spec), maybe("1 GiB"), maybe("sgd"), margin = maybe(0.1),
                        device = maybe("gpu"), dtype = maybe("f16"))
    },
    ok = function(r) is_count(r) && (is.infinite(r) || (r == floor(r) && r <= 2^31 - 1))
  ),
  sweep_model = list(
    call = function() ag_memory_sweep(maybe(fuzz_spec), maybe(c(1, 8)), device = maybe("gpu")),
    ok = function(r) inherits(r, "ag_memory_sweep") && all(is.finite(r$host_peak))
  ),
  call_max_batch_model = list(
    call = function() {
      .Call(agmem:::agmem_max_batch_model, maybe(fuzz_spec$shapes, TRUE), maybe(fuzz_flat$units),
            maybe(fuzz_flat$ops), maybe("adam"), maybe("cpu"), maybe("f32"),
            maybe(c(100, 0, 0, NA, NA, NA)), maybe(2^30))
    },
    ok = function(r) is_count(r)
  ),
  call_max_batch_line = list(
    call = function() .Call(agmem:::agmem_max_batch_line, maybe(1e6), maybe(1e3), maybe(2^30)),
    ok = function(r) is_count(r)
  ),
  call_sweep = list(
    call = function() {
      .Call(agmem:::agmem_sweep, maybe(valid_shapes(), TRUE), maybe(c(0L, 2L)), maybe(0.01),
            maybe(c(1, 2, 3)))
    },
    ok = function(r) is.list(r) && length(r) == 6L && all(vapply(r, is.double, TRUE))
  )
)

test_that("generated inputs give a valid result or an R error, never an unclassed warning", {
  set.seed(20000)
  runs <- iterations(20000)
  problems <- character(0)
  outcomes <- c(result = 0L, error = 0L)
  for (i in seq_len(runs)) {
    name <- names(fuzz_calls)[[(i - 1L) %% length(fuzz_calls) + 1L]]
    target <- fuzz_calls[[name]]
    warned <- NULL
    outcome <- tryCatch(
      withCallingHandlers(
        {
          utils::capture.output(r <- target$call())
          if (isTRUE(target$ok(r))) "result" else "bad result"
        },
        warning = function(w) {
          # agmem's own classed warnings (a figure beyond the validated range, a lower bound)
          # come with a valid result; any other warning is a defect.
          if (!inherits(w, "agmem_warning")) warned <<- conditionMessage(w)
          invokeRestart("muffleWarning")
        }
      ),
      error = function(e) if (nzchar(conditionMessage(e))) "error" else "empty error"
    )
    if (!is.null(warned)) outcome <- paste("warning:", warned)
    if (outcome %in% names(outcomes)) {
      outcomes[[outcome]] <- outcomes[[outcome]] + 1L
    } else {
      problems <- c(problems, sprintf("run %d (%s): %s", i, name, outcome))
    }
  }
  expect_identical(problems, character(0))
  expect_identical(sum(outcomes), runs)
  # Both kinds of outcome are reached, so the loop tests something either way.
  expect_gt(outcomes[["result"]], 0L)
  expect_gt(outcomes[["error"]], 0L)
})
