#' agmem: will a ggmlR autograd training run fit in memory?
#'
#' Predicts, before a training run starts, the peak memory of training a
#' model on ggmlR's autograd path, and the largest batch size that fits a
#' memory budget.
#'
#' * [ag_training_memory()] predicts the peak of a training step, on the host
#'   and on the device, from a model of what ggmlR and R really allocate;
#'   describe the model with [ag_dense_stack()] or read it from a ggmlR model
#'   with [ag_model_spec()].
#' * [ag_max_batch_size()] and [ag_memory_sweep()] plan a batch size for a
#'   budget, on that model, on a measurement of your own step
#'   ([ag_measure_training_memory()]), or on ggmlR's formula.
#' * [ag_estimate_training_memory()] is a drop-in for ggmlR's function of the
#'   same name: the same figures, computed in C.
#'
#' Every error is a classed condition: see [agmem_conditions].
#'
#' @keywords internal
#' @useDynLib agmem, .registration = TRUE
"_PACKAGE"
