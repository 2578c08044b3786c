# Evaluates `expr`, a call into agmem's C code that reads long user data, once an elapsed time
# limit has passed: the first R_CheckUserInterrupt() the C code makes then signals "reached
# elapsed time limit", as Ctrl-C would interrupt it there. The limit is made to pass (R measures
# elapsed time to the millisecond, and looks at the clock at most every 50 ms and every sixth
# check) while interrupts are suspended, so that R itself does not signal it before `expr` runs.
# `expr` must be a .Call() that makes six checks or more, into a package already loaded. Returns
# the message of the error, or "completed" when the C code ran to its end without checking.
under_expired_time_limit <- function(expr) {
  on.exit(setTimeLimit(), add = TRUE)
  tryCatch(
    {
      setTimeLimit(elapsed = 0.001, transient = TRUE)
      suspendInterrupts({
        start <- proc.time()[["elapsed"]]
        while (proc.time()[["elapsed"]] - start < 0.06) NULL
      })
      force(expr)
      "completed"
    },
    error = conditionMessage
  )
}
