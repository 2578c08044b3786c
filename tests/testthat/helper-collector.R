# The suite's figures are those of R's default collector: the start-up settings agmem reads from
# the environment (R/collector.R) are unset for it, whatever the machine running the tests sets.
Sys.unsetenv(c(agmem:::collector_modelled, agmem:::collector_not_modelled))

# Evaluates expr with the environment variables `vars` ("NAME" = "VALUE") set, then unsets them.
with_env <- function(vars, expr) {
  do.call(Sys.setenv, as.list(vars))
  on.exit(Sys.unsetenv(names(vars)))
  expr
}
