# The registry: the names of the optimizers, devices, dtypes, components, places, ops, losses and
# layer types, read once from the C code's tables (src/rules.c) when the package loads. No other
# R file spells these names; the functions' defaults that show the choices in their usage are
# checked against the registry by tests/testthat/test-registry.R.

registry <- new.env(parent = emptyenv())

# Fills `registry` from the C tables: `optimizers` (names), `copies` (ggmlR's formula's
# optimizer-state copies, named by optimizer), `devices`, `dtypes`, `components`, `places`,
# `ops` (a data frame of `name` and `kind`), `activations` (the ops of kind "activation"),
# `losses` (the losses as the user names them: the ops of kind "loss" without "loss_") and
# `layers` (the layer types agmem models) and `device_places` (for each device, named, the place
# whose peak limits a run there: "host" or "device") and `validated` (the largest batch size,
# width and parameter count the model was validated on, named).
load_registry <- function() {
  reg <- .Call(agmem_registry)
  registry$optimizers <- reg$optimizers$name
  registry$copies <- structure(reg$optimizers$copies, names = reg$optimizers$name)
  registry$devices <- reg$devices
  registry$dtypes <- reg$dtypes
  registry$components <- reg$components
  registry$places <- reg$places
  registry$ops <- data.frame(name = reg$ops$name, kind = reg$ops$kind, stringsAsFactors = FALSE)
  registry$activations <- reg$ops$name[reg$ops$kind == "activation"]
  registry$losses <- sub("^loss_", "", reg$ops$name[reg$ops$kind == "loss"])
  registry$layers <- reg$layers
  registry$device_places <- structure(reg$device_places, names = reg$devices)
  registry$validated <- reg$validated
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
