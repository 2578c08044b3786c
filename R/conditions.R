#' Conditions agmem signals
#'
#' Every error agmem signals, from its R code or from its C code, is a
#' condition of class `"agmem_error"`, and every warning one of class
#' `"agmem_warning"`, each with a subclass that says what happened, so that a
#' caller can catch it by class rather than by its message:
#' \preformatted{tryCatch(ag_max_batch_size(spec, "2 GiB"),
#'          agmem_error_argument = function(e) NA)}
#' The message names the argument concerned in backticks and says what was
#' expected. The classes:
#'
#' * `agmem_error_argument`: an argument is not of the form the function takes
#'   (its type, length, value or unit);
#' * `agmem_error_overflow`: a figure would not be finite in a double (a count
#'   of scalars, bytes or rows too large);
#' * `agmem_error_unavailable`: what the call needs is not there: a suggested
#'   package (ps, processx, ggmlR), Linux's `/proc`, or a memory figure that
#'   cannot be read;
#' * `agmem_error_measurement`: the R process measuring a training step failed:
#'   the step's own error, a crash, or a process that quit;
#' * `agmem_error_memory`: the call itself would need more memory than is
#'   available (a sweep of too many rows);
#' * `agmem_error_budget`: nothing fits the budget: not even batch size 1 (the
#'   message says the smallest budget that fits it);
#' * `agmem_error_unmodelled`: a planner was asked to plan a model with a part
#'   agmem does not model (a layer, or the loss), without `lower_bound = TRUE`;
#'   or a model whose memory cannot be told to grow with the batch at all (a
#'   list of `ag_param` tensors, which has no layers).
#'
#' The warnings:
#' * `agmem_warning_lower_bound`: a figure rests on a model with a part agmem
#'   does not model: the part's parameters are counted, its activations are
#'   not, so the figure is a lower bound;
#' * `agmem_warning_range`: a figure of the model of [ag_training_memory()]
#'   lies beyond what was validated against real ggmlR runs (a batch size, a
#'   layer width or a parameter count larger than any measured);
#' * `agmem_warning_version`: the installed ggmlR is another release than the
#'   one agmem's rules were read from and measured on (once a session, at the
#'   first figure of the model);
#' * `agmem_warning_step`: the measured training step warned (the warning is
#'   passed on from its R process, with the batch size);
#' * `agmem_warning_check`: the line of a measurement, fitted without its
#'   largest batch size, under-predicted the peak there by more than 15%: the
#'   planners and [summary()][summary.ag_measured_memory] warn, since a plan on
#'   the line may not hold;
#' * `agmem_warning_cap`: [ag_within_budget()] could not cap R's heap as low as
#'   the budget asks, because R keeps its cap at or above its collector's
#'   current trigger;
#' * `agmem_warning_collector`: the environment sets a start-up setting of R's
#'   collector that the whole-run model does not follow (`R_NSIZE`,
#'   `R_GC_NGROWINCRFRAC`: the host figures take R's default for it), or R's
#'   vector heap is capped (`R_MAX_VSIZE`, `--max-vsize`, [mem.maxVSize()])
#'   below what the run's heap may reach, which agmem does not model.
#'
#' Each error is also of class `"error"` and `"condition"`; each warning of
#' class `"warning"` and `"condition"`.
#'
#' @name agmem_conditions
#' @aliases agmem_error agmem_warning
#' @examples
#' spec <- ag_dense_stack(c(784, 512, 10))
#' e <- tryCatch(ag_training_memory(spec, batch_size = 0), agmem_error = identity)
#' class(e)
#' conditionMessage(e)
NULL

# The subclasses of agmem_error and agmem_warning, each with what it means: the table above, and
# the only classes abort() and warn() accept. The C code names its subclasses in src/agmem.h
# (AGMEM_E_*), which are among these.
error_classes <- c(
  argument = "an argument is not of the form the function takes",
  overflow = "a figure would not be finite in a double",
  unavailable = "what the call needs is not there",
  measurement = "the R process measuring a training step failed",
  memory = "the call would need more memory than is available",
  budget = "nothing fits the budget",
  unmodelled = "a planner was asked to plan a model with a part agmem does not model"
)
warning_classes <- c(
  lower_bound = "a figure rests on a model with a part agmem does not model",
  range = "a figure lies beyond the range the model was validated on",
  version = "the installed ggmlR is another release than the rules describe",
  cap = "R's heap could not be capped as low as the budget asks",
  step = "the measured training step warned",
  check = "a measured line under-predicted the batch size it was checked on",
  collector = "a setting of R's collector that the model does not follow is set, or binds"
)

# Signals an error of class c("agmem_error_<class>", "agmem_error", "error", "condition") whose
# message is the arguments pasted together, with no call; `fields` are further fields of the
# condition object (what a handler may want besides the message).
abort <- function(..., class = "argument", fields = list()) {
  stopifnot(class %in% names(error_classes))
  cond <- structure(
    c(list(message = paste0(...), call = NULL), fields),
    class = c(paste0("agmem_error_", class), "agmem_error", "error", "condition")
  )
  stop(cond)
}

# Signals a warning of class c("agmem_warning_<class>", "agmem_warning", "warning",
# "condition"), as abort() does an error.
warn <- function(..., class, fields = list()) {
  stopifnot(class %in% names(warning_classes))
  cond <- structure(
    c(list(message = paste0(...), call = NULL), fields),
    class = c(paste0("agmem_warning_", class), "agmem_warning", "warning", "condition")
  )
  warning(cond)
}

# An argument is not of the form the function takes: the error most checks raise.
stop_arg <- function(...) {
  abort(..., class = "argument")
}
