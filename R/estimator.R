# Estimators: what the planners (ag_max_batch_size(), ag_memory_sweep(), and the sweep's
# summary() and plot()) plan on. Three S3 classes, each in its own file, share one set of
# generics, so that a planner asks and never switches on what it was given:
#   - "agmem_formula" (estimator-formula.R): ggmlR's formula on plain shapes;
#   - "agmem_model" (estimator-model.R): ag_training_memory()'s model of a model description;
#   - "agmem_measured" (estimator-measured.R): the line fitted to a measurement.
# Each is a list of class c(<class>, "agmem_estimator") with at least `device`, `dtype` (NA for
# a measurement), `where` ("host" or "device": the peak planned on), `column` (the sweep column
# of that figure) and `label` (its name in reports and plots).

# The estimator for x, by what x is: a measurement, a model (a spec or a ggmlR model), or else
# plain shapes (which the C code checks). `given` says which of optimizer, activation_frac,
# device and dtype the caller gave (not missing()): an argument that does not apply to the
# estimator is an error when given. `frac` is activation_frac; `arg` names x in messages;
# `lower_bound` lets a model with parts agmem does not model be planned (model_estimator());
# `steps` and `data_size` describe a model's run (model_run()) and are refused, when given, for
# anything else.
as_estimator <- function(x, device, dtype, given, frac, arg = "shapes", lower_bound = FALSE,
                         steps = 100, data_size = 0) {
  device <- match_choice(device, registry_names("devices"), "device")
  dtype <- match_choice(dtype, registry_names("dtypes"), "dtype")
  if (!is_model(x)) {
    for (a in c("steps", "data_size")) {
      if (isTRUE(given[[a]])) {
        stop_arg("`", a, "` applies to a model (an ag_model_spec or a ggmlR model), whose ",
                 "whole run agmem models; `", arg, "` is not one.")
      }
    }
  }
  if (inherits(x, "ag_measured_memory")) {
    return(measured_estimator(x, device, given, arg))
  }
  if (is_model(x)) {
    return(model_estimator(x, device, dtype, given, arg, lower_bound, steps, data_size))
  }
  formula_estimator(x, device, dtype, frac)
}

# Makes an estimator of class c(class, "agmem_estimator") from its fields.
new_estimator <- function(fields, class) {
  structure(fields, class = c(class, "agmem_estimator"))
}

# Refuses `activation_frac` when the caller gave it to an estimator that brings its own
# activations (`what`: "a model", "a measurement").
refuse_frac <- function(given, what) {
  if (isTRUE(given$activation_frac)) {
    stop_arg(
      "`activation_frac` applies to plain shapes only (ggmlR's formula); ", what,
      " brings its own activations. Leave `activation_frac` out."
    )
  }
}

# ---- The generics ----

# The optimizers to plan for, from the planner's `optimizer` argument (several: a sweep's).
est_optimizers <- function(est, optimizer, several = FALSE) UseMethod("est_optimizers")

#' @export
est_optimizers.agmem_estimator <- function(est, optimizer, # nolint: object_name_linter.
                                           several = FALSE) {
  match_optimizer(optimizer, several = several)
}

# The figure the estimator compares with a budget, at one batch size b, for one optimizer.
est_peak <- function(est, b, optimizer) UseMethod("est_peak")

# The largest batch size whose figure is at most `limit` bytes, for one optimizer: 0 when batch 1
# does not fit, Inf when the figure does not grow with the batch and batch 1 fits.
est_max_batch <- function(est, limit, optimizer) UseMethod("est_max_batch")

# The rows of a sweep over optimizers (outer) and batch sizes (inner), as a data frame.
est_sweep <- function(est, batch_size, optimizer) UseMethod("est_sweep")

# What the plot of a sweep draws: a list of `bands` (the stacked parts: label = the sweep
# columns they sum), `drop_zero` (whether bands that are 0 in every row are left out), `title`,
# `ylab` (without the unit), `lines` (a function of the optimizers: the labels of the lines of
# the figure planned on) and `stack_suffix` (a function of the first optimizer: what follows a
# band's label).
est_plot_parts <- function(est) UseMethod("est_plot_parts")

# Format methods give the text that says what the estimator plans on: `what = "title"`, the
# first line of a sweep's print; `"planned"`, the figure a summary's batch sizes are planned on.

# What of the estimator's figures at the batch sizes `batch` lies beyond the range it was
# validated on: phrases for warn_range(), empty when nothing does (or nothing was validated).
est_beyond <- function(est, batch) UseMethod("est_beyond")

#' @export
est_beyond.agmem_estimator <- function(est, batch) { # nolint: object_name_linter.
  character(0)
}

# The sweep columns that a print leaves out when they are 0 in every row (NULL: none).
est_zero_columns <- function(est) UseMethod("est_zero_columns")

#' @export
est_zero_columns.agmem_estimator <- function(est) { # nolint: object_name_linter.
  NULL
}

# The estimator of a sweep: its "plan" attribute; for a sweep of ggmlR's formula that lost it
# (it still has the attribute "activation_frac"), a formula estimator on its parameter count.
# NULL when x is neither.
sweep_estimator <- function(x) {
  est <- attr(x, "plan")
  if (inherits(est, "agmem_estimator")) {
    return(est)
  }
  frac <- attr(x, "activation_frac")
  if (!is.null(frac) && is.data.frame(x) && "params" %in% names(x) && nrow(x) > 0L) {
    return(formula_estimator(x$params[[1L]], "cpu", "f32", frac))
  }
  NULL
}
