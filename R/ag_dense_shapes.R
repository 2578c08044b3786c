#' Parameter shapes of a dense stack
#'
#' Lists the parameter shapes of a stack of dense layers from its widths, in
#' the orientation of ggmlR's autograd path: a layer computes `W %*% x`, so its
#' weight is `c(out, in)`, followed by its bias of length `out`.
#'
#' @param widths The layer widths, input first: two or more positive whole
#'   numbers.
#' @param bias `TRUE` to include a bias vector after each weight.
#'
#' @return A list of numeric (double) vectors, ready for
#'   [ag_estimate_training_memory()]: `ag_dense_shapes(c(784, 512, 10))` is
#'   `list(c(512, 784), 512, c(10, 512), 10)`.
#'
#' @examples
#' ag_dense_shapes(c(784, 512, 10))
#' ag_dense_shapes(c(784, 512, 10), bias = FALSE)
#' @export
ag_dense_shapes <- function(widths, bias = TRUE) {
  check_flag(bias, "bias")
  if (!is.numeric(widths) || is.object(widths) || length(widths) < 2L || anyNA(widths) ||
    any(!is.finite(widths) | widths < 1 | widths != floor(widths))) {
    stop_arg("`widths` must be two or more positive whole numbers (the layer widths, input first).")
  }
  widths <- as.double(widths)
  layers <- lapply(seq_len(length(widths) - 1L), function(i) {
    weight <- c(widths[[i + 1L]], widths[[i]])
    if (bias) list(weight, widths[[i + 1L]]) else list(weight)
  })
  do.call(c, layers)
}
