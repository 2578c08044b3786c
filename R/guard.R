#' Run a training loop held to its memory budget
#'
#' Evaluates `expr` (your training loop) with R's vector heap capped, through
#' [mem.maxVSize()], at what it holds now plus `budget`, and restores the cap
#' it had afterwards, however `expr` ends. A loop that would grow past the
#' budget then stops with an R error of class `agmem_error_budget` instead of
#' being killed by the system for lack of memory: your session, and the data
#' and the model in it, stay intact.
#'
#' @param expr The code to run, such as a `for` loop of training steps. It is
#'   evaluated in the caller's environment.
#' @param budget The memory the run may add to R's vector heap: bytes as a
#'   number, or a string such as `"2 GiB"` or `"2 GB"`, read as
#'   [ag_max_batch_size()] reads it; `NULL` means the memory available now.
#'   Pass the budget you planned the batch size with.
#'
#' @details
#' On ggmlR's host path (`device = "cpu"`) the weights, gradients, optimizer
#' state and the tape are R vectors, so R's vector heap holds nearly all of a
#' training run's memory: the cap bounds it. R's collector also runs whenever
#' the heap reaches the cap, rather than letting garbage pile up to its own,
#' higher, trigger, so a capped loop that fits peaks lower than the same loop
#' uncapped, at the price of more collections. Memory that ggml allocates
#' itself (the device pools of `ag_device("gpu")`, ggml's contexts) is outside
#' R's heap and not capped, and the process's resident memory also holds
#' what the C allocator keeps, so the peak RSS growth can exceed the cap.
#'
#' Measured with `inst/bench/guard.R` (a 784-512-512-10 model, Adam, batch
#' 256, 100 steps of shuffled mini-batches, each run in a fresh R process, on
#' 2 shared cores): uncapped, the peak RSS growth was 150.8 MiB in 23.7 s (2.4 s
#' of it collecting garbage); with budgets of 512, 256 and 160 MiB, 144.2 MiB in
#' 22 to 26 s; with 96 MiB, 110.0 MiB in 23.7 s, of which 5.1 s collecting. All
#' completed.
#'
#' R keeps its cap at or above its collector's current trigger (64 MiB at the
#' start of a session, more once the heap has grown): a budget that puts the
#' cap below it is capped at the trigger, with a warning of class
#' `agmem_warning_cap`. Use it for a long run planned close to the memory there
#' is, where being killed would lose work; [mem.maxVSize()] needs R 4.1 or
#' later.
#'
#' @return The value of `expr`.
#'
#' @seealso [ag_max_batch_size()] to plan the batch size for the budget.
#'
#' @examples
#' x <- ag_within_budget(sum(runif(1e5)), "256 MiB")
#'
#' # A step that needs more than the budget stops with a classed error:
#' tryCatch(
#'   ag_within_budget(numeric(1e8), "256 MiB"),
#'   agmem_error_budget = function(e) conditionMessage(e)
#' )
#' @export
ag_within_budget <- function(expr, budget) {
  limit <- parse_budget(budget)
  if (!exists("mem.maxVSize", envir = baseenv(), inherits = FALSE)) {
    abort("`ag_within_budget()` caps R's vector heap with mem.maxVSize(), which needs R 4.1 or ",
          "later; this is R ", format(getRversion()), ".", class = "unavailable")
  }
  old <- mem.maxVSize()
  heap <- vector_heap()
  want <- heap[["used"]] + limit
  # R keeps a cap no lower than its collector's trigger (R_SetMaxVSize() in R's memory.c
  # refuses one below R_VSize), so a budget under the trigger is capped at the trigger.
  cap <- min(old, max(want, heap[["trigger"]]))
  on.exit(mem.maxVSize(old), add = TRUE)
  # R 4.5 warns, and keeps its cap, when asked for one below its current usage: that case is
  # the trigger's below, and the warning is agmem's classed one.
  suppressWarnings(mem.maxVSize(cap / 2^20))
  if (want < heap[["trigger"]] && cap < old) {
    warn(
      "R's collector trigger is at ", format_bytes_scaled(heap[["trigger"]]), " already, above ",
      "the heap in use plus `budget` (", format_bytes_scaled(want), "), and R does not cap its ",
      "heap below its trigger: the cap is at the trigger, so the run may use up to ",
      format_bytes_scaled(heap[["trigger"]] - want), " more than the budget.",
      class = "cap"
    )
  }
  withCallingHandlers(
    expr,
    error = function(e) {
      if (is_heap_limit_error(conditionMessage(e))) {
        abort(
          "The run reached its memory budget of ", format_bytes_scaled(limit), " (R's vector ",
          "heap capped at ", format_bytes_scaled(cap), " by ag_within_budget()) and was ",
          "stopped with this error instead of the system's out-of-memory killer; the session and ",
          "its data are intact. Plan a smaller batch with ag_max_batch_size(), or give a larger ",
          "`budget`.",
          class = "budget", fields = list(budget = limit, cap = cap)
        )
      }
    }
  )
}

# R's vector heap after a full collection, in bytes: `used` (gc()'s Vcells in use) and
# `trigger` (the size at which R collects next), 8 bytes a Vcell.
vector_heap <- function() {
  g <- gc()
  c(used = g[2L, 1L] * 8, trigger = g[2L, 3L] * 8)
}

# Whether `message` is R's error for an allocation past mem.maxVSize(), in this session's
# language: "vector memory exhausted (limit reached?)" up to R 4.2, "vector memory limit of 1.5
# Gb reached, see mem.maxVSize()" from R 4.3 on (R's memory.c, mem_err_heap()).
is_heap_limit_error <- function(message) {
  templates <- c(gettext("vector memory exhausted (limit reached?)", domain = "R"),
                 gettext("vector memory limit of %0.1f %s reached, see mem.maxVSize()",
                         domain = "R"))
  patterns <- vapply(templates, function(t) {
    t <- gsub("([][{}()+*^$|\\\\?.])", "\\\\\\1", t)
    t <- gsub("%0\\.1f", "[0-9.,]+", t, fixed = TRUE)
    paste0("^", gsub("%s", "\\S+", t, fixed = TRUE), "$")
  }, "")
  any(vapply(patterns, grepl, logical(1), x = message))
}
