spec <- ag_dense_stack(c(784, 512, 512, 10))
shapes <- ag_dense_shapes(c(784, 512, 512, 10))
measured <- structure(list(
  line = list(host = c(fixed = 5e7, per_sample = 1e5), device = c(fixed = 0, per_sample = 0)),
  device = "cpu"
), class = "ag_measured_memory")

test_that("the summary gives, per optimizer, the batch ag_max_batch_size() gives", {
  beyond_range_ok({
    cases <- list(
      list(sweep = ag_memory_sweep(spec, 2^(0:12)), what = spec, args = list()),
      list(sweep = ag_memory_sweep(spec, 2^(0:12), c("sgd", "adam"), device = "gpu",
                                   dtype = "bf16"),
           what = spec, args = list(device = "gpu", dtype = "bf16")),
      list(sweep = ag_memory_sweep(shapes, 2^(0:12), activation_frac = 0.05), what = shapes,
           args = list(activation_frac = 0.05))
    )
    for (case in cases) {
      for (budget in list("256 MiB", 2^30, 1e5)) {
        s <- summary(case$sweep, budget = budget)
        expect_s3_class(s, c("summary.ag_memory_sweep", "data.frame"), exact = TRUE)
        expect_identical(s$optimizer, unique(case$sweep$optimizer))
        for (r in seq_len(nrow(s))) {
          # A budget in which not even batch 1 fits is an error there, and 0 here.
          b <- tryCatch(
            do.call(ag_max_batch_size, c(list(case$what, budget, s$optimizer[[r]]), case$args)),
            agmem_error_budget = function(e) 0
          )
          expect_identical(s$max_batch[[r]], b)
          rows <- case$sweep[case$sweep$optimizer == s$optimizer[[r]], ]
          column <- if (is.null(case$args$activation_frac)) {
            if (identical(case$args$device, "gpu")) "device_peak" else "host_high"
          } else {
            "total"
          }
          limit <- agmem:::parse_budget(budget)
          swept <- rows$batch_size[rows[[column]] <= limit]
          expect_identical(s$largest_swept[[r]], if (length(swept)) max(swept) else NA_real_)
          if (b >= 1) {
            expect_lte(s$memory[[r]], limit)
          } else {
            expect_identical(s$memory[[r]], NA_real_)
          }
        }
      }
    }
    s <- summary(ag_memory_sweep(spec, 2^(0:12), "adam"), "512 MiB")
    expect_identical(s$memory, ag_training_memory(spec, s$max_batch, quiet = TRUE)$host_high)
  })
})

test_that("a measurement's summary plans on its line; a constant line fits any batch", {
  s <- summary(ag_memory_sweep(measured, c(8, 64)), budget = "256 MiB")
  expect_identical(s$max_batch, ag_max_batch_size(measured, "256 MiB"))
  expect_identical(s$memory, 5e7 + 1e5 * s$max_batch)
  flat <- measured
  flat$line$host[["per_sample"]] <- 0
  s <- summary(ag_memory_sweep(flat, 8), budget = "256 MiB")
  expect_identical(s$max_batch, Inf)
  expect_identical(s$memory, 5e7)
})

# A summary of a model's sweep with its rows set by hand, so that the printed figures do not
# follow the rules of the model.
summary_by_hand <- function(plan_of, budget, optimizer, max_batch, memory, largest_swept) {
  structure(
    data.frame(optimizer = optimizer, max_batch = max_batch, memory = memory,
               largest_swept = largest_swept, stringsAsFactors = FALSE),
    budget = budget, plan = attr(plan_of, "plan"), activation_frac = NULL,
    class = c("summary.ag_memory_sweep", "data.frame")
  )
}

test_that("the summary prints in readable units", {
  cpu <- summary_by_hand(ag_memory_sweep(spec, 1), 2^29, c("adam", "sgd", "sgd_plain"),
                         c(5303, 5390, 5462), c(536808000, 536829000, 536805000),
                         c(4096, 4096, 4096))
  gpu <- summary_by_hand(ag_memory_sweep(spec, 1, device = "gpu", dtype = "bf16"), 64e6,
                         c("adam", "sgd"), c(Inf, 0), c(6e6, NA), c(1024, NA))
  expect_snapshot({
    cpu
    print(gpu, units = "si")
    summary(ag_memory_sweep(shapes, c(1, 32)), budget = "20 MiB")
    summary(ag_memory_sweep(measured, c(8, 64)), budget = "1 GiB")
    summary(ag_memory_sweep(shapes, 2^(0:4)), budget = "1 MiB")
  })
})

test_that("the summary's bad arguments are errors that name them", {
  beyond_range_ok({
    sweep <- ag_memory_sweep(spec, c(1, 32))
    expect_snapshot(error = TRUE, {
      summary(sweep, budget = "12 parsecs")
      summary(sweep[, c("optimizer", "params")])
      print(summary(sweep, "1 GiB"), units = "furlongs")
    })
    stripped <- ag_memory_sweep(shapes, 1)
    attr(stripped, "activation_frac") <- NULL
    attr(stripped, "plan") <- NULL
    expect_agmem_error(summary(stripped, "1 GiB"), "`object`")
    skip_if_not_installed("ps")
    expect_true(is.finite(summary(sweep)$max_batch[[1L]]))
  })
})

test_that("an empty sweep summarises to no rows; a sweep with NA figures is refused", {
  sweep <- ag_memory_sweep(spec, c(1, 64), "adam")
  empty <- summary(sweep[0, ], "1 GiB")
  expect_s3_class(empty, "summary.ag_memory_sweep")
  expect_identical(nrow(empty), 0L)
  expect_output(print(empty), "the sweep has no rows")
  broken <- sweep
  broken$host_high[[1L]] <- NA
  expect_agmem_error(summary(broken, "1 GiB"),
                     "`object` has missing or non-numeric values in its `host_high`")
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off(), add = TRUE)
  expect_agmem_error(plot(broken), "`x` has missing or non-numeric values in its `host_high`")
  broken <- sweep
  broken$batch_size[[2L]] <- NaN
  expect_agmem_error(plot(broken), "`batch_size` column")
})
