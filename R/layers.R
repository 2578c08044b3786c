# Layer readers: how agmem reads each ggmlR layer type it models, in one table, and what it does
# with the layers it does not (their parameters counted, their activations not). ag_model_spec()
# dispatches through layer_readers; every layer type of the registry has its reader here
# (tests/testthat/test-layers.R checks both ways).

# An attention as ggmlR makes it, or as ag_causal_attention() describes one.
attention_classes <- c("ag_multihead_attention", "ag_causal_attention")

# For each layer type of the registry, `is` (whether a ggmlR layer is of the type) and `read` (a
# function of the layer, its position i and `arg`, returning list(row, ops, tensors): its row of
# the layers table, its ops and its ag_param tensors; or list(reason) when this layer of the
# type cannot be modelled).
layer_readers <- list(
  linear = list(is = function(x) is_linear(x), read = function(...) read_linear(...)),
  batch_norm = list(is = function(x) inherits(x, "ag_batch_norm"),
                    read = function(...) read_norm(..., op = "batch_norm")),
  dropout = list(is = function(x) inherits(x, "ag_dropout"),
                 read = function(...) read_dropout(...)),
  layer_norm = list(is = function(x) inherits(x, "ag_layer_norm"),
                    read = function(...) read_norm(..., op = "layer_norm")),
  embedding = list(is = function(x) inherits(x, "ag_embedding"),
                   read = function(...) read_embedding(...)),
  attention = list(is = function(x) inherits(x, attention_classes),
                   read = function(...) read_attention(...)),
  flash_attention = list(is = function(x) inherits(x, "ag_flash_attention_call"),
                         read = function(...) read_flash(...)),
  checkpoint = list(is = function(x) inherits(x, "ag_checkpoint_segment"),
                    read = function(...) read_checkpoint(...))
)

# The reader of a layer: the first of layer_readers whose `is` accepts it, with its type as
# `type`; NULL when none does.
layer_reader <- function(layer) {
  for (type in names(layer_readers)) {
    if (layer_readers[[type]]$is(layer)) {
      return(c(layer_readers[[type]], type = type))
    }
  }
  NULL
}

# Whether x is a non-empty list of ag_param tensors (unclassed list, every element an ag_tensor).
is_tensor_list <- function(x) {
  # The first element decides for plain shapes at once, so that a list of a million shapes is
  # not walked in R before the C code reads it.
  is.list(x) && !is.object(x) && length(x) > 0L && inherits(x[[1L]], "ag_tensor") &&
    all(vapply(x, inherits, logical(1), what = "ag_tensor"))
}

# Whether x is a ggmlR ag_linear(): an unclassed list with the tensor W and the closure forward.
is_linear <- function(x) {
  is.list(x) && !is.object(x) && inherits(x[["W"]], "ag_tensor") && is.function(x[["forward"]])
}

# The layers of x in forward order: the layers of an ag_sequential, read through nested ones, or
# x itself as a single layer; a segment described by ag_checkpoint_segment() gives its layers,
# then itself (read as the op that marks it). Refuses anything else, naming `arg`.
flatten_layers <- function(x, arg, what, depth = 0L) {
  if (depth > 100L) {
    stop_arg("`", arg, "`: ag_sequential() models nest more than 100 deep.")
  }
  if (inherits(x, "ag_sequential")) {
    layers <- if (is.environment(x) || is.list(x)) x[["layers"]] else NULL
    if (!is.list(layers) || is.object(layers) || length(layers) == 0L) {
      stop_arg("`", arg, "` is an ag_sequential without a non-empty list in its `layers` field.")
    }
    return(do.call(c, lapply(layers, flatten_layers, arg = arg, what = what,
                             depth = depth + 1L)))
  }
  if (inherits(x, "ag_checkpoint_segment")) {
    return(c(flatten_layers(x$layers, arg, what, depth + 1L), list(x)))
  }
  if (is_layer(x)) {
    return(list(x))
  }
  if (is_layer_list(x)) {
    return(do.call(c, lapply(x, flatten_layers, arg = arg, what = what, depth = depth + 1L)))
  }
  stop_arg(what, ", not ", describe_object(x), ".")
}

# Whether x is a non-empty plain list of layers (a module described by its layers in order). The
# first element decides for plain shapes at once, as in is_tensor_list().
is_layer_list <- function(x) {
  is.list(x) && !is.object(x) && length(x) > 0L && is_layer(x[[1L]]) &&
    all(vapply(x, is_layer, logical(1)))
}

# Whether x looks like a ggmlR layer: an ag_linear(), an object of class "ag_layer" (every layer
# of R/ag_layers.R), an ag_sequential, an attention described by ag_causal_attention(), a call
# described by ag_flash_attention_call(), a segment described by ag_checkpoint_segment(), or an
# environment or a list with a forward() method.
is_layer <- function(x) {
  inherits(x, c("ag_layer", "ag_sequential", "ag_causal_attention",
                 "ag_flash_attention_call", "ag_checkpoint_segment")) ||
    ((is.environment(x) || (is.list(x) && !is.data.frame(x))) && !inherits(x, "ag_tensor") &&
      is.function(x[["forward"]]))
}

# The type of a layer for the layers table: its type in layer_readers ("linear" for an
# ag_linear()), else its class (or its type when it has none).
layer_type <- function(layer) {
  reader <- layer_reader(layer)
  if (!is.null(reader)) reader$type else if (is.object(layer)) class(layer)[[1L]] else typeof(layer)
}

# The type of a layer for messages, with ggmlR's own `name` field when it has one:
# "ag_dropout, dropout(0.5)".
layer_label <- function(layer) {
  name <- layer[["name"]]
  type <- layer_type(layer)
  if (is.character(name) && length(name) == 1L && !is.na(name)) paste0(type, ", ", name) else type
}

# An ag_linear() layer: list(row, ops, tensors), or list(reason) when its activation is not one
# agmem models. The activation is the `activation` variable of the forward closure's
# environment (R/autograd.R:1683-1705 of ggmlR 0.8.8.1), NULL meaning none.
read_linear <- function(layer, i, arg, ...) {
  w <- tensor_dims(layer[["W"]], paste0("layer ", i, "'s `W`"), arg)
  if (length(w) != 2L) {
    return(list(reason = paste0(
      "its weight `W` has ", length(w), " dimensions, not 2 (c(out, in)): not modelled"
    )))
  }
  b <- layer[["b"]]
  has_bias <- inherits(b, "ag_tensor")
  env <- environment(layer[["forward"]])
  act <- if (is.environment(env)) get0("activation", envir = env, inherits = FALSE) else NULL
  if (is.null(act)) {
    act <- "none"
  }
  if (!is.character(act) || length(act) != 1L || is.na(act) ||
    !act %in% c(registry_names("activations"), "none")) {
    shown <- if (is.character(act) && length(act) == 1L) paste0("\"", act, "\"") else "that"
    return(list(reason = paste0(
      "activation ", shown, " is not one agmem models: its activation memory is not ",
      "modelled (its parameters are counted)"
    )))
  }
  list(
    row = layer_frame("linear", w[[2L]], w[[1L]], has_bias, act),
    ops = linear_ops(act, has_bias),
    tensors = if (has_bias) list(layer[["W"]], b) else list(layer[["W"]])
  )
}

# An ag_batch_norm() or ag_layer_norm() layer (R/ag_layers.R:273-395 and 397-521 of ggmlR
# 0.8.8.1), `op` saying which: list(row, ops, tensors), its width the length of its `gamma`
# (c(width, 1)), or its `num_features` / `normalized_shape` when it has no gamma (a layer norm
# without elementwise_affine). A batch norm in eval mode (ag_eval(): frozen, its running
# statistics in place of the batch's, a lighter backward) is its own op, "batch_norm_eval"; a
# layer norm does the same in both modes.
read_norm <- function(layer, i, arg, op, ...) {
  type <- op
  if (op == "batch_norm" && !isTRUE(layer[["training"]])) {
    op <- "batch_norm_eval"
  }
  tensors <- layer_tensors(layer, i, arg)
  gamma <- layer[["gamma"]]
  width <- if (inherits(gamma, "ag_tensor")) {
    prod(tensor_dims(gamma, paste0("layer ", i, "'s `gamma`"), arg))
  } else {
    layer_width(layer[[if (type == "batch_norm") "num_features" else "normalized_shape"]], i, arg)
  }
  list(row = layer_frame(type, width, width, NA, NA_character_), ops = op, tensors = tensors)
}

# An ag_dropout() layer (R/ag_layers.R:173-195 of ggmlR 0.8.8.1): in training mode with a rate
# above 0 it draws a mask the size of its input and multiplies by it; otherwise its forward()
# returns its input, and it costs nothing. Its width is not its own: the previous layer's
# output (`width`, NA when that is not known), and list(reason) when the mask's size cannot be
# known.
read_dropout <- function(layer, i, arg, width = NA_real_) {
  rate <- layer[["rate"]]
  active <- isTRUE(layer[["training"]]) && !(is.numeric(rate) && length(rate) == 1L &&
                                                 !is.na(rate) && rate == 0)
  if (active && is.na(width)) {
    return(list(reason = paste0(
      "its mask is as wide as the layer before it, which agmem cannot read"
    )))
  }
  list(row = layer_frame("dropout", width, width, NA, NA_character_),
       ops = if (active) "dropout" else character(0), tensors = list())
}

# An ag_embedding() layer (R/ag_layers.R:523-580 of ggmlR 0.8.8.1): its table `weight` is
# c(dim, vocab). Its row has the vocabulary as `in` (the width of a one-hot input) and dim as
# `out`; its ops are the table (units: its dim x vocab scalars, once; every step's backward
# builds a dense dim x vocab gradient) and the lookup (units: dim per sample). The same in both
# modes.
read_embedding <- function(layer, i, arg, ...) {
  w <- tensor_dims(layer[["weight"]], paste0("layer ", i, "'s `weight`"), arg)
  if (length(w) != 2L) {
    return(list(reason = paste0(
      "its table `weight` has ", length(w), " dimensions, not 2 (c(dim, vocab)): not modelled"
    )))
  }
  list(row = layer_frame("embedding", w[[2L]], w[[1L]], NA, NA_character_),
       ops = c("embedding_table", "embedding"), tensors = list(layer[["weight"]]))
}

# An ag_multihead_attention() layer (R/ag_layers.R:681-781 of ggmlR 0.8.8.1), as an
# ag_sequential() calls it: self-attention over the columns of its input, so the sequence is the
# batch, without a causal mask. Its width is d_model (the rows of W_q); its ops are the
# constant matrices that slice the heads' rows ("attention_slices", d_model x d_model units,
# once), its projections ("attention", d_model per sample: Q, K, V, the heads' slices and
# outputs, W_o and the bias) and one "attention_head" per head (the head's
# scores, softmax and weights: one per pair of samples). With its attention dropout on (a rate
# above 0, in training mode: R/ag_layers.R:750-758), one "attention_dropout" per head more: the
# mask on the head's weights, one per pair of samples. With more than one head, the heads'
# concatenation (.ag_row_concat(), R/ag_layers.R:818-846): its constant matrices that place each
# head's rows ("attention_concat", d_model x d_model units, once) and, per head, a block of
# d_model rows and the sum it goes into ("attention_block", d_model per sample). An attention
# described by ag_causal_attention() is called with causal_mask = TRUE: one "attention_causal"
# per head more, the mask added to the head's scores (.ag_causal_mask(), R/ag_layers.R:860-870),
# one per pair of samples.
read_attention <- function(layer, i, arg, ...) {
  causal <- inherits(layer, "ag_causal_attention")
  if (causal) {
    layer <- layer[["attention"]]
  }
  w <- tensor_dims(layer[["W_q"]], paste0("layer ", i, "'s `W_q`"), arg)
  heads <- layer_width(layer[["n_heads"]], i, arg)
  rate <- layer[["dropout"]]
  dropout <- isTRUE(layer[["training"]]) && is.numeric(rate) && length(rate) == 1L &&
    !is.na(rate) && rate > 0
  list(row = layer_frame("attention", w[[2L]], w[[1L]], inherits(layer[["b_o"]], "ag_tensor"),
                         NA_character_),
       ops = c("attention_slices", "attention", rep("attention_head", heads),
               if (causal) rep("attention_causal", heads),
               if (dropout) rep("attention_dropout", heads),
               if (heads > 1) c("attention_concat", rep("attention_block", heads)) else
                 "attention_one_head"),
       tensors = layer_tensors(layer, i, arg))
}

# A call of ag_flash_attention() (R/ag_flash_attn.R:277-363 of ggmlR 0.8.8.1), described by
# ag_flash_attention_call(): on the CPU its heads split and joined in R around the fused op
# ("flash_attention", d_model per sample, whatever the heads) and, with causal = TRUE, the
# seq x seq mask it builds (.ag_flash_mask(), R/ag_flash_attn.R:83-96) and keeps for the
# backward ("flash_causal", one per pair of samples). It has no parameters.
read_flash <- function(layer, i, arg, ...) {
  d <- layer_width(layer[["d_model"]], i, arg)
  list(row = layer_frame("flash_attention", d, d, NA, NA_character_),
       ops = c("flash_attention", if (isTRUE(layer[["causal"]])) "flash_causal"),
       tensors = list())
}

# The mark of a segment run under ag_checkpoint() (R/ag_checkpoint.R:95-182 of ggmlR 0.8.8.1),
# described by ag_checkpoint_segment() and read after the segment's own layers: the op
# "checkpoint", the segment's output width per sample (`width`), which costs nothing of its own
# but R's nodes and sends backward() to the host (its record has no op), and one
# "checkpoint_layer" for each of the segment's layers after the first (the nodes of its replay
# grow with them). list(reason) when the segment's last layer is one agmem cannot read.
read_checkpoint <- function(layer, i, arg, width = NA_real_) {
  if (is.na(width)) {
    return(list(reason = "the segment's last layer is not one agmem reads"))
  }
  inner <- flatten_layers(layer$layers, arg, "the segment's layers")
  n <- sum(!vapply(inner, inherits, logical(1), what = "ag_checkpoint_segment"))
  list(row = layer_frame("checkpoint", width, width, NA, NA_character_),
       ops = c("checkpoint", rep("checkpoint_layer", max(n - 1L, 0L))), tensors = list())
}

# A layer's width or count from a field (`num_features`, `normalized_shape`, `n_heads`): a
# positive whole number; refuses anything else, naming `arg`.
layer_width <- function(w, i, arg) {
  if (!is_count(w)) {
    stop_arg("`", arg, "`: layer ", i, " has no readable width (a positive whole number).")
  }
  as.double(w)
}

# The ag_param tensors of a layer that is not covered: from its parameters() (or params())
# method, the ggmlR contract for layers (R/ag_layers.R:18-32 of ggmlR 0.8.8.1); or else the
# ag_tensor fields with requires_grad TRUE, in the order of their names.
layer_tensors <- function(layer, i, arg) {
  holder <- is.environment(layer) || is.list(layer)
  method <- if (holder) if_null(layer[["parameters"]], layer[["params"]]) else NULL
  if (is.function(method)) {
    params <- tryCatch(method(), error = function(e) {
      stop_arg("`", arg, "`: the parameters() method of layer ", i, " failed: ",
               conditionMessage(e))
    })
    if (length(params) == 0L) {
      return(list())
    }
    if (!is.list(params) || !all(vapply(params, inherits, logical(1), what = "ag_tensor"))) {
      stop_arg("`", arg, "`: the parameters() method of layer ", i,
               " must return a list of ag_param tensors.")
    }
    return(unname(params))
  }
  if (!holder) {
    return(list())
  }
  fields <- if (is.environment(layer)) mget(sort(ls(layer)), envir = layer) else layer
  keep <- vapply(fields, function(f) inherits(f, "ag_tensor") && isTRUE(f[["requires_grad"]]),
                 logical(1))
  unname(fields[keep])
}

# The dimensions of an ag_tensor as doubles: those of its `data` (a vector counts as one
# column, as ggmlR makes it), or its `shape` field when the value lives on the device. Refuses a
# tensor with neither, or with dimensions that are not positive whole numbers, naming `arg`.
tensor_dims <- function(t, what, arg) {
  data <- t[["data"]]
  dims <- if (!is.null(data)) if_null(dim(data), c(length(data), 1)) else t[["shape"]]
  if (!is.numeric(dims) || length(dims) == 0L || anyNA(dims) ||
    any(!is.finite(dims) | dims < 1 | dims != floor(dims))) {
    stop_arg("`", arg, "`: ", what, " has no readable shape (neither `data` nor `shape` ",
             "gives positive whole dimensions).")
  }
  as.double(dims)
}

# The shapes of the tensors, each tensor counted once however often it appears (ggmlR's
# optimizers keep a shared tensor once: .ag_opt_unique_params).
unique_shapes <- function(tensors, arg) {
  seen <- list()
  shapes <- list()
  for (k in seq_along(tensors)) {
    t <- tensors[[k]]
    if (any(vapply(seen, identical, logical(1), t))) next
    seen[[length(seen) + 1L]] <- t
    shapes[[length(shapes) + 1L]] <- tensor_dims(t, paste0("parameter ", k), arg)
  }
  shapes
}

# The ops of one ag_linear() layer in its forward pass (R/autograd.R:1694-1702 of ggmlR 0.8.8.1):
# the product, the bias, then the activation unless it is "none".
linear_ops <- function(activation, bias = TRUE) {
  c("matmul", if (bias) "add", if (activation != "none") activation)
}
