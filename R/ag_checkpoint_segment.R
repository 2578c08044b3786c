#' Describe a segment run under ggmlR's checkpoint
#'
#' ggmlR's `ag_checkpoint(fn, x)` runs a segment of layers without keeping
#' what it computes on the tape, and runs it again in the backward pass. A
#' module of your own calls it in its `forward()`, which agmem cannot read:
#' describe the segment by its layers wrapped in `ag_checkpoint_segment()`,
#' where it runs, in the layers given to [ag_model_spec()]. For a module whose
#' `forward(x)` is `ag_checkpoint(function(h) seg$forward(h), x)`:
#' `ag_checkpoint_segment(seg)`.
#'
#' agmem counts the segment by its layers, as if it were not checkpointed:
#' what the checkpoint saves depends on where the step peaks (measured, it
#' lowered a step's largest live heap by 19% to 30%, or not at all), so the
#' figure is the upper side of it. The segment matters on device `"gpu"`: its
#' record has no op, so ggmlR's graph backward declines the tape and the whole
#' backward runs on the host, as with a batch norm. agmem then models the host
#' path (`backward = "host"`), where the segment's layers alone would have it
#' on the device. It is the op `"checkpoint"` after the segment's own ops,
#' which costs nothing of its own but R's nodes (cons cells), with one
#' `"checkpoint_layer"` for each of the segment's layers after the first: the
#' nodes its replay makes grow with them.
#'
#' @param ... The segment's layers in order: ggmlR layers, an
#'   `ag_sequential()`, or the descriptions [ag_model_spec()] reads (at least
#'   one).
#' @return An object of class `"ag_checkpoint_segment"` holding the layers, for
#'   the list of layers given to [ag_model_spec()]. It describes; it does not
#'   train: give ggmlR the segment itself.
#' @seealso [ag_model_spec()], which reads it.
#' @examples
#' if (requireNamespace("ggmlR", quietly = TRUE)) {
#'   first <- ggmlR::ag_linear(64L, 256L, activation = "relu")
#'   seg <- ggmlR::ag_sequential(ggmlR::ag_linear(256L, 256L, activation = "relu"),
#'                               ggmlR::ag_linear(256L, 256L, activation = "relu"))
#'   last <- ggmlR::ag_linear(256L, 10L)
#'   # A module whose forward(x) is
#'   #   h <- first$forward(x)
#'   #   h <- ag_checkpoint(function(h) seg$forward(h), h)
#'   #   last$forward(h)
#'   spec <- ag_model_spec(list(first, ag_checkpoint_segment(seg), last),
#'                         loss = "softmax_cross_entropy")
#'   spec
#' }
#' @export
ag_checkpoint_segment <- function(...) {
  layers <- list(...)
  if (length(layers) == 0L) {
    stop_arg("`...` must be the segment's layers, at least one.")
  }
  for (k in seq_along(layers)) {
    if (!is_layer(layers[[k]])) {
      stop_arg("`...` must be the segment's layers (ggmlR layers, an ag_sequential() or ",
               "descriptions ag_model_spec() reads), not ", describe_object(layers[[k]]),
               " (argument ", k, ").")
    }
  }
  structure(list(layers = layers), class = "ag_checkpoint_segment")
}

#' @export
print.ag_checkpoint_segment <- function(x, ...) {
  types <- vapply(flatten_layers(x$layers, "x", "layers"), layer_type, character(1))
  cat("Segment run under ag_checkpoint(): ", paste(types, collapse = ", "), "\n", sep = "")
  invisible(x)
}
