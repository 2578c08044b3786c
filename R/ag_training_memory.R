#' Predict the peak memory of a ggmlR training step
#'
#' Predicts the peak memory, on the host and on the device, of one training
#' step (forward, `backward()`, optimizer step) on ggmlR's autograd path, from
#' a model of what ggmlR 0.8.8.1 really allocates: bytes per parameter for the
#' weights, gradients, optimizer state and the step's temporaries, and bytes
#' per unit and sample for the activations and activation gradients of each op
#' of each layer.
#'
#' @param model An `"ag_model_spec"` from [ag_dense_stack()] or
#'   [ag_model_spec()], or a ggmlR model, which is passed through
#'   [ag_model_spec()] (with the loss `"mse"`; describe it with
#'   `ag_model_spec(model, loss = ...)` for another loss).
#' @param batch_size The batch size: a single whole number from 1 to
#'   `.Machine$integer.max`.
#' @param optimizer `"adam"` (ggmlR's `optimizer_adam()`), `"sgd"`
#'   (`optimizer_sgd()` with momentum) or `"sgd_plain"` (momentum 0).
#' @param device `"cpu"` (the host path: everything is an R double) or `"gpu"`
#'   (after `ag_device("gpu")`: weights and optimizer moments resident on the
#'   device).
#' @param dtype The `ag_dtype()` of the device buffers: `"f32"`, or `"f16"` or
#'   `"bf16"` with `device = "gpu"` only (on the host path `ag_dtype()` changes
#'   nothing, so another dtype with `"cpu"` is an error). ggmlR's graph
#'   backward runs in f32 only, so with `"f16"` or `"bf16"` `backward()` runs on
#'   the host, and agmem counts that path.
#' @param quiet `TRUE` to print nothing and only return the figures.
#' @param steps The training steps of the run the host peak is for: 100 by
#'   default, a whole run as the loop of ggmlR's autograd vignette writes it. R's
#'   garbage collector raises its trigger as a run goes on, so the peak of a run
#'   is far above that of its first steps; `steps = 3` gives the first three
#'   steps (the regime validated on them). With `device = "gpu"` it is the
#'   host's peak beside the device's pools (the pools do not grow over a run).
#' @param data_size The data your session holds in R's heap while it trains
#'   (the training set): bytes, a size such as `"200 MB"`, or what
#'   `object.size()` returns. R's trigger, and so the host peak, grows with it.
#'   agmem takes the data as made with one copy of itself for a moment, as
#'   `matrix(rnorm(n), p)`, `t()` or `as.matrix()` make it: R raises its trigger
#'   for that copy and keeps it there when the run does not need more (see
#'   Details). 0 by default.
#'
#' @details
#' Each figure is a rule times a count: bytes per parameter times the number of
#' parameters, or bytes per unit and sample times the layer's output width
#' (`units`) times `batch_size`; the loss counts on the output width, the data
#' (`"input"`) on the input width. Rules for the same component and place add
#' up. The peak on the device is the sum of its components. The rules live in
#' one table in agmem's C code, each with its source: a measurement (basis
#' `"measured"`, fitted on the fit grid of `inst/validation`) or ggmlR's source
#' code alone (`"source only"`: the f16 and bf16 figures, which cannot be
#' measured on the CPU backend).
#'
#' On the host, R's garbage collector decides the peak of a run (with
#' `device = "gpu"` too: the data, the mini-batches, the gradients the graph
#' hands back and the graph's R objects stay in R; a model with a batch norm,
#' a layer norm or an embedding, or in dtype f16 or bf16, runs its backward on
#' the host, as `"cpu"` does). R collects
#' only when its vector heap reaches a trigger, which starts
#' at 64 MiB and, after a full collection that finds much of the heap live,
#' grows (R's `src/main/memory.c`). Over a run of `steps` steps the heap climbs
#' to the trigger between collections, so the peak is where the trigger
#' settles for the bytes live at R's collections (on device `"cpu"`, expected
#' over the error of agmem's figure for them: the trigger grows in steps of a
#' fifth, and near a step either may be the run's), plus what the C allocator
#' keeps of the blocks R frees; a run too short to fill the heap peaks at what
#' it allocated, with the pages of R's nodes (cons cells: environments,
#' promises, every vector's header), which a step allocates by op, not by
#' unit, until R collects them at its node trigger. That is `host_peak`, and
#' `host_regime` has its parts. Where
#' the trigger settles depends on its history (the creation of the data, the
#' session's work before the loop, down to how many R objects it keeps: with
#' 10 000 more, one measured run peaked at 193 MiB instead of 246), which
#' agmem cannot see: it lies between
#' 1/0.7 and 1.2/0.7 of the heap needed (R's `R_VGrowFrac` and
#' `R_VGrowIncrFrac`), and where the heap needed passes the first trigger
#' `host_peak` puts it at the median place in that range of the measured
#' runs' triggers. A large data set moves it: made with one copy of itself
#' for a moment, it leaves R's trigger at 1.2 times the heap holding the data
#' twice, and where the run's heap needed is at most 0.7 of that R never grows
#' it, so the heap climbs to it between collections whatever the batch (and
#' with no copy, agmem's figure is over the run's; with more, under it).
#' `host_high` is the highest peak of the run: the step's
#' largest live heap (measured under `gctorture()`) with the trigger at the top
#' of that range, or at the data's trigger where that is higher.
#' [ag_max_batch_size()], [ag_memory_sweep()]'s summary and its
#' plot plan on `host_high`. With `steps <= 3` the figures are those of the
#' first three steps, the protocol of the three-step validation, and
#' `host_high` is `host_peak`; the data fills the first trigger's headroom, and
#' its making raises the trigger as above.
#'
#' R's collector can be set at start-up: `R_GC_MEM_GROW` (0 to 3),
#' `R_GC_GROWFRAC`, `R_GC_GROWINCRFRAC` and `R_GC_VGROWINCRFRAC` change how far
#' a full collection grows the trigger, `R_VSIZE` (or `--min-vsize`) sets the
#' first trigger. agmem reads them from this session's environment as R reads
#' them and computes the trigger with them, here and in the planners; the
#' report names them and `host_regime$collector` lists them. To plan for an R
#' process that will start with other settings, set them with [Sys.setenv()]
#' first. R's node settings (`R_NSIZE`, `R_GC_NGROWINCRFRAC`) are not
#' modelled, nor is a cap on the vector heap (`R_MAX_VSIZE`, `--max-vsize`,
#' [mem.maxVSize()]): the first give a warning of class
#' `agmem_warning_collector` when set, the cap when it is below the heap the
#' run may reach (or, planning, below the budget and the data).
#'
#' Measured in `inst/validation` (ggmlR 0.8.8.1, R 4.2.2, 2 cores; see
#' `vignette("checks")`): on configurations outside the fit grid, the device
#' pools are predicted within 2%; the peak of a 100-step run, whose garbage is
#' R's collector's choice, less closely.
#'
#' Layers that agmem does not model (see [ag_model_spec()]) have their
#' parameters counted but not their activations: they are listed in
#' `uncovered`, and the peak is then a lower bound.
#'
#' @return Invisibly, a list of class `"ag_training_memory"`: `host_peak`,
#'   `host_high` (the highest host peak of the run, which the planners plan on;
#'   `host_peak` itself for a run of up to three steps) and `device_peak`
#'   (bytes; `device_peak` is 0 with `device = "cpu"`),
#'   `components` (a data frame with the columns `component` (`"weights"`,
#'   `"gradients"`, `"optimizer_state"`, `"master_weights"`,
#'   `"step_transients"`, `"build_transients"`, `"activations"`,
#'   `"activation_gradients"`), `where` (`"host"` or `"device"`), `bytes` and
#'   `basis` (`"measured"`, or `"source only"` when any rule behind the figure
#'   is)), `params`, `batch_size`, `optimizer`, `device`, `dtype`, `loss`,
#'   `uncovered` (from the spec), `source_only` (`TRUE` when any figure is
#'   source only) and `host_regime`: for a whole run, a list of `run` (`"whole
#'   run"`), `steps`, `data_size`, `live` (the bytes live at R's collections),
#'   `trigger` (where R's trigger settles: on device `"cpu"`, expected over the
#'   error of `live`), `data_trigger` (R's trigger as making the data left it,
#'   `NA` where it stayed at R's first trigger), `ceiling` (the resident memory it
#'   allows), `allocated` (the bytes the run allocates, with what R's nodes
#'   add) and `binding`
#'   (`"collector"`, `"nodes"` (in resident mode, R's collections that its
#'   nodes set off hold the heap under the trigger) or `"allocated"`: the
#'   one that is the host peak) and
#'   `collector` (the settings of R's collector read from the environment
#'   that change R's defaults, as `"NAME=VALUE"`; empty with none); for a
#'   run of a few steps, `run` (`"few steps"`), `steps`, `data_size`,
#'   `data_trigger`, `allocated`, `headroom` (the collector's first trigger less
#'   the data, which making it may have raised), `collected` (the
#'   sum of the host components), `binding` (`"allocated"`, `"headroom"`
#'   or `"collected"`) and `collector`; and `beyond_validated`, what of
#'   the figure lies beyond the range the model was validated on (a batch size,
#'   a layer width or a parameter count larger than any measured; empty when
#'   nothing does). Unless `quiet`, the report of
#'   [format()][format.ag_training_memory] is printed. A model with parts agmem
#'   does not model gives a warning of class `agmem_warning_lower_bound`, and a
#'   figure beyond the validated range one of class `agmem_warning_range` (see
#'   [agmem_conditions]).
#'
#' @seealso [ag_dense_stack()], [ag_model_spec()],
#'   [print()][print.ag_training_memory]. [ag_estimate_training_memory()] is
#'   ggmlR's simpler formula.
#'
#' @examples
#' spec <- ag_dense_stack(c(784, 512, 512, 10), loss = "softmax_cross_entropy")
#' ag_training_memory(spec, batch_size = 64)
#'
#' # On the GPU, in f16 (figures from ggmlR's source only):
#' ag_training_memory(spec, batch_size = 64, device = "gpu", dtype = "f16")
#'
#' # The figures only:
#' mem <- ag_training_memory(spec, 256, optimizer = "sgd", quiet = TRUE)
#' mem$host_peak
#' mem$host_high
#' mem$components
#'
#' \dontrun{
#' # A ggmlR model (needs ggmlR):
#' model <- ggmlR::ag_sequential(
#'   ggmlR::ag_linear(784L, 512L, activation = "relu"),
#'   ggmlR::ag_linear(512L, 10L)
#' )
#' ag_training_memory(model, batch_size = 64)
#' }
#' @export
ag_training_memory <- function(model, batch_size = 32L, optimizer = c("adam", "sgd", "sgd_plain"),
                               device = c("cpu", "gpu"), dtype = c("f32", "f16", "bf16"),
                               quiet = FALSE, steps = 100, data_size = 0) {
  optimizer <- match_optimizer(optimizer)
  device <- match_choice(device, registry_names("devices"), "device")
  dtype <- match_choice(dtype, registry_names("dtypes"), "dtype")
  check_flag(quiet, "quiet")
  check_ggmlr_version()
  spec <- spec_on_device(as_model_spec(model, "model"), device, dtype)
  flat <- spec_ops(spec)
  collector <- collector_settings()
  run <- model_run(spec, steps, data_size, collector)
  fig <- .Call(agmem_training_memory, spec$shapes, flat$units, flat$ops, batch_size, optimizer,
               device, dtype, run)
  components <- structure(
    list(component = fig$component, where = fig$where, bytes = fig$bytes,
         basis = ifelse(fig$source_only, "source only", "measured")),
    class = "data.frame", row.names = seq_along(fig$bytes)
  )
  out <- structure(list(
    host_peak = fig$host_peak, host_high = fig$host_high, device_peak = fig$device_peak,
    components = components,
    params = fig$params, batch_size = as.double(batch_size), optimizer = optimizer,
    device = device, dtype = dtype, loss = spec$loss, uncovered = spec$uncovered,
    source_only = any(fig$source_only), host_regime = host_regime(fig, run, collector)
  ), class = "ag_training_memory")
  out$beyond_validated <- beyond_validated(spec, out$batch_size, fig$params)
  if (length(spec$uncovered) > 0L) {
    warn_lower_bound(spec, "model")
  }
  warn_range(out$beyond_validated)
  warn_collector(collector)
  if (!is.null(out$host_regime)) {
    # The heap the run reaches: R's trigger, or in a few steps what they hold or allocate.
    warn_capped(collector, if (out$host_regime$run == "whole run") {
      out$host_regime$trigger
    } else {
      out$host_peak + run[[3L]]
    })
  }
  if (!quiet) {
    print(out)
  }
  invisible(out)
}

# Warns (agmem_warning_lower_bound) that the figures of a spec with uncovered parts are a lower
# bound, naming the parts; `arg` names the model's argument.
warn_lower_bound <- function(spec, arg) {
  warn(
    "`", arg, "` has parts agmem does not model, whose activations are not counted: ",
    paste(spec$uncovered, collapse = "; "), ". The figures are a lower bound.",
    class = "lower_bound"
  )
}

# The host's garbage-collection regime from the C figures and the run (model_run()), or NULL
# when the device has none: for a whole run, its steps and data, the bytes live at R's
# collections, R's settled trigger, the ceiling it puts on the resident memory, the bytes
# allocated over the run and the settings of R's collector it was computed for (`collector`, the
# variables of collector_settings() that changed R's defaults); for a few steps, the collected
# heap, the first trigger's headroom, the bytes allocated and the settings. `binding` names the
# figure that is the host peak.
host_regime <- function(fig, run, collector) {
  if (is.na(fig$host_run)) {
    return(NULL)
  }
  if (fig$host_run == "whole run") {
    return(list(
      run = "whole run", steps = run[[1L]], data_size = run[[3L]], live = fig$host_held,
      trigger = fig$host_trigger, data_trigger = fig$host_data_trigger,
      ceiling = fig$host_bound, allocated = fig$host_allocated,
      binding = if (fig$host_allocated < fig$host_bound) {
        "allocated"
      } else if (!is.na(fig$host_nodes)) {
        "nodes"
      } else {
        "collector"
      },
      collector = collector$set
    ))
  }
  binding <- if (fig$host_allocated < max(fig$host_bound, fig$host_held)) {
    "allocated"
  } else if (fig$host_held > fig$host_bound) {
    "collected"
  } else {
    "headroom"
  }
  list(run = "few steps", steps = run[[1L]], data_size = run[[3L]],
       data_trigger = fig$host_data_trigger, allocated = fig$host_allocated,
       headroom = fig$host_bound, collected = fig$host_held, binding = binding,
       collector = collector$set)
}

#' Report of a predicted training-step peak
#'
#' Writes the prediction of [ag_training_memory()] as a report: the setting,
#' the peak on the host and on the device with their components, the layers
#' that are not modelled and the figures that come from ggmlR's source only.
#'
#' @param x An `"ag_training_memory"` from [ag_training_memory()].
#' @param units How to write byte counts: `"iec"` (the default: B, KiB, MiB,
#'   GiB, TiB, 1024-based, each count in the unit that suits it), `"si"` (B,
#'   kB, MB, GB, TB, 1000-based) or one unit of either, such as `"MiB"` or
#'   `"GB"`, for every count.
#' @param ... Ignored.
#'
#' @return `format()`: the lines of the report, a character vector.
#'   `print()`: `x`, invisibly, after writing the report.
#'
#' @examples
#' mem <- ag_training_memory(ag_dense_stack(c(784, 512, 10)), quiet = TRUE)
#' print(mem, units = "si")
#' format(mem, units = "MiB")
#' @export
format.ag_training_memory <- function(x, units = "iec", ...) {
  comp <- x$components
  mark <- ifelse(comp$basis == "source only", "  [source only]", "")
  label_width <- max(nchar(comp$component), 11L)
  all_bytes <- format_bytes_scaled(c(x$host_peak, x$device_peak, comp$bytes), units)
  value_width <- max(nchar(all_bytes))
  peak_lines <- function(where, peak_text, label) {
    rows <- comp$where == where
    c(
      sprintf("%-*s %*s", label_width + 2L, label, value_width, peak_text),
      sprintf("  %-*s %*s%s", label_width, comp$component[rows], value_width,
              format_bytes_scaled(comp$bytes[rows], units), mark[rows])
    )
  }
  lines <- c(
    sprintf(
      "Peak memory of training: %s, device %s, %s, batch %s",
      x$optimizer, x$device, x$dtype, formatC(x$batch_size, format = "f", digits = 0)
    ),
    sprintf("parameters: %s; loss %s",
            formatC(x$params, format = "f", digits = 0, big.mark = " "), x$loss),
    peak_lines("host", all_bytes[[1L]], "host peak")
  )
  r <- x$host_regime
  if (!is.null(r) && r$run == "whole run") {
    # The planners plan on the host's highest peak where the host limits the run, on the
    # device's pools elsewhere.
    planned <- if (planned_place(x$device) == "host") "planned on: " else ""
    regime_bytes <- format_bytes_scaled(c(r$live, r$trigger, r$allocated, r$data_size, x$host_high),
                                        units)
    lines <- c(
      lines,
      sprintf("  (a run of %s steps, %s of data held in R: live at R's collections %s;",
              formatC(r$steps, format = "f", digits = 0, big.mark = " "), regime_bytes[[4L]],
              regime_bytes[[1L]]),
      if (identical(r$trigger, r$data_trigger)) {
        sprintf(paste("   R's trigger stays at about %s, where making the data left it,",
                      "allocated over the run %s;"), regime_bytes[[2L]], regime_bytes[[3L]])
      } else {
        sprintf("   R's trigger settles at about %s, allocated over the run %s;",
                regime_bytes[[2L]], regime_bytes[[3L]])
      },
      sprintf("   the peak is %s)", switch(r$binding,
        collector = "R's heap at that trigger, as resident memory",
        nodes = "R's heap when its nodes set off a collection, under that trigger",
        "what the run allocates"
      )),
      sprintf("highest peak of the run %s (%sthe step's largest live heap, R's",
              regime_bytes[[5L]], planned),
      "  trigger at the top of the range it can settle in)"
    )
  } else if (!is.null(r)) {
    regime_bytes <- format_bytes_scaled(c(r$allocated, r$headroom, r$collected, r$data_size,
                                          r$data_trigger), units)
    lines <- c(
      lines,
      sprintf("  (a run of %s steps, R's collector as measured on 3; host peak = %s:",
              formatC(r$steps, format = "f", digits = 0, big.mark = " "), r$binding),
      if (!is.na(r$data_trigger)) {
        sprintf("   %s of data held in R, whose making raised R's first trigger to %s;",
                regime_bytes[[4L]], regime_bytes[[5L]])
      } else if (r$data_size > 0) {
        sprintf("   %s of data held in R, taken from the first trigger's headroom;",
                regime_bytes[[4L]])
      },
      sprintf("   allocated before R's first collection %s, collector headroom %s,",
              regime_bytes[[1L]], regime_bytes[[2L]]),
      sprintf("   collected heap %s)", regime_bytes[[3L]])
    )
  }
  if (length(r$collector) > 0L) {
    lines <- c(lines, paste0("R's collector as the environment sets it: ",
                             paste(r$collector, collapse = ", ")))
  }
  if (planned_place(x$device) == "host") {
    lines <- c(lines, sprintf("device peak: none (device \"%s\")", x$device))
  } else {
    lines <- c(lines, peak_lines("device", all_bytes[[2L]], "device peak"))
  }
  if (length(x$uncovered) > 0L) {
    lines <- c(
      lines,
      "Not modelled (the peak is a lower bound):",
      paste0("  ", x$uncovered)
    )
  }
  if (length(x$beyond_validated) > 0L) {
    lines <- c(
      lines,
      "Beyond what the model was validated on (measure the step to be sure):",
      paste0("  ", x$beyond_validated)
    )
  }
  if (isTRUE(x$source_only)) {
    lines <- c(
      lines,
      paste(
        "[source only]: from ggmlR 0.8.8.1's source code, not measured",
        if (x$dtype != "f32") "(f16 and bf16 cannot be measured on the CPU backend)" else ""
      )
    )
  }
  trimws(lines, which = "right")
}

#' @rdname format.ag_training_memory
#' @export
print.ag_training_memory <- function(x, units = "iec", ...) {
  cat(format(x, units = units), sep = "\n")
  invisible(x)
}

# The rule tables of the C model as five data frames, `param` (bytes per parameter), `unit`
# (bytes per unit and sample), each row with its basis, citation and source-counted allocations,
# `gc` (the host's garbage-collection figures), `live` (a whole run's live, retained and step's
# largest bytes and R's nodes) and `host` (the host's allocation in resident mode): for tests,
# inspection and inst/validation.
training_rules <- function() {
  rules <- .Call(agmem_training_rules)
  lapply(rules, as.data.frame, stringsAsFactors = FALSE)
}
