test_that("a sequential of linear layers reads like the dense stack of its widths", {
  model <- fake_sequential(fake_linear(4, 16, "relu"), fake_linear(16, 8, "relu"),
                           fake_linear(8, 2))
  spec <- ag_model_spec(model, loss = "softmax_cross_entropy")
  stack <- ag_dense_stack(c(4, 16, 8, 2), loss = "softmax_cross_entropy")
  expect_s3_class(spec, "ag_model_spec")
  expect_identical(spec[names(spec) != "shapes"], stack[names(stack) != "shapes"])
  # ggmlR's bias is a c(out, 1) matrix: the same count as ag_dense_shapes()'s `out`.
  expect_identical(spec$shapes, list(c(16, 4), c(16, 1), c(8, 16), c(8, 1), c(2, 8), c(2, 1)))
  expect_identical(
    ag_training_memory(spec, quiet = TRUE)[-match("loss", names(spec))],
    ag_training_memory(stack, quiet = TRUE)[-match("loss", names(spec))]
  )
})

test_that("a single linear layer, a spec, a list of layers and nested sequentials are read", {
  one <- ag_model_spec(fake_linear(3, 5, "sigmoid"))
  expect_identical(one$layers$activation, "sigmoid")
  expect_identical(one$ops, list(c("matmul", "add", "sigmoid")))
  expect_identical(one$input_width, 3)
  expect_identical(one$output_width, 5)
  stack <- ag_dense_stack(c(3, 4))
  expect_identical(ag_model_spec(stack), stack)
  expect_identical(ag_model_spec(stack, loss = "cross_entropy"), stack)
  nested <- fake_sequential(fake_sequential(fake_linear(3, 4, "tanh")), fake_linear(4, 2))
  flat <- ag_model_spec(list(fake_linear(3, 4, "tanh"), fake_linear(4, 2)))
  expect_identical(ag_model_spec(nested), flat)
  expect_identical(flat$layers$activation, c("tanh", "none"))
  soft <- ag_model_spec(fake_linear(3, 4, "softmax"))
  expect_identical(soft$ops, list(c("matmul", "add", "softmax")))
  expect_identical(soft$uncovered, character(0))
})

test_that("values resident on the device are read through their shape field", {
  spec <- ag_model_spec(fake_sequential(fake_linear(3, 5, "relu", resident = TRUE),
                                        fake_linear(5, 2, resident = TRUE)))
  expect_identical(spec$shapes, list(c(5, 3), c(5, 1), c(2, 5), c(2, 1)))
  expect_identical(spec$layers$out, c(5, 2))
})

test_that("other layers count their parameters and are listed as not covered", {
  emb <- fake_layer("ag_flash_attention", list(w_o = fake_tensor(c(4, 10))), "flash(10, 4)")
  attn <- fake_layer("ag_flash_attention", list(w_q = fake_tensor(c(4, 4))), method = FALSE)
  model <- fake_sequential(emb, attn, fake_dropout(), fake_linear(4, 3))
  spec <- ag_model_spec(model)
  expect_identical(spec$shapes, list(c(4, 10), c(4, 4), c(3, 4), c(3, 1)))
  expect_identical(spec$layers$type, c("ag_flash_attention", "ag_flash_attention", "dropout",
                                       "linear"))
  expect_identical(spec$layers$units, c(NA, NA, NA, 3))
  expect_identical(spec$ops, list(character(0), character(0), character(0),
                                  c("matmul", "add")))
  expect_identical(spec$input_width, NA_real_)
  expect_identical(spec$output_width, 3)
  expect_length(spec$uncovered, 3L)
  expect_match(spec$uncovered[[1]], "^layer 1 \\(ag_flash_attention, flash\\(10, 4\\)\\)")
  expect_match(spec$uncovered[[2]],
               "^layer 2 \\(ag_flash_attention\\).*1 parameter tensor counted")
  # A dropout after a layer agmem cannot read has a mask of unknown size.
  expect_match(spec$uncovered[[3]], "^layer 3 \\(dropout, dropout\\(0.5\\)\\): its mask is as wide")
  expect_true(all(grepl("not modelled|cannot read", spec$uncovered)))
})

test_that("a module of one's own is not modelled, with how to describe it by its layers", {
  inner <- list(fake_linear(4, 8, "relu"), fake_linear(8, 2))
  module <- new.env()
  module$layers <- inner
  module$forward <- function(x) x
  module$parameters <- function() list(inner[[1]]$W, inner[[1]]$b, inner[[2]]$W, inner[[2]]$b)
  spec <- ag_model_spec(fake_sequential(module))
  expect_length(spec$uncovered, 2L)
  expect_match(spec$uncovered[[1]], paste0("layer 1 \\(environment\\): .*4 parameter tensors ",
                                           "counted.*module of your own.*ag_model_spec\\(list\\("))
  # The hint in full: each way to describe what such a forward may call.
  expect_snapshot(cat(spec$uncovered, sep = "\n"))
  described <- ag_model_spec(inner)
  expect_identical(described$uncovered, character(0))
  expect_identical(described$ops, list(c("matmul", "add", "relu"), c("matmul", "add")))
  # A ggmlR layer agmem does not model gets no such hint.
  attn <- fake_layer("ag_flash_attention", list(w_q = fake_tensor(c(4, 4))))
  expect_no_match(ag_model_spec(attn)$uncovered[[1]], "module of your own")
})

test_that("an embedding is read as its table and its lookup, taking one index per sample", {
  emb <- fake_layer("ag_embedding", list(weight = fake_tensor(c(16, 1000))), "embedding(1000, 16)")
  spec <- ag_model_spec(fake_sequential(emb, fake_linear(16, 4, "relu"), fake_linear(4, 2)),
                        loss = "softmax_cross_entropy")
  expect_identical(spec$uncovered, character(0))
  expect_identical(spec$layers$type, c("embedding", "linear", "linear"))
  expect_identical(spec$layers$`in`[[1]], 1000)
  expect_identical(spec$input_width, 1)
  expect_identical(spec$ops[[1]], c("embedding_table", "embedding"))
  flat <- agmem:::spec_ops(spec)
  # The table counts its 16 000 scalars once; the lookup 16 units per sample; the data 1 index.
  expect_identical(flat$ops[1:3], c("input", "embedding_table", "embedding"))
  expect_identical(flat$units[1:3], c(1, 16000, 16))
  # Its table is a parameter like any other; a larger vocabulary costs more, not per sample.
  mem <- function(v, b) {
    e <- fake_layer("ag_embedding", list(weight = fake_tensor(c(16, v))))
    s <- ag_model_spec(fake_sequential(e, fake_linear(16, 2)))
    ag_training_memory(s, b, quiet = TRUE)
  }
  expect_identical(mem(1000, 8)$params, 16000 + 34)
  expect_gt(mem(40000, 8)$host_high, mem(1000, 8)$host_high)
  expect_gt(mem(1000, 4096)$host_high, mem(1000, 8)$host_high)
  # A vocabulary is not a width: no range warning for one of 5000.
  expect_silent(mem(5000, 8))
  bad <- fake_layer("ag_embedding", list(weight = fake_tensor(c(16, 10, 2), resident = TRUE)))
  expect_match(ag_model_spec(bad)$uncovered[[1]], "3 dimensions, not 2")
})

test_that("an attention is read as its projections and one op per head", {
  attn_layer <- fake_attention
  spec <- ag_model_spec(fake_sequential(fake_linear(8, 16, "relu"), attn_layer(16, 4),
                                        fake_linear(16, 2)))
  expect_identical(spec$uncovered, character(0))
  expect_identical(spec$layers$type, c("linear", "attention", "linear"))
  concat <- c("attention_concat", rep("attention_block", 4))
  expect_identical(spec$ops[[2]], c("attention_slices", "attention", rep("attention_head", 4),
                                    concat))
  expect_identical(sum(vapply(spec$shapes, prod, 0)), 8 * 16 + 16 + 4 * 16 * 16 + 16 + 16 * 2 + 2)
  flat <- agmem:::spec_ops(spec)
  expect_identical(flat$units[flat$ops == "attention"], 16)
  expect_identical(flat$units[flat$ops == "attention_head"], rep(1, 4))
  expect_identical(flat$units[flat$ops == "attention_slices"], 256)
  # With more than one head, their concatenation: d_model x d_model constant units, and a block
  # of d_model per sample for each head; one head is its own output, which the device's pass
  # pool shows: an op of d_model per sample.
  expect_identical(flat$units[flat$ops == "attention_concat"], 256)
  expect_identical(flat$units[flat$ops == "attention_block"], rep(16, 4))
  expect_false("attention_one_head" %in% flat$ops)
  one <- ag_model_spec(attn_layer(16, 1))
  expect_identical(one$ops[[1]], c("attention_slices", "attention", "attention_head",
                                   "attention_one_head"))
  expect_identical(agmem:::spec_ops(one)$units[agmem:::spec_ops(one)$ops ==
                                                 "attention_one_head"], 16)
  # On device "gpu" the pass pool shows it (measure-one.R, to the byte but 4 bytes a head and
  # sample): two heads of d_model 16 over one hold 56 b^2 + 40 d b + 8 d^2 more.
  pools <- function(heads, b) {
    ag_training_memory(ag_model_spec(attn_layer(16, heads)), b, device = "gpu",
                       quiet = TRUE)$device_peak
  }
  for (b in c(64, 256)) {
    expect_equal(pools(2, b) - pools(1, b), 56 * b^2 + 40 * 16 * b + 8 * 16^2)
  }
  expect_match(format(spec), "attention_slices, attention, attention_head x4", all = FALSE)
  # The heads' scores grow with the square of the batch, its sequence.
  high <- function(b) suppressWarnings(ag_training_memory(spec, b, quiet = TRUE))$host_high
  expect_gt(high(2048) - high(1024), high(1024) - high(512))
  # A sequence beyond those measured says so; the same batch without attention does not.
  expect_warning(ag_training_memory(spec, 1024, quiet = TRUE),
                 "attention sequence \\(the batch size\\) 1 024 \\(validated up to 768\\)",
                 class = "agmem_warning_range")
  expect_silent(ag_training_memory(ag_dense_stack(c(8, 16, 2)), 1024, quiet = TRUE))
  expect_silent(ag_training_memory(ag_model_spec(attn_layer(512, 8)), 64, quiet = TRUE))
  wide <- ag_model_spec(fake_sequential(fake_linear(8, 1024), attn_layer(1024, 8)))
  expect_warning(ag_training_memory(wide, 64, quiet = TRUE),
                 "attention width 1 024 \\(validated up to 512\\)",
                 class = "agmem_warning_range")
  # Its attention dropout is a mask on each head's weights, one more op per head; eval mode and
  # a rate of 0 turn it off.
  dropped <- attn_layer(16, 4, dropout = 0.1)
  both <- ag_model_spec(dropped)
  expect_identical(both$uncovered, character(0))
  expect_identical(both$ops[[1]], c("attention_slices", "attention", rep("attention_head", 4),
                                    rep("attention_dropout", 4), concat))
  expect_identical(agmem:::spec_ops(both)$units[both$ops[[1]] == "attention_dropout"], rep(1, 4))
  expect_match(format(both), "attention_head x4, attention_dropout x4", all = FALSE)
  # Per pair of samples, as much as a dropout layer of that many units.
  dense <- function(b) ag_training_memory(ag_model_spec(attn_layer(16, 4)), b, quiet = TRUE)
  masked <- function(b) ag_training_memory(both, b, quiet = TRUE)
  rules <- agmem:::training_rules()$unit
  per_unit <- rules$bytes[rules$op == "dropout" & rules$device == "cpu" &
                            rules$component == "activations"]
  activations <- function(m) m$components$bytes[m$components$component == "activations"]
  expect_equal(activations(masked(64)) - activations(dense(64)), 4 * 64^2 * per_unit)
  expect_gt(masked(256)$host_high, dense(256)$host_high)
  expect_identical(ag_model_spec(attn_layer(16, 4, dropout = 0))$ops,
                   ag_model_spec(attn_layer(16, 4))$ops)
  dropped$training <- FALSE
  expect_identical(ag_model_spec(dropped)$ops, ag_model_spec(attn_layer(16, 4))$ops)
  bad <- attn_layer(16, 4)
  bad$n_heads <- 0
  expect_agmem_error(ag_model_spec(bad), "`x`: layer 1 has no readable width")
})

test_that("batch norm, dropout and layer norm are read as one op of their width", {
  norm <- fake_layer("ag_layer_norm", list(gamma = fake_tensor(c(16, 1)),
                                           beta = fake_tensor(c(16, 1))), method = FALSE)
  bn <- fake_layer("ag_batch_norm", list(gamma = fake_tensor(c(16, 1)),
                                         beta = fake_tensor(c(16, 1))), "batch_norm(16)")
  model <- fake_sequential(fake_linear(4, 16, "relu"), bn, fake_dropout(), norm,
                           fake_linear(16, 3))
  spec <- ag_model_spec(model, loss = "softmax_cross_entropy")
  expect_identical(spec$layers$type, c("linear", "batch_norm", "dropout", "layer_norm", "linear"))
  expect_identical(spec$layers$units, c(16, 16, 16, 16, 3))
  expect_identical(spec$ops, list(c("matmul", "add", "relu"), "batch_norm", "dropout",
                                  "layer_norm", c("matmul", "add")))
  expect_identical(spec$shapes, list(c(16, 4), c(16, 1), c(16, 1), c(16, 1), c(16, 1),
                                     c(16, 1), c(3, 16), c(3, 1)))
  expect_identical(spec$uncovered, character(0))
  # A dropout of rate 0 or in eval mode returns its input (R/ag_layers.R:183): no op.
  off <- fake_dropout(0)
  off$rate <- 0
  evald <- fake_dropout()
  evald$training <- FALSE
  expect_identical(ag_model_spec(fake_sequential(fake_linear(4, 8), off))$ops[[2]], character(0))
  expect_identical(ag_model_spec(fake_sequential(fake_linear(4, 8), evald))$ops[[2]],
                   character(0))
  # A batch norm in eval mode (frozen) is an op of its own; a layer norm without gamma reads its
  # width field.
  bn$training <- FALSE
  evaled <- ag_model_spec(fake_sequential(fake_linear(4, 16), bn))
  expect_identical(evaled$uncovered, character(0))
  expect_identical(evaled$ops[[2]], "batch_norm_eval")
  expect_identical(evaled$layers$type[[2]], "batch_norm")
  bn$training <- TRUE
  trained <- ag_model_spec(fake_sequential(fake_linear(4, 16), bn))
  expect_identical(trained$ops[[2]], "batch_norm")
  expect_false(identical(ag_training_memory(evaled, 64, quiet = TRUE)$host_high,
                         ag_training_memory(trained, 64, quiet = TRUE)$host_high))
  # Without gamma it reads its width from num_features, in either mode.
  bare <- fake_layer("ag_batch_norm", method = FALSE)
  bare$num_features <- 12L
  bare$training <- FALSE
  frozen <- ag_model_spec(fake_sequential(fake_linear(4, 12), bare))
  expect_identical(frozen$ops[[2]], "batch_norm_eval")
  expect_identical(frozen$layers$units[[2]], 12)
  plain <- fake_layer("ag_layer_norm", method = FALSE)
  plain$normalized_shape <- 8L
  spec <- ag_model_spec(fake_sequential(fake_linear(4, 8), plain))
  expect_identical(spec$ops[[2]], "layer_norm")
  expect_identical(spec$layers$units[[2]], 8)
  plain$normalized_shape <- "eight"
  expect_agmem_error(ag_model_spec(fake_sequential(fake_linear(4, 8), plain)),
                     "`x`: layer 2 has no readable width", class = "agmem_error_argument")
})

test_that("a last layer that is not covered leaves the loss uncovered too", {
  emb <- fake_layer("ag_flash_attention", list(w_q = fake_tensor(c(3, 3))), "attention")
  spec <- ag_model_spec(fake_sequential(fake_linear(4, 3), emb))
  expect_identical(spec$output_width, NA_real_)
  expect_match(spec$uncovered[[2]], "^loss \"mse\": not modelled")
  gelu <- ag_model_spec(fake_linear(3, 5, "gelu"))
  expect_match(gelu$uncovered[[1]], "layer 1 \\(linear\\): activation \"gelu\" is not one")
  expect_identical(gelu$shapes, list(c(5, 3), c(5, 1)))
  expect_identical(gelu$layers$type, "linear")
  expect_identical(gelu$layers$units, NA_real_)
})

test_that("a list of ag_param has shapes only, every activation uncovered", {
  spec <- ag_model_spec(list(w = fake_tensor(c(3, 4)), b = fake_tensor(c(3, 1))))
  expect_identical(spec$shapes, list(c(3, 4), c(3, 1)))
  expect_identical(nrow(spec$layers), 0L)
  expect_identical(spec$ops, list())
  expect_match(spec$uncovered, "list of ag_param tensors: only its parameters are counted")
  expect_identical(ag_model_spec(fake_tensor(c(2, 2)))$shapes, list(c(2, 2)))
})

test_that("a tensor shared by two layers is counted once", {
  first <- fake_linear(4, 4, "relu")
  tied <- first
  tied$forward <- local({
    activation <- NULL
    function(x) x
  })
  spec <- ag_model_spec(fake_sequential(first, tied))
  expect_identical(spec$shapes, list(c(4, 4), c(4, 1)))
  expect_identical(nrow(spec$layers), 2L)
})

test_that("models that cannot be read are errors that name the argument", {
  expect_snapshot(error = TRUE, {
    ag_model_spec(1:3)
    ag_model_spec(fake_sequential())
    ag_model_spec(fake_sequential(fake_dropout()))
    ag_model_spec(fake_linear(3, 2), loss = "hinge")
    ag_training_memory("a model")
  })
})

test_that("layers that do not chain are refused, naming the argument and both layers", {
  norm <- function(w) {
    fake_layer("ag_layer_norm", list(gamma = fake_tensor(c(w, 1)), beta = fake_tensor(c(w, 1))))
  }
  flash <- ag_flash_attention_call(32, 2)
  expect_snapshot(error = TRUE, {
    ag_model_spec(list(fake_linear(784, 256, "relu"), fake_linear(128, 10)))
    ag_model_spec(fake_sequential(fake_linear(8, 16), norm(12), fake_linear(16, 2)))
    ag_max_batch_size(list(fake_linear(8, 16), fake_dropout(), fake_attention(32, 2)), "1 GiB")
    ag_training_memory(list(fake_linear(8, 16), flash, fake_linear(32, 2)), 4)
  })
  expect_error(ag_model_spec(list(fake_linear(8, 16), fake_linear(15, 2))),
               class = "agmem_error_argument")
  # Nested sequentials chain across their boundaries.
  expect_error(ag_model_spec(fake_sequential(fake_sequential(fake_linear(8, 16)),
                                             fake_sequential(fake_linear(17, 2)))),
               "layer 2 \\(linear\\) takes 17 inputs, but layer 1 gives 16")
  # What chains is read; a layer whose width agmem cannot read (a module of your own) may change
  # the width, and an embedding takes token indices, so neither is checked against the layer
  # before it.
  spec <- ag_model_spec(list(fake_linear(8, 32), norm(32), fake_dropout(), flash,
                             fake_attention(32, 2), fake_linear(32, 2)))
  expect_identical(spec$layers$out, c(32, 32, 32, 32, 32, 2))
  module <- fake_layer("ag_mine", list(w = fake_tensor(c(4, 4))))
  spec <- ag_model_spec(list(fake_linear(8, 16), module, fake_linear(4, 2)))
  expect_length(spec$uncovered, 1L)
  emb <- fake_layer("ag_embedding", list(weight = fake_tensor(c(16, 100))))
  spec <- ag_model_spec(list(fake_linear(8, 3), emb, fake_linear(16, 2)))
  expect_identical(spec$layers$out, c(3, 16, 2))
})

test_that("the planners take a list of layers as ag_model_spec() reads it", {
  layers <- list(fake_linear(784, 512, "relu"), fake_linear(512, 10))
  expect_identical(ag_max_batch_size(layers, "256 MiB"),
                   ag_max_batch_size(ag_model_spec(layers), "256 MiB"))
  expect_identical(ag_memory_sweep(layers, c(1, 64))$host_peak,
                   ag_memory_sweep(fake_sequential(layers[[1L]], layers[[2L]]), c(1, 64))$host_peak)
})

test_that("models that cannot be read are errors that name the argument, value by value", {
  broken <- fake_layer("ag_broken")
  broken$parameters <- function() stop("no weights here")
  odd <- fake_layer("ag_odd")
  odd$parameters <- function() list(1, 2)
  shapeless <- fake_tensor(c(2, 2))
  shapeless$data <- NULL
  zero <- fake_tensor(c(2, 2))
  zero$data <- matrix(0, 0, 2)
  bad <- list(NULL, 1, "x", list(), list(1, 2), data.frame(a = 1), sum, new.env(),
              fake_sequential(), fake_sequential(fake_dropout()), fake_sequential(broken),
              fake_sequential(odd), list(shapeless), list(zero), fake_sequential(1))
  for (x in bad) {
    expect_agmem_error(ag_model_spec(x), "`x`")
    expect_agmem_error(ag_training_memory(x, quiet = TRUE), "`model`")
  }
})

test_that("a malformed spec is refused, naming the argument", {
  spec <- ag_dense_stack(c(3, 2))
  edits <- list(
    function(s) s[setdiff(names(s), "ops")], function(s) `[[<-`(s, "ops", list()),
    function(s) `[[<-`(s, "loss", "hinge"), function(s) `[[<-`(s, "layers", list()),
    function(s) `[[<-`(s, "output_width", "2"), function(s) `[[<-`(s, "uncovered", NULL),
    function(s) `[[<-`(s, "ops", list(1))
  )
  for (edit in edits) {
    bad <- structure(edit(unclass(spec)), class = "ag_model_spec")
    expect_agmem_error(ag_training_memory(bad, quiet = TRUE),
                       "`model` is a malformed ag_model_spec")
  }
  bad_ops <- spec
  bad_ops$ops <- list(c("matmul", "conv2d"))
  expect_agmem_error(ag_training_memory(bad_ops, quiet = TRUE),
                     "\"conv2d\", is not an op agmem models")
})

test_that("what agmem refuses as not chaining, ggmlR cannot run", {
  skip_if_not_installed("ggmlR")
  g <- asNamespace("ggmlR")
  x <- g$ag_tensor(matrix(1, 8, 3))
  for (second in list(g$ag_linear(15L, 2L), g$ag_layer_norm(15L), g$ag_batch_norm(15L))) {
    model <- g$ag_sequential(g$ag_linear(8L, 16L), second)
    expect_error(ag_model_spec(model), "layer 2 .* takes 15 inputs, but layer 1 gives 16",
                 class = "agmem_error_argument")
    expect_error(suppressWarnings(model$forward(x)))
  }
})

test_that("real ggmlR models read as their fakes do", {
  skip_if_not_installed("ggmlR")
  g <- asNamespace("ggmlR")
  set.seed(1)
  real <- g$ag_sequential(g$ag_linear(4L, 16L, activation = "relu"), g$ag_dropout(0.5),
                          g$ag_linear(16L, 2L, activation = "softmax"))
  fake <- fake_sequential(fake_linear(4, 16, "relu"), fake_dropout(),
                          fake_linear(16, 2, "softmax"))
  expect_identical(ag_model_spec(real), ag_model_spec(fake))
  # The count is that of the tensors ggmlR's optimizers would be given.
  n <- sum(vapply(real$parameters(), function(p) length(p$data), numeric(1)))
  expect_silent(mem <- ag_training_memory(real, quiet = TRUE))
  expect_identical(mem$params, as.double(n))
  # On device "gpu" too: the dropout keeps the graph backward, which agmem models.
  expect_silent(ag_training_memory(real, quiet = TRUE, device = "gpu"))

  others <- g$ag_sequential(g$ag_embedding(10L, 4L), g$ag_layer_norm(4L),
                            g$ag_multihead_attention(4L, 2L), g$ag_batch_norm(4L),
                            g$ag_linear(4L, 3L))
  spec <- ag_model_spec(others)
  n <- sum(vapply(others$parameters(), function(p) length(p$data), numeric(1)))
  expect_identical(sum(vapply(spec$shapes, prod, numeric(1))), as.double(n))
  expect_identical(spec$layers$type, c("embedding", "layer_norm", "attention", "batch_norm",
                                       "linear"))
  expect_identical(spec$uncovered, character(0))
  attn_real <- g$ag_multihead_attention(8L, 2L)
  attn_fake <- fake_layer("ag_multihead_attention",
                          list(W_q = fake_tensor(c(8, 8)), W_k = fake_tensor(c(8, 8)),
                               W_v = fake_tensor(c(8, 8)), W_o = fake_tensor(c(8, 8)),
                               b_o = fake_tensor(c(8, 1))))
  attn_fake$n_heads <- 2L
  attn_fake$dropout <- 0
  expect_identical(ag_model_spec(g$ag_sequential(g$ag_linear(3L, 8L), attn_real)),
                   ag_model_spec(fake_sequential(fake_linear(3, 8), attn_fake)))
  emb_real <- g$ag_sequential(g$ag_embedding(50L, 8L), g$ag_linear(8L, 3L))
  emb_fake <- fake_sequential(fake_layer("ag_embedding", list(weight = fake_tensor(c(8, 50)))),
                              fake_linear(8, 3))
  expect_identical(ag_model_spec(emb_real), ag_model_spec(emb_fake))
  norms <- g$ag_sequential(g$ag_linear(6L, 5L, activation = "relu"), g$ag_batch_norm(5L),
                           g$ag_dropout(0.2), g$ag_layer_norm(5L), g$ag_linear(5L, 2L))
  fake_norms <- fake_sequential(
    fake_linear(6, 5, "relu"),
    fake_layer("ag_batch_norm", list(gamma = fake_tensor(c(5, 1)), beta = fake_tensor(c(5, 1)))),
    fake_dropout(0.2),
    fake_layer("ag_layer_norm", list(gamma = fake_tensor(c(5, 1)), beta = fake_tensor(c(5, 1)))),
    fake_linear(5, 2)
  )
  expect_identical(ag_model_spec(norms), ag_model_spec(fake_norms))
  # In eval mode the dropout is the identity and the batch norm is frozen; the layer norm is the
  # same in both modes.
  g$ag_eval(norms)
  evaled <- ag_model_spec(norms)
  expect_identical(evaled$ops[2:4], list("batch_norm_eval", character(0), "layer_norm"))
  expect_length(evaled$uncovered, 0L)
  expect_identical(ag_model_spec(others$parameters())$shapes, spec$shapes)
  expect_identical(ag_model_spec(g$ag_linear(3L, 5L))$ops, list(c("matmul", "add")))
})

test_that("a model description prints its layers, loss and what is not modelled", {
  expect_snapshot({
    ag_dense_stack(c(784, 512, 10), loss = "softmax_cross_entropy")
    print(ag_dense_stack(c(4, 1), activation = "tanh", bias = FALSE))
    writeLines(format(ag_model_spec(fake_sequential(fake_linear(4, 16, "relu"), fake_dropout(),
                                                    fake_linear(16, 2)))))
  })
  expect_snapshot(error = TRUE, format(structure(list(1), class = "ag_model_spec")))
})

test_that("a layer whose ops have no rules for the device or its path is listed, not guessed", {
  # Every op has rules on both devices now; a table without them (as a future ggmlR op would
  # start out) is read from the registry, which is changed here for the test's length.
  reg <- agmem:::registry
  old <- mget(c("op_paths", "op_devices"), envir = reg)
  on.exit(list2env(old, envir = reg), add = TRUE)
  paths <- old$op_paths
  paths$attention_causal <- list(cpu = c("graph", "host"))
  paths$attention <- list(cpu = c("graph", "host"), gpu = "graph")
  assign("op_paths", paths, envir = reg)
  assign("op_devices", lapply(paths, names), envir = reg)
  model <- list(fake_linear(8, 16, "relu"), ag_causal_attention(fake_attention(16, 2)),
                fake_linear(16, 2))
  expect_warning(m <- ag_training_memory(ag_model_spec(model), 64, device = "gpu", quiet = TRUE),
                 class = "agmem_warning_lower_bound")
  expect_match(m$uncovered, paste0("layer 2 \\(attention\\): not modelled on device \"gpu\" ",
                                   "\\(attention_causal x2 measured on device \"cpu\" only; ",
                                   "its parameters counted\\)"), all = FALSE)
  expect_agmem_error(ag_max_batch_size(ag_model_spec(model), "64 MiB", device = "gpu"),
                     "not modelled on device \"gpu\"", class = "agmem_error_unmodelled")
  # With a layer norm the backward runs on the host, where the attention has no rules here.
  ln <- fake_layer("ag_layer_norm", list(gamma = fake_tensor(c(16, 1)),
                                         beta = fake_tensor(c(16, 1))))
  normed <- ag_model_spec(list(fake_linear(8, 16, "relu"), ln, fake_attention(16, 2),
                               fake_linear(16, 2)))
  expect_warning(m <- ag_training_memory(normed, 64, device = "gpu", quiet = TRUE),
                 class = "agmem_warning_lower_bound")
  expect_match(m$uncovered, paste0("layer 3 \\(attention\\): not modelled on device \"gpu\" ",
                                   "\\(attention measured there only with the graph backward, ",
                                   "and this model's layers send backward\\(\\) to the host"),
               all = FALSE)
  # And so does a dtype the graph backward does not run in.
  plain <- ag_model_spec(list(fake_linear(8, 16, "relu"), fake_attention(16, 2),
                              fake_linear(16, 2)))
  expect_warning(m <- ag_training_memory(plain, 64, device = "gpu", dtype = "f16", quiet = TRUE),
                 class = "agmem_warning_lower_bound")
  expect_match(m$uncovered, "and this model's dtype sends backward\\(\\) to the host",
               all = FALSE)
  # Restored, the same model is modelled on the graph's path.
  list2env(old, envir = reg)
  expect_identical(ag_training_memory(plain, 64, device = "gpu", quiet = TRUE)$uncovered,
                   character(0))
})
