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
#' @details
#' A sweep takes about 80 bytes of memory per row while it is built. One that
#' would not fit in the memory available now (read as [ag_max_batch_size()]
#' reads it for `budget = NULL`, when it can be read) is refused before
#' anything is allocated.
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
  check_sweep_memory(length(optimizer) * as.double(length(batch_size)))
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

# Bytes a sweep takes per row while it is built: its eight columns, and the copies made of the
# batch sizes and of the optimizer names on the way.
sweep_row_bytes <- 80

# Refuses, before anything is allocated, a sweep of `rows` rows that would not fit in the memory
# available now (available_memory()); does nothing when that cannot be read.
check_sweep_memory <- function(rows) {
  need <- rows * sweep_row_bytes
  avail <- available_memory()
  if (is.double(avail) && need > avail) {
    stop_arg(
      "`batch_size` makes a sweep of ", format_count(rows), " rows, which needs about ",
      format_bytes_scaled(need), " of memory, more than the ", format_bytes_scaled(avail),
      " available now: sweep fewer batch sizes or optimizers."
    )
  }
  invisible(rows)
}
