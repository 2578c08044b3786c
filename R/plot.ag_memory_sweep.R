#' Plot a memory sweep
#'
#' Draws, with base graphics, the training memory of a sweep against the batch
#' size (on a log scale by default): its parts stacked for the first optimizer of the sweep,
#' the figure planned on for every optimizer as a line, and, when a budget is
#' given, the budget as a horizontal line with the largest batch that fits
#' marked for each optimizer. What is drawn follows what the sweep was made
#' from:
#' * plain shapes (ggmlR's formula): the weights, gradients, optimizer state
#'   and activations stacked, and the totals;
#' * a model: the predicted peak of [ag_training_memory()], on the host for a
#'   sweep on `"cpu"` and on the device for `"gpu"`, with the weights (and
#'   master weights), gradients, optimizer state, step and build transients,
#'   and activations (and their gradients) stacked, parts that are 0 left out;
#' * a measurement: the fitted line, its fixed part and its part per sample
#'   times the batch stacked.
#'
#' The title and the y axis say which peak is shown. A sweep of a single batch
#' size is drawn as a stacked bar with the figures as points. The legend sits
#' at the top left, with the y axis extended so that it covers no data. Memory
#' is shown in 1024-based units from B to YiB (KiB, MiB, GiB, as budget strings
#' write them); beyond 1024 YiB, as a power of ten in YiB.
#'
#' @param x A sweep from [ag_memory_sweep()].
#' @param budget `NULL` (no budget line), or a budget in any form
#'   [ag_max_batch_size()] accepts: bytes, or a string such as `"16 GiB"`.
#' @param log `"x"` (the default) for a log scale of batch sizes, which suits
#'   a sweep over powers of two; `""` for a linear one, on which a figure that
#'   grows linearly with the batch is drawn as the straight line it is.
#' @param ... Further graphical parameters for [plot.default()], such as
#'   `main`.
#'
#' @return `x`, invisibly.
#'
#' @examples
#' spec <- ag_dense_stack(c(784, 2048, 2048, 10))
#' plot(ag_memory_sweep(spec, batch_size = 2^(0:12)), budget = "512 MiB")
#' plot(ag_memory_sweep(spec, 2^(0:12), device = "gpu"), budget = "256 MiB")
#'
#' # ggmlR's formula on plain shapes:
#' shapes <- ag_dense_shapes(c(784, 2048, 2048, 10))
#' sweep <- ag_memory_sweep(shapes, batch_size = 2^(0:12))
#' plot(sweep, budget = "150 MiB")
#' plot(ag_memory_sweep(shapes, batch_size = 32), budget = "150 MiB")
#' @importFrom graphics abline legend lines par plot.default points polygon segments strheight
#'   strwidth
#' @export
plot.ag_memory_sweep <- function(x, budget = NULL, log = "x", ...) {
  if (!(identical(log, "x") || identical(log, ""))) {
    stop_arg("`log` must be \"x\" (a log scale of batch sizes) or \"\" (a linear one).")
  }
  est <- if (is.data.frame(x)) sweep_estimator(x) else NULL
  parts <- if (is.null(est)) NULL else est_plot_parts(est)
  needed <- c("optimizer", "batch_size", est$column, unlist(parts$bands, use.names = FALSE))
  if (is.null(est) || !all(needed %in% names(x)) || nrow(x) == 0L) {
    stop_arg("`x` must be a sweep made by ag_memory_sweep(), with its rows and attributes.")
  }
  check_sweep_figures(x, est, "x")
  if (isTRUE(est$lower_bound)) {
    warn_lower_bound(est$spec, "x")
  }
  limit <- if (is.null(budget)) NULL else parse_budget(budget)
  optimizers <- unique(x$optimizer)
  by_optimizer <- lapply(optimizers, function(opt) {
    rows <- x[x$optimizer == opt, ]
    rows[order(rows$batch_size), ]
  })
  stack <- sweep_stack(by_optimizer[[1L]], parts)
  # The largest batch that fits, per optimizer, and its figure.
  fits <- if (is.null(limit)) NULL else lapply(optimizers, function(opt) {
    fit <- est_max_batch(est, limit, opt)
    at <- if (is.finite(fit) && fit >= 1) est_peak(est, fit, opt) else NA_real_
    list(batch = fit, total = at)
  })
  warn_range(est_beyond(est, c(x$batch_size, vapply(fits, `[[`, 0, "batch"))))
  warn_capped_plan(est, if (is.null(limit)) max(x$host_high, 0) else limit)
  # Everything from here on is in the unit of the axis, so that no figure overflows.
  scale <- byte_scale(max(x[[est$column]], limit))
  scale <- list(unit = scale$unit[[1L]], bytes = scale$bytes[[1L]])
  # One batch size has no line to draw: its components become a bar and its totals points.
  single <- length(unique(x$batch_size)) == 1L
  look <- list(
    stack = band_colours[names(stack)],
    lines = c("#000000", "#7B3294", "#1B7837")[seq_along(optimizers)],
    pch = c(19L, 17L, 15L)[seq_along(optimizers)], single = single
  )
  key <- sweep_key(parts, stack, optimizers, fits, limit, look)

  # The stack's outline on the x axis: the batch sizes, or a bar a quarter octave either side.
  first <- by_optimizer[[1L]]
  bar_x <- if (single) first$batch_size * 2^c(-0.25, 0.25) else first$batch_size
  xlim <- if (single) x$batch_size[[1L]] * c(0.5, 2) else range(x$batch_size)
  if (log == "") {
    xlim <- c(0, xlim[[2L]])
  }
  lim <- if (is.null(limit)) NULL else limit / scale$bytes
  # What is drawn, as paths for legend_layout(): the top of the stack, the figures, the budget.
  stack_top <- if (length(stack) > 0L) Reduce(`+`, stack) else rep(0, nrow(first))
  drawn <- c(
    list(list(x = bar_x, y = rep_len(stack_top / scale$bytes, length(bar_x)))),
    lapply(by_optimizer, function(rows) {
      list(x = rows$batch_size, y = rows[[est$column]] / scale$bytes)
    }),
    if (!is.null(lim)) list(list(x = xlim, y = c(lim, lim)))
  )
  layout <- legend_layout(drawn, key$legend, xlim, max(x[[est$column]] / scale$bytes, lim) * 1.06,
                          log_x = log == "x")
  labels <- utils::modifyList(list(
    main = parts$title, xlab = "batch size", ylab = paste0(parts$ylab, " (", scale$unit, ")")
  ), list(...))
  do.call(plot.default, c(list(xlim, c(0, layout$ymax), type = "n", log = log, yaxs = "i"),
                          labels))
  draw_stack(stack, bar_x, scale$bytes, look$stack)
  for (i in seq_along(optimizers)) {
    rows <- by_optimizer[[i]]
    if (single) {
      points(rows$batch_size, rows[[est$column]] / scale$bytes, col = look$lines[[i]],
             pch = look$pch[[i]], cex = 1.4)
    } else {
      lines(rows$batch_size, rows[[est$column]] / scale$bytes, col = look$lines[[i]], lwd = 2,
            lty = i)
    }
  }
  if (!is.null(lim)) {
    abline(h = lim, col = "#D62728", lwd = 2, lty = 2)
    for (i in seq_along(optimizers)) {
      if (!is.na(fits[[i]]$total)) {
        y <- fits[[i]]$total / scale$bytes
        segments(fits[[i]]$batch, 0, fits[[i]]$batch, y, col = look$lines[[i]], lty = 3)
        # A filled marker of its own shape per optimizer, so that two at one batch both show.
        points(fits[[i]]$batch, y, pch = c(21L, 24L, 22L)[[i]], bg = look$lines[[i]],
               cex = 1.4 - 0.2 * (i - 1L))
      }
    }
  }
  do.call(legend, c(list("topleft", bg = "white", box.col = "grey80", inset = legend_inset,
                         cex = layout$cex, ncol = layout$ncol), key))
  invisible(x)
}

# The stacked parts of the first optimizer's rows (sorted by batch size): the sum of each band's
# columns, bands that are 0 in every row left out where the estimator says so.
sweep_stack <- function(rows, parts) {
  stack <- lapply(parts$bands, function(cols) Reduce(`+`, lapply(cols, function(col) rows[[col]])))
  if (parts$drop_zero) {
    stack <- Filter(function(v) any(v != 0), stack)
  }
  stack
}

# Draws the stacked parts as polygons over bar_x, in the axis unit (`unit` bytes).
draw_stack <- function(stack, bar_x, unit, colours) {
  below <- rep(0, length(bar_x))
  for (i in seq_along(stack)) {
    above <- below + stack[[i]]
    polygon(c(bar_x, rev(bar_x)), c(above, rev(below)) / unit, col = colours[[i]], border = NA)
    below <- above
  }
}

# The legend's entries, as arguments of legend(): the stacked parts, a line (or point) per
# optimizer with what fits the budget, and the budget.
sweep_key <- function(parts, stack, optimizers, fits, limit, look) {
  n_opt <- length(optimizers)
  n_stack <- length(stack)
  has_budget <- !is.null(limit)
  totals <- parts$lines(optimizers)
  if (has_budget) {
    totals <- paste0(totals, ": ", vapply(fits, function(f) format_fit(f$batch), ""))
  }
  list(
    legend = c(paste0(names(stack), parts$stack_suffix(optimizers[[1L]])), totals,
               if (has_budget) paste("budget", format_bytes_scaled(limit))),
    fill = c(look$stack, rep(NA, n_opt), if (has_budget) NA),
    border = NA,
    col = c(rep(NA, n_stack), look$lines, if (has_budget) "#D62728"),
    lty = c(rep(NA, n_stack), if (look$single) rep(NA, n_opt) else seq_len(n_opt),
            if (has_budget) 2),
    pch = c(rep(NA, n_stack), if (look$single) look$pch else rep(NA, n_opt),
            if (has_budget) NA),
    lwd = c(rep(NA, n_stack), rep(2, n_opt), if (has_budget) 2)
  )
}

# The fill of each stacked part.
band_colours <- c(weights = "#4E79A7", gradients = "#A0CBE8", `optimizer state` = "#F28E2B",
                  transients = "#E8C547", activations = "#59A14F", fixed = "#4E79A7",
                  `per sample x batch` = "#59A14F")

# The legend's distance from the plot's edges, as a fraction of the plot region.
legend_inset <- 0.02

# How to fit the legend at the top left above everything drawn: its `cex` and `ncol`, and the
# top of the y axis, `ymax`, at least the `ymax` given and more when a path (a list of x,
# increasing, and y; straight between the points on the x axis, log where `log_x`) rises into
# the band the legend takes. The legend's size is measured on the current device as legend()
# measures it: per column a line of par("cin") per entry plus one, and per column the widest
# label plus its keys.
# The largest text (cex from 1 down to 0.7) whose legend, in one column or two, is at most 45%
# as tall and as wide as the plot wins, with the layout that needs the lower axis. When none
# fits, cex 0.7 in whichever of the two layouts as wide as the plot needs the lower axis (one
# column if neither), the data keeping at least 40% of the height; then the legend may cover
# some of the data or stick out of the plot.
legend_layout <- function(paths, labels, xlim, ymax, log_x = TRUE) {
  tx <- if (log_x) log else identity
  pin <- par("pin")
  char <- par("cin") * par("cex")
  # The x axis (log or linear), which plot.default() extends by 4% on either side.
  ends <- tx(xlim)
  ends <- ends + c(-1, 1) * 0.04 * diff(ends)
  for (cex in c(1, 0.9, 0.8, 0.7)) {
    widths <- strwidth(labels, units = "inches", cex = cex)
    line <- cex * char[[2L]] * max(1, strheight(labels, units = "inches", cex = cex) /
                                     (cex * char[[2L]]))
    best <- NULL
    for (ncol in 1:2) {
      per_col <- ceiling(length(labels) / ncol)
      # Each column as wide as the widest label (legend()'s text.width = NULL) and its keys.
      width <- (ncol * (max(widths) + 5.5 * cex * char[[1L]]) + 0.5 * cex * char[[1L]]) /
        pin[[1L]]
      height <- (per_col + 1) * line / pin[[2L]]
      wide <- width > 1 - 2 * legend_inset
      last <- cex == 0.7
      if ((!wide && (height <= 0.45 || last)) || (last && ncol == 1L)) {
        # The legend's x span, widened by 2% of the plot for the symbols drawn at its edges.
        lo <- ends[[1L]] - 0.02 * diff(ends)
        hi <- ends[[1L]] + (legend_inset + width + 0.02) * diff(ends)
        top <- highest_within(paths, lo, hi, tx)
        # Keep the legend, its inset and 3% of the plot above the highest point under it.
        need <- max(ymax, top / max(0.4, 1 - legend_inset - height - 0.03))
        if (is.null(best) || need < best$ymax) {
          best <- list(cex = cex, ncol = ncol, ymax = need)
        }
      }
    }
    if (!is.null(best)) {
      return(best)
    }
  }
}

# The highest y of `paths` (lists of x, increasing, and y; straight between the points on the
# x axis as `tx` maps it, log by default) at an x mapped from lo to hi; -Inf when none
# reaches there.
highest_within <- function(paths, lo, hi, tx = log) {
  top <- -Inf
  for (path in paths) {
    lx <- tx(path$x)
    top <- max(top, path$y[lx >= lo & lx <= hi])
    n <- length(lx)
    if (n > 1L) {
      x0 <- lx[-n]
      x1 <- lx[-1L]
      for (edge in c(lo, hi)) {
        cross <- x0 < edge & edge < x1
        top <- max(top, (path$y[-n] + (path$y[-1L] - path$y[-n]) * (edge - x0) /
                           (x1 - x0))[cross])
      }
    }
  }
  top
}

# What fits, for the legend: the largest batch, any batch (Inf) or none (0).
format_fit <- function(b) {
  if (is.infinite(b)) {
    "any batch fits"
  } else if (b == 0) {
    "batch 1 does not fit"
  } else {
    paste("fits up to batch", formatC(b, format = "f", digits = 0, big.mark = " "))
  }
}
