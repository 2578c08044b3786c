# Planning internals shared by ag_max_batch_size(), ag_memory_sweep(), the sweep's plot() and
# summary(): what a plan is made from (ggmlR's formula on plain shapes, the training-memory model
# of a spec or ggmlR model, or the line of a measurement), its budget, the figure it compares
# with the budget, and the largest batch that fits.

# What x is to plan on: "measured" (an ag_measured_memory), "model" (an ag_model_spec or a
# ggmlR model) or "formula" (anything else: plain shapes, checked by the C code).
plan_kind <- function(x) {
  if (inherits(x, "ag_measured_memory")) {
    return("measured")
  }
  if (inherits(x, c("ag_model_spec", "ag_tensor", "ag_sequential", "ag_layer")) ||
    is_tensor_list(x) || is_layer(x)) {
    return("model")
  }
  "formula"
}

# The plan for x: a list with `kind`, `device`, `dtype`, `where` ("host" or "device": the peak
# planned on) and, by kind, `shapes` (formula), `spec` and `flat` (model) or `line` (measured,
# c(fixed = , per_sample = ) of the planned place). `given` says which of optimizer,
# activation_frac, device and dtype the caller gave (not missing()): an argument that does not
# apply to the kind is an error when given. `arg` names x in messages.
make_plan <- function(x, device, dtype, given, arg = "shapes") {
  kind <- plan_kind(x)
  device <- match_choice(device, c("cpu", "gpu"), "device")
  dtype <- match_choice(dtype, c("f32", "f16", "bf16"), "dtype")
  if (kind == "formula") {
    if (device != "cpu") {
      stop_arg(
        "`device` \"gpu\" needs a model, not plain shapes: ggmlR's formula, which plans on ",
        "shapes, describes the host path only. Describe the model with ag_dense_stack() or ",
        "ag_model_spec(), or measure it with ag_measure_training_memory()."
      )
    }
    if (dtype != "f32") {
      stop_arg("`dtype` applies to a model (ag_dense_stack(), ag_model_spec()), not to plain ",
               "shapes: ggmlR's formula counts R doubles.")
    }
    return(list(kind = "formula", device = "cpu", dtype = "f32", where = "host", shapes = x))
  }
  what <- if (kind == "model") "a model" else "a measurement"
  if (isTRUE(given$activation_frac)) {
    stop_arg(
      "`activation_frac` applies to plain shapes only (ggmlR's formula); ", what,
      " brings its own activations. Leave `activation_frac` out."
    )
  }
  if (kind == "model") {
    spec <- as_model_spec(x, arg)
    return(list(
      kind = "model", device = device, dtype = dtype,
      where = if (device == "gpu") "device" else "host", spec = spec, flat = spec_ops(spec)
    ))
  }
  check_measured(x, arg)
  if (isTRUE(given$device) && device != x$device) {
    stop_arg(
      "`device` is \"", device, "\", but `", arg, "` was measured on device \"", x$device,
      "\": leave `device` out to plan on the device measured, or measure again with device = \"",
      device, "\"."
    )
  }
  if (isTRUE(given$dtype)) {
    stop_arg("`dtype` does not apply to a measurement: the measured step chose its own dtype. ",
             "Leave `dtype` out.")
  }
  if (isTRUE(given$optimizer)) {
    stop_arg("`optimizer` does not apply to a measurement: the measured step chose its own ",
             "optimizer. Leave `optimizer` out.")
  }
  where <- if (x$device == "gpu") "device" else "host"
  list(
    kind = "measured", device = x$device, dtype = NA_character_, where = where,
    line = line_of(x, where),
    other = list(host = line_of(x, "host"), device = line_of(x, "device"))
  )
}

# The line of a checked measurement at `where`: c(fixed = , per_sample = ), doubles.
line_of <- function(x, where) {
  vapply(c("fixed", "per_sample"), function(n) as.double(x$line[[where]][[n]]), 0)
}

# Checks that x is an ag_measured_memory as ag_measure_training_memory() makes it: `device`
# "cpu" or "gpu", and `line`, a list with `host` and `device`, each a double vector with the
# finite elements `fixed` and `per_sample`. Returns x; refuses anything else naming `arg`.
check_measured <- function(x, arg) {
  bad <- function(why) stop_arg("`", arg, "` is a malformed ag_measured_memory: ", why, ".")
  if (!is.list(x) || !all(c("line", "device") %in% names(x))) {
    bad("it needs the fields `line` and `device`")
  }
  if (!is.character(x$device) || length(x$device) != 1L || !x$device %in% c("cpu", "gpu")) {
    bad("`device` must be \"cpu\" or \"gpu\"")
  }
  line <- x$line
  ok_part <- function(p) {
    is.numeric(p) && all(c("fixed", "per_sample") %in% names(p)) &&
      all(is.finite(p[c("fixed", "per_sample")]))
  }
  if (!is.list(line) || !all(c("host", "device") %in% names(line)) ||
    !ok_part(line$host) || !ok_part(line$device)) {
    bad(paste("`line` must be a list of `host` and `device`, each with finite `fixed` and",
              "`per_sample` bytes"))
  }
  where <- if (x$device == "gpu") "device" else "host"
  if (line[[where]][["per_sample"]] < 0) {
    bad(paste0(
      "its ", where, " line falls as the batch grows (per_sample ",
      format(line[[where]][["per_sample"]]), " bytes): measure again at batch sizes further apart"
    ))
  }
  invisible(x)
}

# The budget of a plan in bytes: `budget` as parse_budget() reads it; NULL is the memory
# available on the host for device "cpu", and the GPU's free memory for device "gpu".
plan_budget <- function(budget, plan) {
  if (is.null(budget) && plan$device == "gpu") {
    return(gpu_free_memory())
  }
  parse_budget(budget)
}

# The ggmlR functions that enumerate devices and report their memory, or NULL without ggmlR.
ggmlr_device_api <- function() {
  if (!requireNamespace("ggmlR", quietly = TRUE)) {
    return(NULL)
  }
  list(
    count = ggmlR::ggml_backend_dev_count, get = ggmlR::ggml_backend_dev_get,
    type = ggmlR::ggml_backend_dev_type, memory = ggmlR::ggml_backend_dev_memory,
    gpu = ggmlR::ggml_backend_device_type_gpu(), igpu = ggmlR::ggml_backend_device_type_igpu()
  )
}

# The free memory, in bytes, of the GPU that ag_device("gpu") would use, as ggmlR reports it:
# the first device of type GPU, else the first integrated GPU (the order in which ggml picks its
# best backend). Only GPUs count: the CPU device reports host RAM, which is not a GPU budget.
# Refuses, naming `budget`, when ggmlR is missing, reports no GPU, or cannot read its memory.
gpu_free_memory <- function(api = ggmlr_device_api()) {
  refuse <- function(why) {
    stop_arg(
      "`budget` is NULL, which for device \"gpu\" means the free memory of the GPU, but ", why,
      ". Give `budget`: the GPU memory to fit in, in bytes or as a size such as \"8 GB\"."
    )
  }
  if (is.null(api)) {
    refuse("reading it needs ggmlR, which is not installed")
  }
  found <- tryCatch({
    devices <- lapply(seq_len(api$count()) - 1L, api$get)
    types <- vapply(devices, function(d) as.double(api$type(d)), 0)
    pick <- c(which(types == api$gpu), which(types == api$igpu))
    if (length(pick) == 0L) NULL else list(free = api$memory(devices[[pick[[1L]]]])[["free"]])
  }, error = function(e) list(error = conditionMessage(e)))
  if (is.null(found)) {
    refuse(paste0(
      "ggmlR reports no GPU on this machine (ag_device(\"gpu\") then runs on ggml's CPU ",
      "backend, in host memory: plan that with device = \"cpu\")"
    ))
  }
  free <- found$free
  if (!is.null(found$error) || !is.numeric(free) || length(free) != 1L || !is.finite(free) ||
    free < 0) {
    refuse(paste0("ggmlR could not report the free memory of the GPU",
                  if (!is.null(found$error)) paste0(" (", found$error, ")")))
  }
  as.double(free)
}

# The largest batch that fits `limit` bytes under the plan, for one optimizer (ignored for a
# measurement); `frac` is activation_frac for the formula.
plan_max_batch <- function(plan, optimizer, limit, frac) {
  switch(plan$kind,
    formula = .Call(agmem_max_batch, plan$shapes, optimizer_copies[[optimizer]], frac, limit),
    model = .Call(agmem_max_batch_model, plan$spec$shapes, plan$flat$units, plan$flat$ops,
                  optimizer, plan$device, plan$dtype, limit),
    measured = .Call(agmem_max_batch_line, plan$line[["fixed"]], plan$line[["per_sample"]],
                     limit)
  )
}

# The figure the plan compares with the budget at batch b: the formula's total, the model's
# host_peak (cpu) or device_peak (gpu), or fixed + per_sample * b of the measured line.
plan_figure <- function(plan, optimizer, b, frac) {
  switch(plan$kind,
    formula = .Call(agmem_estimate, plan$shapes, optimizer_copies[[optimizer]], frac, b)[[6L]],
    model = model_figures(plan, optimizer, b)[[paste0(plan$where, "_peak")]],
    measured = plan$line[["fixed"]] + plan$line[["per_sample"]] * b
  )
}

# The figures of ag_training_memory() for the plan's model at batch b.
model_figures <- function(plan, optimizer, b) {
  .Call(agmem_training_memory, plan$spec$shapes, plan$flat$units, plan$flat$ops, b, optimizer,
        plan$device, plan$dtype)
}

# The name of the figure a plan compares with the budget, for reports and plots.
plan_figure_label <- function(plan) {
  switch(plan$kind,
    formula = "total",
    model = paste(plan$where, "peak"),
    measured = paste(plan$where, "peak")
  )
}

# Checks batch sizes for a sweep: a non-empty numeric vector of whole numbers from 1 to
# .Machine$integer.max, with the messages of the C reader. Returns them as doubles.
check_batch_sizes <- function(batch_size) {
  if (!is.numeric(batch_size) || is.object(batch_size) || length(batch_size) == 0L) {
    stop_arg("`batch_size` must be a non-empty numeric vector.")
  }
  b <- as.double(batch_size)
  bad <- is.na(b) | !is.finite(b) | b < 1 | b > .Machine$integer.max | b != floor(b)
  if (any(bad)) {
    stop_arg("`batch_size` must be a whole number from 1 to ", .Machine$integer.max, ", not ",
             format_refused(b[bad][[1L]]), ".")
  }
  b
}

# The sweep of a model or a measurement (the formula's is made by ag_memory_sweep() itself):
# one row per optimizer (outer) and batch size (inner). A model's rows hold params, the bytes of
# each component at the planned place, host_peak and device_peak, each as ag_training_memory()
# returns it; a measurement's rows hold the planned line's `fixed` part and its `variable`
# part (per_sample * batch), and both lines' host_peak and device_peak. The plan is kept as the
# attribute "plan".
sweep_planned <- function(plan, batch_size, optimizer) {
  b <- check_batch_sizes(batch_size)
  if (plan$kind == "measured") {
    variable <- plan$line[["per_sample"]] * b
    peak <- function(where) {
      plan$other[[where]][["fixed"]] + plan$other[[where]][["per_sample"]] * b
    }
    out <- data.frame(
      optimizer = "measured", batch_size = b, fixed = rep(plan$line[["fixed"]], length(b)),
      variable = variable, host_peak = peak("host"),
      device_peak = if (plan$device == "gpu") peak("device") else rep(0, length(b)),
      stringsAsFactors = FALSE
    )
  } else {
    optimizer <- match_optimizer(optimizer, several = TRUE)
    parts <- model_components
    rows <- lapply(optimizer, function(opt) {
      one <- lapply(b, function(batch) {
        fig <- model_figures(plan, opt, batch)
        here <- fig$where == plan$where
        bytes <- vapply(parts, function(p) sum(fig$bytes[here & fig$component == p]), 0)
        c(fig$params, bytes, fig$host_peak, fig$device_peak)
      })
      do.call(rbind, one)
    })
    cols <- do.call(rbind, rows)
    out <- data.frame(
      optimizer = rep(optimizer, each = length(b)),
      batch_size = rep(b, times = length(optimizer)), stringsAsFactors = FALSE
    )
    values <- as.data.frame(cols)
    names(values) <- c("params", parts, "host_peak", "device_peak")
    out <- cbind(out, values)
  }
  attr(out, "plan") <- plan
  class(out) <- c("ag_memory_sweep", "data.frame")
  out
}

# The components of ag_training_memory(), in its order: the columns of a model's sweep.
model_components <- c("weights", "gradients", "optimizer_state", "master_weights",
                      "step_transients", "build_transients", "activations",
                      "activation_gradients")

# The plan of a sweep: its "plan" attribute, or for a sweep of ggmlR's formula (which has the
# attribute "activation_frac") a formula plan on its parameter count. NULL when x is neither.
sweep_plan <- function(x) {
  plan <- attr(x, "plan")
  if (!is.null(plan)) {
    return(plan)
  }
  if (!is.null(attr(x, "activation_frac")) && "params" %in% names(x) && nrow(x) > 0L) {
    return(list(kind = "formula", device = "cpu", dtype = "f32", where = "host",
                shapes = x$params[[1L]]))
  }
  NULL
}

# The column of a sweep that its plan compares with the budget.
sweep_figure_column <- function(plan) {
  if (plan$kind == "formula") "total" else paste0(plan$where, "_peak")
}

# One line that says what a sweep (or its summary) holds.
sweep_title <- function(plan, frac) {
  switch(plan$kind,
    formula = sprintf("Training memory by batch size: ggmlR's formula, activation_frac %s",
                      format(frac)),
    model = sprintf(
      "Predicted peak by batch size: ag_training_memory(), device \"%s\", %s; planned on %s",
      plan$device, plan$dtype, sweep_figure_column(plan)
    ),
    measured = sprintf(
      paste("Measured peak by batch size: the line fitted to a measurement on device \"%s\";",
            "planned on %s"),
      plan$device, sweep_figure_column(plan)
    )
  )
}
