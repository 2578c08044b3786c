#' Training memory over a range of batch sizes
#'
#' Tabulates [ag_estimate_training_memory()] over optimizers and batch sizes,
#' counting the shapes once. Plot it with [plot()][plot.ag_memory_sweep].
#'
#' @inheritParams ag_estimate_training_memory
#' @param batch_size The batch sizes: one or more whole numbers from 1 to
#'   `.Machine$integer.max`.
#' @param optimizer One or more of `"adam"`, `"sgd"` and `"sgd_plain"`
#'   (partial names accepted); all three by default.
#'
#' @return A data frame of class `c("ag_memory_sweep", "data.frame")` with one
#'   row per optimizer (outer, in the order given) and batch size (inner), and
#'   the columns `optimizer`, `batch_size`, `params`, `weights`, `gradients`,
#'   `optimizer_state`, `activations` and `total` (bytes). Every figure is
#'   identical to what [ag_estimate_training_memory()] returns for that row.
#'   The attribute `activation_frac` keeps the fraction used, for the plot.
#'
#' @seealso [plot.ag_memory_sweep()], [ag_max_batch_size()].
#'
#' @examples
#' shapes <- ag_dense_shapes(c(784, 512, 512, 10))
#' sweep <- ag_memory_sweep(shapes, batch_size = c(1, 32, 1024))
#' sweep
#' @export
ag_memory_sweep <- function(shapes, batch_size = 2^(0:10),
                            optimizer = c("adam", "sgd", "sgd_plain"), activation_frac = 0.01) {
  optimizer <- match_optimizer(optimizer, several = TRUE)
  cols <- .Call(agmem_sweep, shapes, optimizer_copies[optimizer], activation_frac, batch_size)
  rows <- length(batch_size)
  out <- data.frame(
    optimizer = rep(optimizer, each = rows),
    batch_size = rep(as.double(batch_size), times = length(optimizer)),
    params = cols[[1L]], weights = cols[[2L]], gradients = cols[[3L]],
    optimizer_state = cols[[4L]], activations = cols[[5L]], total = cols[[6L]],
    stringsAsFactors = FALSE
  )
  attr(out, "activation_frac") <- activation_frac
  class(out) <- c("ag_memory_sweep", "data.frame")
  out
}
