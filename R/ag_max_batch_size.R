#' The largest batch size that fits a memory budget
#'
#' Computes the largest whole batch size `b` for which
#' `ag_estimate_training_memory(shapes, b, optimizer, activation_frac)$total`
#' is at most `budget * (1 - margin)`. The answer is calculated from the
#' estimator's formula, not found by running anything, and it is exact under
#' the estimator's own floating-point arithmetic: `b` fits and `b + 1` does not.
#'
#' @inheritParams ag_estimate_training_memory
#' @param budget The memory to fit in: bytes as a number, or a string with a
#'   unit such as `"16 GB"`, `"16G"`, `"512MB"`, `"1.5 GiB"`, `"800 KB"` or
#'   `"2 TB"`. Every unit is 1024-based, as the MB of the report: K, KB and KiB
#'   are 1024 bytes, M, MB and MiB 1024^2, G, GB and GiB 1024^3, T, TB and TiB
#'   1024^4 (so `"16GB"` is 16 * 1024^3 bytes, not 16e9). Units are
#'   case-insensitive (in ASCII, whatever the locale) and the space is optional.
#'   `NULL`, the default, means the memory available on this machine now (on
#'   this path gradients and optimizer state live in host RAM), read with the ps
#'   package, which must then be installed; a function set as
#'   `options(agmem.memory_reader = )`, returning bytes, replaces that reader.
#' @param margin The fraction of the budget to keep free, from 0 up to (not
#'   including) 1.
#'
#' @details
#' The estimate is a fixed part (weights, gradients, optimizer state) plus
#' activations that grow linearly with the batch size, and each of its
#' floating-point steps never decreases as the batch grows. The boundary is
#' therefore found by bisection of the formula itself over 1 to
#' `.Machine$integer.max`, at most 31 evaluations, with every figure computed
#' exactly as [ag_estimate_training_memory()] computes it.
#'
#' @return A single number: the largest batch size that fits; `0` when not even
#'   batch 1 fits; `Inf` when `activation_frac` is 0 and the fixed part fits;
#'   otherwise at most `.Machine$integer.max`, the largest batch the estimator
#'   accepts.
#'
#' @seealso [ag_estimate_training_memory()], [ag_memory_sweep()] and its plot.
#'
#' @examples
#' shapes <- ag_dense_shapes(c(784, 512, 512, 10))
#' ag_max_batch_size(shapes, "64 MB")
#' ag_max_batch_size(shapes, "64 MB", optimizer = "sgd", margin = 0.1)
#' ag_max_batch_size(shapes, 2^30, activation_frac = 0)
#' @export
ag_max_batch_size <- function(shapes, budget = NULL, optimizer = c("adam", "sgd", "sgd_plain"),
                              activation_frac = 0.01, margin = 0) {
  optimizer <- match_optimizer(optimizer)
  check_margin(margin)
  limit <- parse_budget(budget) * (1 - margin)
  .Call(agmem_max_batch, shapes, optimizer_copies[[optimizer]], activation_frac, limit)
}
