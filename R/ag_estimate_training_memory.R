#' Estimate the memory of a training run on ggmlR's autograd path
#'
#' Adds up, from parameter shapes alone, the four things a training run on
#' ggmlR's autograd path (`ag_param()`, `with_grad_tape()`, `backward()`,
#' `optimizer_adam()`) keeps in memory: the weights, their gradients, the
#' optimizer state and the activations the gradient tape holds until
#' `zero_grad()`. A drop-in replacement for ggmlR's function of the same name:
#' same arguments, same figures, computed in C.
#'
#' @param shapes A list of parameter shapes, each a numeric (double or integer)
#'   vector of dimensions of positive whole numbers, such as
#'   `list(c(256, 128), 128)`; or a single such vector, taken as a list of one.
#'   Names on the list are ignored; a matrix counts as a numeric vector of
#'   dimensions. A model description (an `"ag_model_spec"` from
#'   [ag_dense_stack()] or [ag_model_spec()]) or a ggmlR model stands for its
#'   parameter shapes: the figures are still ggmlR's formula (for the real
#'   peak, see [ag_training_memory()]).
#' @param batch_size The batch size: a single whole number from 1 to
#'   `.Machine$integer.max`.
#' @param optimizer `"adam"` keeps two moments (m and v) per weight, `"sgd"`
#'   keeps one velocity (momentum > 0), `"sgd_plain"` keeps nothing. Matched
#'   as [match.arg()] does: the default, and `NULL`, mean `"adam"`, and
#'   unambiguous partial names are accepted.
#' @param activation_frac Activation bytes as a fraction of the weight bytes,
#'   per unit of batch: a single finite number >= 0. The default, 0.01,
#'   reproduces a measured tape composition for a dense stack (activations were
#'   19% of the tape of a 4-layer, 128-wide stack at batch 32). For your own
#'   model, measure a tape with ggmlR's `ag_tape_memory()` and pass the
#'   fraction [ag_activation_frac()] derives from it.
#' @param quiet `TRUE` to print nothing and only return the figures.
#'
#' @details
#' With `n` the number of scalars (the sum over the shapes, in list order, of
#' the product of each shape's dimensions) and `k` the optimizer's copies (2
#' for adam, 1 for sgd, 0 for sgd_plain), the figures, in bytes, are
#' \preformatted{weights     = n * 8
#' gradients   = n * 8
#' optimizer   = n * 8 * k
#' activations = weights * activation_frac * batch_size
#' total       = weights + gradients + optimizer + activations}
#' where `n` is a double sum, in list order, of each shape's product computed as
#' R's `prod()` computes it (in long double where R was built with it,
#' `capabilities("long.double")`, rounded to double at the end), and every other
#' step is one rounded double operation, left to right: the figures are
#' bit-identical to ggmlR's, which evaluates this formula in R.
#'
#' **Why 8 bytes per scalar.** On the autograd path, `backward()` accumulates
#' gradients in R closures as doubles and the optimizers keep their moments in
#' R matrices, so every scalar of weights, gradients and optimizer state costs 8
#' bytes per copy. An estimate that assumes f32 storage is half the real figure.
#'
#' **Why `ag_dtype()` does not apply.** `ag_dtype()` only sets the type of the
#' forward tensors uploaded into a ggml buffer; it reaches neither the
#' gradients nor the optimizer state, which live in R.
#'
#' A count so large that a figure would not be finite is an error, as is any
#' argument outside the forms above.
#'
#' **Where agmem is stricter than ggmlR.** On every input ggmlR accepts and
#' agmem accepts too, the figures are identical and the report is the same line
#' for line (but for the note's words). agmem refuses, with an error that names
#' the argument, inputs on which ggmlR 0.8.8.1 returns a figure that describes
#' no real training run, or labels it wrongly:
#'
#' | Input | ggmlR 0.8.8.1 | agmem |
#' |:------|:--------------|:------|
#' | fractional dimension, `list(c(2.5, 4))` | counts 10 scalars | error |
#' | `batch_size = 0` or negative | activations of 0 or below | error |
#' | `batch_size = 2.5` | activations at 2.5, report says "batch 2" | error |
#' | `batch_size = NA` | `NA` activations and total | error |
#' | `batch_size` > `.Machine$integer.max` | figures; "batch NA", a warning | error |
#' | `batch_size = c(1, 2)` or `"64"` | vector figures, or 64 | error |
#' | `activation_frac = -0.5` | negative activations and total | error |
#' | `activation_frac = NA` | `NA` activations and total | error |
#' | `quiet = "yes"`, `NA` or `1` | not `TRUE`: the report is printed | error |
#' | classed numbers (shape, list, batch, fraction) | used as bare numbers | error |
#' | a count whose bytes overflow a double | `Inf` figures | error |
#'
#' A fraction of a parameter, a batch of 0 or 2.5 and negative memory are not
#' figures of any run, so agmem refuses them rather than return a figure that
#' looks plausible; a class may give a number a meaning (a unit, a date) that a
#' count of scalars would silently drop. The parameter count in the report is
#' always written in full (`1 000 000 000 000 000`) where ggmlR's `format()`
#' switches to scientific notation (`1e+15`).
#'
#' @return Invisibly, a list of `params` (the number of scalars), `weights`,
#'   `gradients`, `optimizer`, `activations` and `total` (bytes, doubles),
#'   `bytes_per_scalar` (8) and `note`, a sentence that carries the double
#'   versus f32 caveat for callers that pass `quiet = TRUE`. Unless `quiet`, a
#'   report of the figures in MB (1024^2 bytes) is written to standard output,
#'   in ggmlR's layout line for line; only the note's wording is agmem's, and
#'   the parameter count is always written in full, grouped in threes.
#'
#' @seealso [ag_max_batch_size()] for the largest batch that fits a budget,
#'   [ag_memory_sweep()] for a table over batch sizes, [ag_dense_shapes()] for
#'   the shapes of a dense stack. In ggmlR, `ag_tape_memory()` measures the
#'   memory of a real gradient tape, and `ggml_estimate_memory()` sizes one
#'   tensor in a ggml buffer, where the data type does apply.
#'
#' @examples
#' # A 3-layer MLP, 512 wide, on 784 inputs and 10 classes,
#' # trained with Adam at batch 64:
#' shapes <- list(c(512, 784), 512, c(512, 512), 512, c(10, 512), 10)
#' est <- ag_estimate_training_memory(shapes, batch_size = 64L)
#' est$total / 1024^2  # MB
#'
#' # The figures only, for a script:
#' ag_estimate_training_memory(shapes, 64L, "sgd", quiet = TRUE)$total
#' @export
ag_estimate_training_memory <- function(shapes, batch_size = 32L,
                                        optimizer = c("adam", "sgd", "sgd_plain"),
                                        activation_frac = 0.01, quiet = FALSE) {
  optimizer <- match_optimizer(optimizer)
  check_flag(quiet, "quiet")
  shapes <- plain_shapes(shapes, "shapes")
  fig <- .Call(agmem_estimate, shapes, formula_copies(optimizer)[[1L]], activation_frac, batch_size)
  out <- list(
    params = fig[[1L]], weights = fig[[2L]], gradients = fig[[3L]], optimizer = fig[[4L]],
    activations = fig[[5L]], total = fig[[6L]], bytes_per_scalar = 8, note = estimate_note
  )
  if (!quiet) {
    print_estimate(out, optimizer, batch_size)
  }
  invisible(out)
}

estimate_note <- paste(
  "On ggmlR's autograd path, weights, gradients and optimizer state are R doubles",
  "(8 bytes per scalar); an estimate in f32 would be half of these figures,",
  "and ag_dtype() does not change them."
)

# Writes the report of an estimate with cat(), in the layout of ggmlR's report, line for line: a
# heading with the optimizer and the batch size; the parameter count, its digits grouped in
# threes (never in scientific notation); one line per figure in MB (1024^2 bytes) with two
# decimals in a column 8 characters wide; and the note. Labels are padded to one width and
# indented by two spaces.
print_estimate <- function(est, optimizer, batch_size) {
  mb <- unlist(est[c("weights", "gradients", "optimizer", "activations", "total")],
    use.names = FALSE
  ) / 1024^2
  labels <- c(
    "weights", "gradients", sprintf("optimizer (x%d)", formula_copies(optimizer)[[1L]]),
    "activations", "total"
  )
  cat(
    sprintf("Training memory estimate (%s, batch %d)\n", optimizer, as.integer(batch_size)),
    sprintf("  %-16s: %s\n", "parameters", format_count(est$params)),
    sprintf("  %-16s: %8.2f MB\n", labels, mb),
    "  note: ", est$note, "\n",
    sep = ""
  )
}
