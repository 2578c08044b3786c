# validate-long.R: measured peaks of whole training loops against agmem's whole-run model.
#
#   Rscript inst/validation/validate-long.R --grid=long_subset          # what CI runs
#   Rscript inst/validation/validate-long.R --grid=long_holdout --out=measurements-long-holdout.csv
#   Rscript inst/validation/validate-long.R --from-csv=inst/validation/measurements-long-holdout.csv
#   Rscript inst/validation/validate-long.R --grid=long_fit --steps=5 --torture=true \
#     --measure-only --out=measurements-step-max.csv    # the step's largest live heap
#     (and --grid=long_holdout, --out=measurements-step-max-holdout.csv: the same, held out)
#   Rscript inst/validation/validate-long.R --grid=layers_fit --torture=true --measure-only \
#     --out=measurements-layers-fit.csv                 # batch norm, dropout, layer norm
#   Rscript inst/validation/validate-long.R --grid=layers_holdout  # their goal, in CI
#   (and --grid=layers_eval_fit, layers_eval_holdout: a batch norm in eval mode;
#   --grid=layers_holdout_gpu: the layers' holdout in resident mode, ag_device("gpu"), judged on
#   the host, the RSS growth less the device pools, and on the pools; --grid=layers_dropout_gpu
#   and layers_dropout_holdout_gpu: a dropout alone in resident mode, its fit and holdout;
#   --grid=layers_host_gpu --torture=true: the host path's own figures in resident mode, the fit
#   grid's runs with a batch norm or a layer norm, fitted by fit-layers.R)
#   Rscript inst/validation/validate-long.R --grid=embed_fit --torture=true --measure-only \
#     --out=measurements-embed-fit.csv                  # ag_embedding(); --grid=embed_holdout
#   (and --grid=embed_fit_gpu, embed_holdout_gpu: the same in resident mode)
#   (and --grid=attention_fit, attention_holdout: ag_multihead_attention(); and
#   attention_dropout_holdout and attention_dropout_step: the same with its attention dropout on;
#   attention_causal_fit and attention_causal_holdout: the same called with a causal mask, and
#   attention_causal_gpu: the mask on the attention fit grid in resident mode; attention_host_gpu:
#   that grid in resident mode with a layer norm in every run, whose backward then runs in R;
#   flash_fit, flash_fit_wide and flash_holdout: a block around ag_flash_attention(), and
#   flash_holdout_gpu: its holdout in resident mode, flash_host_gpu: its fit grid in resident mode
#   with a layer norm in every run; layers_eval_holdout_gpu: the eval batch norm's holdout in
#   resident mode;
#   activations_fit, activations_softmax and activations_wide, activations_holdout: sigmoid,
#   softmax and ag_cross_entropy_loss(), fitted by fit-layers.R; checkpoint: ag_checkpoint()
#   around two layers, described by them, and the same plainly (checkpointed: the checkpointed
#   runs alone; checkpoint_gpu: all in resident mode, checkpointed_gpu: its checkpointed runs
#   alone; checkpoint_holdout: six more stacks with
#   segments of two to four layers, held out, and checkpointed_holdout: its checkpointed runs
#   alone); host_alloc_gpu: the long fit grid in resident mode run for 3 and for 8 steps with
#   R's triggers out of reach, the host's allocation that fit-long.R fits (each row's `steps`
#   taking the place of --steps), and host_alloc_layers_gpu: the same for the layers' ops it
#   has not (dropout, sigmoid, softmax, ag_cross_entropy_loss()); collector: six holdout
#   configurations run with R_GC_MEM_GROW or R_VSIZE set, judged with them; --collector=ignore judges them as if
#   they had run with R's defaults, as agmem did before it read the settings; data_held: ten
#   models holding a data set of 8 000 to 200 000 samples, run with --samples for 100 and for 3
#   steps, on the CPU and three in resident mode, judged on measurements-data-held.csv and
#   measurements-data-held-gpu.csv; a run's `samples` column, where it has one, is the data set
#   judged as its data_size, and a run of fewer than 100 steps is judged on its last step's peak)
#   (--every=2 runs every second configuration of the grid, the first, third, ...: CI's share
#   of the slow grids; --measure-only stops after measuring; --markdown prints the table in
#   Markdown; --torture runs one more step under gctorture(), see measure-long.R)
#   Rscript inst/validation/validate-long.R --by-layer \
#     --from-csv=inst/validation/measurements-long-holdout.csv,inst/validation/...
#   Rscript inst/validation/validate-long.R \
#     --from-csv=inst/validation/measurements-long-holdout.csv \
#     --repeats=inst/validation/measurements-long-holdout-again.csv,...
#   (--repeats: the same runs measured again; prints agmem's figures against each measurement,
#   how far apart the measurements of one configuration lie and, with three or more, each
#   against the median of the others: how near the draws alone let an estimate come)
#   Rscript inst/validation/validate-long.R --history \
#     --from-csv=inst/validation/measurements-history.csv
#   (--grid=history: the long holdout run with 0, 10 000 and 30 000 more of R's nodes live
#   before the loop; --history prints agmem against each, as --repeats does, and against the
#   median of each configuration's peaks)
#   (--from-csv takes several files, comma-separated; --by-layer prints, for each op of the rule
#   table the runs have, how many runs have it and their shares within tolerance and under
#   host_high, in place of the table of runs)
#
# Each configuration (grids.R, draw_long_grid()) runs in a fresh R process (measure-long.R):
# 100 steps of the loop of ggmlR's autograd vignette. The table printed has the peak at steps 3,
# 20 and 100 and agmem's host_peak for a run of 100 steps. The goal (issue 15): at least 90% of
# the configurations within max(15%, 8 MB) of the 100-step peak, none under-predicted by more
# than 15%. Exit status 1 when it is missed. Needs ggmlR and agmem installed; Linux.
# grid_long_fit() is what the live and rss figures of src/rules.c are fitted on
# (measurements-long-fit.csv); grid_long_holdout() is what the goal is judged on
# (measurements-long-holdout.csv); grid_long_subset() is the part of it CI runs. The layers'
# grids (grid_layers_fit(), grid_layers_holdout()) add batch norm, dropout and layer norm after
# the hidden layers (issue 16); their figures are fitted by fit-layers.R.

here <- local({
  file_arg <- grep("^--file=", commandArgs(FALSE), value = TRUE)
  if (length(file_arg)) dirname(normalizePath(sub("^--file=", "", file_arg[1L]))) else "."
})
source(file.path(here, "grids.R"))
source(file.path(here, "harness.R"))

args <- commandArgs(trailingOnly = TRUE)
opt <- list(grid = "long_subset", from_csv = "", out = "", measure_only = "false",
            markdown = "false", steps = "100", torture = "false", by_layer = "false",
            repeats = "", every = "1", collector = "read", history = "false")
for (a in args) {
  kv <- regmatches(a, regexec("^--([a-z_-]+)(=(.*))?$", a))[[1]]
  key <- gsub("-", "_", kv[2])
  if (length(kv) < 2L || !key %in% names(opt)) stop("unknown argument: ", a, call. = FALSE)
  opt[[key]] <- if (nzchar(kv[3])) kv[4] else "true"
}

# A run's configuration, as one string.
run_key <- function(x) paste(x$widths, x$batch, x$optimizer, x$activation, x$loss, x$variant)

# The 100-step peaks of the tables `others` for the runs of `m`, a column a table: by position
# where a table has the same configurations in the same order (a configuration the grid has
# twice keeps its own runs), else by configuration (NA where a table lacks it).
paired_peaks <- function(m, others) {
  vapply(others, function(x) {
    if (identical(run_key(x), run_key(m))) x$peak_100 else x$peak_100[match(run_key(m), run_key(x))]
  }, numeric(nrow(m)))
}

# The same configurations measured again (`again`: tables of the same runs, read_runs_csv()),
# against the first measurement `m` (judged, judge_runs()): for each measurement, agmem's share
# within tolerance, its under-predictions and how often host_high held; then how many pairs of
# measurements of one configuration lie further apart than the tolerance, and the configurations
# whose measurements differ most.
print_repeats <- function(m, again) {
  peaks <- cbind(m$peak_100, paired_peaks(m, again))
  for (k in seq_len(ncol(peaks))) {
    p <- peaks[, k]
    ok <- !is.na(p)
    cat(sprintf(paste0("measurement %d (%d runs): %.1f%% within max(15%%, 8 MB), %d under by ",
                       "more than 15%%, at or under host_high in %d (measured / host_high at ",
                       "most %.3f)\n"), k, sum(ok), 100 * mean(within_tolerance(m$agmem, p)[ok]),
                sum(under_by_15(m$agmem[ok], p[ok])), sum(p[ok] <= m$high[ok]),
                max(p[ok] / m$high[ok])))
  }
  apart <- 0L
  n <- 0L
  for (a in seq_len(ncol(peaks) - 1L)) {
    for (b in (a + 1L):ncol(peaks)) {
      d <- abs(peaks[, a] - peaks[, b]) > pmax(0.15 * pmin(peaks[, a], peaks[, b]), 8e6)
      apart <- apart + sum(d, na.rm = TRUE)
      n <- n + sum(!is.na(d))
    }
  }
  cat(sprintf(paste0("pairs of measurements of one configuration further apart than ",
                     "max(15%%, 8 MB): %d of %d\n"), apart, n))
  # How far the draws alone let any estimate go: each measurement against the median of the
  # other measurements of its configuration, an estimate that knows every configuration's
  # peaks but not which draw a run is.
  if (ncol(peaks) > 2L) {
    for (k in seq_len(ncol(peaks))) {
      others <- apply(peaks[, -k, drop = FALSE], 1L, stats::median, na.rm = TRUE)
      ok <- !is.na(peaks[, k]) & !is.na(others)
      cat(sprintf(paste0("measurement %d against the median of the others: %.1f%% within ",
                         "max(15%%, 8 MB), %d under by more than 15%%\n"), k,
                  100 * mean(within_tolerance(others[ok], peaks[ok, k])),
                  sum(under_by_15(others[ok], peaks[ok, k]))))
    }
  }
  spread <- apply(peaks, 1L, max, na.rm = TRUE) / apply(peaks, 1L, min, na.rm = TRUE)
  top <- utils::head(order(-spread), 6L)
  cat("the configurations whose measurements differ most (MiB at step 100; agmem's host_peak):\n")
  for (i in top) {
    cat(sprintf("  %-40s %5d %-9s %s; agmem %.1f\n", m$widths[i], as.integer(m$batch[i]),
                m$optimizer[i], paste(sprintf("%.1f", peaks[i, ] / 2^20), collapse = ", "),
                m$agmem[i] / 2^20))
  }
}

# The runs of grid_history() (judged, judge_runs()): each configuration measured with 0, 10 000
# and 30 000 more of R's nodes live (`pad_nodes`). Prints print_repeats() of the three, and
# agmem against each and against the median of each configuration's peaks; with `markdown`, that
# last as a table.
print_history <- function(m, markdown = FALSE) {
  if (is.null(m$pad_nodes) || length(unique(m$pad_nodes)) < 2L) {
    stop("`--history` needs runs of grid_history(): several values of pad_nodes", call. = FALSE)
  }
  by_pad <- split(m, m$pad_nodes)
  first <- by_pad[[1L]]
  # The grid runs the holdout in its order for each count of nodes (a configuration it has
  # twice is two runs of each), so the runs pair by position.
  if (!all(vapply(by_pad, function(x) identical(run_key(x), run_key(first)), TRUE))) {
    stop("`--history` needs the same configurations, in the same order, for each pad_nodes",
         call. = FALSE)
  }
  peaks <- paired_peaks(first, by_pad)
  med <- apply(peaks, 1L, stats::median, na.rm = TRUE)
  if (!markdown) {
    cat(sprintf("measurements in the order of pad_nodes: %s\n",
                paste(names(by_pad), collapse = ", ")))
    print_repeats(first, by_pad[-1L])
    cat(sprintf(paste0("against the median of each configuration's %d peaks: %.1f%% within ",
                       "max(15%%, 8 MB), %d under by more than 15%%\n"), ncol(peaks),
                100 * mean(within_tolerance(first$agmem, med)),
                sum(under_by_15(first$agmem, med))))
    return(invisible())
  }
  cat("| more nodes live before the loop | within max(15%, 8 MB) | under by more than 15% |",
      "at or under `host_high` |\n|---|---:|---:|---:|\n")
  row <- function(label, p, high) {
    held <- if (is.null(high)) "-" else {
      over <- max(p / high)
      sprintf("%d of %d%s", sum(p <= high), length(p),
              if (over > 1) sprintf(" (%.3f of it)", over) else "")
    }
    cat(sprintf("| %s | %.1f%% | %d | %s |\n", label, 100 * mean(within_tolerance(first$agmem, p)),
                sum(under_by_15(first$agmem, p)), held))
  }
  for (k in seq_along(by_pad)) {
    pad <- as.numeric(names(by_pad)[k])
    row(if (pad == 0) "none" else formatC(pad, format = "d", big.mark = " "), peaks[, k],
        first$high)
  }
  row("the median of each configuration's runs", med, NULL)
}

if (nzchar(opt$from_csv)) {
  m <- read_runs_csv(strsplit(opt$from_csv, ",", fixed = TRUE)[[1]])
} else {
  grids <- list(long_fit = grid_long_fit, long_holdout = grid_long_holdout,
                long_subset = grid_long_subset, layers_fit = grid_layers_fit,
                layers_holdout = grid_layers_holdout, layers_eval_fit = grid_layers_eval_fit,
                layers_holdout_gpu = grid_layers_holdout_gpu,
                layers_dropout_gpu = grid_layers_dropout_gpu,
                layers_host_gpu = grid_layers_host_gpu,
                layers_dropout_holdout_gpu = grid_layers_dropout_holdout_gpu,
                long_fit_gpu = grid_long_fit_gpu, long_holdout_gpu = grid_long_holdout_gpu,
                step_max_gpu = grid_step_max_gpu,
                layers_eval_holdout = grid_layers_eval_holdout,
                layers_eval_holdout_gpu = grid_layers_eval_holdout_gpu, embed_fit = grid_embed_fit,
                embed_holdout = grid_embed_holdout, embed_fit_gpu = grid_embed_fit_gpu,
                embed_holdout_gpu = grid_embed_holdout_gpu, attention_fit = grid_attention_fit,
                attention_wide = grid_attention_wide,
                attention_heads = grid_attention_heads,
                attention_optim = grid_attention_optim,
                attention_fit_gpu = grid_attention_fit_gpu,
                attention_host_gpu = grid_attention_host_gpu,
                flash_host_gpu = grid_flash_host_gpu,
                attention_causal_gpu = grid_attention_causal_gpu,
                attention_holdout_gpu = grid_attention_holdout_gpu,
                flash_fit_gpu = grid_flash_fit_gpu,
                attention_holdout = grid_attention_holdout,
                attention_dropout_holdout = grid_attention_dropout_holdout,
                attention_dropout_step = grid_attention_dropout_step,
                attention_causal_fit = grid_attention_causal_fit,
                attention_causal_holdout = grid_attention_causal_holdout,
                flash_fit = grid_flash_fit, flash_fit_narrow = grid_flash_fit_narrow,
                flash_fit_wide = grid_flash_fit_wide,
                flash_holdout = grid_flash_holdout, flash_holdout_gpu = grid_flash_holdout_gpu,
                history = grid_history,
                activations_fit = grid_activations_fit,
                activations_softmax = grid_activations_softmax,
                activations_wide = grid_activations_wide,
                activations_holdout = grid_activations_holdout,
                activations_holdout_softmax = grid_activations_holdout_softmax,
                activations_wide_gpu = grid_activations_wide_gpu,
                activations_holdout_gpu = grid_activations_holdout_gpu,
                checkpoint = grid_checkpoint, checkpointed = grid_checkpointed,
                checkpoint_holdout = grid_checkpoint_holdout,
                checkpointed_holdout = grid_checkpointed_holdout,
                checkpoint_gpu = grid_checkpoint_gpu, checkpointed_gpu = grid_checkpointed_gpu,
                host_alloc_gpu = grid_host_alloc_gpu,
                host_alloc_layers_gpu = grid_host_alloc_layers_gpu,
                collector = grid_collector, data_held = grid_data_held)
  if (!opt$grid %in% names(grids)) {
    stop("`--grid` must be one of ", paste(names(grids), collapse = ", "), call. = FALSE)
  }
  g <- grids[[opt$grid]]()
  every <- suppressWarnings(as.integer(opt$every))
  if (is.na(every) || every < 1L) {
    stop("`--every` must be a whole number of 1 or more", call. = FALSE)
  }
  g <- g[seq(1L, nrow(g), by = every), , drop = FALSE]
  if (nzchar(opt$out) && file.exists(opt$out)) stop("`--out` exists already: ", opt$out)
  rows <- list()
  t0 <- proc.time()[["elapsed"]]
  for (i in seq_len(nrow(g))) {
    steps <- as.integer(field_of(g, "steps", i, opt$steps))
    r <- run_long(g[i, ], list(steps = steps, torture = opt$torture))
    if (is.null(r)) next
    rows[[length(rows) + 1L]] <- r
    if (nzchar(opt$out)) {
      utils::write.table(r, opt$out, sep = ",", row.names = FALSE,
                         append = file.exists(opt$out), col.names = !file.exists(opt$out))
    }
    message(sprintf("%d/%d %s%s: %.1f MB, %.0f s", i, nrow(g), long_keys(g[i, ]),
                    if (is.null(g$after)) "" else paste0(" after ", g$after[i]), r$peak / 1e6,
                    proc.time()[["elapsed"]] - t0))
  }
  m <- do.call(rbind, rows)
}
if (identical(opt$measure_only, "true")) quit(status = 0)

# ---- predictions and the goal ----

if (!requireNamespace("agmem", quietly = TRUE)) {
  stop("validate-long.R needs agmem installed", call. = FALSE)
}
mib <- 2^20
if (!opt$collector %in% c("read", "ignore")) {
  stop("`--collector` must be read or ignore", call. = FALSE)
}
m <- judge_runs(m, collector = opt$collector == "read")
if (nzchar(opt$repeats)) {
  print_repeats(m, lapply(strsplit(opt$repeats, ",", fixed = TRUE)[[1]], read_runs_csv))
  quit(status = 0)
}
if (identical(opt$history, "true")) {
  print_history(m, opt$markdown == "true")
  quit(status = 0)
}
if (identical(opt$by_layer, "true")) {
  print_by_layer(m, opt$markdown == "true")
  quit(status = 0)
}

m$label <- vapply(seq_len(nrow(m)), function(i) {
  run_label(m$widths[i], field_of(m, "after", i, "none"), field_of(m, "embed", i, 0),
            field_of(m, "heads", i, 1), field_of(m, "collector", i, "none"),
            field_of(m, "samples", i, NA), m$batch[i], field_of(m, "steps", i, 100))
}, "")
fmt_mb <- function(x) ifelse(is.finite(x), sprintf("%8.1f", x / mib), "       -")
# The host's peaks at steps 3, 20 and 100: the RSS growth, less the device pools (which do not
# change from step to step) in resident mode.
for (s in c("peak_3", "peak_20", "peak_100")) m[[s]] <- m[[s]] - m$pools
if (identical(opt$markdown, "true")) {
  cat("| layers (widths) | batch | optimizer | activation | loss | step 3 MiB | step 20 MiB |",
      "step 100 MiB | agmem MiB | agmem / step 100 |\n")
  cat("|---|---:|---|---|---|---:|---:|---:|---:|---:|\n")
  for (i in seq_len(nrow(m))) {
    cat(sprintf("| %s | %d | %s | %s | %s | %s | %s | %s | %s | %.2f |\n",
                gsub("-", " ", m$label[i], fixed = TRUE), as.integer(m$batch[i]),
                m$optimizer[i], m$activation[i], m$loss[i], trimws(fmt_mb(m$peak_3[i])),
                trimws(fmt_mb(m$peak_20[i])), trimws(fmt_mb(m$peak_100[i])),
                trimws(fmt_mb(m$agmem[i])), m$ratio[i]))
  }
  cat("\n")
} else {
  cat(sprintf("%-40s %5s %-9s %-5s %-21s %8s %8s %8s %8s %6s\n", "widths", "batch", "optimizer",
              "var", "loss", "step 3", "step 20", "step 100", "agmem", "a/m"))
  for (i in seq_len(nrow(m))) {
    cat(sprintf("%-40s %5d %-9s %-5s %-21s %s %s %s %s %6.2f%s\n", m$label[i],
                as.integer(m$batch[i]), m$optimizer[i], m$variant[i], m$loss[i],
                fmt_mb(m$peak_3[i]), fmt_mb(m$peak_20[i]), fmt_mb(m$peak_100[i]),
                fmt_mb(m$agmem[i]), m$ratio[i],
                if (!m$modelled[i]) "  (not modelled)" else if (m$within[i]) "" else "  *"))
  }
  cat("(MiB: the host RSS growth at steps 3, 20 and 100 of the loop, less the device pools in",
      "resident mode, and agmem's host_peak for the run's steps; * outside max(15%, 8 MB))\n")
}
# A run whose model agmem lists as not modelled is shown (its figure a lower bound), not judged.
if (any(!m$modelled)) {
  cat(sprintf("%d run(s) with a layer agmem does not model on their device, not judged: %s\n",
              sum(!m$modelled), paste(m$label[!m$modelled], collapse = "; ")))
  m <- m[m$modelled, ]
}
share <- mean(m$within)
n_under <- sum(m$under15)
cat(sprintf(paste0("\n%d configurations: %.1f%% within max(15%%, 8 MB) of the 100-step peak ",
                   "(goal: 90%%), %d under-predicted by more than 15%% (goal: 0); ",
                   "agmem / measured from %.2f to %.2f, median %.2f\n"),
            nrow(m), 100 * share, n_under, min(m$ratio), max(m$ratio), stats::median(m$ratio)))
cat(sprintf(paste0("the highest peak (host_high, what the planners plan on%s) was at or ",
                   "above the measured peak in %d of %d; measured / host_high from %.2f to ",
                   "%.2f, median %.2f\n"),
            if (all(m$pools == 0)) "" else " on the CPU; on \"gpu\" they plan on the pools",
            sum(m$measured <= m$high), nrow(m),
            min(m$measured / m$high), max(m$measured / m$high),
            stats::median(m$measured / m$high)))
gpu <- m$pools > 0
if (any(gpu)) {
  cat(sprintf(paste0("resident mode: the device pools after the last step against agmem's ",
                     "device_peak in %d runs: agmem / measured from %.4f to %.4f\n"),
              sum(gpu), min(m$agmem_device[gpu] / m$pools[gpu]),
              max(m$agmem_device[gpu] / m$pools[gpu])))
}
if (share < 0.9 || n_under > 0L) {
  cat("goal missed\n")
  quit(status = 1)
}
cat("goal met\n")
