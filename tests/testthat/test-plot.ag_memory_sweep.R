sweep <- ag_memory_sweep(ag_dense_shapes(c(784, 2048, 2048, 10)), 2^(0:12))

draw <- function(...) {
  file <- tempfile(fileext = ".png")
  grDevices::png(file, width = 900, height = 600)
  on.exit(grDevices::dev.off())
  out <- withVisible(plot(...))
  list(file = file, out = out)
}

test_that("the plot draws to a PNG and returns the sweep invisibly", {
  for (budget in list(NULL, "150 MB", 1e12, 1)) {
    drawn <- draw(sweep, budget = budget)
    expect_false(drawn$out$visible)
    expect_identical(drawn$out$value, sweep)
    expect_gt(file.size(drawn$file), 1000)
  }
  one <- ag_memory_sweep(1e6, c(1, 10), "sgd", activation_frac = 0)
  expect_identical(draw(one, budget = "1 GB", main = "one optimizer")$out$value, one)
})

test_that("the largest batch that fits is found for every optimizer", {
  fits <- vapply(c("adam", "sgd", "sgd_plain"), function(opt) {
    ag_max_batch_size(ag_dense_shapes(c(784, 2048, 2048, 10)), "150 MB", opt)
  }, numeric(1))
  expect_identical(unname(fits), c(0, 37, 137))
  expect_identical(agmem:::format_fit(0), "batch 1 does not fit")
  expect_identical(agmem:::format_fit(Inf), "any batch fits")
  expect_identical(agmem:::format_fit(1234), "fits up to batch 1 234")
})

test_that("a bad sweep or budget is an error that names the argument", {
  expect_error(plot(sweep, budget = "12 parsecs"), "`budget`")
  expect_error(agmem:::plot.ag_memory_sweep(data.frame(a = 1)), "`x`")
  expect_error(plot(sweep[sweep$batch_size > 1e9, ]), "`x`")
  stripped <- sweep
  attr(stripped, "activation_frac") <- NULL
  expect_error(plot(stripped), "`x`")
})

test_that("byte units suit the figure", {
  expect_identical(agmem:::format_bytes(150 * 1024^2), "150.00 MB")
  expect_identical(agmem:::format_bytes(512), "512.00 bytes")
  expect_identical(agmem:::format_bytes(3 * 1024^4), "3.00 TB")
  expect_identical(agmem:::format_bytes(5 * 1024^5), "5120.00 TB")
})
