test_that("ag_checkpoint_segment() takes layers and refuses anything else, naming `...`", {
  seg <- ag_checkpoint_segment(fake_linear(16, 16, "relu"), fake_linear(16, 16, "relu"))
  expect_s3_class(seg, "ag_checkpoint_segment")
  expect_length(seg$layers, 2L)
  expect_s3_class(ag_checkpoint_segment(fake_sequential(fake_linear(8, 8))),
                  "ag_checkpoint_segment")
  expect_agmem_error(ag_checkpoint_segment(), "`...` must be the segment's layers, at least one",
                     class = "agmem_error_argument")
  for (x in list(1, "a", NULL, list(), fake_tensor(c(2, 3)), data.frame(forward = 1))) {
    expect_agmem_error(ag_checkpoint_segment(fake_linear(8, 8), x),
                       "`...` must be the segment's layers .* \\(argument 2\\)",
                       class = "agmem_error_argument")
  }
  expect_snapshot({
    print(seg)
    print(ag_checkpoint_segment(fake_sequential(fake_linear(8, 8, "tanh"), fake_dropout()),
                                fake_layer("ag_layer_norm", list(gamma = fake_tensor(c(8, 1))))))
    ag_checkpoint_segment(fake_linear(8, 8), 2)
  }, error = TRUE)
})

# A model of three relu layers and an output layer, the middle two as `middle` gives them.
checkpointed <- function(middle, linear = fake_linear) {
  ag_model_spec(list(linear(32, 64, "relu"), middle, linear(64, 4)),
                loss = "softmax_cross_entropy")
}
middle <- function(linear = fake_linear) list(linear(64, 64, "relu"), linear(64, 64, "relu"))

test_that("a segment reads as its layers, then the op that marks it", {
  spec <- checkpointed(do.call(ag_checkpoint_segment, middle()))
  plain <- checkpointed(fake_sequential(middle()[[1]], middle()[[2]]))
  expect_identical(spec$uncovered, character(0))
  expect_identical(spec$layers$type, c("linear", "linear", "linear", "checkpoint", "linear"))
  expect_identical(unname(unlist(spec$layers[4, c("in", "out", "units")])), c(64, 64, 64))
  # The mark, and one op for each of the segment's layers after its first.
  expect_identical(spec$ops[[4]], c("checkpoint", "checkpoint_layer"))
  expect_identical(checkpointed(ag_checkpoint_segment(middle()[[1]]))$ops[[3]], "checkpoint")
  expect_identical(spec$ops[-4], plain$ops)
  expect_identical(spec$shapes, plain$shapes)
  expect_identical(spec$input_width, 32)
  expect_identical(spec$output_width, 4)
  # Nested: an ag_sequential inside the segment, and a segment inside an ag_sequential.
  nested <- checkpointed(fake_sequential(ag_checkpoint_segment(fake_sequential(middle()[[1]]),
                                                               middle()[[2]])))
  expect_identical(nested$layers$type, spec$layers$type)
  expect_identical(nested$ops, spec$ops)
  # A segment that ends in a layer agmem cannot read has no width to mark.
  block <- fake_layer("my_block", list(w = fake_tensor(c(64, 64))))
  odd <- checkpointed(ag_checkpoint_segment(fake_linear(64, 64, "relu"), block))
  expect_match(odd$uncovered, "layer 3 \\(my_block\\)", all = FALSE)
  expect_match(odd$uncovered, "layer 4 \\(checkpoint\\): the segment's last layer is not one",
               all = FALSE)
  expect_snapshot(print(spec))
})

test_that("on the CPU a segment costs what its layers cost as if not checkpointed", {
  spec <- checkpointed(do.call(ag_checkpoint_segment, middle()))
  plain <- checkpointed(fake_sequential(middle()[[1]], middle()[[2]]))
  for (b in c(1, 32, 256, 2048)) {
    for (opt in c("adam", "sgd", "sgd_plain")) {
      got <- ag_training_memory(spec, b, opt, quiet = TRUE)
      want <- ag_training_memory(plain, b, opt, quiet = TRUE)
      expect_identical(got$host_peak, want$host_peak)
      expect_identical(got$host_high, want$host_high)
      expect_identical(got$components, want$components)
    }
  }
  expect_identical(ag_max_batch_size(spec, "128 MiB"), ag_max_batch_size(plain, "128 MiB"))
})

test_that("on device \"gpu\" a segment sends backward() to the host, its pools the graph's", {
  spec <- checkpointed(do.call(ag_checkpoint_segment, middle()))
  plain <- checkpointed(fake_sequential(middle()[[1]], middle()[[2]]))
  expect_identical(agmem:::spec_backward(plain), "graph")
  expect_identical(agmem:::spec_backward(spec), "host")
  for (opt in c("adam", "sgd", "sgd_plain")) {
    got <- ag_training_memory(spec, 128, opt, device = "gpu", quiet = TRUE)
    want <- ag_training_memory(plain, 128, opt, device = "gpu", quiet = TRUE)
    # The closures compute on the device's tensors: the pools are the graph backward's ...
    expect_identical(got$device_peak, want$device_peak)
    dev <- function(m) {
      d <- m$components[m$components$where == "device", ]
      rownames(d) <- NULL
      d
    }
    expect_identical(dev(got), dev(want))
    # ... and the host runs the backward in R: its figures are the host path's.
    expect_false(identical(got$host_peak, want$host_peak))
    # (f16 sends the same model's backward to the host too, its pools and all.)
    expect_identical(got$host_peak, ag_training_memory(plain, 128, opt, device = "gpu",
                                                       dtype = "f16", quiet = TRUE)$host_peak)
  }
  # With a layer that leaves the pass pool the forward alone, the pools are the host path's.
  norm <- fake_layer("ag_layer_norm", list(gamma = fake_tensor(c(64, 1))))
  both <- checkpointed(fake_sequential(ag_checkpoint_segment(middle()[[1]], middle()[[2]]), norm))
  norm_only <- checkpointed(fake_sequential(middle()[[1]], middle()[[2]], norm))
  expect_identical(ag_training_memory(both, 128, device = "gpu", quiet = TRUE)$device_peak,
                   ag_training_memory(norm_only, 128, device = "gpu", quiet = TRUE)$device_peak)
  # The mark itself costs nothing, on either device, on either path.
  rules <- agmem:::training_rules()$unit
  mark <- rules[rules$op %in% c("checkpoint", "checkpoint_layer"), ]
  expect_identical(sort(mark$device), c("cpu", "cpu", "gpu", "gpu"))
  expect_true(all(mark$bytes == 0))
  expect_identical(agmem:::registry_names("op_paths")[["checkpoint"]],
                   list(cpu = c("graph", "host"), gpu = c("graph", "host")))
})
