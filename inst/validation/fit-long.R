# fit-long.R: the whole-run figures of src/rules.c, fitted on the long fit grid.
#
#   Rscript inst/validation/fit-long.R [inst/validation/measurements-long-fit.csv]
#
# Prints, by least squares on the runs of measure-long.R (100 steps each):
#   - the bytes live at R's full collections (the largest "vectors used" gcinfo() reported after a
#     level-2 collection, less the heap at the start) per parameter for each optimizer and per
#     unit and sample: of the input, of the hidden layers by activation (relu, tanh) and of the
#     output layer by loss (mse, softmax cross-entropy): agmem_live_rules' `bytes`, where a relu
#     layer is "matmul" plus "add" and the others add their difference to it;
#   - the resident memory over R's heap peak (the RSS peak at step 100 less gc()'s "max used"
#     over the start), per parameter for each optimizer and per unit and sample (input, hidden
#     and output units alike): agmem_live_rules' `retained` (the per-unit figure on the "input"
#     and "matmul" rows, one of which every unit has);
#   - the heap in use once R and ggmlR are loaded: the median of the heap at the start less the
#     data set (four mini-batches of input and target, 8 bytes a double): heap_start.
# Then it compares them with the table agmem was built with (agmem must be installed).

here <- local({
  file_arg <- grep("^--file=", commandArgs(FALSE), value = TRUE)
  if (length(file_arg)) dirname(normalizePath(sub("^--file=", "", file_arg[1L]))) else "."
})
args <- commandArgs(trailingOnly = TRUE)
csv <- if (length(args)) args[[1L]] else file.path(here, "measurements-long-fit.csv")
m <- utils::read.csv(csv, stringsAsFactors = FALSE)
w <- lapply(strsplit(m$widths, "-", fixed = TRUE), as.numeric)
m$inp <- vapply(w, function(x) x[1L], 0) * m$batch
hid <- vapply(w, function(x) sum(x[-c(1L, length(x))]), 0) * m$batch
out <- vapply(w, function(x) x[length(x)], 0) * m$batch
m$hid_relu <- ifelse(m$activation == "relu", hid, 0)
m$hid_tanh <- ifelse(m$activation == "tanh", hid, 0)
m$out_mse <- ifelse(m$loss == "mse", out, 0)
m$out_sce <- ifelse(m$loss == "softmax_cross_entropy", out, 0)
m$live <- m$live_full - m$heap0
m$over <- m$peak_100 - (m$heap_max - m$heap0)
m$data <- vapply(w, function(x) x[1L] + x[length(x)], 0) * 4 * m$batch * 8

live <- stats::lm(live ~ 0 + params:optimizer + inp + hid_relu + hid_tanh + out_mse + out_sce,
                  data = m[!is.na(m$live_full), ])
m$units <- m$inp + hid + out
over <- stats::lm(over ~ 0 + params:optimizer + units, data = m)
fitted <- c(
  stats::setNames(coef(live)[paste0("params:optimizer", c("adam", "sgd", "sgd_plain"))],
                  c("live adam", "live sgd", "live sgd_plain")),
  `live input` = coef(live)[["inp"]], `live relu layer` = coef(live)[["hid_relu"]],
  `live tanh layer` = coef(live)[["hid_tanh"]], `live mse output` = coef(live)[["out_mse"]],
  `live softmax_cross_entropy output` = coef(live)[["out_sce"]],
  stats::setNames(coef(over)[paste0("params:optimizer", c("adam", "sgd", "sgd_plain"))],
                  c("retained adam", "retained sgd", "retained sgd_plain")),
  `retained per unit` = coef(over)[["units"]],
  heap_start = stats::median(m$heap0 - m$data)
)
cat(sprintf("%d runs (%d with a full collection)\n", nrow(m), sum(!is.na(m$live_full))))
print(round(fitted, 1))

if (requireNamespace("agmem", quietly = TRUE)) {
  rules <- agmem:::training_rules()
  l <- rules$live[rules$live$device == "cpu", ]
  per <- function(opt, col) l[[col]][is.na(l$op) & l$optimizer == opt]
  op <- function(name) l$bytes[l$op %in% name]
  relu <- op("matmul") + op("add") + op("relu")
  table <- c(per("adam", "bytes"), per("sgd", "bytes"), per("sgd_plain", "bytes"), op("input"),
             relu, op("matmul") + op("add") + op("tanh"), op("matmul") + op("add") + op("loss_mse"),
             op("matmul") + op("add") + op("loss_softmax_cross_entropy"), per("adam", "retained"),
             per("sgd", "retained"), per("sgd_plain", "retained"),
             l$retained[l$op %in% "matmul"],
             rules$gc$value[rules$gc$device == "cpu" & rules$gc$figure == "heap_start"])
  off <- abs(table - fitted) > pmax(0.051, 1e-4 * abs(fitted))
  cat(if (any(off)) "differs from src/rules.c:" else "src/rules.c holds these figures",
      names(fitted)[off], "\n")
}
