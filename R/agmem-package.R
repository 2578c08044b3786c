#' agmem: will a ggmlR autograd training run fit in memory?
#'
#' Estimates the memory of a training run on ggmlR's autograd path from
#' parameter shapes alone, in C, with figures bit-identical to the same formula
#' evaluated in R. Start with [ag_estimate_training_memory()].
#'
#' @keywords internal
#' @useDynLib agmem, .registration = TRUE
"_PACKAGE"
