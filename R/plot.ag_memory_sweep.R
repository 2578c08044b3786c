#' Plot a memory sweep
#'
#' Draws, with base graphics, the estimated training memory against the batch
#' size (log scale): the four components stacked for the first optimizer of the
#' sweep, the totals of the others as lines, and, when a budget is given, the
#' budget as a horizontal line with the largest batch that fits marked for each
#' optimizer.
#'
#' @param x A sweep from [ag_memory_sweep()].
#' @param budget `NULL` (no budget line), or a budget in any form
#'   [ag_max_batch_size()] accepts: bytes, or a string such as `"16 GB"`.
#' @param ... Further graphical parameters for [plot.default()], such as
#'   `main`.
#'
#' @return `x`, invisibly.
#'
#' @examples
#' shapes <- ag_dense_shapes(c(784, 2048, 2048, 10))
#' sweep <- ag_memory_sweep(shapes, batch_size = 2^(0:12))
#' plot(sweep, budget = "150 MB")
#' @importFrom graphics abline legend lines plot.default points polygon segments
#' @export
plot.ag_memory_sweep <- function(x, budget = NULL, ...) {
  needed <- c("optimizer", "batch_size", "params", "weights", "gradients", "optimizer_state",
              "activations", "total")
  frac <- attr(x, "activation_frac")
  if (!is.data.frame(x) || !all(needed %in% names(x)) || nrow(x) == 0L || is.null(frac)) {
    stop_arg("`x` must be a sweep made by ag_memory_sweep(), with its rows and attributes.")
  }
  limit <- if (is.null(budget)) NULL else parse_budget(budget)
  optimizers <- unique(x$optimizer)
  first <- x[x$optimizer == optimizers[[1L]], ]
  first <- first[order(first$batch_size), ]
  # One batch size has no line to draw: its components become a bar and its totals points.
  single <- length(unique(x$batch_size)) == 1L

  scale <- byte_scale(max(x$total, limit))
  ymax <- max(x$total, limit) / scale$bytes * 1.06
  xlim <- if (single) x$batch_size[[1L]] * c(0.5, 2) else range(x$batch_size)
  labels <- utils::modifyList(list(
    main = "Training memory by batch size", xlab = "batch size",
    ylab = paste0("memory (", scale$unit, ")")
  ), list(...))
  do.call(plot.default, c(list(xlim, c(0, ymax), type = "n", log = "x",
                               yaxs = "i"), labels))
  stack_colours <- c("#4E79A7", "#A0CBE8", "#F28E2B", "#59A14F")
  parts <- c("weights", "gradients", "optimizer_state", "activations")
  # The stack's outline on the x axis: the batch sizes, or a bar a quarter octave either side.
  bar_x <- if (single) first$batch_size * 2^c(-0.25, 0.25) else first$batch_size
  below <- rep(0, length(bar_x))
  for (i in seq_along(parts)) {
    above <- below + first[[parts[[i]]]]
    polygon(c(bar_x, rev(bar_x)), c(above, rev(below)) / scale$bytes,
            col = stack_colours[[i]], border = NA)
    below <- above
  }
  line_colours <- c("#000000", "#7B3294", "#1B7837")[seq_along(optimizers)]
  total_pch <- c(19L, 17L, 15L)[seq_along(optimizers)]
  for (i in seq_along(optimizers)) {
    rows <- x[x$optimizer == optimizers[[i]], ]
    rows <- rows[order(rows$batch_size), ]
    if (single) {
      points(rows$batch_size, rows$total / scale$bytes, col = line_colours[[i]],
             pch = total_pch[[i]], cex = 1.4)
    } else {
      lines(rows$batch_size, rows$total / scale$bytes, col = line_colours[[i]], lwd = 2,
            lty = i)
    }
  }

  totals <- paste("total,", optimizers)
  if (!is.null(limit)) {
    abline(h = limit / scale$bytes, col = "#D62728", lwd = 2, lty = 2)
    for (i in seq_along(optimizers)) {
      fit <- .Call(agmem_max_batch, x$params[[1L]], optimizer_copies[[optimizers[[i]]]], frac,
                   limit)
      totals[[i]] <- paste0(totals[[i]], ": ", format_fit(fit))
      if (is.finite(fit) && fit >= 1) {
        est <- .Call(agmem_estimate, x$params[[1L]], optimizer_copies[[optimizers[[i]]]], frac,
                     fit)
        segments(fit, 0, fit, est[[6L]] / scale$bytes, col = line_colours[[i]], lty = 3)
        points(fit, est[[6L]] / scale$bytes, pch = 21, bg = line_colours[[i]], cex = 1.4)
      }
    }
  }
  legend("topleft", bg = "white", box.col = "grey80", inset = 0.02,
         legend = c(paste0(c("weights", "gradients", "optimizer state", "activations"),
                           " (", optimizers[[1L]], ")"), totals,
                    if (!is.null(limit)) paste("budget", format_bytes(limit))),
         fill = c(stack_colours, rep(NA, length(optimizers)), if (!is.null(limit)) NA),
         border = c(rep(NA, 4L), rep(NA, length(optimizers)), if (!is.null(limit)) NA),
         col = c(rep(NA, 4L), line_colours, if (!is.null(limit)) "#D62728"),
         lty = c(rep(NA, 4L), if (single) rep(NA, length(optimizers)) else seq_along(optimizers),
                 if (!is.null(limit)) 2),
         pch = c(rep(NA, 4L), if (single) total_pch else rep(NA, length(optimizers)),
                 if (!is.null(limit)) NA),
         lwd = c(rep(NA, 4L), rep(2, length(optimizers)), if (!is.null(limit)) 2))
  invisible(x)
}

# The 1024-based unit that suits `bytes` (the KB, MB, ... of budget strings and the report):
# its name and its size in bytes. The largest power of 1024 not above `bytes`, found by
# comparison (log() can land just below a whole power), from B up to YB.
byte_units <- c("B", "KB", "MB", "GB", "TB", "PB", "EB", "ZB", "YB")
byte_scale <- function(bytes) {
  power <- 0L
  while (power < length(byte_units) - 1L && bytes >= 1024^(power + 1L)) {
    power <- power + 1L
  }
  list(unit = byte_units[[power + 1L]], bytes = 1024^power)
}

# A byte count in its suiting unit with two decimals, e.g. "150.00 MB"; from 1024 YB on (above
# 1.2e27 bytes) a mantissa and a power of ten in YB, e.g. "8.27e+283 YB" for 1e308 bytes.
format_bytes <- function(bytes) {
  scale <- byte_scale(bytes)
  value <- bytes / scale$bytes
  paste(formatC(value, format = if (value < 1024) "f" else "e", digits = 2), scale$unit)
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
