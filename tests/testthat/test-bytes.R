test_that("byte counts take the unit that suits them, 1024-based by default", {
  x <- c(0, 1, 1023, 1024, 1536, 1024^2 * 5.5, 1024^3 * 2, 1024^4 * 3, 1024^5)
  expect_identical(
    format_bytes_scaled(x),
    c("0 B", "1 B", "1023 B", "1.00 KiB", "1.50 KiB", "5.50 MiB", "2.00 GiB", "3.00 TiB",
      "1.00 PiB")
  )
  expect_identical(
    format_bytes_scaled(c(999, 1000, 1.5e6, 2.25e9, 4e12, 5e15), "si"),
    c("999 B", "1.00 kB", "1.50 MB", "2.25 GB", "4.00 TB", "5.00 PB")
  )
  expect_identical(format_bytes_scaled(c(1024, 5 * 1024^2, 512), "MiB"),
                   c("0.00 MiB", "5.00 MiB", "0.00 MiB"))
  expect_identical(format_bytes_scaled(2.5e9, "GB"), "2.50 GB")
  expect_identical(format_bytes_scaled(1536, "B"), "1536 B")
  expect_identical(format_bytes_scaled(c(NA, Inf, 2L)), c("NA", "Inf B", "2 B"))
  expect_identical(format_bytes_scaled(numeric(0)), character(0))
})

test_that("units go up to YiB and YB, then a mantissa in the largest unit", {
  expect_identical(format_bytes_scaled(150 * 1024^2), "150.00 MiB")
  expect_identical(format_bytes_scaled(1023 * 1024^8), "1023.00 YiB")
  expect_identical(format_bytes_scaled(1024^9), "1.02e+03 YiB")
  expect_identical(format_bytes_scaled(1e308), "8.27e+283 YiB")
  expect_identical(format_bytes_scaled(.Machine$double.xmax), "1.49e+284 YiB")
  expect_identical(format_bytes_scaled(5e27, "si"), "5.00e+03 YB")
  # Every power of 1024 gets its own unit, not 1024.00 of the one below.
  iec <- c("B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB", "ZiB", "YiB")
  for (p in 1:8) {
    expect_identical(format_bytes_scaled(1024^p), paste("1.00", iec[[p + 1L]]))
  }
})

test_that("a fixed unit groups its digits, and takes a mantissa only past whole digits", {
  expect_identical(
    agmem:::format_bytes_scaled(c(41000 * 1024, 5, 3e12, 1e15 * 1024, NA), "KiB"),
    c("41 000.00 KiB", "0.00 KiB", "2 929 687 500.00 KiB", "1.00e+15 KiB", "NA")
  )
  expect_identical(agmem:::format_bytes_scaled(3e12, "MB"), "3 000 000.00 MB")
  expect_identical(agmem:::format_bytes_scaled(2^90, "YiB"), "1.02e+03 YiB")
  # Automatic units keep their two decimals without grouping.
  expect_identical(agmem:::format_bytes_scaled(1000 * 1024), "1000.00 KiB")
})

test_that("a bad unit or count is an error that names it", {
  for (bad in list(NULL, NA, "", "mib", c("iec", "si"), 1, "furlongs")) {
    expect_agmem_error(format_bytes_scaled(1, bad), "`units`")
  }
  for (bad in list("1", NULL, list(1), factor(1), TRUE)) {
    expect_agmem_error(format_bytes_scaled(bad), "`x`")
  }
})
