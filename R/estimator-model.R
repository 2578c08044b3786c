# The estimator of ag_training_memory()'s model: a model description (an ag_model_spec, or a
# ggmlR model read by ag_model_spec()) on a device and dtype, planned on its host peak on the
# CPU and its device peak on the GPU.

# Whether x is a model to read with as_model_spec(): a spec, or a ggmlR model (a tensor, a
# sequential, a layer, a list of layers or a list of tensors).
is_model <- function(x) {
  inherits(x, c("ag_model_spec", "ag_tensor", "ag_sequential", "ag_layer")) ||
    is_tensor_list(x) || is_layer(x) || is_layer_list(x)
}

# A model estimator for x on `device` and `dtype`, with the settings of R's collector it plans
# for (`collector`, collector_settings()); refuses activation_frac (`given`). A model
# with parts agmem does not model is refused (agmem_error_unmodelled) unless `lower_bound` is
# TRUE, and then planned on what is modelled, with a warning; a model without layers (a list of
# ag_param tensors) is refused either way, since nothing says how its memory grows with the batch.
model_estimator <- function(x, device, dtype, given, arg, lower_bound = FALSE, steps = 100,
                            data_size = 0) {
  refuse_frac(given, "a model")
  check_flag(lower_bound, "lower_bound")
  check_ggmlr_version()
  spec <- spec_on_device(as_model_spec(x, arg), device, dtype)
  if (nrow(spec$layers) == 0L) {
    abort(
      "`", arg, "` is a list of ag_param tensors, which has no layers: agmem cannot tell how its ",
      "memory grows with the batch. Plan the model itself (its ag_sequential(), or ",
      "ag_model_spec() of it), measure it with ag_measure_training_memory(), or give its shapes ",
      "as plain shapes for ggmlR's formula.",
      class = "unmodelled"
    )
  }
  if (length(spec$uncovered) > 0L) {
    if (!lower_bound) {
      abort(
        "`", arg, "` has parts agmem does not model, whose activations would not be counted: ",
        paste(spec$uncovered, collapse = "; "), ". Plan with `lower_bound = TRUE` to accept a ",
        "lower bound, or measure the step with ag_measure_training_memory().",
        class = "unmodelled"
      )
    }
    warn_lower_bound(spec, arg)
  }
  collector <- collector_settings()
  warn_collector(collector)
  where <- planned_place(device)
  # On the host, the planners plan on the highest peak of the run (host_high), which is the
  # host peak itself in a run of a few steps.
  new_estimator(list(
    spec = spec, flat = spec_ops(spec), device = device, dtype = dtype, where = where,
    column = if (where == "host") "host_high" else "device_peak",
    label = if (where == "host") "highest host peak" else "device peak",
    lower_bound = length(spec$uncovered) > 0L,
    params = .Call(agmem_estimate, spec$shapes, 0L, 0, 1)[[1L]],
    run = model_run(spec, steps, data_size, collector), collector = collector
  ), "agmem_model")
}

# The run the model's host peak is for, as the C model reads it: c(steps, the scalars of the
# spec's largest tensor, the bytes of data_size, and R's collector settings from the environment,
# collector_settings(): vsize, grow_frac and grow_incr_frac, NA where R keeps its default).
# `steps` is the run's training steps (a whole number from 1 to 1e12); `data_size` the data the
# session holds in R's heap while it trains, in bytes, as a size such as "200 MB"
# (parse_budget(), but not NULL), or as object.size() gives it. `collector` is the settings.
model_run <- function(spec, steps, data_size, collector) {
  # Its value (a whole number from 1 to 1e12) the C code checks, as it reads it.
  if (is.object(steps) || !is.numeric(steps) || length(steps) != 1L) {
    stop_arg("`steps` must be one whole number of training steps, from 1 to 1e12.")
  }
  if (is.null(data_size)) {
    stop_arg("`data_size` must be a number of bytes or a size such as \"200 MB\", not NULL.")
  }
  if (inherits(data_size, "object_size") && is.numeric(data_size) && length(data_size) == 1L) {
    data_size <- as.numeric(data_size)
  }
  data <- parse_budget(data_size, "data_size")
  c(as.double(steps), spec_largest(spec), data, collector$vsize, collector$grow_frac,
    collector$grow_incr_frac)
}

# The scalars of the spec's largest tensor (0 for a spec without tensors): the one whose update
# holds the most (the C model's `largest`; inst/validation/fit-layers.R takes it from here too).
spec_largest <- function(spec) {
  if (length(spec$shapes)) max(vapply(spec$shapes, function(s) prod(as.double(s)), 0)) else 0
}

# The figures of ag_training_memory() for the estimator's model at batch b.
model_figures <- function(est, optimizer, b) {
  .Call(agmem_training_memory, est$spec$shapes, est$flat$units, est$flat$ops, b, optimizer,
        est$device, est$dtype, est$run)
}

#' @export
est_peak.agmem_model <- function(est, b, optimizer) { # nolint: object_name_linter.
  model_figures(est, optimizer, b)[[est$column]]
}

#' @export
est_max_batch.agmem_model <- function(est, limit, optimizer) { # nolint: object_name_linter.
  .Call(agmem_max_batch_model, est$spec$shapes, est$flat$units, est$flat$ops, optimizer,
        est$device, est$dtype, est$run, limit)
}

# One row per optimizer (outer) and batch size (inner): params, the bytes of each component at
# the planned place (0 where it has none), host_peak, host_high and device_peak, each as
# ag_training_memory() returns it.
#' @export
est_sweep.agmem_model <- function(est, batch_size, optimizer) { # nolint: object_name_linter.
  b <- check_batch_sizes(batch_size)
  parts <- registry_names("components")
  rows <- lapply(optimizer, function(opt) {
    one <- lapply(b, function(batch) {
      fig <- model_figures(est, opt, batch)
      here <- fig$where == est$where
      bytes <- vapply(parts, function(p) sum(fig$bytes[here & fig$component == p]), 0)
      c(fig$params, bytes, fig$host_peak, fig$host_high, fig$device_peak)
    })
    do.call(rbind, one)
  })
  values <- as.data.frame(do.call(rbind, rows))
  names(values) <- c("params", parts, "host_peak", "host_high", "device_peak")
  cbind(
    data.frame(optimizer = rep(optimizer, each = length(b)),
               batch_size = rep(b, times = length(optimizer)), stringsAsFactors = FALSE),
    values
  )
}

#' @export
est_zero_columns.agmem_model <- function(est) { # nolint: object_name_linter.
  c(registry_names("components"), "device_peak")
}

#' @export
est_plot_parts.agmem_model <- function(est) { # nolint: object_name_linter.
  list(
    bands = list(weights = c("weights", "master_weights"), gradients = "gradients",
                 `optimizer state` = "optimizer_state",
                 transients = c("step_transients", "build_transients"),
                 activations = c("activations", "activation_gradients")),
    drop_zero = TRUE,
    title = paste0("Predicted ", est$where, " peak by batch size",
                   if (est$where == "device") paste0(" (", est$device, ", ", est$dtype, ")")),
    ylab = est$label,
    lines = function(optimizers) paste0(est$label, ", ", optimizers),
    stack_suffix = function(optimizer) paste0(" (", optimizer, ")")
  )
}

#' @export
format.agmem_model <- function(x, what = c("title", "planned"), ...) {
  switch(match.arg(what),
    title = sprintf(
      "Predicted peak by batch size: ag_training_memory(), device \"%s\", %s; planned on %s",
      x$device, x$dtype, x$column
    ),
    planned = sprintf("the %s of ag_training_memory() (device \"%s\", %s)", x$column,
                      x$device, x$dtype)
  )
}

#' @export
est_beyond.agmem_model <- function(est, batch) { # nolint: object_name_linter.
  beyond_validated(est$spec, batch, est$params)
}

# What of a model's figures lies beyond the range ag_training_memory()'s model was validated on
# (the registry's `validated`): the largest finite batch size of `batch` (and, with an
# attention, as its sequence), the widest attention, the widest layer and
# the parameter count (`params`, counted from the shapes when NULL), each as a phrase ("batch
# size 200 000 (validated up to 4 096)"); empty when nothing does.
beyond_validated <- function(spec, batch = numeric(0), params = NULL) {
  lim <- registry_names("validated")
  phrase <- function(what, value, max) {
    sprintf("%s %s (validated up to %s)", what, format_count(value), format_count(max))
  }
  out <- character(0)
  batch <- batch[is.finite(batch)]
  if (length(batch) > 0L && max(batch) > lim[["batch_size"]]) {
    out <- c(out, phrase("batch size", max(batch), lim[["batch_size"]]))
  }
  # An attention's sequence is the batch, validated on shorter ones (a fused one's too).
  attention <- vapply(spec$ops, function(o) any(c("attention", "flash_attention") %in% o),
                      logical(1))
  if (length(batch) > 0L && max(batch) > lim[["sequence"]] && any(attention)) {
    out <- c(out, phrase("attention sequence (the batch size)", max(batch), lim[["sequence"]]))
  }
  attention_width <- .subset2(spec$layers, "out")[attention]
  if (length(attention_width) > 0L && max(attention_width) > lim[["attention_width"]]) {
    out <- c(out, phrase("attention width", max(attention_width), lim[["attention_width"]]))
  }
  # An embedding's `in` is its vocabulary, not a width; its table counts in the parameters.
  inputs <- .subset2(spec$layers, "in")
  inputs <- inputs[!.subset2(spec$layers, "type") %in% "embedding"]
  widths <- c(inputs, .subset2(spec$layers, "out"), spec$input_width, spec$output_width)
  widths <- widths[!is.na(widths)]
  if (length(widths) > 0L && max(widths) > lim[["width"]]) {
    out <- c(out, phrase("layer width", max(widths), lim[["width"]]))
  }
  if (is.null(params)) {
    params <- .Call(agmem_estimate, spec$shapes, 0L, 0, 1)[[1L]]
  }
  if (params > lim[["params"]]) {
    out <- c(out, phrase("parameter count", params, lim[["params"]]))
  }
  out
}

# Warns (agmem_warning_range) that a figure lies beyond the validated range, when `beyond` (from
# est_beyond() or beyond_validated()) says anything.
warn_range <- function(beyond) {
  if (length(beyond) > 0L) {
    warn(
      "The figure lies beyond what agmem's model was validated on against real ggmlR runs: ",
      paste(beyond, collapse = "; "), ". Measure the step with ag_measure_training_memory() ",
      "before you rely on it.",
      class = "range"
    )
  }
  invisible(beyond)
}
