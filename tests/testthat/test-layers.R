# The layer readers (R/layers.R): one table, one reader per layer type of the registry.

test_that("a layer is read by the reader of its type, or by none", {
  reader <- agmem:::layer_reader
  expect_identical(reader(fake_linear(4, 2))$type, "linear")
  expect_null(reader(fake_dropout()))
  expect_null(reader(fake_layer("ag_layer_norm", list(gamma = fake_tensor(c(4, 1))))))
  expect_identical(agmem:::layer_type(fake_linear(4, 2)), "linear")
  expect_identical(agmem:::layer_type(fake_dropout()), "ag_dropout")
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
  spec <- ag_model_spec(fake_sequential(fake_linear(4, 8, "relu"), fake_dropout(),
                                        fake_linear(8, 2)))
  expect_identical(spec$layers$type, c("linear", "ag_dropout", "linear"))
  expect_length(spec$uncovered, 1L)
  expect_match(spec$uncovered, "^layer 2 \\(ag_dropout")
})
