spec <- ag_dense_stack(c(784, 512, 512, 10), loss = "softmax_cross_entropy")

# A model's sweep with its byte columns set by hand, so that the printed figures do not follow
# the rules of the model: `bytes` is a function of the row number giving each column's value, 0
# for a column it does not name.
by_hand <- function(sweep, ...) {
  bytes <- list(...)
  n <- seq_len(nrow(sweep))
  for (col in c(agmem:::registry_names("components"), "host_peak", "host_high", "device_peak")) {
    sweep[[col]] <- if (is.null(bytes[[col]])) rep(0, nrow(sweep)) else bytes[[col]](n)
  }
  sweep
}
measured <- structure(list(
  line = list(host = c(fixed = 5e7, per_sample = 1e5), device = c(fixed = 0, per_sample = 0)),
  device = "cpu"
), class = "ag_measured_memory")

test_that("a formula's sweep prints in scaled units under a line that says what it is", {
  sweep <- ag_memory_sweep(ag_dense_shapes(c(784, 512, 512, 10)), c(1, 32, 1024), c("adam", "sgd"))
  expect_snapshot({
    sweep
    print(sweep, units = "si")
    print(sweep, units = "KiB")
  })
})

test_that("a model's sweep prints its peaks, leaving out the columns 0 in every row", {
  beyond_range_ok({
    cpu <- by_hand(ag_memory_sweep(spec, c(1, 64, 4096), "adam"),
                   weights = function(n) rep(5357648, length(n)),
                   optimizer_state = function(n) rep(10715296, length(n)),
                   activations = function(n) 37000 * 64^(n - 1),
                   host_peak = function(n) 16430592 + 37000 * 64^(n - 1),
                   host_high = function(n) 66430592 + 52000 * 64^(n - 1))
    gpu <- by_hand(ag_memory_sweep(spec, c(1, 64, 4096), c("sgd", "sgd_plain"), device = "gpu",
                                   dtype = "f16"),
                   weights = function(n) rep(1339412, length(n)),
                   master_weights = function(n) rep(2678824, length(n)),
                   activations = function(n) 16000 * 2^n,
                   host_peak = function(n) rep(5357648, length(n)),
                   host_high = function(n) rep(5357648, length(n)),
                   device_peak = function(n) 6e6 + 1e7 * n)
    expect_snapshot({
      cpu
      gpu
    })
  })
})

test_that("a measurement's sweep prints its line", {
  expect_snapshot(print(ag_memory_sweep(measured, c(8, 64, 1024)), units = "si"))
})

test_that("format() keeps the rows and columns as text; the sweep keeps exact bytes", {
  sweep <- ag_memory_sweep(spec, c(1, 64), "adam")
  text <- format(sweep)
  expect_s3_class(text, "data.frame", exact = TRUE)
  expect_identical(dim(text), dim(sweep))
  expect_identical(names(text), names(sweep))
  expect_true(all(vapply(text, is.character, logical(1))))
  expect_identical(text$host_peak, agmem:::format_bytes_scaled(sweep$host_peak))
  expect_identical(format(sweep, units = "MB")$host_peak,
                   agmem:::format_bytes_scaled(sweep$host_peak, "MB"))
  expect_identical(text$batch_size, c("1", "64"))
  expect_identical(text$params, c("669 706", "669 706"))
  expect_identical(agmem:::format_count_table(c(1e15, 1234567, NA)), c("1e+15", "1 234 567", "NA"))
  # printing returns the sweep itself, invisibly, with exact doubles
  expect_output(out <- withVisible(print(sweep)), "planned on host_high")
  expect_false(out$visible)
  expect_identical(out$value, sweep)
  expect_true(is.double(sweep$host_peak))
})

test_that("format() writes every byte count in the unit asked for", {
  beyond_range_ok({
    sweep <- by_hand(ag_memory_sweep(spec, c(1, 4096), "sgd", device = "gpu"),
                     weights = function(n) rep(2678824, length(n)),
                     activations = function(n) 16464 * 4096^(n - 1), host_peak = function(n) 5.4e6,
                     device_peak = function(n) c(8.07e6, 1.3e8))
    expect_snapshot({
      format(sweep)
      format(sweep, units = "si")
      format(sweep, units = "MiB")
    })
  })
})

test_that("a tiny and a huge model are readable", {
  tiny <- ag_memory_sweep(ag_dense_shapes(c(2, 1)), 1, "sgd")
  huge <- ag_memory_sweep(ag_dense_shapes(c(65536, 65536, 65536)), 1024, "adam")
  expect_snapshot({
    tiny
    huge
  })
})

test_that("a bad `units` is an error that names it", {
  sweep <- ag_memory_sweep(spec, 1, "adam")
  expect_snapshot(error = TRUE, print(sweep, units = "parsecs"))
  expect_agmem_error(format(sweep, units = c("si", "iec")), "`units`")
})
