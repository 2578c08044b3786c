# The memory there is to plan on when the user gives no budget: the host's available memory
# (through the ps package, or a reader the user sets), and the free memory of the GPU that
# ggmlR would use.

# The default reader of the memory available now: ps::ps_system_memory()$avail when ps is
# installed, NULL when it is not.
ps_memory_reader <- function() {
  if (!requireNamespace("ps", quietly = TRUE)) {
    return(NULL)
  }
  ps::ps_system_memory()$avail
}

# The bytes of memory available now, as a double: from the function in the option
# `agmem.memory_reader` (which returns bytes, or NULL when it cannot tell), ps_memory_reader() by
# default. Returns NULL when the reader returns NULL; a list of `error` (a message) when it fails,
# warns, or returns anything but one number >= 0.
available_memory <- function() {
  reader <- getOption("agmem.memory_reader", ps_memory_reader)
  bytes <- tryCatch(reader(), error = identity, warning = identity)
  if (inherits(bytes, "condition")) {
    return(list(error = conditionMessage(bytes)))
  }
  if (is.null(bytes)) {
    return(NULL)
  }
  if (!is.numeric(bytes) || length(bytes) != 1L || is.na(bytes) || bytes < 0) {
    return(list(error = "the reader did not return a number of bytes"))
  }
  as.double(bytes)
}

# The budget of an estimator in bytes: `budget` as parse_budget() reads it; NULL is the memory
# available on the host where the estimator plans the host, and the GPU's free memory where it
# plans the device; a message then says which figure was read, and where.
plan_budget <- function(budget, est) {
  if (!is.null(budget)) {
    return(parse_budget(budget))
  }
  if (est$where == "device") {
    bytes <- gpu_free_memory()
    source <- "the free memory of the GPU, as ggmlR's ggml_backend_dev_memory() reports it"
  } else {
    bytes <- parse_budget(NULL)
    source <- if (is.null(getOption("agmem.memory_reader"))) {
      "the memory available on this machine now, as ps::ps_system_memory() reports it"
    } else {
      "the memory available now, as the function in option agmem.memory_reader reports it"
    }
  }
  message("`budget` is NULL: planning on ", format_bytes_scaled(bytes), ", ", source, ".")
  bytes
}

# The ggmlR functions that enumerate devices and report their memory, or NULL without ggmlR.
ggmlr_device_api <- function() {
  if (!requireNamespace("ggmlR", quietly = TRUE)) {
    return(NULL)
  }
  list(
    count = ggmlR::ggml_backend_dev_count, get = ggmlR::ggml_backend_dev_get,
    type = ggmlR::ggml_backend_dev_type, memory = ggmlR::ggml_backend_dev_memory,
    gpu = ggmlR::ggml_backend_device_type_gpu(), igpu = ggmlR::ggml_backend_device_type_igpu()
  )
}

# The free memory, in bytes, of the GPU that ag_device("gpu") would use, as ggmlR reports it:
# the first device of type GPU, else the first integrated GPU (the order in which ggml picks its
# best backend). Only GPUs count: the CPU device reports host RAM, which is not a GPU budget.
# Refuses, naming `budget`, when ggmlR is missing, reports no GPU, or cannot read its memory.
gpu_free_memory <- function(api = ggmlr_device_api()) {
  refuse <- function(why) {
    abort(
      "`budget` is NULL, which for device \"gpu\" means the free memory of the GPU, but ", why,
      ". Give `budget`: the GPU memory to fit in, in bytes or as a size such as \"8 GiB\".",
      class = "unavailable"
    )
  }
  if (is.null(api)) {
    refuse("reading it needs ggmlR, which is not installed")
  }
  found <- tryCatch({
    devices <- lapply(seq_len(api$count()) - 1L, api$get)
    types <- vapply(devices, function(d) as.double(api$type(d)), 0)
    pick <- c(which(types == api$gpu), which(types == api$igpu))
    if (length(pick) == 0L) NULL else list(free = api$memory(devices[[pick[[1L]]]])[["free"]])
  }, error = function(e) list(error = conditionMessage(e)))
  if (is.null(found)) {
    refuse(paste0(
      "ggmlR reports no GPU on this machine (ag_device(\"gpu\") then runs on ggml's CPU ",
      "backend, in host memory: plan that with device = \"cpu\")"
    ))
  }
  free <- found$free
  if (!is.null(found$error) || !is.numeric(free) || length(free) != 1L || !is.finite(free) ||
    free < 0) {
    refuse(paste0("ggmlR could not report the free memory of the GPU",
                  if (!is.null(found$error)) paste0(" (", found$error, ")")))
  }
  as.double(free)
}
