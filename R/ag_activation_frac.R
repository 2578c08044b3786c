#' Calibrate `activation_frac` from a measured tape
#'
#' Gives the `activation_frac` with which [ag_estimate_training_memory()]
#' reproduces a measured activation size: measure a real tape once, with
#' ggmlR's `ag_tape_memory()`, at one batch size, then plan any other batch
#' size with the fraction this returns.
#'
#' @param measured The activation bytes measured at `batch_size`: a single
#'   finite number >= 0, or the list ggmlR's `ag_tape_memory()` returns, whose
#'   `bytes_snapshots` field holds the intermediates only the tape keeps.
#' @param shapes The model's parameter shapes, as in
#'   [ag_estimate_training_memory()] (a model description or a ggmlR model
#'   stands for its shapes).
#' @param batch_size The batch size the measurement was taken at.
#'
#' @return A single number, the fraction `f` for which
#'   `ag_estimate_training_memory(shapes, batch_size, activation_frac = f)$activations`
#'   equals `measured` exactly where some double does, and otherwise as closely
#'   as double arithmetic allows.
#'
#' @seealso [ag_estimate_training_memory()], [ag_max_batch_size()].
#'
#' @examples
#' shapes <- ag_dense_shapes(c(784, 128, 128, 128, 10))
#' # Suppose ag_tape_memory() reported 9.5 MB of snapshots at batch 32:
#' tape <- list(bytes_snapshots = 9.5 * 1024^2)
#' frac <- ag_activation_frac(tape, shapes, batch_size = 32)
#' frac
#' ag_estimate_training_memory(shapes, 256, activation_frac = frac)
#' @export
ag_activation_frac <- function(measured, shapes, batch_size) {
  if (is.list(measured)) {
    if (!"bytes_snapshots" %in% names(measured)) {
      stop_arg(
        "`measured` is a list without a `bytes_snapshots` field: give ggmlR's ",
        "ag_tape_memory() result, or the activation bytes as a number."
      )
    }
    measured <- measured[["bytes_snapshots"]]
  }
  .Call(agmem_activation_frac, measured, plain_shapes(shapes, "shapes"), batch_size)
}
