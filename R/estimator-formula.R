# The estimator of ggmlR's formula (ag_estimate_training_memory()) on plain shapes: the total of
# weights, gradients, optimizer state and activation_frac-scaled activations, on the host.

# A formula estimator on `shapes` (checked by the C code when it is used) with activation_frac
# `frac`. The formula describes the host path in f32 only: another device or dtype is refused.
formula_estimator <- function(shapes, device, dtype, frac) {
  if (device != "cpu") {
    stop_arg(
      "`device` \"", device, "\" needs a model, not plain shapes: ggmlR's formula, which plans ",
      "on shapes, describes the host path only. Describe the model with ag_dense_stack() or ",
      "ag_model_spec(), or measure it with ag_measure_training_memory()."
    )
  }
  if (dtype != "f32") {
    stop_arg("`dtype` applies to a model (ag_dense_stack(), ag_model_spec()), not to plain ",
             "shapes: ggmlR's formula counts R doubles.")
  }
  new_estimator(list(
    shapes = shapes, frac = frac, device = "cpu", dtype = "f32", where = "host",
    column = "total", label = "total"
  ), "agmem_formula")
}

# The optimizer-state copies ggmlR's formula counts for an optimizer.
formula_copies <- function(optimizer) {
  registry_names("copies")[optimizer]
}

#' @export
est_peak.agmem_formula <- function(est, b, optimizer) { # nolint: object_name_linter.
  .Call(agmem_estimate, est$shapes, formula_copies(optimizer)[[1L]], est$frac, b)[[6L]]
}

#' @export
est_max_batch.agmem_formula <- function(est, limit, optimizer) { # nolint: object_name_linter.
  .Call(agmem_max_batch, est$shapes, formula_copies(optimizer)[[1L]], est$frac, limit)
}

# One row per optimizer (outer) and batch size (inner), each row's figures those of
# ag_estimate_training_memory(); the attribute "activation_frac" keeps the fraction.
#' @export
est_sweep.agmem_formula <- function(est, batch_size, optimizer) { # nolint: object_name_linter.
  check_sweep_memory(length(optimizer) * as.double(length(batch_size)))
  cols <- .Call(agmem_sweep, est$shapes, unname(formula_copies(optimizer)), est$frac,
                batch_size)
  rows <- length(batch_size)
  out <- data.frame(
    optimizer = rep(optimizer, each = rows),
    batch_size = rep(as.double(batch_size), times = length(optimizer)),
    params = cols[[1L]], weights = cols[[2L]], gradients = cols[[3L]],
    optimizer_state = cols[[4L]], activations = cols[[5L]], total = cols[[6L]],
    stringsAsFactors = FALSE
  )
  attr(out, "activation_frac") <- est$frac
  out
}

#' @export
est_plot_parts.agmem_formula <- function(est) { # nolint: object_name_linter.
  list(
    bands = list(weights = "weights", gradients = "gradients",
                 `optimizer state` = "optimizer_state", activations = "activations"),
    drop_zero = FALSE, title = "Training memory by batch size", ylab = "memory",
    lines = function(optimizers) paste0(est$label, ", ", optimizers),
    stack_suffix = function(optimizer) paste0(" (", optimizer, ")")
  )
}

#' @export
format.agmem_formula <- function(x, what = c("title", "planned"), ...) {
  switch(match.arg(what),
    title = sprintf("Training memory by batch size: ggmlR's formula, activation_frac %s",
                    format(x$frac)),
    planned = sprintf("the total of ggmlR's formula (activation_frac %s)", format(x$frac))
  )
}

# The parameter shapes for ggmlR's formula: those of a model (a spec or a ggmlR model, read by
# as_model_spec()), or x itself, left to the C code's checks; a measurement has no shapes and is
# refused. `arg` names x in messages.
plain_shapes <- function(x, arg) {
  if (inherits(x, "ag_measured_memory")) {
    stop_arg(
      "`", arg, "` is a measurement, which has no parameter shapes: plan on it with ",
      "ag_max_batch_size() or ag_memory_sweep()."
    )
  }
  if (is_model(x)) as_model_spec(x, arg)$shapes else x
}
