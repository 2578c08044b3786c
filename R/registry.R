# The registry: the names of the optimizers, devices, dtypes, components, places, ops, losses and
# layer types, read once from the C code's tables (src/rules.c) when the package loads. No other
# R file spells these names; the functions' defaults that show the choices in their usage are
# checked against the registry by tests/testthat/test-registry.R.

registry <- new.env(parent = emptyenv())

# Fills `registry` from the C tables: `optimizers` (names), `copies` (ggmlR's formula's
# optimizer-state copies, named by optimizer), `devices`, `dtypes`, `components`, `places`,
# `ops` (a data frame of `name`, `kind`, `rules`: the op whose rules it takes, NA for its
# own, and `host_backward`: whether ggmlR records it without an op, which sends backward() to
# the host), `activations` (the ops of kind "activation"),
# `losses` (the losses as the user names them: the ops of kind "loss" without "loss_") and
# `layers` (the layer types agmem models) and `device_places` (for each device, named, the place
# whose peak limits a run there: "host" or "device") and `validated` (the largest batch size,
# width, parameter count, attention sequence and attention width the model was validated on,
# named) and `ggmlr_version` (the ggmlR
# release the rules describe) and `dtype_host_backward` (for each dtype, named, whether it sends
# backward() to the host whatever the ops: ggmlR's graph backward runs in f32 only) and
# `op_devices` (for each op, named, the devices whose unit rules
# model it: those of the op whose rules it takes) and `op_paths` (for each op, named, and each of
# those devices, the paths of backward() its rules hold on: "graph", "host" or both).
load_registry <- function() {
  reg <- .Call(agmem_registry)
  registry$optimizers <- reg$optimizers$name
  registry$copies <- structure(reg$optimizers$copies, names = reg$optimizers$name)
  registry$devices <- reg$devices
  registry$dtypes <- reg$dtypes
  registry$components <- reg$components
  registry$places <- reg$places
  registry$ops <- data.frame(name = reg$ops$name, kind = reg$ops$kind, rules = reg$ops$rules,
                             host_backward = reg$ops$host_backward,
                             pools_graph = reg$ops$pools_graph, stringsAsFactors = FALSE)
  registry$activations <- reg$ops$name[reg$ops$kind == "activation"]
  registry$losses <- sub("^loss_", "", reg$ops$name[reg$ops$kind == "loss"])
  registry$layers <- reg$layers
  registry$device_places <- structure(reg$device_places, names = reg$devices)
  registry$validated <- reg$validated
  registry$ggmlr_version <- reg$ggmlr_version
  registry$dtype_host_backward <- structure(reg$dtype_host_backward, names = reg$dtypes)
  unit <- .Call(agmem_training_rules)$unit
  own <- ifelse(is.na(reg$ops$rules), reg$ops$name, reg$ops$rules)
  registry$op_paths <- lapply(structure(own, names = reg$ops$name), function(op) {
    rows <- unit$op == op
    device <- factor(unit$device[rows], levels = unique(unit$device[rows]))
    lapply(split(unit$backward[rows], device), function(b) {
      if ("any" %in% b) c("graph", "host") else sort(unique(b))
    })
  })
  registry$op_devices <- lapply(registry$op_paths, names)
  registry$ggmlr_checked <- FALSE
  invisible(registry)
}

.onLoad <- function(libname, pkgname) {
  load_registry()
}

# The names of one table of the registry ("optimizers", "devices", ...).
registry_names <- function(table) {
  get(table, envir = registry, inherits = FALSE)
}

# The place whose peak limits a run on `device`, the one planned on: "host" or "device".
planned_place <- function(device) {
  registry$device_places[[device]]
}

# The op of a loss in the rule table: "mse" is "loss_mse".
loss_op <- function(loss) {
  paste0("loss_", loss)
}

# The version of the installed ggmlR, as a string; NULL when it is not installed. Reads its
# DESCRIPTION without loading it.
installed_ggmlr_version <- function() {
  if (!nzchar(system.file(package = "ggmlR"))) {
    return(NULL)
  }
  utils::packageDescription("ggmlR", fields = "Version")
}

# At the first figure of the model in a session: warns (agmem_warning_version) when the installed
# ggmlR is another release than the one the rules describe, whose allocations may differ. Says
# nothing when ggmlR is not installed (the model describes its release either way) and nothing
# after the first call.
check_ggmlr_version <- function(installed = installed_ggmlr_version()) {
  if (isTRUE(registry$ggmlr_checked)) {
    return(invisible(FALSE))
  }
  registry$ggmlr_checked <- TRUE
  expected <- registry$ggmlr_version
  if (is.null(installed) || identical(installed, expected)) {
    return(invisible(FALSE))
  }
  warn(
    "The installed ggmlR is ", installed, ", but agmem's model of its memory was read from and ",
    "measured on ggmlR ", expected, ": the figures may not hold for this release. Measure a step ",
    "with ag_measure_training_memory() to check.",
    class = "version"
  )
  invisible(TRUE)
}
