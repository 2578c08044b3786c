#' Print a memory sweep in readable units
#'
#' Writes a sweep from [ag_memory_sweep()] as a table whose byte counts are in
#' the unit that suits each (the sweep itself keeps exact bytes), under a line
#' that says what was swept: ggmlR's formula, the model of
#' [ag_training_memory()] or a measured line, and the figure planned on. The
#' columns of a model or a measurement that are 0 in every row (such as
#' `device_peak` on the CPU) are left out of the print, and named below it.
#'
#' @param x A sweep from [ag_memory_sweep()].
#' @param units How to write byte counts: `"iec"` (the default: B, KiB, MiB,
#'   GiB, TiB, 1024-based, each count in the unit that suits it), `"si"` (B,
#'   kB, MB, GB, TB, 1000-based) or one unit of either, such as `"MiB"` or
#'   `"GB"`, for every count.
#' @param ... Ignored.
#'
#' @return `format()`: a data frame of the same rows and columns, as text.
#'   `print()`: `x`, invisibly, after writing it.
#'
#' @examples
#' sweep <- ag_memory_sweep(ag_dense_stack(c(784, 512, 10)), c(1, 64, 4096), "adam")
#' sweep
#' print(sweep, units = "si")
#' format(sweep, units = "MiB")
#' sweep$host_peak # exact bytes
#' @export
format.ag_memory_sweep <- function(x, units = "iec", ...) {
  check_units(units)
  out <- x
  attr(out, "plan") <- NULL
  attr(out, "activation_frac") <- NULL
  class(out) <- "data.frame"
  for (col in names(out)) {
    v <- out[[col]]
    out[[col]] <- if (!is.numeric(v)) {
      as.character(v)
    } else if (col %in% c("batch_size", "params")) {
      format_count_table(v)
    } else {
      format_bytes_scaled(v, units)
    }
  }
  out
}

#' @rdname format.ag_memory_sweep
#' @export
print.ag_memory_sweep <- function(x, units = "iec", ...) {
  text <- format(x, units = units)
  est <- sweep_estimator(x)
  zero <- character(0)
  if (!is.null(est)) {
    cat(format(est, what = "title"), "\n", sep = "")
    if (nrow(x) > 0L) {
      zero <- names(x)[vapply(names(x), function(col) {
        col %in% est_zero_columns(est) && is.numeric(x[[col]]) &&
          all(x[[col]] == 0, na.rm = FALSE) %in% TRUE
      }, logical(1))]
      text <- text[setdiff(names(text), zero)]
    }
  }
  print(text, row.names = FALSE, right = TRUE)
  if (length(zero) > 0L) {
    cat("0 in every row: ", paste(zero, collapse = ", "), "\n", sep = "")
  }
  invisible(x)
}
