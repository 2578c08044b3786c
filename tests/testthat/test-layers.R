# The layer readers (R/layers.R): one table, one reader per layer type of the registry.

test_that("a layer is read by the reader of its type, or by none", {
  reader <- agmem:::layer_reader
  expect_identical(reader(fake_linear(4, 2))$type, "linear")
  expect_identical(reader(fake_dropout())$type, "dropout")
  expect_identical(reader(fake_layer("ag_layer_norm", list(gamma = fake_tensor(c(4, 1)))))$type,
                   "layer_norm")
  expect_identical(reader(fake_layer("ag_batch_norm"))$type, "batch_norm")
  expect_identical(reader(fake_layer("ag_embedding", list(weight = fake_tensor(c(4, 10)))))$type,
                   "embedding")
  expect_identical(reader(fake_layer("ag_multihead_attention"))$type, "attention")
  expect_null(reader(fake_layer("ag_flash_attention")))
  expect_identical(agmem:::layer_type(fake_linear(4, 2)), "linear")
  expect_identical(agmem:::layer_type(fake_dropout()), "dropout")
  expect_identical(agmem:::layer_type(fake_layer("ag_flash")), "ag_flash")
})

test_that("the norm and dropout readers give one op of the layer's width", {
  bn <- fake_layer("ag_batch_norm", list(gamma = fake_tensor(c(6, 1)),
                                         beta = fake_tensor(c(6, 1))))
  got <- agmem:::layer_readers$batch_norm$read(bn, 2L, "x", width = 6)
  expect_identical(got$ops, "batch_norm")
  expect_identical(c(got$row$`in`, got$row$out, got$row$units), c(6, 6, 6))
  expect_length(got$tensors, 2L)
  got <- agmem:::layer_readers$dropout$read(fake_dropout(), 2L, "x", width = 6)
  expect_identical(got$ops, "dropout")
  expect_identical(got$row$units, 6)
  expect_length(got$tensors, 0L)
  expect_match(agmem:::layer_readers$dropout$read(fake_dropout(), 1L, "x")$reason,
               "as wide as the layer before it")
  ln <- fake_layer("ag_layer_norm", list(gamma = fake_tensor(c(6, 1))))
  ln$training <- FALSE
  expect_identical(agmem:::layer_readers$layer_norm$read(ln, 1L, "x")$ops, "layer_norm")
})

test_that("the linear reader gives the row, the ops and the tensors of the layer", {
  layer <- fake_linear(4, 3, activation = "tanh")
  got <- agmem:::layer_readers$linear$read(layer, 1L, "x")
  expect_identical(got$ops, c("matmul", "add", "tanh"))
  expect_identical(got$row$`in`, 4)
  expect_identical(got$row$out, 3)
  expect_length(got$tensors, 2L)
  odd <- agmem:::layer_readers$linear$read(fake_linear(4, 3, activation = "gelu"), 2L, "x")
  expect_match(odd$reason, "activation \"gelu\" is not one agmem models")
})

test_that("ag_model_spec() dispatches through the table: a layer no reader takes is uncovered", {
  emb <- fake_layer("ag_flash_attention", list(w_q = fake_tensor(c(8, 8))))
  spec <- ag_model_spec(fake_sequential(fake_linear(4, 8, "relu"), emb, fake_linear(8, 2)))
  expect_identical(spec$layers$type, c("linear", "ag_flash_attention", "linear"))
  expect_length(spec$uncovered, 1L)
  expect_match(spec$uncovered, "^layer 2 \\(ag_flash_attention")
})
