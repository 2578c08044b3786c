#' Training memory over a range of batch sizes
#'
#' Tabulates training memory over optimizers and batch sizes: ggmlR's formula
#' ([ag_estimate_training_memory()]) for plain shapes, the predicted peak of
#' [ag_training_memory()] for a model, or the fitted line of a measurement.
#' Plot it with [plot()][plot.ag_memory_sweep], find the largest batch for a
#' budget with [summary()][summary.ag_memory_sweep].
#'
#' @inheritSection ag_max_batch_size How far ggmlR's formula is from a real peak
#' @inheritParams ag_max_batch_size
#' @param batch_size The batch sizes: one or more whole numbers from 1 to
#'   `.Machine$integer.max`.
#' @param optimizer One or more of `"adam"`, `"sgd"` and `"sgd_plain"`
#'   (partial names accepted); all three by default. Not for a measurement.
#'
#' @details
#' A sweep takes about 80 bytes of memory per row while it is built. One that
#' would not fit in the memory available now (read as [ag_max_batch_size()]
#' reads it for `budget = NULL`, when it can be read) is refused before
#' anything is allocated.
#'
#' @return A data frame of class `c("ag_memory_sweep", "data.frame")` with one
#'   row per optimizer (outer, in the order given) and batch size (inner); all
#'   byte counts are exact doubles (printing scales them: see
#'   [print()][print.ag_memory_sweep]). Its columns, by what `shapes` is:
#'   * plain shapes: `optimizer`, `batch_size`, `params`, `weights`,
#'     `gradients`, `optimizer_state`, `activations` and `total`, each
#'     identical to what [ag_estimate_training_memory()] returns for that row;
#'     the attribute `activation_frac` keeps the fraction used;
#'   * a model: `optimizer`, `batch_size`, `params`, the components of
#'     [ag_training_memory()] at the planned place (the host for `"cpu"`, the
#'     device for `"gpu"`; 0 where a component has no bytes there): `weights`,
#'     `gradients`, `optimizer_state`, `master_weights`, `step_transients`,
#'     `build_transients`, `activations`, `activation_gradients`, then
#'     `host_peak`, `host_high` (planned on with `"cpu"`) and `device_peak`,
#'     each identical to what [ag_training_memory()] returns for that row;
#'   * a measurement: `optimizer` (`"measured"`), `batch_size`, `fixed` and
#'     `variable` (the planned line's fixed part and `per_sample * batch_size`),
#'     `host_peak` and `device_peak` (each line at that batch).
#'
#'   A sweep of a model or a measurement keeps what it was planned on as the
#'   attribute `plan`, for the plot and the summary.
#'
#' @seealso [plot.ag_memory_sweep()], [summary.ag_memory_sweep()],
#'   [ag_max_batch_size()].
#'
#' @examples
#' spec <- ag_dense_stack(c(784, 512, 512, 10), loss = "softmax_cross_entropy")
#' sweep <- ag_memory_sweep(spec, batch_size = c(1, 32, 1024))
#' sweep
#' summary(sweep, budget = "256 MiB")
#' ag_memory_sweep(spec, batch_size = c(32, 1024), optimizer = "adam", device = "gpu")
#'
#' # ggmlR's formula on plain shapes:
#' shapes <- ag_dense_shapes(c(784, 512, 512, 10))
#' ag_memory_sweep(shapes, batch_size = c(1, 32, 1024))
#' @export
ag_memory_sweep <- function(shapes, batch_size = 2^(0:10),
                            optimizer = c("adam", "sgd", "sgd_plain"), activation_frac = 0.01,
                            device = c("cpu", "gpu"), dtype = c("f32", "f16", "bf16"),
                            lower_bound = FALSE, steps = 100, data_size = 0) {
  est <- as_estimator(shapes, device, dtype, given = list(
    optimizer = !missing(optimizer), activation_frac = !missing(activation_frac),
    device = !missing(device), dtype = !missing(dtype), steps = !missing(steps),
    data_size = !missing(data_size)
  ), frac = activation_frac, lower_bound = lower_bound, steps = steps, data_size = data_size)
  out <- est_sweep(est, batch_size, est_optimizers(est, optimizer, several = TRUE))
  warn_range(est_beyond(est, out$batch_size))
  warn_capped_plan(est, max(out$host_high, 0))
  attr(out, "plan") <- est
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
    abort(
      "`batch_size` makes a sweep of ", format_count(rows), " rows, which needs about ",
      format_bytes_scaled(need), " of memory, more than the ", format_bytes_scaled(avail),
      " available now: sweep fewer batch sizes or optimizers.",
      class = "memory"
    )
  }
  invisible(rows)
}
