# With AGMEM_GCTORTURE=true (CI's gctorture step), every call into agmem's C code runs under
# gctorture: a garbage collection at every allocation, with collected objects kept as FREESXP
# instead of being reused, so that an object the C code forgot to PROTECT is collected while it is
# still in use and the next use of it fails. Torture is on for the C code alone (the arguments
# are evaluated before, errors are caught and signalled again after), which keeps the whole suite
# fast enough to run this way. It reaches both the package's own .Call sites and the tests'
# direct calls: the package's closures are remade, without byte code, in an environment whose
# `.Call` is the tortured one, and the tests see that `.Call` too.

# base::.Call, with gctorture on only while the C routine runs.
tortured_call <- function(routine, ...) {
  list(...) # evaluates the arguments now, outside the torture
  completed <- FALSE
  result <- tryCatch(
    {
      gctorture2(1L, inhibit_release = TRUE)
      value <- base::.Call(routine, ...)
      completed <- TRUE
      value
    },
    error = identity,
    finally = gctorture(FALSE)
  )
  if (!completed) stop(result)
  result
}

# Puts every closure of agmem's namespace, and its copy in `test_env`, under tortured_call().
torture_agmem <- function(test_env) {
  ns <- asNamespace("agmem")
  shim <- new.env(parent = ns)
  shim$.Call <- tortured_call
  for (name in ls(ns, all.names = TRUE)) {
    f <- get(name, envir = ns, inherits = FALSE)
    if (!is.function(f) || is.primitive(f)) next
    # A fresh closure has no byte code, in which base::.Call could have been inlined.
    g <- eval(call("function", formals(f), body(f)), shim)
    unlockBinding(name, ns)
    assign(name, g, envir = ns)
    lockBinding(name, ns)
    if (exists(name, envir = test_env, inherits = FALSE)) assign(name, g, envir = test_env)
  }
  registerS3method("plot", "ag_memory_sweep", ns$plot.ag_memory_sweep, envir = ns)
  assign(".Call", tortured_call, envir = test_env)
}

if (isTRUE(as.logical(Sys.getenv("AGMEM_GCTORTURE", "false")))) {
  torture_agmem(environment())
}
