test_that("a dense stack has ag_dense_shapes()'s shapes, one row per layer and its ops", {
  spec <- ag_dense_stack(c(784, 512, 256, 10), "tanh", "softmax_cross_entropy")
  expect_s3_class(spec, "ag_model_spec")
  expect_identical(
    names(spec),
    c("shapes", "layers", "loss", "input_width", "output_width", "ops", "uncovered")
  )
  expect_identical(spec$shapes, ag_dense_shapes(c(784, 512, 256, 10)))
  expect_identical(spec$layers, data.frame(
    type = "linear", `in` = c(784, 512, 256), out = c(512, 256, 10), bias = TRUE,
    activation = c("tanh", "tanh", "none"), units = c(512, 256, 10),
    stringsAsFactors = FALSE, check.names = FALSE
  ))
  expect_identical(spec$loss, "softmax_cross_entropy")
  expect_identical(spec$input_width, 784)
  expect_identical(spec$output_width, 10)
  expect_identical(spec$ops, list(
    c("matmul", "add", "tanh"), c("matmul", "add", "tanh"), c("matmul", "add")
  ))
  expect_identical(spec$uncovered, character(0))
})

test_that("defaults are relu and mse; no bias means no add and no bias shapes", {
  spec <- ag_dense_stack(c(3L, 2L))
  expect_identical(spec$loss, "mse")
  expect_identical(spec$layers$activation, "none")
  expect_identical(spec$ops, list(c("matmul", "add")))
  expect_identical(ag_dense_stack(c(4, 8, 2))$layers$activation, c("relu", "none"))
  plain <- ag_dense_stack(c(4, 8, 2), activation = "none", bias = FALSE)
  expect_identical(plain$shapes, ag_dense_shapes(c(4, 8, 2), bias = FALSE))
  expect_identical(plain$ops, list("matmul", "matmul"))
  expect_identical(plain$layers$bias, c(FALSE, FALSE))
  expect_identical(ag_dense_stack(c(4, 8, 2), "sig", "cross")$layers$activation,
                   c("sigmoid", "none"))
  expect_identical(ag_dense_stack(c(4, 8, 2), "sig", "cross")$loss, "cross_entropy")
})

test_that("every op a dense stack can produce has rules on both devices", {
  rules <- training_rules()$unit
  for (act in c("relu", "sigmoid", "tanh", "none")) {
    for (loss in c("mse", "cross_entropy", "softmax_cross_entropy")) {
      spec <- ag_dense_stack(c(3, 4, 2), act, loss)
      for (op in c(unlist(spec$ops), paste0("loss_", loss))) {
        for (dev in c("cpu", "gpu")) {
          expect_true(any(rules$op == op & rules$device == dev), label = paste(op, dev))
        }
      }
    }
  }
})

test_that("bad arguments are errors that name them", {
  expect_snapshot(error = TRUE, {
    ag_dense_stack(784)
    ag_dense_stack(c(784, 10), activation = "gelu")
    ag_dense_stack(c(784, 10), loss = "hinge")
    ag_dense_stack(c(784, 10), bias = "yes")
  })
})

test_that("every activation of the registry may be a hidden layer's, each measured", {
  for (act in c("relu", "sigmoid", "tanh", "softmax")) {
    spec <- ag_dense_stack(c(16, 8, 4), activation = act)
    expect_identical(spec$ops[[1L]], c("matmul", "add", act))
    for (dev in c("cpu", "gpu")) {
      expect_false(ag_training_memory(spec, 8, device = dev, quiet = TRUE)$source_only)
    }
  }
})

test_that("bad arguments are errors that name them, value by value", {
  for (bad in list(784, NULL, c(784, 0), c(784, 2.5), c(784, NA), "784", list(784, 10))) {
    expect_agmem_error(ag_dense_stack(bad), "`widths`")
  }
  for (bad in list(NULL, NA, NA_character_, "", 1, "gelu", c("relu", "tanh"), factor("relu"),
                   character(0))) {
    expect_agmem_error(ag_dense_stack(c(3, 2), activation = bad), "`activation`")
  }
  for (bad in list(NULL, NA, "", 2, "hinge", c("mse", "cross_entropy"), factor("mse"))) {
    expect_agmem_error(ag_dense_stack(c(3, 2), loss = bad), "`loss`")
  }
  for (bad in list(NULL, NA, 1, "TRUE", c(TRUE, FALSE))) {
    expect_agmem_error(ag_dense_stack(c(3, 2), bias = bad), "`bias`")
  }
})
