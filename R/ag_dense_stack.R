#' Describe a stack of dense layers for the training-memory model
#'
#' Describes, without ggmlR, the model that a chain of ggmlR `ag_linear()`
#' layers makes: layer `i` maps `widths[i]` inputs to `widths[i + 1]` outputs,
#' every layer but the last applies `activation`, the last is linear, and the
#' stack is trained with `loss`. The description is what
#' [ag_training_memory()] needs to predict the peak memory of a training step.
#'
#' @param widths The layer widths, input first: two or more positive whole
#'   numbers.
#' @param activation The activation of every layer but the last: one of
#'   `"relu"`, `"sigmoid"`, `"tanh"`, `"softmax"` or `"none"`.
#' @param loss The loss the stack is trained with: `"mse"` (ggmlR's
#'   `ag_mse_loss()`), `"cross_entropy"` (`ag_cross_entropy_loss()`) or
#'   `"softmax_cross_entropy"` (`ag_softmax_cross_entropy_loss()`).
#' @param bias `TRUE` when every layer adds a bias (ggmlR's `ag_linear()`
#'   always does).
#'
#' @return A list of class `"ag_model_spec"`:
#'   \describe{
#'     \item{`shapes`}{the parameter shapes, exactly
#'       `ag_dense_shapes(widths, bias)`;}
#'     \item{`layers`}{a data frame, one row per layer: `type` (`"linear"`),
#'       `in`, `out`, `bias`, `activation` and `units` (the output width, the
#'       unit the activation memory is counted in);}
#'     \item{`loss`}{the loss;}
#'     \item{`input_width`, `output_width`}{the first and the last width;}
#'     \item{`ops`}{a list with, for each layer, the ops it runs in a forward
#'       pass: `"matmul"`, then `"add"` (the bias), then its activation;}
#'     \item{`uncovered`}{what the model does not cover: `character(0)` here,
#'       every layer of a dense stack is modelled.}
#'   }
#'
#' @seealso [ag_model_spec()] for the same description read from a ggmlR
#'   model, [ag_training_memory()] for its peak memory.
#'
#' @examples
#' spec <- ag_dense_stack(c(784, 512, 512, 10), loss = "softmax_cross_entropy")
#' spec$layers
#' spec$ops[[1]]
#' ag_training_memory(spec, batch_size = 64)
#' @export
ag_dense_stack <- function(widths, activation = "relu",
                           loss = c("mse", "cross_entropy", "softmax_cross_entropy"),
                           bias = TRUE) {
  shapes <- ag_dense_shapes(widths, bias)
  activation <- match_choice(activation, c(registry_names("activations"), "none"), "activation")
  loss <- match_choice(loss, registry_names("losses"), "loss")
  widths <- as.double(widths)
  n <- length(widths) - 1L
  acts <- c(rep(activation, n - 1L), "none")
  layers <- layer_frame(
    type = rep("linear", n), inputs = widths[-(n + 1L)], outputs = widths[-1L],
    bias = rep(bias, n), activation = acts
  )
  ops <- lapply(acts, linear_ops, bias = bias)
  new_model_spec(shapes, layers, loss, widths[[1L]], widths[[n + 1L]], ops, character(0))
}
