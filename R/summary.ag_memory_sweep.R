#' The largest batch that fits, per optimizer, from a sweep
#'
#' For each optimizer of a sweep, the largest batch size that fits a budget,
#' computed exactly as [ag_max_batch_size()] computes it on what the sweep was
#' made from (plain shapes, a model or a measurement), and the largest batch
#' of the sweep itself that fits.
#'
#' @param object A sweep from [ag_memory_sweep()].
#' @param budget The memory to fit in, in any form [ag_max_batch_size()]
#'   accepts; `NULL` means what it means there (the memory available on the
#'   host for a sweep on the CPU, the GPU's free memory for one on the GPU).
#' @param x A summary from `summary()` of a sweep.
#' @param units How to write byte counts, as in [print.ag_memory_sweep()].
#' @param ... Ignored.
#'
#' @return `summary()`: a data frame of class
#'   `c("summary.ag_memory_sweep", "data.frame")`, one row per optimizer, with
#'   the columns `optimizer`, `max_batch` (as [ag_max_batch_size()] returns it:
#'   0 when batch 1 does not fit, `Inf` when any batch fits), `memory` (bytes:
#'   the figure planned on at `max_batch`, `NA` when it is 0) and
#'   `largest_swept` (the largest batch size of the sweep that fits, `NA` when
#'   none does); the attributes `budget` (bytes) and `plan`. `print()`: `x`,
#'   invisibly, after writing it with byte counts in readable units.
#'
#' @examples
#' spec <- ag_dense_stack(c(784, 512, 512, 10))
#' sweep <- ag_memory_sweep(spec, batch_size = 2^(0:12))
#' summary(sweep, budget = "512 MiB")
#' print(summary(sweep, budget = 2^30), units = "si")
#' @export
summary.ag_memory_sweep <- function(object, budget = NULL, ...) {
  est <- sweep_estimator(object)
  if (!is.data.frame(object) || is.null(est) ||
    !all(c("optimizer", "batch_size", est$column) %in% names(object))) {
    stop_arg("`object` must be a sweep made by ag_memory_sweep(), with its rows and attributes.")
  }
  check_sweep_figures(object, est, "object")
  if (isTRUE(est$lower_bound)) {
    warn_lower_bound(est$spec, "object")
  }
  limit <- plan_budget(budget, est)
  warn_capped_plan(est, limit)
  optimizers <- unique(object$optimizer)
  rows <- lapply(optimizers, function(opt) {
    b <- est_max_batch(est, limit, opt)
    at <- if (is.infinite(b)) 1 else b
    memory <- if (b >= 1) est_peak(est, at, opt) else NA_real_
    swept <- object[object$optimizer == opt, , drop = FALSE]
    fit <- swept$batch_size[swept[[est$column]] <= limit]
    data.frame(optimizer = opt, max_batch = b, memory = memory,
               largest_swept = if (length(fit) > 0L) max(fit) else NA_real_,
               stringsAsFactors = FALSE)
  })
  out <- if (length(rows) > 0L) {
    do.call(rbind, rows)
  } else {
    data.frame(optimizer = character(0), max_batch = numeric(0), memory = numeric(0),
               largest_swept = numeric(0), stringsAsFactors = FALSE)
  }
  warn_range(est_beyond(est, out$max_batch))
  attr(out, "budget") <- limit
  attr(out, "plan") <- est
  attr(out, "activation_frac") <- attr(object, "activation_frac")
  class(out) <- c("summary.ag_memory_sweep", "data.frame")
  out
}

#' @rdname summary.ag_memory_sweep
#' @export
print.summary.ag_memory_sweep <- function(x, units = "iec", ...) {
  check_units(units)
  planned <- format(attr(x, "plan"), what = "planned")
  cat(sprintf("Largest batch that fits %s, on %s:\n",
              format_bytes_scaled(attr(x, "budget"), units), planned))
  text <- data.frame(
    optimizer = x$optimizer,
    max_batch = ifelse(is.infinite(x$max_batch), "any", format_count_table(x$max_batch)),
    memory = ifelse(is.na(x$memory), "-", format_bytes_scaled(x$memory, units)),
    largest_swept = ifelse(is.na(x$largest_swept), "none", format_count_table(x$largest_swept)),
    stringsAsFactors = FALSE
  )
  if (nrow(text) == 0L) {
    cat("  no optimizer: the sweep has no rows\n")
  } else {
    print(text, row.names = FALSE, right = TRUE)
  }
  invisible(x)
}

# Refuses a sweep whose figure planned on (the estimator's column) or batch sizes hold NA or
# NaN: ag_memory_sweep() makes none, so the sweep was edited. `arg` names it.
check_sweep_figures <- function(x, est, arg) {
  for (col in c("batch_size", est$column)) {
    if (!is.numeric(x[[col]]) || anyNA(x[[col]])) {
      stop_arg("`", arg, "` has missing or non-numeric values in its `", col, "` column: a ",
               "sweep made by ag_memory_sweep() has none.")
    }
  }
}
