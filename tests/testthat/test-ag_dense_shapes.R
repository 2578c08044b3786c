test_that("a dense stack's shapes follow W %*% x, weight c(out, in) then bias", {
  expect_identical(ag_dense_shapes(c(784, 512, 10)), list(c(512, 784), 512, c(10, 512), 10))
  expect_identical(ag_dense_shapes(c(784, 512, 10), bias = FALSE), list(c(512, 784), c(10, 512)))
  expect_identical(ag_dense_shapes(c(3L, 2L)), list(c(2, 3), 2))
  expect_identical(ag_dense_shapes(c(a = 3, b = 2)), list(c(2, 3), 2))
  est <- ag_estimate_training_memory(ag_dense_shapes(c(784, 512, 10)), quiet = TRUE)
  expect_identical(est$params, 784 * 512 + 512 + 512 * 10 + 10)
})

test_that("bad widths and bias are errors that name the argument", {
  expect_snapshot(error = TRUE, {
    ag_dense_shapes(784)
    ag_dense_shapes(c(784, 0, 10))
    ag_dense_shapes(c(784, 10), bias = NA)
  })
})

test_that("bad widths and bias are errors that name the argument, value by value", {
  for (bad in list(784, numeric(0), NULL, c(784, 0), c(784, -1), c(784, 2.5), c(784, NA),
                   c(784, Inf), "784", factor(c(784, 10)), list(784, 10), c(TRUE, TRUE))) {
    expect_agmem_error(ag_dense_shapes(bad), "`widths`")
  }
  for (bad in list(NA, 1, "TRUE", c(TRUE, FALSE), NULL)) {
    expect_agmem_error(ag_dense_shapes(c(2, 3), bias = bad), "`bias`")
  }
})
