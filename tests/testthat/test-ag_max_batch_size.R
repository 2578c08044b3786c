mlp <- ag_dense_shapes(c(784, 512, 512, 10))

# ag_max_batch_size(), with 0 for a budget in which not even batch 1 fits (an
# agmem_error_budget), so that the property tests check that boundary too.
max_batch_or_0 <- function(...) {
  tryCatch(ag_max_batch_size(...), agmem_error_budget = function(e) 0)
}

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
    b <- max_batch_or_0(shapes, budget, opt, frac, margin)
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

test_that("an error, Inf and the integer maximum are returned where the contract says", {
  fixed <- total_at(mlp, 1, "adam", 0)
  expect_agmem_error(ag_max_batch_size(mlp, fixed - 1), "does not fit even batch size 1",
                     class = "agmem_error_budget")
  expect_identical(ag_max_batch_size(mlp, fixed, activation_frac = 0), Inf)
  expect_agmem_error(ag_max_batch_size(mlp, fixed - 1, activation_frac = 0),
                     class = "agmem_error_budget")
  expect_identical(ag_max_batch_size(mlp, 1e300), as.double(.Machine$integer.max))
  expect_identical(ag_max_batch_size(mlp, fixed, activation_frac = 1e-300),
                   as.double(.Machine$integer.max))
  expect_agmem_error(ag_max_batch_size(mlp, 0), class = "agmem_error_budget")
  expect_snapshot(error = TRUE, {
    ag_max_batch_size(mlp, 2^20)
    ag_max_batch_size(mlp, "8 MiB", margin = 0.5)
  })
  b <- ag_max_batch_size(mlp, "1 GiB")
  expect_true(is.double(b) && length(b) == 1L && b == floor(b))
  expect_visible(ag_max_batch_size(mlp, "1 GiB"))
})

test_that("a batch whose activations overflow does not fit", {
  expect_agmem_error(ag_max_batch_size(1e300, 1e308, "sgd_plain", activation_frac = 1e8),
                     "its figure overflows a double", class = "agmem_error_budget")
})

test_that("budget strings: SI units are powers of 1000, IEC units and bare prefixes of 1024", {
  parse <- agmem:::parse_budget
  expect_identical(parse("16 GB"), 16e9)
  expect_identical(parse("512MB"), 512e6)
  expect_identical(parse("800 kB"), 800e3)
  expect_identical(parse("800 KB"), 800e3)
  expect_identical(parse("2 TB"), 2e12)
  expect_identical(parse("1.5 GiB"), 1.5 * 1024^3)
  expect_identical(parse("2tiB"), 2 * 1024^4)
  expect_identical(parse(" 1e3 MiB "), 1000 * 1024^2)
  expect_identical(parse("4096"), 4096)
  expect_identical(parse("10 B"), 10)
  expect_identical(parse(2^30), 2^30)
  expect_identical(parse(1024L), 1024)
  expect_identical(ag_max_batch_size(mlp, "64 MiB"), ag_max_batch_size(mlp, 64 * 1024^2))
  expect_identical(ag_max_batch_size(mlp, "64 MB"), ag_max_batch_size(mlp, 64e6))
  # A bare K, M, G or T (or Ki, Mi, Gi, Ti) means KiB, MiB, GiB or TiB.
  expect_identical(parse("16G"), 16 * 1024^3)
  expect_identical(parse("3 k"), 3 * 1024)
  expect_identical(parse("5M"), 5 * 1024^2)
  expect_identical(parse("5Mi"), 5 * 1024^2)
  expect_identical(parse("1 t"), 1024^4)
  # What a report writes reads back as the same bytes, in either system.
  for (x in c(123456789, 2^31, 5e9 + 7)) {
    for (units in c("MiB", "GiB", "MB", "GB", "kB", "KiB")) {
      text <- agmem:::format_bytes_scaled(x, units)
      # Two decimals of the unit: within half a hundredth of it.
      expect_lte(abs(parse(text) - x), 0.005 * agmem:::budget_units[[toupper(units)]],
                 label = text)
    }
  }
})

test_that("bit units are refused, and any Unicode space is a space", {
  parse <- agmem:::parse_budget
  for (bad in c("2 Gb", "2 Mb", "2Kb", "2 kb", "2 gb", "2 b", "2 Gib")) {
    expect_agmem_error(parse(bad), "in bits", class = "agmem_error_argument")
  }
  expect_snapshot(error = TRUE, {
    parse("2 Gb")
    parse("2 b")
  })
  expect_identical(parse("2\u00a0GB"), 2e9)
  expect_identical(parse("2\u202fGiB"), 2 * 1024^3)
  expect_identical(parse("\u20032\u2009MiB\u3000"), 2 * 1024^2)
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
  expect_identical(parse("2 tiB"), 2 * 1024^4)
  expect_identical(parse("8 kiB"), 8 * 1024)
  expect_identical(ag_max_batch_size(mlp, "1 GiB"), ag_max_batch_size(mlp, 2^30))
})

test_that("budget errors quote the string as typed and show refused numbers exactly", {
  expect_agmem_error(ag_max_batch_size(mlp, "1e400 B"), "`budget`.*\"1e400 B\"")
  expect_agmem_error(ag_max_batch_size(mlp, "1e308 TiB"), "\"1e308 TiB\" is more than a double")
  expect_agmem_error(ag_max_batch_size(mlp, "12 parsecs"), "unknown unit \"parsecs\"")
  expect_agmem_error(ag_max_batch_size(mlp, "1,5 GB"), "not \"1,5 GB\"", fixed = TRUE)
  if (long_double_exact()) { # R reads "-8.673617379884035e-19" back with a long double strtod
    expect_agmem_error(ag_max_batch_size(mlp, -2^-60), "not -8.673617379884035e-19", fixed = TRUE)
  }
  bytes <- "16 G\xff"
  Encoding(bytes) <- "bytes"
  expect_agmem_error(ag_max_batch_size(mlp, bytes), "`budget`.*\"16 G\\\\xff\".*bytes")
  expect_agmem_error(plot(ag_memory_sweep(mlp, 1:2), budget = bytes), "`budget`")
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
    expect_agmem_error(ag_max_batch_size(mlp), "`budget` is NULL.*could not be read.*give `budget`")
  }
  options(agmem.memory_reader = function() stop("cannot open the connection"))
  expect_snapshot(error = TRUE, ag_max_batch_size(mlp))
  options(agmem.memory_reader = function() NULL)
  expect_agmem_error(ag_max_batch_size(mlp), "`budget`.*ps package")
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
    ag_max_batch_size(mlp, "1 GiB", margin = 1)
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
                   "1..2 GiB", "-5 GB", "1e999 GiB", TRUE, list(1), factor("1 GiB"), character(0),
                   1i)) {
    expect_agmem_error(ag_max_batch_size(mlp, bad), "`budget`")
  }
  for (bad in list(-0.1, 1, 2, NA, NA_real_, "0.1", c(0, 0.1), TRUE, numeric(0), Inf)) {
    expect_agmem_error(ag_max_batch_size(mlp, "1 GiB", margin = bad), "`margin`")
  }
  expect_agmem_error(ag_max_batch_size(list(), "1 GiB"), "non-empty")
  expect_agmem_error(ag_max_batch_size(mlp, "1 GiB", optimizer = "x"), "`optimizer`")
  expect_agmem_error(ag_max_batch_size(mlp, "1 GiB", activation_frac = -1), "`activation_frac`")
  expect_agmem_error(ag_max_batch_size(1e308 * 2, "1 GiB"), "`shapes`")
})

test_that("the .Call entry point checks every argument it reads", {
  call <- function(shapes = mlp, k = 2L, frac = 0.01, limit = 2^30) {
    .Call(agmem:::agmem_max_batch, shapes, k, frac, limit)
  }
  expect_identical(call(), ag_max_batch_size(mlp, 2^30))
  for (bad in list(NULL, "1", -1, NA, Inf, c(1, 2), list(1), factor(1))) {
    expect_agmem_error(call(limit = bad), "`budget`")
  }
  for (bad in list(NULL, 3, c(1, 2), "2")) expect_agmem_error(call(k = bad), "`multiplier`")
  for (bad in list(NULL, -1, "0")) expect_agmem_error(call(frac = bad), "`activation_frac`")
  for (bad in list(NULL, list(), sum, list("a"))) expect_agmem_error(call(shapes = bad), "`shapes`")
})

# ---- planning on a model spec or a measured line ----

# A random dense stack: 1 to 6 layers, widths mostly small, sometimes large.
random_spec <- function() {
  layers <- sample.int(6L, 1L)
  big <- stats::runif(1) < 0.2
  widths <- if (big) floor(stats::runif(layers + 1L, 1, 1e5)) else sample.int(4096L, layers + 1L)
  ag_dense_stack(widths, activation = sample(c("relu", "sigmoid", "tanh", "none"), 1L),
                 loss = sample(c("mse", "cross_entropy", "softmax_cross_entropy"), 1L),
                 bias = stats::runif(1) < 0.8)
}

# The figure a plan compares with the budget, as ag_training_memory() returns it: on the host
# the highest peak of the run.
peak_at <- function(spec, b, opt, device, dtype) {
  mem <- ag_training_memory(spec, b, opt, device, dtype, quiet = TRUE)
  if (device == "gpu") mem$device_peak else mem$host_high
}

test_that("on a spec, the answer is the exact boundary of ag_training_memory()'s peak", {
  beyond_range_ok({
    set.seed(2024)
    checked <- 0L
    n <- iterations(300)
    for (i in seq_len(n)) {
      spec <- random_spec()
      opt <- sample(c("adam", "sgd", "sgd_plain"), 1L)
      device <- sample(c("cpu", "gpu"), 1L)
      dtype <- if (device == "gpu") sample(c("f32", "f16", "bf16"), 1L) else "f32"
      b0 <- sample(c(1L, sample.int(1e4, 1L), sample.int(.Machine$integer.max, 1L)), 1L)
      at_b0 <- peak_at(spec, b0, opt, device, dtype)
      # Half the budgets sit exactly on a figure (the sharpest boundary), half anywhere near it.
      budget <- if (stats::runif(1) < 0.5) at_b0 else at_b0 * stats::runif(1, 0.5, 1.5)
      b <- max_batch_or_0(spec, budget, opt, device = device, dtype = dtype)
      ok <- if (b == 0) {
        peak_at(spec, 1, opt, device, dtype) > budget
      } else if (b == .Machine$integer.max) {
        peak_at(spec, b, opt, device, dtype) <= budget
      } else {
        peak_at(spec, b, opt, device, dtype) <= budget &&
          peak_at(spec, b + 1, opt, device, dtype) > budget
      }
      if (!isTRUE(ok)) {
        expect_true(ok, label = sprintf("case %d: b0 = %d, b = %.0f", i, b0, b))
      }
      checked <- checked + isTRUE(ok)
    }
    expect_identical(checked, n)
  })
})

test_that("on a spec, a budget equal to the peak at a batch fits at least that batch", {
  beyond_range_ok({
    spec <- ag_dense_stack(c(784, 512, 512, 10))
    for (b0 in c(1, 7, 64, 1000, 123456)) {
      for (opt in c("adam", "sgd", "sgd_plain")) {
        budget <- ag_training_memory(spec, b0, opt, quiet = TRUE)$host_high
        expect_gte(ag_max_batch_size(spec, budget, opt), b0)
        expect_lt(max_batch_or_0(spec, budget - 1, opt), b0)
      }
    }
  })
})

test_that("a ggmlR model plans as its spec does", {
  beyond_range_ok({
    model <- fake_sequential(fake_linear(784, 512, "relu"), fake_linear(512, 10))
    spec <- ag_model_spec(model)
    expect_identical(ag_max_batch_size(model, "128 MiB"), ag_max_batch_size(spec, "128 MiB"))
    expect_identical(ag_max_batch_size(model, "64 MiB", "sgd", device = "gpu", dtype = "f16"),
                     ag_max_batch_size(spec, "64 MiB", "sgd", device = "gpu", dtype = "f16"))
  })
})

test_that("margin, 0, Inf and the integer maximum on a spec", {
  beyond_range_ok({
    spec <- ag_dense_stack(c(784, 512, 10))
    fixed_plus_one <- ag_training_memory(spec, 1, quiet = TRUE)$host_peak
    expect_agmem_error(ag_max_batch_size(spec, fixed_plus_one - 1), class = "agmem_error_budget")
    expect_identical(ag_max_batch_size(spec, 1e300), as.double(.Machine$integer.max))
    expect_identical(ag_max_batch_size(spec, "1 GiB", margin = 0.5),
                     ag_max_batch_size(spec, "512 MiB"))
    # A list of tensors has no layers: nothing says how its peak grows with the batch.
    tensors <- list(fake_tensor(c(100, 100)), fake_tensor(c(100, 1)))
    expect_agmem_error(ag_max_batch_size(tensors, "1 GiB"), "has no layers",
                       class = "agmem_error_unmodelled")
    expect_agmem_error(ag_max_batch_size(tensors, "1 GiB", lower_bound = TRUE), "has no layers",
                       class = "agmem_error_unmodelled")
    expect_agmem_error(ag_memory_sweep(tensors, 1), class = "agmem_error_unmodelled")
  })
})

# A measurement as ag_measure_training_memory() returns it.
measurement <- function(host = c(fixed = 50e6, per_sample = 1e5),
                        device_line = c(fixed = 0, per_sample = 0), device = "cpu") {
  structure(list(
    line = list(host = host, device = device_line), device = device,
    measurements = data.frame(batch_size = c(8, 32), host_peak = host[[1L]] + host[[2L]] * c(8, 32),
                              device_peak = device_line[[1L]] + device_line[[2L]] * c(8, 32))
  ), class = "ag_measured_memory")
}

test_that("on a measurement, the answer is the exact boundary of its line", {
  set.seed(77)
  n <- iterations(1000)
  checked <- 0L
  for (i in seq_len(n)) {
    fixed <- stats::runif(1, -1e6, 1e10)
    slope <- stats::runif(1) * 10^stats::runif(1, -3, 8)
    gpu <- stats::runif(1) < 0.5
    line <- c(fixed = fixed, per_sample = slope)
    m <- if (gpu) {
      measurement(c(fixed = 1, per_sample = 1), line, "gpu")
    } else {
      measurement(line)
    }
    b0 <- sample.int(1e7, 1L)
    budget <- max(0, if (stats::runif(1) < 0.5) fixed + slope * b0 else stats::runif(1, 0, 2e10))
    b <- max_batch_or_0(m, budget)
    at <- function(b) fixed + slope * b
    ok <- if (b == 0) {
      at(1) > budget
    } else if (b == .Machine$integer.max) {
      at(b) <= budget
    } else {
      at(b) <= budget && at(b + 1) > budget
    }
    if (!isTRUE(ok)) {
      expect_true(ok, label = sprintf("case %d: b = %.0f", i, b))
    }
    checked <- checked + isTRUE(ok)
  }
  expect_identical(checked, n)
})

test_that("a measured line plans on the host for cpu and on the device for gpu", {
  m <- measurement(c(fixed = 100, per_sample = 10))
  expect_identical(ag_max_batch_size(m, 1000), 90)
  expect_identical(ag_max_batch_size(m, 1000, device = "cpu"), 90)
  # The line gives 110 B at batch 1, but the smallest peak measured (batch 8) is 180 B.
  expect_agmem_error(ag_max_batch_size(m, 109), "smallest budget that fits it is 180 B",
                     class = "agmem_error_budget")
  expect_identical(ag_max_batch_size(m, 1e300), as.double(.Machine$integer.max))
  expect_identical(ag_max_batch_size(measurement(c(fixed = 100, per_sample = 0)), 100), Inf)
  g <- measurement(c(fixed = 1e9, per_sample = 1e9), c(fixed = 100, per_sample = 20), "gpu")
  expect_identical(ag_max_batch_size(g, 1000), 45)
  expect_identical(ag_max_batch_size(g, 1000, margin = 0.5), 20)
})

test_that("arguments that do not apply, and a mismatched device, are errors that name them", {
  spec <- ag_dense_stack(c(784, 512, 10))
  m <- measurement()
  g <- measurement(c(fixed = 1, per_sample = 1), c(fixed = 1, per_sample = 1), "gpu")
  expect_snapshot(error = TRUE, {
    ag_max_batch_size(mlp, "1 GiB", device = "gpu")
    ag_max_batch_size(mlp, "1 GiB", dtype = "f16")
    ag_max_batch_size(spec, "1 GiB", activation_frac = 0.02)
    ag_max_batch_size(spec, "1 GiB", dtype = "f16")
    ag_max_batch_size(spec, "1 GiB", device = "tpu")
    ag_max_batch_size(m, "1 GiB", device = "gpu")
    ag_max_batch_size(g, "1 GiB", device = "cpu")
    ag_max_batch_size(m, "1 GiB", optimizer = "sgd")
    ag_max_batch_size(m, "1 GiB", dtype = "f32")
    ag_max_batch_size(m, "1 GiB", activation_frac = 0.01)
    ag_max_batch_size(structure(list(line = 1, device = "cpu"), class = "ag_measured_memory"))
    ag_max_batch_size(measurement(c(fixed = 1, per_sample = -5)), "1 GiB")
    ag_max_batch_size(measurement(c(fixed = NA, per_sample = 5)), "1 GiB")
    ag_max_batch_size(structure(list(line = list(host = c(fixed = 1, per_sample = 1),
      device = c(fixed = 0, per_sample = 0)), device = "tpu"), class = "ag_measured_memory"))
    ag_max_batch_size(spec, "1 GiB", margin = 1)
  })
})

test_that("a NULL budget on the gpu is the GPU's free memory or an error asking for it", {
  spec <- ag_dense_stack(c(784, 512, 10))
  # This machine has no GPU: the error names `budget` and never falls back to host RAM.
  skip_if_not_installed("ggmlR")
  api <- agmem:::ggmlr_device_api()
  types <- vapply(seq_len(api$count()) - 1L, function(i) as.double(api$type(api$get(i))), 0)
  skip_if(any(types %in% c(api$gpu, api$igpu)), "a GPU is present")
  expect_snapshot(error = TRUE, ag_max_batch_size(spec, device = "gpu"))
  expect_agmem_error(summary(ag_memory_sweep(spec, 1, device = "gpu")), "`budget`.*GPU")
})

test_that("the .Call entry points for a model and a line check every argument they read", {
  beyond_range_ok({
    spec <- ag_dense_stack(c(8, 4, 2))
    flat <- agmem:::spec_ops(spec)
    call <- function(shapes = spec$shapes, units = flat$units, ops = flat$ops, opt = "adam",
                     dev = "cpu", dt = "f32", limit = 2^27) {
      .Call(agmem:::agmem_max_batch_model, shapes, units, ops, opt, dev, dt,
            c(100, 32, 0, NA, NA, NA), limit)
    }
    expect_identical(call(), ag_max_batch_size(spec, 2^27))
    for (bad in list(NULL, "1", -1, NA, Inf, c(1, 2), list(1), factor(1))) {
      expect_agmem_error(call(limit = bad), "`budget`")
    }
    for (bad in list(NULL, NA_character_, "ADAM", c("adam", "sgd"), factor("adam"))) {
      expect_agmem_error(call(opt = bad), "`optimizer`")
      expect_agmem_error(call(dev = bad), "`device`")
      expect_agmem_error(call(dt = bad), "`dtype`")
    }
    for (bad in list(NULL, "a", list(), list("2"))) {
      expect_agmem_error(call(shapes = bad), "`shapes`")
    }
    expect_agmem_error(call(units = flat$units[-1L]), "`units`")
    expect_agmem_error(call(units = as.character(flat$units)), "`units`")
    expect_agmem_error(call(ops = replace(flat$ops, 1L, "conv2d")), "`ops`")
    expect_agmem_error(call(ops = replace(flat$ops, 1L, NA)), "`ops`")
    expect_agmem_error(call(dt = "f16"), "`dtype` \"f16\" does not apply")
    # Activations that overflow at some batch only mean that batch does not fit.
    expect_identical(call(1, 1.5e308, "matmul", limit = 1e308), 0)
    expect_lt(call(1, 1e300, "matmul", limit = 1e308), .Machine$integer.max)
    expect_agmem_error(call(list(c(1e300, 1e7))), "overflow")

    line <- function(fixed = 10, per_sample = 1, limit = 100) {
      .Call(agmem:::agmem_max_batch_line, fixed, per_sample, limit)
    }
    expect_identical(line(), 90)
    expect_identical(line(10L, 1L), 90)
    for (bad in list(NULL, NA, NA_integer_, Inf, -Inf, NaN, c(1, 2), "1", list(1), factor(1))) {
      expect_agmem_error(line(fixed = bad), "`fixed`")
      expect_agmem_error(line(per_sample = bad), "`per_sample`")
    }
    expect_agmem_error(line(per_sample = -1), "`per_sample` must be >= 0")
    for (bad in list(NULL, -1, NA, Inf, c(1, 2))) expect_agmem_error(line(limit = bad), "`budget`")
    # A line whose peak overflows at some batch: that batch does not fit.
    b <- line(0, 1e300, 1.5e308)
    expect_true(b * 1e300 <= 1.5e308 && (b + 1) * 1e300 > 1.5e308)
    expect_identical(line(-50, 1, 0), 50)
  })
})

test_that("a real ggmlR model plans as the dense stack it is", {
  beyond_range_ok({
    skip_if_not_installed("ggmlR")
    model <- ggmlR::ag_sequential(
      ggmlR::ag_linear(784L, 512L, activation = "relu"),
      ggmlR::ag_linear(512L, 10L)
    )
    stack <- ag_dense_stack(c(784, 512, 10))
    for (device in c("cpu", "gpu")) {
      expect_identical(ag_max_batch_size(model, "128 MiB", device = device),
                       ag_max_batch_size(stack, "128 MiB", device = device))
    }
    expect_identical(ag_memory_sweep(model, c(1, 64))$host_peak,
                     ag_memory_sweep(stack, c(1, 64))$host_peak)
  })
})

test_that("a model with a part agmem does not model is refused, or planned as a lower bound", {
  emb <- fake_layer("ag_flash_attention", list(w_q = fake_tensor(c(256, 256))), "attention")
  model <- fake_sequential(fake_linear(784, 256, "relu"), emb, fake_linear(256, 10))
  expect_snapshot(error = TRUE, ag_max_batch_size(model, "1 GiB"))
  expect_agmem_error(ag_memory_sweep(model, 1:4), class = "agmem_error_unmodelled")
  expect_warning(b <- ag_max_batch_size(model, "128 MiB", lower_bound = TRUE), "lower bound",
                 class = "agmem_warning_lower_bound")
  expect_true(b >= 1 && is.finite(b))
  # The sweep records it; its summary and plot say it again.
  expect_warning(sweep <- ag_memory_sweep(model, 2^(0:6), "adam", lower_bound = TRUE),
                 class = "agmem_warning_lower_bound")
  expect_true(attr(sweep, "plan")$lower_bound)
  expect_warning(summary(sweep, "128 MiB"), class = "agmem_warning_lower_bound")
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off(), add = TRUE)
  expect_warning(plot(sweep), class = "agmem_warning_lower_bound")
  expect_agmem_error(ag_max_batch_size(model, "1 GiB", lower_bound = NA), "`lower_bound`")
  # A fully modelled model plans without a word.
  spec <- ag_dense_stack(c(784, 256, 10))
  expect_silent(ag_max_batch_size(spec, "128 MiB", lower_bound = TRUE))
})

test_that("batch norm and dropout are planned on the CPU, and refused where not modelled", {
  bn <- fake_layer("ag_batch_norm", list(gamma = fake_tensor(c(256, 1)),
                                         beta = fake_tensor(c(256, 1))))
  model <- fake_sequential(fake_linear(784, 256, "relu"), bn, fake_dropout(0.2),
                           fake_linear(256, 10))
  plain <- ag_dense_stack(c(784, 256, 10))
  b <- expect_silent(ag_max_batch_size(model, "256 MiB"))
  # The layers cost memory per sample: a smaller batch than the stack without them.
  expect_lt(b, ag_max_batch_size(plain, "256 MiB"))
  expect_gt(b, 1)
  expect_gt(ag_memory_sweep(model, 64, "adam")$host_high,
            ag_memory_sweep(plain, 64, "adam")$host_high)
  # On the GPU they are planned on the device's pools, whose pass pool then holds the forward
  # alone (the batch norm sends the backward to the host): the largest batch that fits.
  g <- expect_silent(ag_max_batch_size(model, "16 MiB", device = "gpu"))
  pools <- function(b) ag_training_memory(model, b, device = "gpu", quiet = TRUE)$device_peak
  expect_lte(pools(g), 16 * 2^20)
  expect_gt(pools(g + 1), 16 * 2^20)
  # An attention in resident mode is planned on the pools too (its scores grow with the square
  # of the batch, its sequence).
  att <- fake_sequential(fake_linear(16, 16), fake_attention(16, 2), fake_linear(16, 10))
  a <- expect_silent(ag_max_batch_size(att, "16 MiB", device = "gpu"))
  att_pools <- function(b) ag_training_memory(att, b, device = "gpu", quiet = TRUE)$device_peak
  expect_lte(att_pools(a), 16 * 2^20)
  expect_gt(att_pools(a + 1), 16 * 2^20)
})

test_that("a NULL budget says which figure it planned on, and where it read it", {
  old <- options(agmem.memory_reader = function() 2^30)
  on.exit(options(old), add = TRUE)
  expect_message(b <- ag_max_batch_size(mlp), "planning on 1.00 GiB, the memory available now,")
  expect_identical(b, ag_max_batch_size(mlp, 2^30))
})
