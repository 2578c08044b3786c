#' Describe a ggmlR model for the training-memory model
#'
#' Reads, from a ggmlR autograd model, what [ag_training_memory()] needs: the
#' shapes of its parameters and, layer by layer, the ops whose activations the
#' gradient tape keeps. ggmlR is not needed: the objects are read field by
#' field, and recognised by their classes.
#'
#' @param x A ggmlR model: an `ag_sequential()` (nested ones are read through),
#'   a single layer such as an `ag_linear()`, a list of layers in forward order
#'   (a module of your own described by its layers, an attention it calls with a
#'   causal mask as [ag_causal_attention()], a call of `ag_flash_attention()` as
#'   [ag_flash_attention_call()], a segment it runs under `ag_checkpoint()` as
#'   [ag_checkpoint_segment()]), or a list of `ag_param()`
#'   tensors (such as `model$parameters()`). An `"ag_model_spec"` (from
#'   [ag_dense_stack()] or from this function) is returned as it is.
#' @param loss The loss the model is trained with: `"mse"`,
#'   `"cross_entropy"` or `"softmax_cross_entropy"` (see [ag_dense_stack()]).
#'
#' @details
#' **Covered.** An `ag_linear()` layer (a list with the tensors `W`, of
#' shape `c(out, in)`, and `b`, and the closure `forward` whose environment
#' holds `activation`) is modelled: a product, a bias and its activation,
#' `"relu"`, `"sigmoid"`, `"tanh"`, `"softmax"` or none. So are
#' `ag_batch_norm()` (in training mode; in eval mode, frozen, an op of its
#' own), `ag_dropout()` and `ag_layer_norm()`, each one op of its width (the
#' length of its `gamma`; for a dropout, the output width of the layer before
#' it), and `ag_embedding()`, two ops: its
#' table (its `dim x vocab` scalars, whose dense gradient its backward builds
#' every step) and its lookup (`dim` per sample; as the first layer it takes
#' one token index per sample). `ag_multihead_attention()` as an
#' `ag_sequential()` calls it (self-attention over the batch as its sequence,
#' no causal mask) is its projections (`d_model` per sample), one op per head,
#' whose scores grow with the square of the sequence, and with more than one
#' head their concatenation (`d_model` per sample and head); with its attention
#' dropout on, one op more per head, the mask on the head's weights (the same
#' code as `ag_dropout()`, on every pair of the sequence); called with
#' `causal_mask = TRUE` by a module of your own and described by
#' [ag_causal_attention()], one op more per head, the mask added to the head's
#' scores (on every pair of the sequence). A call of ggmlR's fused
#' `ag_flash_attention()` in a block of your own, described by
#' [ag_flash_attention_call()], is one op of `d_model` per sample, and with
#' `causal = TRUE` one more, its mask (on every pair of the sequence). An
#' attention of one head has one op more, `"attention_one_head"` (its head goes
#' to the output projection without a concatenation, which the device's pass
#' pool shows). On device `"gpu"` every op of the attentions is one ggmlR's
#' graph backward takes, so the step stays on the device unless another layer
#' sends it to the host. A segment run under `ag_checkpoint()`, described by
#' [ag_checkpoint_segment()], is its layers, counted as if not checkpointed
#' (more than it uses where the checkpoint saves), and the op `"checkpoint"`
#' (with one `"checkpoint_layer"` for each of its layers after the first),
#' which costs nothing of its own but R's nodes and sends `backward()` to the
#' host.
#' On device `"gpu"` a batch norm, a layer norm, an embedding or a checkpoint
#' sends ggmlR's `backward()` to the host (their records have no op): the pass
#' pool then
#' holds the forward alone (an embedding's table without the copy a matmul
#' makes of a weight), and the host is counted as on device `"cpu"`, with
#' figures of its own for what stays on the device (the forward's values, the
#' weights and Adam's moments). A dropout alone
#' keeps the graph backward there, with figures of its own. A
#' dropout of rate 0 or in eval mode returns its input and costs nothing.
#' The layers must chain: a layer that takes another width than the layer
#' before it gives is refused (ggmlR could not run the model), unless agmem
#' cannot read the layer before it or the layer is an embedding.
#'
#' **Not covered.** Any other layer (a module of your own, whose `forward()`
#' agmem cannot read; agmem says how to describe it by its layers), a dropout
#' after a layer agmem cannot read,
#' or an `ag_linear()` with an activation agmem does not model: its parameters are counted (from its
#' `parameters()` method, or else from the `ag_param` tensors among its
#' fields), but its activation memory is not, and it is listed in `uncovered`
#' with the reason. A list of `ag_param` has no layers: only its parameters
#' are counted. When the last layer is not covered, the loss is not modelled
#' either. [ag_training_memory()] reports everything in `uncovered`: its peak
#' is then a lower bound, and the planners refuse the model unless
#' `lower_bound = TRUE`.
#'
#' A tensor shared by several layers is counted once, as ggmlR's optimizers
#' keep it once. A tensor's shape is the dimensions of its `data`, or its
#' `shape` field when its value lives on the device.
#'
#' @return A list of class `"ag_model_spec"`, as [ag_dense_stack()] describes:
#'   `shapes`, `layers` (one row per layer: its type, `"linear"`,
#'   `"batch_norm"`, `"dropout"`, `"layer_norm"`, `"embedding"` (whose `in`
#'   is its vocabulary), `"attention"` or `"flash_attention"` (a call described
#'   by [ag_flash_attention_call()]), or the class of a layer that is not
#'   covered, with `NA`
#'   in its other columns), `loss`, `input_width`,
#'   `output_width` (`NA` when not known), `ops` (`character(0)` for a layer
#'   that is not covered) and `uncovered`.
#'
#' @seealso [ag_dense_stack()] to describe a dense stack without ggmlR,
#'   [ag_training_memory()] for the peak memory.
#'
#' @examples
#' # A spec passes through unchanged:
#' spec <- ag_dense_stack(c(4, 16, 2))
#' identical(ag_model_spec(spec), spec)
#'
#' if (requireNamespace("ggmlR", quietly = TRUE)) {
#'   model <- ggmlR::ag_sequential(
#'     ggmlR::ag_linear(4L, 16L, activation = "relu"),
#'     ggmlR::ag_batch_norm(16L),
#'     ggmlR::ag_dropout(0.5),
#'     ggmlR::ag_linear(16L, 2L)
#'   )
#'   spec <- ag_model_spec(model)
#'   spec
#'   spec$uncovered # nothing: every layer is modelled on the CPU
#' }
#' @export
ag_model_spec <- function(x, loss = c("mse", "cross_entropy", "softmax_cross_entropy")) {
  as_model_spec(x, "x", loss)
}

# The layers data frame of a spec; the column `in` is named as the brief and ggmlR say.
layer_frame <- function(type = character(0), inputs = numeric(0), outputs = numeric(0),
                        bias = logical(0), activation = character(0)) {
  data.frame(
    type = type, `in` = inputs, out = outputs, bias = bias, activation = activation,
    units = outputs, stringsAsFactors = FALSE, check.names = FALSE
  )
}

new_model_spec <- function(shapes, layers, loss, input_width, output_width, ops, uncovered) {
  structure(list(
    shapes = shapes, layers = layers, loss = loss, input_width = input_width,
    output_width = output_width, ops = ops, uncovered = uncovered
  ), class = "ag_model_spec")
}

# The spec of x, where x is a spec (checked and returned), or a ggmlR model. `arg` names the
# argument in messages; `loss` is the loss for a model read from ggmlR.
as_model_spec <- function(x, arg, loss = registry_names("losses")) {
  loss <- match_choice(loss, registry_names("losses"), "loss")
  if (inherits(x, "ag_model_spec")) {
    return(check_model_spec(x, arg))
  }
  what <- paste0(
    "`", arg, "` must be an ag_model_spec (from ag_dense_stack() or ag_model_spec()), a ggmlR ",
    "ag_sequential(), a ggmlR layer, a list of layers or a list of ag_param tensors"
  )
  if (inherits(x, "ag_tensor")) {
    x <- list(x)
  }
  if (is_tensor_list(x)) {
    shapes <- unique_shapes(x, arg)
    return(new_model_spec(
      shapes, layer_frame(), loss, NA_real_, NA_real_, list(),
      paste(
        "the model is a list of ag_param tensors: only its parameters are counted, the",
        "activations of its layers and its loss are not modelled"
      )
    ))
  }
  layers <- flatten_layers(x, arg, what)
  read_layers(layers, loss, arg)
}

# The spec of a flat list of layers.
read_layers <- function(layers, loss, arg) {
  n <- length(layers)
  rows <- vector("list", n)
  ops <- vector("list", n)
  tensors <- list()
  uncovered <- character(0)
  width <- NA_real_
  for (i in seq_len(n)) {
    layer <- layers[[i]]
    reader <- layer_reader(layer)
    got <- if (is.null(reader)) NULL else reader$read(layer, i, arg, width = width)
    if (!is.null(got$row)) {
      check_chain(got$row, width, i, arg)
    }
    width <- if (is.null(got$row)) NA_real_ else got$row$out
    if (is.null(got$row)) {
      params <- layer_tensors(layer, i, arg)
      label <- layer_label(layer)
      count <- length(params)
      reason <- if_null(got$reason, paste0(
        "its activation memory is not modelled (", count, " parameter tensor",
        if (count != 1L) "s", " counted)", if (!inherits(layer, "ag_layer")) module_hint()
      ))
      uncovered <- c(uncovered, paste0("layer ", i, " (", label, "): ", reason))
      rows[[i]] <- layer_frame(layer_type(layer), NA_real_, NA_real_, NA, NA_character_)
      ops[[i]] <- character(0)
      tensors <- c(tensors, params)
    } else {
      rows[[i]] <- got$row
      ops[[i]] <- got$ops
      tensors <- c(tensors, got$tensors)
    }
  }
  if (length(tensors) == 0L) {
    stop_arg("`", arg, "` has no parameters: no layer holds an ag_param tensor.")
  }
  frame <- do.call(rbind, rows)
  rownames(frame) <- NULL
  output_width <- frame$out[[n]]
  if (is.na(output_width)) {
    uncovered <- c(uncovered, paste0(
      "loss \"", loss, "\": not modelled, the last layer is not one agmem covers, so the ",
      "output width is unknown"
    ))
  }
  # An embedding first takes one token index per sample.
  input_width <- if (identical(frame$type[[1L]], "embedding")) 1 else frame$`in`[[1L]]
  new_model_spec(unique_shapes(tensors, arg), frame, loss, input_width, output_width, ops,
                 uncovered)
}

# Refuses layer i, read as `row`, when its input width is not `width`, the output width of the
# layer before it (both known): ggmlR's forward would fail on the product of their matrices, so a
# model that cannot train gets no figure. An embedding takes token indices, not the layer before.
check_chain <- function(row, width, i, arg) {
  takes <- row[["in"]]
  if (is.na(width) || is.na(takes) || identical(row$type, "embedding") || takes == width) {
    return(invisible(NULL))
  }
  stop_arg("`", arg, "`: layer ", i, " (", row$type, ") takes ", format_count(takes),
           " inputs, but layer ", i - 1L, " gives ", format_count(width),
           " outputs, so ggmlR cannot run the model; the layers must chain.")
}

# The spec as the model sees it on `device` in `dtype`: the ops of a layer that the device's
# rules do not model, on the path backward() takes for the model (spec_backward()), are
# dropped, and the layer is listed in `uncovered` (its parameters counted, its activations not).
spec_on_device <- function(spec, device, dtype = "f32") {
  known <- registry_names("op_devices")
  paths <- registry_names("op_paths")
  backward <- spec_backward(spec, dtype)
  for (i in seq_along(spec$ops)) {
    ops <- spec$ops[[i]]
    # An op the registry does not know is left for the C code to refuse.
    ops <- ops[vapply(ops, function(op) !is.null(known[[op]]), logical(1))]
    elsewhere <- ops[vapply(ops, function(op) !device %in% known[[op]], logical(1))]
    other_path <- setdiff(ops[vapply(ops, function(op) {
      !backward %in% paths[[op]][[device]]
    }, logical(1))], elsewhere)
    if (length(elsewhere) + length(other_path) == 0L) next
    spec$ops[[i]] <- character(0)
    why <- c(
      if (length(elsewhere)) paste(format_ops(elsewhere), "measured on device \"cpu\" only"),
      if (length(other_path) && backward == "graph") {
        paste(format_ops(other_path), "measured there only with a batch norm, a layer norm or an",
              "embedding in the model, which sends backward() to the host")
      } else if (length(other_path)) {
        paste(format_ops(other_path), "measured there only with the graph backward, and this",
              "model's", if (identical(dtype, "f32")) "layers send" else "dtype sends",
              "backward() to the host")
      }
    )
    spec$uncovered <- c(spec$uncovered, sprintf(
      "layer %d (%s): not modelled on device \"%s\" (%s; its parameters counted)",
      i, spec$layers$type[[i]], device, paste(why, collapse = "; ")
    ))
  }
  spec
}

# The path ggmlR's backward() takes for the model of `spec` in `dtype`: "host" when one of its
# ops is recorded without an op (a batch norm, a layer norm or an embedding: the R closures of
# the whole tape run on the host) or the dtype is one the graph backward does not run in (f16
# and bf16: the registry's dtype_host_backward), "graph" otherwise.
spec_backward <- function(spec, dtype = "f32") {
  ops <- registry_names("ops")
  host <- any(ops$host_backward[ops$name %in% unlist(spec$ops)]) ||
    registry_names("dtype_host_backward")[[dtype]]
  if (host) "host" else "graph"
}

# Ops as text, an op repeated in a run (an attention's heads) written once with its count:
# "attention_slices, attention, attention_head x4".
format_ops <- function(ops) {
  r <- rle(ops)
  paste(ifelse(r$lengths > 1L, paste0(r$values, " x", r$lengths), r$values), collapse = ", ")
}

# What to do with a module of the user's own (a list or environment with a forward() that is not
# a ggmlR layer): agmem cannot read what its forward() does.
module_hint <- function() {
  paste0(
    "; it is a module of your own, whose forward() agmem cannot read: if it applies ggmlR ",
    "layers one after the other, describe it by those layers in order, ",
    "ag_model_spec(list(<layer 1>, <layer 2>, ...)), an attention it calls with ",
    "causal_mask = TRUE as ag_causal_attention(<attention>), a call of ag_flash_attention() ",
    "as ag_flash_attention_call(<d_model>, <n_heads>, <causal>), a segment it runs under ",
    "ag_checkpoint() as ag_checkpoint_segment(<its layers>)"
  )
}

# Checks that a spec has the fields, types and lengths ag_training_memory() reads; returns it.
check_model_spec <- function(x, arg) {
  bad <- function(why) stop_arg("`", arg, "` is a malformed ag_model_spec: ", why, ".")
  needed <- c("shapes", "layers", "loss", "input_width", "output_width", "ops", "uncovered")
  if (!is.list(x) || !all(needed %in% names(x))) {
    bad(paste("it needs the fields", paste(needed, collapse = ", ")))
  }
  layers <- x$layers
  if (!is.data.frame(layers) || !is.numeric(layers$units)) {
    bad("`layers` must be a data frame with a numeric `units` column")
  }
  if (!is.list(x$ops) || length(x$ops) != nrow(layers) ||
    !all(vapply(x$ops, is.character, logical(1)))) {
    bad("`ops` must be a list of character vectors, one per row of `layers`")
  }
  if (!is.character(x$loss) || length(x$loss) != 1L || !x$loss %in% registry_names("losses")) {
    bad("`loss` must be one of the losses ag_dense_stack() accepts")
  }
  if (!is.numeric(x$output_width) || length(x$output_width) != 1L) {
    bad("`output_width` must be a single number (NA when not known)")
  }
  if (!is.character(x$uncovered)) {
    bad("`uncovered` must be a character vector")
  }
  x
}

# The ops and units the C model takes, in forward order: the data on the input width when that
# is known, every op of every layer, with the layer's units (a parameter table's: its scalars),
# then the loss on the output width when that is known.
spec_ops <- function(spec) {
  ops <- unlist(spec$ops, use.names = FALSE)
  units <- rep(as.double(spec$layers$units), lengths(spec$ops))
  # A parameter table's units are its scalars: its layer's `in` times `out`; an attention
  # head's, one per pair of samples (the C code counts them per batch squared).
  kinds <- registry_names("ops")
  table <- ops %in% kinds$name[kinds$kind == "table"]
  if (any(table)) {
    layers <- spec$layers
    units[table] <- rep(as.double(layers[["in"]]) * as.double(layers$out),
                        lengths(spec$ops))[table]
  }
  units[ops %in% kinds$name[kinds$kind == "pairs"]] <- 1
  input <- spec$input_width
  if (is.numeric(input) && length(input) == 1L && !is.na(input)) {
    ops <- c("input", ops)
    units <- c(as.double(input), units)
  }
  if (!is.na(spec$output_width)) {
    ops <- c(ops, loss_op(spec$loss))
    units <- c(units, as.double(spec$output_width))
  }
  list(ops = if (is.null(ops)) character(0) else ops, units = units)
}

#' Format and print a model description
#'
#' A short description of an `"ag_model_spec"`: the parameter count, the
#' input and output widths, the loss, one line per layer (its type, widths,
#' bias, activation and ops) and the layers whose activations agmem does not
#' model.
#'
#' @param x An `"ag_model_spec"` from [ag_dense_stack()] or [ag_model_spec()].
#' @param ... Ignored.
#' @return `format()`: a character vector, one element per line. `print()`:
#'   `x`, invisibly, after writing those lines.
#' @examples
#' ag_dense_stack(c(784, 512, 10), loss = "softmax_cross_entropy")
#' @export
format.ag_model_spec <- function(x, ...) {
  check_model_spec(x, "x")
  params <- sum(vapply(x$shapes, function(s) prod(as.double(s)), 0))
  layers <- x$layers
  ops <- vapply(x$ops, function(o) if (length(o) == 0L) "-" else format_ops(o), "")
  dash <- function(v) ifelse(is.na(v) | v == "NA", "-", v)
  table <- data.frame(
    layer = seq_len(nrow(layers)), type = layers$type,
    `in` = dash(format_count_table(layers[["in"]])), out = dash(format_count_table(layers$out)),
    bias = dash(ifelse(layers$bias, "yes", "no")), activation = dash(layers$activation),
    ops = ops, check.names = FALSE, stringsAsFactors = FALSE
  )
  lines <- c(
    sprintf("Model: %d layer%s, %s parameters, input width %s, output width %s, loss %s",
            nrow(layers), if (nrow(layers) == 1L) "" else "s", format_count_table(params),
            format_count_table(x$input_width), format_count_table(x$output_width), x$loss),
    if (nrow(layers) > 0L) utils::capture.output(print(table, row.names = FALSE))
  )
  if (length(x$uncovered) > 0L) {
    lines <- c(lines, paste0(
      "Not modelled (parameters counted, activations not): ",
      paste(x$uncovered, collapse = ", ")
    ))
  }
  lines
}

#' @rdname format.ag_model_spec
#' @export
print.ag_model_spec <- function(x, ...) {
  cat(format(x), sep = "\n")
  invisible(x)
}
