mlp <- ag_dense_shapes(c(784, 512, 512, 10))

total_at <- function(shapes, b, opt, frac) {
  ag_estimate_training_memory(shapes, b, opt, frac, quiet = TRUE)$total
}

test_that("the answer is the exact boundary under the estimator's arithmetic", {
  set.seed(42)
  opts <- c("adam", "sgd", "sgd_plain")
  checked <- 0L
  for (i in seq_len(iterations(1500))) {
    shapes <- random_shapes()
    opt <- sample(opts, 1L)
    frac <- random_frac()
    fixed <- total_at(shapes, 1, opt, 0)
    budget <- fixed * stats::runif(1, 0.9, 3) + stats::runif(1, 0, 1e4)
    margin <- if (stats::runif(1) < 0.3) stats::runif(1, 0, 0.5) else 0
    limit <- budget * (1 - margin)
    b <- ag_max_batch_size(shapes, budget, opt, frac, margin)
    ok <- if (is.infinite(b)) {
      frac == 0 && fixed <= limit
    } else if (b == 0) {
      total_at(shapes, 1, opt, frac) > limit
    } else if (b == .Machine$integer.max) {
      total_at(shapes, b, opt, frac) <= limit
    } else {
      total_at(shapes, b, opt, frac) <= limit && total_at(shapes, b + 1, opt, frac) > limit
    }
    if (!isTRUE(ok)) {
      expect_true(ok, label = sprintf("case %d: b = %.0f", i, b))
    }
    checked <- checked + isTRUE(ok)
  }
  expect_identical(checked, iterations(1500))
})

test_that("a budget equal to an estimate's total fits exactly that batch", {
  # The sharpest boundary: one rounding step away from the limit decides. A build that lets
  # the compiler fuse fixed + weights * frac * b into one multiply-add fails here.
  set.seed(11)
  for (i in seq_len(iterations(2000))) {
    shapes <- random_shapes()
    opt <- sample(c("adam", "sgd", "sgd_plain"), 1L)
    frac <- stats::runif(1) * 10^stats::runif(1, -6, 1)
    b0 <- sample.int(1e6, 1L)
    budget <- total_at(shapes, b0, opt, frac)
    b <- ag_max_batch_size(shapes, budget, opt, frac)
    ok <- b >= b0 && total_at(shapes, b, opt, frac) == budget &&
      (b == .Machine$integer.max || total_at(shapes, b + 1, opt, frac) > budget)
    if (!ok) {
      expect_true(ok, label = sprintf("case %d: b0 = %d, b = %.0f", i, b0, b))
    }
  }
  expect_gte(ag_max_batch_size(shapes, budget, opt, frac), b0)
})

test_that("the boundary holds where the total sits on a rounding plateau", {
  # Activations far below the last bit of the fixed part: many batches share one total.
  shapes <- list(c(1e7, 1e3))
  fixed <- total_at(shapes, 1, "adam", 0)
  for (budget in c(fixed, fixed + 1, fixed + 4096, fixed * (1 + 1e-12))) {
    b <- ag_max_batch_size(shapes, budget, activation_frac = 1e-17)
    expect_true(b >= 1)
    expect_lte(total_at(shapes, b, "adam", 1e-17), budget)
    if (b < .Machine$integer.max) {
      expect_gt(total_at(shapes, b + 1, "adam", 1e-17), budget)
    }
  }
})

test_that("0, Inf and the integer maximum are returned where the contract says", {
  fixed <- total_at(mlp, 1, "adam", 0)
  expect_identical(ag_max_batch_size(mlp, fixed - 1), 0)
  expect_identical(ag_max_batch_size(mlp, fixed, activation_frac = 0), Inf)
  expect_identical(ag_max_batch_size(mlp, fixed - 1, activation_frac = 0), 0)
  expect_identical(ag_max_batch_size(mlp, 1e300), as.double(.Machine$integer.max))
  expect_identical(ag_max_batch_size(mlp, fixed, activation_frac = 1e-300),
                   as.double(.Machine$integer.max))
  expect_identical(ag_max_batch_size(mlp, 0), 0)
  b <- ag_max_batch_size(mlp, "1 GB")
  expect_true(is.double(b) && length(b) == 1L && b == floor(b))
  expect_visible(ag_max_batch_size(mlp, "1 GB"))
})

test_that("a batch whose activations overflow does not fit", {
  expect_identical(ag_max_batch_size(1e300, 1e308, "sgd_plain", activation_frac = 1e8), 0)
})

test_that("budget strings are 1024-based, case-insensitive, with an optional space", {
  parse <- agmem:::parse_budget
  expect_identical(parse("16 GB"), 16 * 1024^3)
  expect_identical(parse("512MB"), 512 * 1024^2)
  expect_identical(parse("1.5 GiB"), 1.5 * 1024^3)
  expect_identical(parse("800 kb"), 800 * 1024)
  expect_identical(parse("2 TB"), 2 * 1024^4)
  expect_identical(parse("2tib"), 2 * 1024^4)
  expect_identical(parse(" 1e3 MiB "), 1000 * 1024^2)
  expect_identical(parse("4096"), 4096)
  expect_identical(parse("10 B"), 10)
  expect_identical(parse(2^30), 2^30)
  expect_identical(parse(1024L), 1024)
  expect_identical(ag_max_batch_size(mlp, "64 MB"), ag_max_batch_size(mlp, 64 * 1024^2))
  # A bare K, M, G or T means the same as KB, MB, GB or TB.
  expect_identical(parse("16G"), 16 * 1024^3)
  expect_identical(parse("16GB"), 16 * 1024^3)
  expect_identical(parse("3 k"), 3 * 1024)
  expect_identical(parse("5M"), 5 * 1024^2)
  expect_identical(parse("1 t"), 1024^4)
})

test_that("budget units are case-folded in ASCII, whatever the locale", {
  old <- Sys.getlocale("LC_CTYPE")
  on.exit(Sys.setlocale("LC_CTYPE", old), add = TRUE)
  turkish <- suppressWarnings(Sys.setlocale("LC_CTYPE", "tr_TR.UTF-8"))
  skip_if(!nzchar(turkish), "no tr_TR.UTF-8 locale here (localedef -i tr_TR -f UTF-8 makes one)")
  # In this locale toupper() does not give "I" for "i": the units must not depend on it.
  expect_false(identical(toupper("i"), "I"))
  parse <- agmem:::parse_budget
  expect_identical(parse("16 GiB"), 16 * 1024^3)
  expect_identical(parse("2 tib"), 2 * 1024^4)
  expect_identical(parse("8 kib"), 8 * 1024)
  expect_identical(ag_max_batch_size(mlp, "1 GiB"), ag_max_batch_size(mlp, 2^30))
})

test_that("budget errors quote the string as typed and show refused numbers exactly", {
  expect_error(ag_max_batch_size(mlp, "1e400 B"), "`budget`.*\"1e400 B\"")
  expect_error(ag_max_batch_size(mlp, "1e308 TB"), "\"1e308 TB\" is more than a double")
  expect_error(ag_max_batch_size(mlp, "12 parsecs"), "unknown unit \"parsecs\"")
  expect_error(ag_max_batch_size(mlp, "1,5 GB"), "not \"1,5 GB\"", fixed = TRUE)
  expect_error(ag_max_batch_size(mlp, -2^-60), "not -8.673617379884035e-19", fixed = TRUE)
  bytes <- "16 G\xff"
  Encoding(bytes) <- "bytes"
  expect_error(ag_max_batch_size(mlp, bytes), "`budget`.*\"16 G\\\\xff\".*bytes")
  expect_error(plot(ag_memory_sweep(mlp, 1:2), budget = bytes), "`budget`")
})

test_that("a NULL budget reads the memory available through agmem.memory_reader", {
  old <- options(agmem.memory_reader = function() 2^30)
  on.exit(options(old), add = TRUE)
  expect_identical(ag_max_batch_size(mlp), ag_max_batch_size(mlp, 2^30))
  expect_identical(ag_max_batch_size(mlp, margin = 0.5), ag_max_batch_size(mlp, 2^29))
  # A reader that fails, warns (as ps does where /proc/meminfo cannot be read) or returns no
  # number: an error that names `budget` and says to pass one.
  readers <- list(
    function() stop("cannot open the connection"),
    function() {
      warning("cannot open file '/proc/meminfo': No such file or directory")
      stop("cannot open the connection")
    },
    function() NA_real_,
    function() "lots",
    function() -1
  )
  for (reader in readers) {
    options(agmem.memory_reader = reader)
    expect_error(ag_max_batch_size(mlp), "`budget` is NULL.*could not be read.*give `budget`")
  }
  options(agmem.memory_reader = function() stop("cannot open the connection"))
  expect_snapshot(error = TRUE, ag_max_batch_size(mlp))
  options(agmem.memory_reader = function() NULL)
  expect_error(ag_max_batch_size(mlp), "`budget`.*ps package")
})

test_that("a NULL budget reads the available memory, and needs ps", {
  skip_if_not_installed("ps")
  avail <- agmem:::parse_budget(NULL)
  expect_true(is.double(avail) && is.finite(avail) && avail > 0)
  expect_true(is.finite(ag_max_batch_size(mlp)))
})

test_that("bad budgets and margins are errors that name the argument", {
  expect_snapshot(error = TRUE, {
    ag_max_batch_size(mlp, -1)
    ag_max_batch_size(mlp, "12 parsecs")
    ag_max_batch_size(mlp, "lots")
    ag_max_batch_size(mlp, c(1, 2))
    ag_max_batch_size(mlp, "1 GB", margin = 1)
    ag_max_batch_size(mlp, "1e400 B")
  })
  local({
    old <- options(agmem.memory_reader = function() NULL)
    on.exit(options(old))
    expect_snapshot(error = TRUE, ag_max_batch_size(mlp))
  })
})

test_that("bad budgets and margins are errors that name the argument, value by value", {
  for (bad in list(-1, NA, NA_real_, NA_character_, Inf, NaN, c(1, 2), "12 parsecs", "GB", "",
                   "1..2 GB", "-5 GB", "1e999 GB", TRUE, list(1), factor("1 GB"), character(0),
                   1i)) {
    expect_error(ag_max_batch_size(mlp, bad), "`budget`")
  }
  for (bad in list(-0.1, 1, 2, NA, NA_real_, "0.1", c(0, 0.1), TRUE, numeric(0), Inf)) {
    expect_error(ag_max_batch_size(mlp, "1 GB", margin = bad), "`margin`")
  }
  expect_error(ag_max_batch_size(list(), "1 GB"), "non-empty")
  expect_error(ag_max_batch_size(mlp, "1 GB", optimizer = "x"), "`optimizer`")
  expect_error(ag_max_batch_size(mlp, "1 GB", activation_frac = -1), "`activation_frac`")
  expect_error(ag_max_batch_size(1e308 * 2, "1 GB"), "`shapes`")
})

test_that("the .Call entry point checks every argument it reads", {
  call <- function(shapes = mlp, k = 2L, frac = 0.01, limit = 2^30) {
    .Call(agmem:::agmem_max_batch, shapes, k, frac, limit)
  }
  expect_identical(call(), ag_max_batch_size(mlp, 2^30))
  for (bad in list(NULL, "1", -1, NA, Inf, c(1, 2), list(1), factor(1))) {
    expect_error(call(limit = bad), "`budget`")
  }
  for (bad in list(NULL, 3, c(1, 2), "2")) expect_error(call(k = bad), "`multiplier`")
  for (bad in list(NULL, -1, "0")) expect_error(call(frac = bad), "`activation_frac`")
  for (bad in list(NULL, list(), sum, list("a"))) expect_error(call(shapes = bad), "`shapes`")
})
