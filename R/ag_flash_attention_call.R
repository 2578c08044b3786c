#' Describe a call to ggmlR's fused attention
#'
#' ggmlR's `ag_flash_attention(q, k, v, n_heads, causal = ...)` computes every
#' head of an attention in one fused op; a block of your own calls it between
#' its projections, as ggmlR's documentation suggests. agmem cannot read the
#' block's `forward()`: describe the block by its layers in order, with
#' `ag_flash_attention_call()` where the call is. For a block whose Q, K and V
#' come from three `ag_linear(d, d)` and whose output goes through a fourth:
#' `list(proj_q, proj_k, proj_v, ag_flash_attention_call(d, heads), proj_o)`.
#'
#' On device `"cpu"` the call splits Q, K and V into their heads in R, runs
#' the fused op in a ggml context of its own, and keeps the split copies for
#' the backward pass, whose gradients come back the same way: agmem counts it
#' as the op `"flash_attention"`, `d_model` units per sample, whatever the
#' heads. With `causal = TRUE`, ggmlR builds a `seq x seq` mask for the call,
#' kept for the backward pass: one op more, `"flash_causal"`, whose units are
#' the pairs of the sequence. On device `"gpu"` the call runs resident: the
#' fused op and its gradients in the pass pool, the mask in f16.
#'
#' @param d_model The rows of `q`, `k` and `v` (the block's width): a positive
#'   whole number.
#' @param n_heads The heads, a positive whole number that divides `d_model`
#'   (as ggmlR requires).
#' @param causal `TRUE` when the block calls it with `causal = TRUE`.
#' @return An object of class `"ag_flash_attention_call"`, for the list of
#'   layers given to [ag_model_spec()]. It describes; it does not compute. It
#'   has no parameters: describe the projections by their own layers (a product
#'   by a weight of your own, without bias, is close to an `ag_linear()` of the
#'   same shape, whose bias agmem counts too: the safe side).
#' @seealso [ag_model_spec()], which reads it; [ag_causal_attention()] for
#'   `ag_multihead_attention()` called with a causal mask.
#' @examples
#' if (requireNamespace("ggmlR", quietly = TRUE)) {
#'   proj <- lapply(1:4, function(i) ggmlR::ag_linear(64L, 64L))
#'   # A block whose forward() is
#'   #   att <- ag_flash_attention(proj[[1]]$forward(x), proj[[2]]$forward(x),
#'   #                             proj[[3]]$forward(x), n_heads = 4L, causal = TRUE)
#'   #   proj[[4]]$forward(att)
#'   spec <- ag_model_spec(c(proj[1:3], list(ag_flash_attention_call(64, 4, causal = TRUE)),
#'                           proj[4]))
#'   spec
#' }
#' @export
ag_flash_attention_call <- function(d_model, n_heads, causal = FALSE) {
  whole <- function(x, arg) {
    if (is.object(x) || !is_count(x)) {
      stop_arg("`", arg, "` must be a single positive whole number.")
    }
    as.double(x)
  }
  d_model <- whole(d_model, "d_model")
  n_heads <- whole(n_heads, "n_heads")
  if (d_model %% n_heads != 0) {
    stop_arg("`n_heads` must divide `d_model` (", format_count(d_model), " is not a multiple of ",
             format_count(n_heads), "), as ag_flash_attention() requires.")
  }
  check_flag(causal, "causal")
  structure(list(d_model = d_model, n_heads = n_heads, causal = causal),
            class = "ag_flash_attention_call")
}

#' @export
print.ag_flash_attention_call <- function(x, ...) {
  cat("Call of ag_flash_attention(): d_model ", format_count(x$d_model), ", ",
      format_count(x$n_heads), if (x$n_heads == 1) " head" else " heads",
      if (isTRUE(x$causal)) ", causal" else "", "\n", sep = "")
  invisible(x)
}
