test_that("ag_flash_attention_call() checks its arguments, naming them", {
  call <- ag_flash_attention_call(64, 4)
  expect_s3_class(call, "ag_flash_attention_call")
  expect_identical(unclass(call), list(d_model = 64, n_heads = 4, causal = FALSE))
  expect_identical(ag_flash_attention_call(64L, 1L, causal = TRUE)$causal, TRUE)
  bad <- list(0, -1, 1.5, NA_real_, Inf, "64", c(64, 64), NULL, factor(64))
  for (x in bad) {
    expect_agmem_error(ag_flash_attention_call(x, 1), "`d_model` must be a single positive whole",
                       class = "agmem_error_argument")
    expect_agmem_error(ag_flash_attention_call(64, x), "`n_heads` must be a single positive whole",
                       class = "agmem_error_argument")
  }
  expect_agmem_error(ag_flash_attention_call(64, 3),
                     "`n_heads` must divide `d_model` \\(64 is not a multiple of 3\\)",
                     class = "agmem_error_argument")
  expect_agmem_error(ag_flash_attention_call(64, 4, causal = NA), "`causal` must be a single TRUE",
                     class = "agmem_error_argument")
  expect_snapshot({
    print(call)
    print(ag_flash_attention_call(64, 1, causal = TRUE))
  })
})

test_that("a flash call reads as one op of its width, and its causal mask as one on the pairs", {
  proj <- function() fake_linear(16, 16)
  block <- function(causal) {
    list(fake_linear(8, 16, "relu"), proj(), proj(), proj(),
         ag_flash_attention_call(16, 4, causal), proj(), fake_linear(16, 2))
  }
  spec <- ag_model_spec(block(FALSE))
  expect_identical(spec$uncovered, character(0))
  expect_identical(spec$layers$type[[5]], "flash_attention")
  expect_identical(spec$layers$units[[5]], 16)
  expect_identical(spec$ops[[5]], "flash_attention")
  # It has no parameters: the block's are its projections'.
  expect_identical(length(spec$shapes), 2L * 6L)
  causal <- ag_model_spec(block(TRUE))
  expect_identical(causal$ops[[5]], c("flash_attention", "flash_causal"))
  flat <- agmem:::spec_ops(causal)
  expect_identical(flat$units[flat$ops == "flash_causal"], 1)
  expect_identical(flat$units[flat$ops == "flash_attention"], 16)
  # A model of the call alone has no parameters to count.
  expect_agmem_error(ag_model_spec(ag_flash_attention_call(16, 4)), "has no parameters")
})

test_that("the call and its mask cost what their rules say", {
  rules <- agmem:::training_rules()$live
  rule <- function(op) rules[rules$op %in% op & rules$device == "cpu", ]
  expect_identical(nrow(rule("flash_attention")), 1L)
  expect_identical(nrow(rule("flash_causal")), 1L)
  base <- list(fake_linear(8, 16, "relu"), fake_linear(16, 2))
  with_call <- function(causal) {
    ag_model_spec(append(base, list(ag_flash_attention_call(16, 4, causal)), after = 1L))
  }
  live <- function(spec, b) ag_training_memory(spec, b, quiet = TRUE)$host_regime$live
  unit <- agmem:::training_rules()$unit
  per_unit <- unit$bytes[unit$op %in% "flash_attention" & unit$device == "cpu"]
  activations <- function(spec, b) {
    comp <- ag_training_memory(spec, b, quiet = TRUE)$components
    comp$bytes[comp$component == "activations"]
  }
  for (b in c(64, 256)) {
    expect_equal(activations(with_call(FALSE), b) - activations(ag_model_spec(base), b),
                 16 * b * per_unit)
    plain <- live(ag_model_spec(base), b)
    expect_equal(live(with_call(FALSE), b) - plain, 16 * b * rule("flash_attention")$bytes)
    expect_equal(live(with_call(TRUE), b) - plain,
                 16 * b * rule("flash_attention")$bytes + b^2 * rule("flash_causal")$bytes)
  }
  # Its sequence is the batch: one beyond those measured says so.
  expect_warning(ag_training_memory(with_call(FALSE), 1024, quiet = TRUE),
                 "attention sequence \\(the batch size\\) 1 024", class = "agmem_warning_range")
  # On device "gpu" the fused op and its gradients are in the pass pool (measured, measure-one.R:
  # 64 bytes per unit of d_model and sample with the graph backward) and the mask in f16.
  pools <- function(spec, b) {
    m <- expect_silent(ag_training_memory(spec, b, device = "gpu", quiet = TRUE))
    expect_identical(m$uncovered, character(0))
    m$device_peak
  }
  for (b in c(64, 256)) {
    expect_equal(pools(with_call(FALSE), b) - pools(ag_model_spec(base), b), 16 * b * 64)
    expect_equal(pools(with_call(TRUE), b) - pools(with_call(FALSE), b), b^2 * 2)
  }
})

test_that("a real ggmlR block reads as its fake does", {
  skip_if_not_installed("ggmlR")
  real <- lapply(1:4, function(i) ggmlR::ag_linear(16L, 16L))
  fake <- lapply(1:4, function(i) fake_linear(16, 16))
  read <- function(p) {
    ag_model_spec(c(p[1:3], list(ag_flash_attention_call(16, 4, TRUE)), p[4]))
  }
  expect_identical(read(real)$ops, read(fake)$ops)
  expect_identical(read(real)$shapes, read(fake)$shapes)
})
