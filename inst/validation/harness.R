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
# y (output width x n: normal for mse, one-hot columns of random classes otherwise). With
# `embed` (a vocabulary size) the model starts with an embedding: x is then 1 x n token indices
# (integers from 0 to embed - 1), as ag_embedding() takes them.
make_matrices <- function(widths, n, loss, embed = 0L) {
  n_in <- widths[1L]
  n_out <- widths[length(widths)]
  x <- if (embed > 0L) {
    matrix(sample.int(embed, n, replace = TRUE) - 1L, 1L, n)
  } else {
    matrix(stats::rnorm(n_in * n), n_in, n)
  }
  y <- if (loss == "mse") {
    matrix(stats::rnorm(n_out * n), n_out, n)
  } else {
    y <- matrix(0, n_out, n)
    y[cbind(sample.int(n_out, n, replace = TRUE), seq_len(n))] <- 1
    y
  }
  list(x = x, y = y)
}

# The layers of a dense stack of `widths` for ggmlR (in forward order): an ag_linear() per
# pair of widths, with `activation` on the hidden ones ("none": none), each hidden one followed
# by the layers `after` names: "batch_norm" (ag_batch_norm()), "dropout" (ag_dropout(0.3)) and
# "layer_norm" (ag_layer_norm()) and "attention" (ag_multihead_attention() of `heads` heads,
# whose sequence is the batch). With `embed` (a vocabulary size), an
# ag_embedding(embed, widths[1]) comes first, so the stack's input is its output.
build_layers <- function(widths, activation, after = character(0), embed = 0L, heads = 1L) {
  n <- length(widths) - 1L
  first <- if (embed > 0L) list(ggmlR::ag_embedding(embed, widths[1L]))
  do.call(c, c(list(first), lapply(seq_len(n), function(i) {
    act <- if (i < n && activation != "none") activation else NULL
    w <- widths[i + 1L]
    extra <- if (i < n) {
      lapply(after, function(a) {
        switch(a, batch_norm = ggmlR::ag_batch_norm(w), dropout = ggmlR::ag_dropout(0.3),
               layer_norm = ggmlR::ag_layer_norm(w),
               attention = ggmlR::ag_multihead_attention(w, heads))
      })
    }
    c(list(ggmlR::ag_linear(widths[i], w, activation = act)), extra)
  })))
}

# The layers of --after: "none" is none; else names joined by "+".
read_after <- function(after) {
  a <- if (identical(after, "none")) character(0) else strsplit(after, "+", fixed = TRUE)[[1]]
  stopifnot(all(a %in% c("batch_norm", "dropout", "layer_norm", "attention")))
  a
}
