# The registry (R/registry.R): the names of src/rules.c, read once at load, and what depends on
# them.

reg <- function(table) agmem:::registry_names(table)

test_that("the registry holds the names of the C tables", {
  expect_identical(reg("optimizers"), c("adam", "sgd", "sgd_plain"))
  expect_identical(reg("copies"), c(adam = 2L, sgd = 1L, sgd_plain = 0L))
  expect_identical(reg("devices"), c("cpu", "gpu"))
  expect_identical(reg("dtypes"), c("f32", "f16", "bf16"))
  expect_identical(reg("places"), c("host", "device"))
  expect_identical(reg("losses"), c("mse", "cross_entropy", "softmax_cross_entropy"))
  expect_identical(reg("activations"), c("relu", "sigmoid", "tanh", "softmax"))
  expect_identical(reg("layers"), c("linear", "batch_norm", "dropout", "layer_norm", "embedding",
                                    "attention", "flash_attention", "checkpoint"))
  expect_identical(reg("device_places"), c(cpu = "host", gpu = "device"))
  # ggmlR's graph backward runs in f32 only: the other dtypes send backward() to the host.
  expect_identical(reg("dtype_host_backward"), c(f32 = FALSE, f16 = TRUE, bf16 = TRUE))
  expect_setequal(reg("ops")$kind, c("data", "linear", "activation", "loss", "layer", "table",
                                     "pairs"))
})

test_that("the exported functions' defaults show the registry's choices", {
  ns <- asNamespace("agmem")
  default <- function(fun, arg) eval(formals(get(fun, envir = ns))[[arg]])
  for (fun in c("ag_estimate_training_memory", "ag_training_memory", "ag_max_batch_size",
                "ag_memory_sweep")) {
    expect_identical(default(fun, "optimizer"), reg("optimizers"), label = fun)
  }
  for (fun in c("ag_training_memory", "ag_max_batch_size", "ag_memory_sweep",
                "ag_measure_training_memory")) {
    expect_identical(default(fun, "device"), reg("devices"), label = fun)
  }
  for (fun in c("ag_training_memory", "ag_max_batch_size", "ag_memory_sweep")) {
    expect_identical(default(fun, "dtype"), reg("dtypes"), label = fun)
  }
  for (fun in c("ag_dense_stack", "ag_model_spec")) {
    expect_identical(default(fun, "loss"), reg("losses"), label = fun)
  }
})

test_that("every op has rules on the CPU, every rule names an op, and the registry knows where", {
  rules <- agmem:::training_rules()
  all_ops <- reg("ops")
  ops <- all_ops$name
  # An op that takes another op's rules has none of its own, and that op has rules.
  own <- ops[is.na(all_ops$rules)]
  taken <- all_ops[!is.na(all_ops$rules), ]
  expect_identical(taken$name, "attention_dropout")
  expect_true(all(taken$rules %in% own))
  expect_identical(all_ops$kind[match(taken$name, ops)], "pairs")
  expect_identical(reg("op_devices")[["attention_dropout"]], reg("op_devices")[["dropout"]])
  expect_setequal(unique(rules$unit$op), own)
  expect_setequal(unique(rules$unit$op[rules$unit$device == "cpu"]), own)
  # Every op was measured on the GPU too: each has rules there, on every path of backward() it
  # can take (the ops ggmlR records without an op only ever take the host's).
  expect_setequal(unique(rules$unit$op[rules$unit$device == "gpu"]), own)
  expect_identical(names(reg("op_devices")), ops)
  expect_identical(reg("op_devices"), stats::setNames(rep(list(c("cpu", "gpu")), length(ops)),
                                                      ops))
  paths <- reg("op_paths")
  for (op in ops[!all_ops$host_backward]) {
    expect_identical(paths[[op]][["gpu"]], c("graph", "host"), label = op)
  }
  for (op in ops[all_ops$host_backward]) {
    expect_true("host" %in% paths[[op]][["gpu"]], label = op)
  }
  expect_identical(reg("op_devices")[["matmul"]], c("cpu", "gpu"))
  # The ops ggmlR records without an op, which send backward() to the host; the rules that hold
  # on one path of it only are the device's.
  expect_identical(all_ops$name[all_ops$host_backward],
                   c("batch_norm", "batch_norm_eval", "layer_norm", "embedding",
                     "embedding_table", "checkpoint", "checkpoint_layer"))
  # Of those, the checkpoint's closures compute on the device's tensors: its pools stay the
  # graph backward's.
  expect_identical(all_ops$name[all_ops$pools_graph], c("checkpoint", "checkpoint_layer"))
  expect_true(all(all_ops$host_backward[all_ops$pools_graph]))
  expect_setequal(unique(c(rules$param$backward, rules$unit$backward)), c("any", "graph", "host"))
  expect_identical(unique(rules$unit$device[rules$unit$backward != "any"]), "gpu")
  expect_identical(unique(rules$param$device[rules$param$backward != "any"]), "gpu")
  named <- function(col, table) setdiff(unique(col), c("any", reg(table)))
  expect_length(named(rules$param$optimizer, "optimizers"), 0L)
  expect_length(named(rules$param$device, "devices"), 0L)
  expect_length(named(rules$param$dtype, "dtypes"), 0L)
  expect_length(named(rules$param$component, "components"), 0L)
  expect_length(named(rules$unit$component, "components"), 0L)
  expect_length(named(rules$gc$device, "devices"), 0L)
})

test_that("every layer type of the registry has its reader, and every reader a type", {
  expect_identical(names(agmem:::layer_readers), reg("layers"))
})

test_that("the C code refuses a name the registry does not hold", {
  spec <- ag_dense_stack(c(4, 2))
  flat <- agmem:::spec_ops(spec)
  expect_agmem_error(.Call(agmem:::agmem_training_memory, spec$shapes, flat$units, flat$ops, 1,
                           "adagrad", "cpu", "f32", c(3, 0, 0, NA, NA, NA)), "`optimizer`",
                     class = "agmem_error_argument")
  expect_agmem_error(.Call(agmem:::agmem_training_memory, spec$shapes, 2, "gelu", 1, "adam",
                           "cpu", "f32", c(3, 0, 0, NA, NA, NA)),
                     "`ops`: element 1, \"gelu\", is not an op",
                     class = "agmem_error_argument")
})

test_that("another ggmlR release gives one classed warning a session, at the first figure", {
  reg_env <- agmem:::registry
  old <- reg_env$ggmlr_checked
  on.exit(assign("ggmlr_checked", old, envir = reg_env), add = TRUE)
  expect_identical(reg("ggmlr_version"), "0.8.8.1")
  assign("ggmlr_checked", FALSE, envir = reg_env)
  expect_warning(agmem:::check_ggmlr_version("0.9.0"), "installed ggmlR is 0.9.0.*0.8.8.1",
                 class = "agmem_warning_version")
  expect_silent(agmem:::check_ggmlr_version("0.9.0"))
  assign("ggmlr_checked", FALSE, envir = reg_env)
  expect_silent(agmem:::check_ggmlr_version("0.8.8.1"))
  assign("ggmlr_checked", FALSE, envir = reg_env)
  expect_silent(agmem:::check_ggmlr_version(NULL))
  # The installed version, read without loading ggmlR.
  installed <- agmem:::installed_ggmlr_version()
  if (nzchar(system.file(package = "ggmlR"))) {
    expect_identical(installed, as.character(utils::packageVersion("ggmlR")))
  } else {
    expect_null(installed)
  }
})
