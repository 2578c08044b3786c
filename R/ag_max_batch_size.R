#' The largest batch size that fits a memory budget
#'
#' Computes the largest whole batch size `b` whose training memory is at most
#' `budget * (1 - margin)`. The memory is, by what `shapes` is:
#' * plain shapes: ggmlR's formula,
#'   `ag_estimate_training_memory(shapes, b, optimizer, activation_frac)$total`;
#' * a model (an `"ag_model_spec"` from [ag_dense_stack()] or [ag_model_spec()],
#'   or a ggmlR model, read by [ag_model_spec()]): the peak predicted by
#'   [ag_training_memory()], its `host_high` with `device = "cpu"` (the highest
#'   peak of the run: the step's largest live heap, R's trigger at the top of
#'   the range it can settle in) and its `device_peak` with `device = "gpu"`;
#' * a measurement (an `"ag_measured_memory"` from
#'   `ag_measure_training_memory()`): the line fitted to it, `fixed +
#'   per_sample * b`, on the host for a measurement on the CPU and on the
#'   device for one on the GPU.
#'
#' The answer is calculated, not found by running anything, and it is exact
#' under the arithmetic of the figure planned on: `b` fits and `b + 1` does not.
#'
#' @section How far ggmlR's formula is from a real peak:
#' ggmlR's formula (plain shapes) leaves out the temporaries of the optimizer
#' step, counts activations from the weights rather than from the layer widths,
#' and treats plain SGD as stateless. Measured against real training steps of
#' ggmlR 0.8.8.1 (the peak RSS growth of a fresh R process over three steps,
#' `inst/validation/`: 96 dense configurations of the holdout grid measured at
#' 1 MiB or more, widths 64 to 2048, 1 to 6 layers, batch 1 to 2048, the three
#' optimizers), the measured host peak was 2.2 to 261 times the formula's
#' total, with a median of 3.4: a batch planned on the formula runs out of
#' memory. Plan on a model instead (`ag_dense_stack()` or `ag_model_spec()`),
#' or, for a model that [ag_training_memory()] does not cover, on a
#' measurement.
#'
#' @param shapes Plain parameter shapes, as [ag_estimate_training_memory()]
#'   takes them (planned on ggmlR's formula); or a model: an `"ag_model_spec"`
#'   or a ggmlR model (an `ag_sequential()`, a layer, a list of layers in
#'   forward order as [ag_model_spec()] reads it, or a list of `ag_param`
#'   tensors); or an `"ag_measured_memory"`.
#' @param budget The memory to fit in: bytes as a number, or a string with a
#'   unit, as R users and agmem's own reports write them: SI units are powers
#'   of 1000 (`"16 GB"` is 16e9 bytes; kB, MB, GB, TB), IEC units powers of
#'   1024 (`"16 GiB"` is 16 * 1024^3; KiB, MiB, GiB, TiB), and a bare prefix
#'   means the IEC unit (`"16G"` is 16 GiB, as in most tools' memory options).
#'   A unit that ends in a lower-case b (`"2 Gb"`) is in bits, and refused.
#'   Units are case-insensitive (in ASCII, whatever the locale) but for that
#'   final B; the space is optional, may be any Unicode space, and digits may be
#'   grouped in threes by spaces, so that a figure copied from a report reads
#'   back as the same bytes.
#'   `NULL`, the default, means with `device = "cpu"` the memory available on
#'   this machine now, read with the ps package, which must then be installed
#'   (a function set as `options(agmem.memory_reader = )`, returning bytes,
#'   replaces that reader); with `device = "gpu"`, the free memory of the GPU
#'   as ggmlR reports it (`ggml_backend_dev_memory()` of the first GPU device),
#'   and an error that asks for `budget` when ggmlR is not installed or reports
#'   no GPU. Host RAM is never taken as a GPU budget.
#' @param optimizer `"adam"`, `"sgd"` or `"sgd_plain"` (partial names
#'   accepted). Not for a measurement, whose step chose its optimizer.
#' @param activation_frac For plain shapes only: the fraction of the weights'
#'   bytes that the activations take per sample (see
#'   [ag_estimate_training_memory()]).
#' @param margin The fraction of the budget to keep free, from 0 up to (not
#'   including) 1.
#' @param device For a model: `"cpu"` (plan the host peak) or `"gpu"` (plan the
#'   device peak, with ggmlR's `ag_device("gpu")`). Plain shapes are planned on
#'   the host only. For a measurement, the device it was measured on (the
#'   default); another is an error.
#' @param dtype For a model on `"gpu"`: `"f32"`, `"f16"` or `"bf16"`, as in
#'   [ag_training_memory()].
#' @param lower_bound For a model with a part agmem does not model (a layer
#'   other than those [ag_model_spec()] reads, or a loss it cannot place): `FALSE`,
#'   the default, refuses to plan it, with an error of class
#'   `agmem_error_unmodelled`; `TRUE` plans on the parts that are modelled,
#'   whose figure is then a lower bound of the real peak, with a warning of
#'   class `agmem_warning_lower_bound`. A list of `ag_param` tensors, which has
#'   no layers, is refused either way.
#'
#' @param steps,data_size For a model: the run planned for, as in
#'   [ag_training_memory()] (100 steps, no data held in R, by default). R's
#'   collector settings (`R_GC_MEM_GROW`, `R_VSIZE`, ...) are read from the
#'   environment as [ag_training_memory()] reads them.
#' @details
#' Every figure planned on is a sum of correctly rounded products of
#' non-negative factors, one of them the batch size, so it never decreases as
#' the batch grows. The boundary is therefore found by bisection over 1 to
#' `.Machine$integer.max`, at most 33 evaluations in agmem's C code, each
#' computing the figure exactly as [ag_estimate_training_memory()],
#' [ag_training_memory()] or `fixed + per_sample * b` in R computes it.
#'
#' @return A single number: the largest batch size that fits; `Inf` when the
#'   figure does not grow with the batch
#'   (`activation_frac` 0, a model without modelled activations on the planned
#'   place, a measured line with `per_sample` 0) and batch 1 fits; otherwise at
#'   most `.Machine$integer.max`, the largest batch the estimators accept. A
#'   budget in which not even batch 1 fits is an error of class
#'   `agmem_error_budget` that says the smallest budget that fits batch 1 (see
#'   [agmem_conditions]). With `budget = NULL`, a message says which memory
#'   figure was planned on and where it was read.
#'
#' @seealso [ag_training_memory()], [ag_estimate_training_memory()],
#'   [ag_memory_sweep()] and its plot and summary.
#'
#' @examples
#' # Planning on the training-memory model (recommended):
#' spec <- ag_dense_stack(c(784, 512, 512, 10), loss = "softmax_cross_entropy")
#' ag_max_batch_size(spec, "256 MiB")
#' ag_max_batch_size(spec, "256 MiB", optimizer = "sgd", margin = 0.1)
#' ag_max_batch_size(spec, "64 MiB", device = "gpu")
#'
#' # The peak at that batch fits; one more sample does not:
#' b <- ag_max_batch_size(spec, "256 MiB")
#' ag_training_memory(spec, b, quiet = TRUE)$host_high <= 256 * 1024^2
#' ag_training_memory(spec, b + 1, quiet = TRUE)$host_high <= 256 * 1024^2
#'
#' # ggmlR's formula on plain shapes (optimistic: see above):
#' shapes <- ag_dense_shapes(c(784, 512, 512, 10))
#' ag_max_batch_size(shapes, "256 MiB")
#' ag_max_batch_size(shapes, 2^30, activation_frac = 0)
#' @export
ag_max_batch_size <- function(shapes, budget = NULL, optimizer = c("adam", "sgd", "sgd_plain"),
                              activation_frac = 0.01, margin = 0, device = c("cpu", "gpu"),
                              dtype = c("f32", "f16", "bf16"), lower_bound = FALSE,
                              steps = 100, data_size = 0) {
  est <- as_estimator(shapes, device, dtype, given = list(
    optimizer = !missing(optimizer), activation_frac = !missing(activation_frac),
    device = !missing(device), dtype = !missing(dtype), steps = !missing(steps),
    data_size = !missing(data_size)
  ), frac = activation_frac, lower_bound = lower_bound, steps = steps, data_size = data_size)
  optimizer <- est_optimizers(est, optimizer)
  check_margin(margin)
  limit <- plan_budget(budget, est) * (1 - margin)
  warn_capped_plan(est, limit)
  b <- est_max_batch(est, limit, optimizer)
  if (b == 0) {
    refuse_budget(est, optimizer, limit, margin)
  }
  warn_range(est_beyond(est, b))
  b
}

# Refuses a budget (`limit` bytes once the margin is kept free) in which not even batch size 1
# fits, saying the smallest budget that fits it.
refuse_budget <- function(est, optimizer, limit, margin) {
  need <- tryCatch(est_peak(est, 1, optimizer), agmem_error_overflow = function(e) Inf)
  kept <- if (margin > 0) paste0(" (", format(margin), " of it kept free)") else ""
  smallest <- if (is.finite(need)) {
    paste0("the smallest budget that fits it is ", format_bytes_scaled(need / (1 - margin)),
           " (", format_refused(ceiling(need / (1 - margin))), " bytes)")
  } else {
    "its figure overflows a double"
  }
  abort(
    "`budget` of ", format_bytes_scaled(limit / (1 - margin)), kept, " does not fit even batch ",
    "size 1, whose ", est$label, " is ", format_bytes_scaled(need), ": ", smallest, ".",
    class = "budget"
  )
}
