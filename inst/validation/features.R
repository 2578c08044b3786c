# features.R: what fit.R and validate.R compute from a measured configuration.

# One row per configuration of m (columns widths, batch, optimizer, activation, loss, device): P
# (the parameters), U_out_all (the output units of every layer x batch), U_hidden (the hidden
# units x batch), U_output, U_input, and `counted`, the host bytes allocated by building the
# model and 3 steps, from the alloc columns of agmem's rule table for the row's device.
config_features <- function(m) {
  rules <- agmem:::training_rules()
  w <- lapply(strsplit(m$widths, "-", fixed = TRUE), as.numeric)
  b <- as.numeric(m$batch)
  p <- vapply(w, function(x) sum(x[-length(x)] * x[-1L] + x[-1L]), numeric(1))
  hidden <- vapply(w, function(x) if (length(x) > 2L) sum(x[2:(length(x) - 1L)]) else 0,
                   numeric(1))
  out <- vapply(w, function(x) x[length(x)], numeric(1))
  inp <- vapply(w, function(x) x[1L], numeric(1))
  counted <- numeric(nrow(m))
  pr <- rules$param
  ur <- rules$unit
  for (i in seq_len(nrow(m))) {
    dev <- m$device[i]
    sel <- pr$device == dev & pr$where == "host" & pr$optimizer %in% c("any", m$optimizer[i]) &
      pr$dtype %in% c("any", "f32")
    once <- p[i] * sum(pr$alloc_once[sel])
    step <- p[i] * sum(pr$alloc_step[sel])
    unit_step <- function(op, units) {
      units * b[i] * sum(ur$alloc_step[ur$op == op & ur$device == dev & ur$where == "host"])
    }
    step <- step + unit_step("input", inp[i]) +
      unit_step("matmul", hidden[i] + out[i]) + unit_step("add", hidden[i] + out[i]) +
      (if (m$activation[i] != "none") unit_step(m$activation[i], hidden[i]) else 0) +
      unit_step(paste0("loss_", m$loss[i]), out[i])
    counted[i] <- once + 3 * step
  }
  data.frame(P = p, U_out_all = (hidden + out) * b, U_hidden = hidden * b, U_output = out * b,
             U_input = inp * b, counted = counted)
}

# The host bytes beyond the baseline that R and ggmlR's host code hold: in device "gpu", the
# RSS growth less the device pools, which ggml's CPU backend keeps in host memory here and a
# real GPU would keep on the device.
host_measured <- function(d) {
  ifelse(d$device == "gpu", d$peak - d$pass_pool - d$persistent_pool, d$peak)
}

# The features of the "collected" host term on the GPU, where only the optimizer's host side,
# the data's upload and the host-side losses stay on the host (ag_mse_loss() runs on the device;
# a figure of its own for the target's upload fits negative, so it is left to the data's).
collected_features_gpu_host <- function(d) {
  collected_features(d)[, c("P_adam", "P_sgd", "P_sgd_plain", "loss_cross_entropy",
                            "loss_softmax_cross_entropy", "input")]
}

# The linear features of the "collected" term, one column per rule figure.
collected_features <- function(d) {
  with(d, cbind(
    P_adam = P * (optimizer == "adam"), P_sgd = P * (optimizer == "sgd"),
    P_sgd_plain = P * (optimizer == "sgd_plain"),
    matmul_add = U_out_all,
    relu = U_hidden * (activation == "relu"), sigmoid = U_hidden * (activation == "sigmoid"),
    tanh = U_hidden * (activation == "tanh"),
    loss_mse = U_output * (loss == "mse"),
    loss_cross_entropy = U_output * (loss == "cross_entropy"),
    loss_softmax_cross_entropy = U_output * (loss == "softmax_cross_entropy"),
    input = U_input))
}
