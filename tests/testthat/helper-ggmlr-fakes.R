# Objects with the structure of ggmlR 0.8.8.1's autograd models, built without ggmlR, so that
# ag_model_spec() is tested where ggmlR is not installed. The structure was read from ggmlR's
# source and checked against the installed package (test-ag_model_spec.R compares the two):
# - ag_param() / ag_tensor(): an environment of class "ag_tensor" with `data` (an R matrix, or
#   NULL when the value is resident on the device, its dimensions then in `shape`) and
#   `requires_grad`, see R/autograd.R:69-124;
# - ag_linear(): an unclassed list of W (c(out, in)), b (c(out, 1)), forward (a closure whose
#   environment holds `activation`, NULL for none) and params() (R/autograd.R:1683-1705);
# - every other layer: an environment of class c("ag_<kind>", "ag_layer") with forward(),
#   parameters() and often `name` (R/ag_layers.R);
# - ag_sequential(): an environment of class c("ag_sequential", "ag_layer") with `layers`.

fake_tensor <- function(dims, requires_grad = TRUE, resident = FALSE) {
  e <- new.env(parent = emptyenv())
  e$data <- if (resident) NULL else matrix(0, dims[[1L]], prod(dims[-1L]))
  e$shape <- if (resident) as.integer(dims) else NULL
  e$requires_grad <- requires_grad
  class(e) <- "ag_tensor"
  e
}

fake_linear <- function(inputs, outputs, activation = NULL, resident = FALSE) {
  W <- fake_tensor(c(outputs, inputs), resident = resident) # nolint: object_name_linter.
  b <- fake_tensor(c(outputs, 1L), resident = resident)
  forward <- local({
    activation <- activation
    function(x) x
  })
  list(W = W, b = b, forward = forward, params = function() list(W = W, b = b))
}

# A layer of class c(cls, "ag_layer") holding `tensors` (a named list) as fields; with a
# parameters() method unless `method` is FALSE.
fake_layer <- function(cls, tensors = list(), name = NULL, method = TRUE) {
  env <- new.env(parent = emptyenv())
  for (nm in names(tensors)) assign(nm, tensors[[nm]], envir = env)
  env$name <- name
  env$training <- TRUE
  env$forward <- function(x) x
  if (method) env$parameters <- function() tensors
  class(env) <- c(cls, "ag_layer")
  env
}

fake_dropout <- function(rate = 0.5) fake_layer("ag_dropout", name = paste0("dropout(", rate, ")"))

# ag_multihead_attention(d, heads, dropout): W_q, W_k, W_v and W_o (c(d, d)), b_o (c(d, 1))
# unless `bias` is FALSE, n_heads and dropout (R/ag_layers.R:681-709).
fake_attention <- function(d, heads, dropout = 0, bias = TRUE) {
  tensors <- list(W_q = fake_tensor(c(d, d)), W_k = fake_tensor(c(d, d)),
                  W_v = fake_tensor(c(d, d)), W_o = fake_tensor(c(d, d)))
  if (bias) tensors$b_o <- fake_tensor(c(d, 1))
  layer <- fake_layer("ag_multihead_attention", tensors)
  layer$n_heads <- heads
  layer$dropout <- dropout
  layer
}

fake_sequential <- function(...) {
  env <- new.env(parent = emptyenv())
  env$layers <- list(...)
  env$training <- TRUE
  env$forward <- function(x) x
  class(env) <- c("ag_sequential", "ag_layer")
  env
}
