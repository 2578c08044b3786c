#' Describe a ggmlR model for the training-memory model
#'
#' Reads, from a ggmlR autograd model, what [ag_training_memory()] needs: the
#' shapes of its parameters and, layer by layer, the ops whose activations the
#' gradient tape keeps. ggmlR is not needed: the objects are read field by
#' field, and recognised by their classes.
#'
#' @param x A ggmlR model: an `ag_sequential()` (nested ones are read through),
#'   a single layer such as an `ag_linear()`, or a list of `ag_param()`
#'   tensors (such as `model$parameters()`). An `"ag_model_spec"` (from
#'   [ag_dense_stack()] or from this function) is returned as it is.
#' @param loss The loss the model is trained with: `"mse"`,
#'   `"cross_entropy"` or `"softmax_cross_entropy"` (see [ag_dense_stack()]).
#'
#' @details
#' **Covered.** An `ag_linear()` layer (a list with the tensors `W`, of
#' shape `c(out, in)`, and `b`, and the closure `forward` whose environment
#' holds `activation`) is modelled: a product, a bias and its activation,
#' `"relu"`, `"sigmoid"`, `"tanh"`, `"softmax"` or none.
#'
#' **Not covered.** Any other layer (`ag_embedding()`, `ag_layer_norm()`,
#' `ag_batch_norm()`, `ag_multihead_attention()`, `ag_dropout()`, a layer of
#' your own, ...), or an `ag_linear()` with an activation agmem does not model:
#' its parameters are counted (from its `parameters()` method, or else from the
#' `ag_param` tensors among its fields), but its activation memory is not, and
#' it is listed in `uncovered` with the reason. A list of `ag_param` has no
#' layers: only its parameters are counted. When the last layer is not
#' covered, the loss is not modelled either. [ag_training_memory()] reports
#' everything in `uncovered`: its peak is then a lower bound.
#'
#' A tensor shared by several layers is counted once, as ggmlR's optimizers
#' keep it once. A tensor's shape is the dimensions of its `data`, or its
#' `shape` field when its value lives on the device.
#'
#' @return A list of class `"ag_model_spec"`, as [ag_dense_stack()] describes:
#'   `shapes`, `layers` (one row per layer; `NA` in the columns of a layer that
#'   is not covered, and the layer's class in `type`), `loss`, `input_width`,
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
#'     ggmlR::ag_dropout(0.5),
#'     ggmlR::ag_linear(16L, 2L)
#'   )
#'   spec <- ag_model_spec(model)
#'   spec$layers
#'   spec$uncovered
#' }
#' @export
ag_model_spec <- function(x, loss = c("mse", "cross_entropy", "softmax_cross_entropy")) {
  as_model_spec(x, "x", loss)
}

# The losses the model knows; the op of loss "mse" is "loss_mse" in the rule table.
model_losses <- c("mse", "cross_entropy", "softmax_cross_entropy")

# The activations of ggmlR's ag_linear() (R/autograd.R:1696-1701 of ggmlR 0.8.8.1) that agmem
# models; NULL there means "none".
linear_activations <- c("relu", "sigmoid", "tanh", "softmax", "none")

# match.arg() semantics for a single choice (the full vector of choices means the first; an
# unambiguous partial name is completed), with a message that names `arg` and lists the choices.
# A shared validator: a candidate for R/validate.R.
match_choice <- function(x, choices, arg) {
  if (identical(x, choices)) {
    return(choices[[1L]])
  }
  expected <- paste0(
    "`", arg, "` must be one of ",
    paste0("\"", choices[-length(choices)], "\"", collapse = ", "),
    " or \"", choices[[length(choices)]], "\""
  )
  if (!is.character(x) || is.object(x) || length(x) != 1L || is.na(x)) {
    stop_arg(expected, ".")
  }
  i <- pmatch(x, choices)
  if (is.na(i)) {
    stop_arg(expected, ", not \"", x, "\".")
  }
  choices[[i]]
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
as_model_spec <- function(x, arg, loss = model_losses) {
  loss <- match_choice(loss, model_losses, "loss")
  if (inherits(x, "ag_model_spec")) {
    return(check_model_spec(x, arg))
  }
  what <- paste0(
    "`", arg, "` must be an ag_model_spec (from ag_dense_stack() or ag_model_spec()), a ggmlR ",
    "ag_sequential(), a ggmlR layer or a list of ag_param tensors"
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
# x itself as a single layer. Refuses anything else, naming `arg`.
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
  if (is_layer(x)) {
    return(list(x))
  }
  if (is.list(x) && !is.object(x) && length(x) > 0L && all(vapply(x, is_layer, logical(1)))) {
    return(do.call(c, lapply(x, flatten_layers, arg = arg, what = what, depth = depth + 1L)))
  }
  stop_arg(what, ", not ", describe_object(x), ".")
}

# Whether x looks like a ggmlR layer: an ag_linear(), an object of class "ag_layer" (every layer
# of R/ag_layers.R), an ag_sequential, or an environment or a list with a forward() method.
is_layer <- function(x) {
  inherits(x, c("ag_layer", "ag_sequential")) ||
    ((is.environment(x) || (is.list(x) && !is.data.frame(x))) && !inherits(x, "ag_tensor") &&
      is.function(x[["forward"]]))
}

# What x is, for a message: its class, or its type.
describe_object <- function(x) {
  if (is.object(x)) paste0("an object of class \"", class(x)[[1L]], "\"") else typeof(x)
}

# The spec of a flat list of layers.
read_layers <- function(layers, loss, arg) {
  n <- length(layers)
  rows <- vector("list", n)
  ops <- vector("list", n)
  tensors <- list()
  uncovered <- character(0)
  for (i in seq_len(n)) {
    layer <- layers[[i]]
    got <- if (is_linear(layer)) read_linear(layer, i, arg) else NULL
    if (is.null(got$row)) {
      params <- layer_tensors(layer, i, arg)
      label <- layer_label(layer)
      count <- length(params)
      reason <- if_null(got$reason, paste0(
        "its activation memory is not modelled (", count, " parameter tensor",
        if (count != 1L) "s", " counted)"
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
  new_model_spec(unique_shapes(tensors, arg), frame, loss, frame$`in`[[1L]], output_width, ops,
                 uncovered)
}

# The type of a layer for the layers table: "linear" for an ag_linear(), else its class (or
# its type when it has none).
layer_type <- function(layer) {
  if (is_linear(layer)) "linear" else if (is.object(layer)) class(layer)[[1L]] else typeof(layer)
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
read_linear <- function(layer, i, arg) {
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
    !act %in% linear_activations) {
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
  if (!is.character(x$loss) || length(x$loss) != 1L || !x$loss %in% model_losses) {
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
# is known, every op of every layer, with the layer's units, then the loss on the output width
# when that is known.
spec_ops <- function(spec) {
  ops <- unlist(spec$ops, use.names = FALSE)
  units <- rep(as.double(spec$layers$units), lengths(spec$ops))
  input <- spec$input_width
  if (is.numeric(input) && length(input) == 1L && !is.na(input)) {
    ops <- c("input", ops)
    units <- c(as.double(input), units)
  }
  if (!is.na(spec$output_width)) {
    ops <- c(ops, paste0("loss_", spec$loss))
    units <- c(units, as.double(spec$output_width))
  }
  list(ops = if (is.null(ops)) character(0) else ops, units = units)
}

# a, or b when a is NULL.
if_null <- function(a, b) if (is.null(a)) b else a

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
  ops <- vapply(x$ops, function(o) if (length(o)) paste(o, collapse = ", ") else "-", "")
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
