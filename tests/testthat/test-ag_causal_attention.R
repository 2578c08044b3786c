test_that("ag_causal_attention() takes an attention and refuses anything else", {
  attn <- fake_attention(16, 4)
  causal <- ag_causal_attention(attn)
  expect_s3_class(causal, "ag_causal_attention")
  expect_identical(causal$attention, attn)
  expect_agmem_error(ag_causal_attention(fake_linear(4, 8)),
                     "`attention` must be a ggmlR ag_multihead_attention\\(\\) layer, not list",
                     class = "agmem_error_argument")
  expect_agmem_error(ag_causal_attention(NULL), "not NULL", class = "agmem_error_argument")
  expect_agmem_error(ag_causal_attention(fake_dropout()), "not an object of class \"ag_dropout\"",
                     class = "agmem_error_argument")
  expect_snapshot(print(causal))
  attn$name <- "multihead_attention(d=16, h=4)"
  expect_snapshot(print(ag_causal_attention(attn)))
})

test_that("a real ggmlR attention reads as its fake does", {
  skip_if_not_installed("ggmlR")
  real <- ag_model_spec(list(ggmlR::ag_linear(8L, 16L, activation = "relu"),
                             ag_causal_attention(ggmlR::ag_multihead_attention(16L, 4L)),
                             ggmlR::ag_linear(16L, 2L)))
  fake <- ag_model_spec(list(fake_linear(8, 16, "relu"), ag_causal_attention(fake_attention(16, 4)),
                             fake_linear(16, 2)))
  expect_identical(real$ops, fake$ops)
  expect_identical(real$shapes, fake$shapes)
  expect_identical(real$uncovered, character(0))
})

test_that("a causal attention adds one mask per head, on the pairs of the sequence", {
  plain <- ag_model_spec(list(fake_linear(8, 16, "relu"), fake_attention(16, 4),
                              fake_linear(16, 2)))
  causal <- ag_model_spec(list(fake_linear(8, 16, "relu"),
                               ag_causal_attention(fake_attention(16, 4)), fake_linear(16, 2)))
  expect_identical(causal$uncovered, character(0))
  expect_identical(causal$layers, plain$layers)
  expect_identical(causal$shapes, plain$shapes)
  heads <- rep("attention_head", 4)
  expect_identical(causal$ops[[2]], c("attention_slices", "attention", heads,
                                      rep("attention_causal", 4), "attention_concat",
                                      rep("attention_block", 4)))
  flat <- agmem:::spec_ops(causal)
  expect_identical(flat$units[flat$ops == "attention_causal"], rep(1, 4))
  expect_match(format(causal), "attention_head x4, attention_causal x4", all = FALSE)
  # With its dropout too, the mask comes before it, as in the forward pass.
  both <- ag_model_spec(ag_causal_attention(fake_attention(16, 2, dropout = 0.1)))
  expect_identical(both$ops[[1]], c("attention_slices", "attention", rep("attention_head", 2),
                                    rep("attention_causal", 2), rep("attention_dropout", 2),
                                    "attention_concat", rep("attention_block", 2)))
  # Inside an ag_sequential() it reads the same.
  nested <- ag_model_spec(fake_sequential(fake_linear(8, 16, "relu"),
                                          ag_causal_attention(fake_attention(16, 4)),
                                          fake_linear(16, 2)))
  expect_identical(nested$ops, causal$ops)
})

test_that("the mask costs what its rules say, per head and pair of samples", {
  spec <- function(causal) {
    attn <- fake_attention(16, 4)
    ag_model_spec(list(fake_linear(8, 16, "relu"), if (causal) ag_causal_attention(attn) else attn,
                       fake_linear(16, 2)))
  }
  mem <- function(causal, b) ag_training_memory(spec(causal), b, quiet = TRUE)
  rules <- agmem:::training_rules()
  live <- rules$live[rules$live$op %in% "attention_causal" & rules$live$device == "cpu", ]
  expect_identical(nrow(live), 1L)
  for (b in c(64, 256)) {
    # The live heap of the whole run grows by the mask's live bytes on each head's pairs.
    expect_equal(mem(TRUE, b)$host_regime$live - mem(FALSE, b)$host_regime$live,
                 4 * b^2 * live$bytes)
    expect_gt(mem(TRUE, b)$host_high, mem(FALSE, b)$host_high)
  }
  # The planners plan a shorter sequence for it.
  expect_lt(ag_max_batch_size(spec(TRUE), "256 MiB"), ag_max_batch_size(spec(FALSE), "256 MiB"))
})

test_that("on device \"gpu\" the mask is in the pass pool, 8 bytes per head and pair", {
  spec <- function(causal, norm = FALSE) {
    attn <- fake_attention(16, 2)
    ln <- fake_layer("ag_layer_norm", list(gamma = fake_tensor(c(16, 1)),
                                           beta = fake_tensor(c(16, 1))))
    ag_model_spec(c(list(fake_linear(8, 16, "relu")), if (norm) list(ln),
                    list(if (causal) ag_causal_attention(attn) else attn, fake_linear(16, 2))))
  }
  pools <- function(b, ...) {
    m <- expect_silent(ag_training_memory(spec(...), b, device = "gpu", quiet = TRUE))
    expect_identical(m$uncovered, character(0))
    m$device_peak
  }
  # Measured (measure-one.R): its f32 upload and the masked scores, with the graph backward
  # and with a layer norm that sends backward() to the host alike.
  for (b in c(64, 256)) {
    expect_equal(pools(b, TRUE) - pools(b, FALSE), 2 * b^2 * 8)
    expect_equal(pools(b, TRUE, TRUE) - pools(b, FALSE, TRUE), 2 * b^2 * 8)
  }
})
