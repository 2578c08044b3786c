# Benchmark of agmem's ag_estimate_training_memory() against a pure-R implementation of the same
# contract (validation included) and against a floor: a bare C loop over the same list that only
# reads each element's length. Prints a table of sizes, median times, ratios, time per shape and
# memory allocated per call.
#
# Run with the package installed:  Rscript inst/bench/bench.R   (needs bench and a C compiler)
# Environment: AGMEM_BENCH_SIZES, e.g. "1,1000,100000,1000000" (the default).

suppressPackageStartupMessages({
  library(agmem)
  library(bench)
})

# The same contract in plain R: argument checks, shape validation and the formula, left to right,
# each shape's product by prod() as ggmlR computes it.
pure_r_estimate <- function(shapes, batch_size = 32L, optimizer = c("adam", "sgd", "sgd_plain"),
                            activation_frac = 0.01, quiet = FALSE) {
  optimizer <- match.arg(optimizer)
  if (!is.logical(quiet) || length(quiet) != 1L || is.na(quiet)) stop("`quiet`", call. = FALSE)
  if (!is.numeric(batch_size) || length(batch_size) != 1L || is.na(batch_size) ||
    batch_size < 1 || batch_size > .Machine$integer.max || batch_size != floor(batch_size)) {
    stop("`batch_size`", call. = FALSE)
  }
  if (!is.numeric(activation_frac) || length(activation_frac) != 1L ||
    !is.finite(activation_frac) || activation_frac < 0) {
    stop("`activation_frac`", call. = FALSE)
  }
  if (is.numeric(shapes) && !is.object(shapes)) shapes <- list(shapes)
  if (!is.list(shapes) || is.object(shapes) || length(shapes) == 0L) {
    stop("`shapes` must be non-empty", call. = FALSE)
  }
  n <- 0
  for (i in seq_along(shapes)) {
    s <- shapes[[i]]
    if (!is.numeric(s) || is.object(s) || length(s) == 0L || anyNA(s) ||
      any(!is.finite(s) | s < 1 | s != floor(s))) {
      stop("`shapes`: shape ", i, " must hold positive whole numbers", call. = FALSE)
    }
    n <- n + prod(as.double(s))
  }
  k <- c(adam = 2, sgd = 1, sgd_plain = 0)[[optimizer]]
  weights <- n * 8
  optimizer_bytes <- n * 8 * k
  activations <- weights * activation_frac * batch_size
  total <- weights + weights + optimizer_bytes + activations
  if (!is.finite(total)) stop("overflow", call. = FALSE)
  invisible(list(params = n, weights = weights, gradients = weights, optimizer = optimizer_bytes,
                 activations = activations, total = total, bytes_per_scalar = 8, note = ""))
}

# The floor: a C loop that only reads each element's length.
floor_src <- file.path(tempdir(), "agmem_floor.c")
writeLines(c(
  "#include <Rinternals.h>",
  "SEXP agmem_bench_floor(SEXP x) {",
  "  R_xlen_t n = XLENGTH(x); double s = 0;",
  "  for (R_xlen_t i = 0; i < n; i++) s += (double) XLENGTH(VECTOR_ELT(x, i));",
  "  return ScalarReal(s);",
  "}"
), floor_src)
status <- system2(file.path(R.home("bin"), "R"), c("CMD", "SHLIB", shQuote(floor_src)),
                  stdout = FALSE, stderr = FALSE)
if (status != 0) stop("could not compile the floor loop")
floor_dll <- dyn.load(sub("\\.c$", .Platform$dynlib.ext, floor_src))
floor_loop <- getNativeSymbolInfo("agmem_bench_floor", floor_dll)

sizes <- as.numeric(strsplit(Sys.getenv("AGMEM_BENCH_SIZES", "1,1000,100000,1000000"), ",")[[1]])
rows <- lapply(sizes, function(n) {
  # Distinct vectors, as a real list of shapes has, not one vector repeated.
  shapes <- lapply(seq_len(n), function(i) c(i %% 1024 + 1, 128))
  stopifnot(identical(
    ag_estimate_training_memory(shapes, quiet = TRUE)[1:6],
    pure_r_estimate(shapes)[1:6]
  ))
  # Warm-up, so that the first expression timed does not pay for the session's first calls.
  for (i in seq_len(max(1, 1e4 %/% n))) {
    ag_estimate_training_memory(shapes, quiet = TRUE)
    pure_r_estimate(shapes, quiet = TRUE)
    .Call(floor_loop, shapes)
  }
  m <- bench::mark(
    agmem = ag_estimate_training_memory(shapes, quiet = TRUE),
    pure_r = pure_r_estimate(shapes, quiet = TRUE),
    floor = .Call(floor_loop, shapes),
    check = FALSE, min_iterations = 5, time_unit = "s", filter_gc = FALSE
  )
  t <- setNames(as.numeric(m$median), as.character(m$expression))
  a <- setNames(as.numeric(m$mem_alloc), as.character(m$expression))
  data.frame(
    shapes = format(n, big.mark = ",", scientific = FALSE),
    agmem_us = signif(t[["agmem"]] * 1e6, 3),
    pure_r_us = signif(t[["pure_r"]] * 1e6, 3),
    speedup = round(t[["pure_r"]] / t[["agmem"]], 1),
    agmem_ns_per_shape = round(t[["agmem"]] * 1e9 / n, 1),
    floor_ns_per_shape = round(t[["floor"]] * 1e9 / n, 1),
    agmem_vs_floor = round(t[["agmem"]] / t[["floor"]], 2),
    agmem_alloc_bytes = a[["agmem"]],
    pure_r_alloc_bytes = a[["pure_r"]]
  )
})
table <- do.call(rbind, rows)
cat(sprintf("agmem %s, %s, %s\n", packageVersion("agmem"), R.version.string,
            utils::sessionInfo()$running))
print(table, row.names = FALSE)

# The planners on the model: one prediction, one largest batch, one sweep of 12 batch sizes, for
# a 784-512-512-10 model (the goal: a prediction under 1 ms).
spec <- ag_dense_stack(c(784, 512, 512, 10), loss = "softmax_cross_entropy")
for (i in 1:100) ag_training_memory(spec, 64, quiet = TRUE)
m <- bench::mark(
  ag_training_memory = ag_training_memory(spec, 64, quiet = TRUE),
  ag_max_batch_size = ag_max_batch_size(spec, "256 MiB"),
  ag_memory_sweep_12 = ag_memory_sweep(spec, 2^(0:11), "adam"),
  check = FALSE, min_iterations = 50, time_unit = "s"
)
cat("\nThe model's planners, median time per call:\n")
print(data.frame(call = as.character(m$expression),
                 median_us = signif(as.numeric(m$median) * 1e6, 3)), row.names = FALSE)
