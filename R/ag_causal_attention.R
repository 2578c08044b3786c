#' Describe an attention called with a causal mask
#'
#' `ag_sequential()` calls a ggmlR `ag_multihead_attention()` without a
#' causal mask. A decoder block of your own calls it as
#' `attn$forward(x, causal_mask = TRUE)`, and agmem cannot read that from the
#' block's `forward()`. Wrap the attention in `ag_causal_attention()` where you
#' describe the block by its layers in order, and [ag_model_spec()] models its
#' mask.
#'
#' ggmlR builds the mask for every head of every step: a `seq x seq` matrix of
#' zeros with `-Inf` above the diagonal, added to the head's scores, both kept
#' on the tape until the backward pass. agmem counts it as the op
#' `"attention_causal"`, one per head, whose units are the pairs of the
#' sequence, as the head's scores. It was measured on device `"cpu"` only.
#'
#' @param attention A ggmlR `ag_multihead_attention()` layer.
#' @return An object of class `"ag_causal_attention"` holding `attention`, for
#'   the list of layers given to [ag_model_spec()]. It describes; it does not
#'   train: give ggmlR the attention itself.
#' @seealso [ag_model_spec()], which reads it.
#' @examples
#' if (requireNamespace("ggmlR", quietly = TRUE)) {
#'   emb <- ggmlR::ag_embedding(2000L, 64L)
#'   attn <- ggmlR::ag_multihead_attention(64L, 4L)
#'   norm <- ggmlR::ag_layer_norm(64L)
#'   head <- ggmlR::ag_linear(64L, 2000L)
#'   # A block whose forward() calls attn$forward(x, causal_mask = TRUE):
#'   spec <- ag_model_spec(list(emb, ag_causal_attention(attn), norm, head),
#'                         loss = "softmax_cross_entropy")
#'   spec
#' }
#' @export
ag_causal_attention <- function(attention) {
  if (!inherits(attention, "ag_multihead_attention")) {
    stop_arg("`attention` must be a ggmlR ag_multihead_attention() layer, not ",
             describe_object(attention), ".")
  }
  structure(list(attention = attention), class = "ag_causal_attention")
}

#' @export
print.ag_causal_attention <- function(x, ...) {
  name <- x$attention[["name"]]
  cat("Causal mask on ", if (is.character(name) && length(name) == 1L) name else "an attention",
      "\n", sep = "")
  invisible(x)
}
