# harness.R: what the measuring scripts (measure-one.R, measure-long.R) share; each sources it.

# The script's arguments, --name=value, over the defaults in the list `opt` (strings); stops on
# an argument it does not know.
read_args <- function(opt) {
  for (a in commandArgs(trailingOnly = TRUE)) {
    kv <- regmatches(a, regexec("^--([a-z_]+)=(.*)$", a))[[1]]
    if (length(kv) != 3L || !kv[2] %in% names(opt))
      stop("unknown argument: ", a, call. = FALSE)
    opt[[kv[2]]] <- kv[3]
  }
  opt
}

# A field of /proc/self/status (VmRSS, VmHWM), in bytes.
proc_kb <- function(field) {
  st <- readLines("/proc/self/status")
  line <- grep(paste0("^", field, ":"), st, value = TRUE)
  as.numeric(sub("^[^0-9]*([0-9]+).*$", "\\1", line)) * 1024
}

# Data of n samples for a stack of `widths` trained with `loss`: x (input width x n, normal) and
# y (output width x n: normal for mse, one-hot columns of random classes otherwise).
make_matrices <- function(widths, n, loss) {
  n_in <- widths[1L]
  n_out <- widths[length(widths)]
  x <- matrix(stats::rnorm(n_in * n), n_in, n)
  y <- if (loss == "mse") {
    matrix(stats::rnorm(n_out * n), n_out, n)
  } else {
    y <- matrix(0, n_out, n)
    y[cbind(sample.int(n_out, n, replace = TRUE), seq_len(n))] <- 1
    y
  }
  list(x = x, y = y)
}
