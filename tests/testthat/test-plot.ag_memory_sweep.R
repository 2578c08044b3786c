sweep <- ag_memory_sweep(ag_dense_shapes(c(784, 2048, 2048, 10)), 2^(0:12))

# Plots on a pdf(NULL) device and returns what was drawn: the value of plot() with its visibility,
# and the recorded display list as a list of calls, each with the name of the graphics routine
# (e.g. "C_polygon", "C_plotXY", "C_abline", "C_text") and its unnamed arguments in order,
# split into the data (`calls`) and the legend (`key`, from the legend's box on).
drawn <- function(..., width = 7, height = 7) {
  grDevices::pdf(NULL, width = width, height = height)
  on.exit(grDevices::dev.off())
  grDevices::dev.control("enable")
  out <- withVisible(plot(...))
  calls <- lapply(grDevices::recordPlot()[[1L]], function(entry) {
    args <- as.list(entry[[2L]])
    list(name = args[[1L]]$name, args = unname(args[-1L]))
  })
  box <- Position(function(call) identical(call$name, "C_rect"), calls)
  stopifnot(!is.na(box), identical(calls[[box]]$args[[5L]], "white"))
  list(out = out, calls = calls[seq_len(box - 1L)], key = calls[box:length(calls)],
       window = calls[[Position(function(call) identical(call$name, "C_plot_window"), calls)]])
}

# The arguments of the recorded calls to one graphics routine.
calls_to <- function(d, name) {
  lapply(Filter(function(call) identical(call$name, name), d$calls), `[[`, "args")
}

# plot.xy() calls of one type ("l" for lines, "p" for points), each as list(x, y, col).
xy_drawn <- function(d, type) {
  xy <- Filter(function(args) identical(args[[2L]], type), calls_to(d, "C_plotXY"))
  lapply(xy, function(args) list(x = args[[1L]]$x, y = args[[1L]]$y, col = args[[5L]]))
}

# The texts of the legend.
legend_text <- function(d) {
  calls_to(list(calls = d$key), "C_text")[[1L]][[2L]]
}

gb <- 1024^3
mb <- 1024^2
format_n <- function(n) formatC(n, format = "f", digits = 0, big.mark = " ")

test_that("the plot returns the sweep invisibly", {
  for (budget in list(NULL, "150 MiB", 1e12, 1)) {
    d <- drawn(sweep, budget = budget)
    expect_false(d$out$visible)
    expect_identical(d$out$value, sweep)
  }
  one <- ag_memory_sweep(1e6, c(1, 10), "sgd", activation_frac = 0)
  expect_identical(drawn(one, budget = "1 GiB", main = "one optimizer")$out$value, one)
})

test_that("several batch sizes: four stacked components, a line per optimizer, the budget", {
  d <- drawn(sweep, budget = "1 GiB")
  adam <- sweep[sweep$optimizer == "adam", ]
  polygons <- calls_to(d, "C_polygon")
  expect_length(polygons, 4L)
  # The top of each stacked band is the running sum of the components, in GiB.
  below <- rep(0, nrow(adam))
  for (i in seq_along(polygons)) {
    part <- c("weights", "gradients", "optimizer_state", "activations")[[i]]
    above <- below + adam[[part]]
    expect_equal(polygons[[i]][[1L]], c(adam$batch_size, rev(adam$batch_size)))
    expect_equal(polygons[[i]][[2L]], c(above, rev(below)) / gb)
    below <- above
  }
  lines <- xy_drawn(d, "l")
  expect_length(lines, 3L)
  for (i in 1:3) {
    rows <- sweep[sweep$optimizer == c("adam", "sgd", "sgd_plain")[[i]], ]
    expect_equal(lines[[i]]$x, rows$batch_size)
    expect_equal(lines[[i]]$y, rows$total / gb)
  }
  expect_identical(length(unique(vapply(lines, `[[`, "", "col"))), 3L)
  ablines <- calls_to(d, "C_abline")
  expect_length(ablines, 1L)
  expect_identical(ablines[[1L]][[3L]], 1)
  # One marker per optimizer at the largest batch that fits, on the budget's side of the line.
  fit_marks <- xy_drawn(d, "p")
  expect_identical(vapply(fit_marks, `[[`, 0, "x"), c(1904, 2004, 2104))
  expect_true(all(vapply(fit_marks, `[[`, 0, "y") <= 1))
  expect_identical(legend_text(d), c(
    "weights (adam)", "gradients (adam)", "optimizer state (adam)", "activations (adam)",
    "total, adam: fits up to batch 1 904", "total, sgd: fits up to batch 2 004",
    "total, sgd_plain: fits up to batch 2 104", "budget 1.00 GiB"
  ))
})

test_that("without a budget there is no budget line, no marker and no budget in the legend", {
  d <- drawn(sweep)
  expect_length(calls_to(d, "C_polygon"), 4L)
  expect_length(xy_drawn(d, "l"), 3L)
  expect_length(calls_to(d, "C_abline"), 0L)
  expect_length(xy_drawn(d, "p"), 0L)
  expect_length(calls_to(d, "C_segments"), 0L)
  expect_identical(legend_text(d)[5:7], paste("total,", c("adam", "sgd", "sgd_plain")))
  expect_length(legend_text(d), 7L)
})

shapes <- ag_dense_shapes(c(784, 2048, 2048, 10))
spec <- ag_dense_stack(c(784, 2048, 2048, 10))
spec_sweep <- beyond_range_ok(ag_memory_sweep(spec, 2^(0:12)))
gpu_sweep <- beyond_range_ok(ag_memory_sweep(spec, 2^(0:12), device = "gpu"))
measured <- structure(list(
  line = list(host = c(fixed = 50e6, per_sample = 1e5), device = c(fixed = 0, per_sample = 0)),
  device = "cpu",
  measurements = data.frame(batch_size = c(8, 32), host_peak = c(50.8e6, 53.2e6), device_peak = 0)
), class = "ag_measured_memory")
measured_sweep <- ag_memory_sweep(measured, 2^(0:12))

test_that("a single row is drawn: the components as a stacked bar, the total as a point", {
  one <- ag_memory_sweep(shapes, 32, "adam")
  d <- drawn(one, budget = "150 MiB")
  polygons <- calls_to(d, "C_polygon")
  expect_length(polygons, 4L)
  parts <- c("weights", "gradients", "optimizer_state", "activations")
  tops <- cumsum(unlist(one[parts])) / mb
  for (i in 1:4) {
    x <- polygons[[i]][[1L]]
    y <- polygons[[i]][[2L]]
    # A bar of visible width around batch 32, from the band below to the band's top.
    expect_true(min(x) < 32 && max(x) > 32 && max(x) / min(x) > 1.1)
    expect_equal(range(y), c(c(0, tops)[[i]], tops[[i]]))
  }
  points <- xy_drawn(d, "p")
  expect_identical(points[[1L]]$x, 32)
  expect_equal(points[[1L]]$y, one$total / mb)
  expect_length(points, 1L) # batch 1 does not fit 150 MB with adam: no fit marker
  expect_identical(calls_to(d, "C_abline")[[1L]][[3L]], 150)
  expect_identical(legend_text(d)[5:6], c("total, adam: batch 1 does not fit", "budget 150.00 MiB"))
})

test_that("one batch size and three optimizers: a point for each total", {
  three <- ag_memory_sweep(shapes, 32)
  for (budget in list(NULL, "150 MiB")) {
    d <- drawn(three, budget = budget)
    expect_length(calls_to(d, "C_polygon"), 4L)
    totals <- Filter(function(p) identical(p$x, 32), xy_drawn(d, "p"))
    expect_length(totals, 3L)
    expect_equal(vapply(totals, `[[`, 0, "y"), three$total / mb)
    expect_identical(length(unique(vapply(totals, `[[`, "", "col"))), 3L)
  }
  # With the budget, a marker for sgd (fits up to 37) and sgd_plain (up to 137), none for adam.
  marks <- Filter(function(p) !identical(p$x, 32), xy_drawn(d, "p"))
  expect_identical(vapply(marks, `[[`, 0, "x"), c(37, 137))
})

# The highest y drawn at an x from lo to hi: polygon outlines, lines and segments taken
# piece by piece (straight on the log x axis), points, and horizontal lines across the plot.
top_within <- function(d, lo, hi) {
  piece_top <- function(x0, y0, x1, y1) {
    a <- pmax(pmin(x0, x1), lo)
    b <- pmin(pmax(x0, x1), hi)
    at <- function(x) {
      ifelse(x0 == x1, pmax(y0, y1), y0 + (y1 - y0) * (log(x) - log(x0)) / (log(x1) - log(x0)))
    }
    max(-Inf, ifelse(a <= b, pmax(at(a), at(b)), -Inf))
  }
  path_top <- function(x, y) {
    n <- length(x)
    if (n == 1L) piece_top(x, y, x, y) else piece_top(x[-n], y[-n], x[-1L], y[-1L])
  }
  tops <- c(
    vapply(calls_to(d, "C_polygon"), function(a) {
      path_top(c(a[[1L]], a[[1L]][[1L]]), c(a[[2L]], a[[2L]][[1L]]))
    }, 0),
    vapply(calls_to(d, "C_plotXY"), function(a) {
      if (identical(a[[2L]], "n")) -Inf else path_top(a[[1L]]$x, a[[1L]]$y) # "n": the frame
    }, 0),
    vapply(calls_to(d, "C_segments"), function(a) piece_top(a[[1L]], a[[2L]], a[[3L]], a[[4L]]), 0),
    vapply(calls_to(d, "C_abline"), function(a) max(a[[3L]]), 0)
  )
  max(tops)
}

test_that("the legend sits inside the plot and covers no data", {
  beyond_range_ok({
    flat <- ag_memory_sweep(shapes, 2^(0:12), activation_frac = 0)
    cases <- list(
      list(sweep, budget = "1 GiB"), list(sweep), list(sweep, budget = "2 GiB"),
      list(sweep, budget = "100 MiB"), list(sweep, budget = 1e12), list(flat),
      list(flat, budget = "200 MiB"), list(flat, budget = "100 MiB"),
      list(ag_memory_sweep(shapes, 32, "adam"), budget = "150 MiB"),
      list(ag_memory_sweep(shapes, 32), budget = "150 MiB"), list(ag_memory_sweep(shapes, 32)),
      list(ag_memory_sweep(1e6, c(1, 10), "sgd", activation_frac = 0), budget = "1 GiB"),
      list(spec_sweep, budget = "512 MiB"), list(spec_sweep), list(gpu_sweep, budget = "256 MiB"),
      list(ag_memory_sweep(spec, 1:8), budget = "1 GiB"), list(measured_sweep, budget = "256 MiB")
    )
    # The default pdf() page, a README-sized figure (800 x 500 px at 72 dpi), a small one, and the
    # example figures of the site: 1400 x 866 px at 144 dpi (the same inches as 700 x 433 at 72)
    # and pkgdown's own 700 x 433 px at 96 dpi (1400 x 866 at 192).
    for (size in list(c(7, 7), c(800, 500) / 72, c(6, 4.5), c(1400, 866) / 144,
                      c(700, 433) / 96)) {
      for (case in cases) {
        d <- do.call(drawn, c(case, width = size[[1L]], height = size[[2L]]))
        # rect() of the legend's box: its corners, in either order.
        box <- unlist(calls_to(list(calls = d$key), "C_rect")[[1L]][1:4])
        left <- min(box[c(1L, 3L)])
        right <- max(box[c(1L, 3L)])
        bottom <- min(box[c(2L, 4L)])
        xlim <- d$window$args[[1L]]
        ylim <- d$window$args[[2L]]
        # The plot region: xlim widened by 4% either side on the log axis, ylim as it is.
        usr <- exp(log(xlim) + c(-1, 1) * 0.04 * diff(log(xlim)))
        expect_true(left >= usr[[1L]] && right <= usr[[2L]])
        expect_true(bottom >= min(ylim) && max(box[c(2L, 4L)]) <= max(ylim))
        expect_lt(top_within(d, left, right), bottom)
      }
    }
  })
})

test_that("the largest batch that fits is found for every optimizer", {
  fits <- vapply(c("adam", "sgd", "sgd_plain"), function(opt) {
    tryCatch(ag_max_batch_size(ag_dense_shapes(c(784, 2048, 2048, 10)), "150 MiB", opt),
             agmem_error_budget = function(e) 0)
  }, numeric(1))
  expect_identical(unname(fits), c(0, 37, 137))
  expect_identical(agmem:::format_fit(0), "batch 1 does not fit")
  expect_identical(agmem:::format_fit(Inf), "any batch fits")
  expect_identical(agmem:::format_fit(1234), "fits up to batch 1 234")
})

test_that("a bad sweep or budget is an error that names the argument", {
  expect_agmem_error(plot(sweep, budget = "12 parsecs"), "`budget`")
  expect_agmem_error(agmem:::plot.ag_memory_sweep(data.frame(a = 1)), "`x`")
  expect_agmem_error(plot(sweep[sweep$batch_size > 1e9, ]), "`x`")
  stripped <- sweep
  attr(stripped, "activation_frac") <- NULL
  attr(stripped, "plan") <- NULL
  expect_agmem_error(plot(stripped), "`x`")
})

test_that("a huge budget gets a short label and a finite axis", {
  for (budget in list(1e308, .Machine$double.xmax)) {
    d <- drawn(sweep, budget = budget)
    label <- legend_text(d)[[8L]]
    expect_match(label, "^budget [0-9.]+e\\+28[34] YiB$")
    h <- calls_to(d, "C_abline")[[1L]][[3L]]
    expect_equal(h, budget / 1024^8)
    expect_true(is.finite(d$window$args[[2L]][[2L]]) && d$window$args[[2L]][[2L]] > h)
    titles <- calls_to(d, "C_title")[[1L]]
    expect_identical(titles[[4L]], "memory (YiB)")
  }
})

test_that("a model's sweep stacks its components at the planned place and plans on its peak", {
  beyond_range_ok({
    d <- drawn(spec_sweep, budget = "1 GiB")
    adam <- spec_sweep[spec_sweep$optimizer == "adam", ]
    polygons <- calls_to(d, "C_polygon")
    # weights, gradients, optimizer state, transients, activations: no master weights on the host.
    expect_length(polygons, 5L)
    # The stack is the components of a step; the line, the whole run's highest host peak,
    # which the planners plan on.
    top <- polygons[[5L]][[2L]][seq_len(nrow(adam))]
    parts <- c("weights", "gradients", "optimizer_state", "step_transients", "activations")
    expect_equal(top, unname(rowSums(adam[parts])) / gb)
    lines <- xy_drawn(d, "l")
    for (i in 1:3) {
      rows <- spec_sweep[spec_sweep$optimizer == c("adam", "sgd", "sgd_plain")[[i]], ]
      expect_equal(lines[[i]]$y, rows$host_high / gb)
    }
    fits <- vapply(c("adam", "sgd", "sgd_plain"), function(opt) {
      ag_max_batch_size(spec, "1 GiB", opt)
    }, 0)
    marks <- xy_drawn(d, "p")
    expect_identical(vapply(marks, `[[`, 0, "x"), unname(fits))
    for (i in 1:3) {
      peak <- ag_training_memory(spec, fits[[i]], names(fits)[[i]], quiet = TRUE)$host_high
      expect_equal(marks[[i]]$y, peak / gb)
    }
    expect_identical(legend_text(d)[[6L]],
                     paste0("highest host peak, adam: fits up to batch ",
                            formatC(fits[["adam"]], format = "d", big.mark = " ")))
    titles <- calls_to(d, "C_title")[[1L]]
    expect_identical(titles[[1L]], "Predicted host peak by batch size")
    expect_identical(titles[[4L]], "highest host peak (GiB)")
  })
})

test_that("a gpu sweep plots the device peak, and a measurement its line", {
  beyond_range_ok({
    d <- drawn(gpu_sweep, budget = "256 MiB")
    titles <- calls_to(d, "C_title")[[1L]]
    expect_identical(titles[[1L]], "Predicted device peak by batch size (gpu, f32)")
    expect_identical(titles[[4L]], "device peak (MiB)")
    adam <- gpu_sweep[gpu_sweep$optimizer == "adam", ]
    expect_equal(xy_drawn(d, "l")[[1L]]$y, adam$device_peak / mb)
    # The device's components (weights, gradients, optimizer state, the forward's copies of
    # the weights, activations), then its peak.
    expect_match(legend_text(d)[[6L]], "^device peak, adam: fits up to batch ")

    d <- drawn(measured_sweep, budget = "256 MiB")
    titles <- calls_to(d, "C_title")[[1L]]
    expect_identical(titles[[1L]], "Measured host peak by batch size (fitted line)")
    expect_identical(titles[[4L]], "host peak (MiB)")
    expect_length(calls_to(d, "C_polygon"), 2L)
    b <- ag_max_batch_size(measured, "256 MiB")
    expect_identical(legend_text(d), c(
      "fixed", "per sample x batch",
      paste0("host peak, measured line: fits up to batch ", format_n(b)), "budget 256.00 MiB"
    ))
    expect_equal(xy_drawn(d, "p")[[1L]]$y, (50e6 + 1e5 * b) / mb)
  })
})

test_that("a linear batch axis draws a line that grows linearly as the straight line it is", {
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off(), add = TRUE)
  sweep <- ag_memory_sweep(ag_dense_stack(c(784, 512, 10)), seq(64, 2048, by = 64))
  expect_invisible(plot(sweep, budget = "96 MiB", log = ""))
  expect_identical(par("xlog"), FALSE)
  expect_gte(par("usr")[[1L]], -2048 * 0.05)
  plot(sweep)
  expect_identical(par("xlog"), TRUE)
  expect_agmem_error(plot(sweep, log = "y"), "`log`", class = "agmem_error_argument")
})
