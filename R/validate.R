# Shared argument checks. Each stops with a message that names the argument in backticks and
# says what was expected; none of them prints, messages or warns.

# The optimizers, and how many optimizer-state copies of the weights each keeps.
optimizer_copies <- c(adam = 2L, sgd = 1L, sgd_plain = 0L)

stop_arg <- function(...) {
  stop(..., call. = FALSE)
}

# match.arg() semantics (the full default, or NULL, means its first choice; unambiguous partial
# names are completed), with a message that names `optimizer`. Returns the full names, without
# repeats.
match_optimizer <- function(optimizer, several = FALSE) {
  choices <- names(optimizer_copies)
  if (is.null(optimizer)) {
    return(choices[[1L]])
  }
  if (identical(optimizer, choices)) {
    return(if (several) choices else choices[[1L]])
  }
  expected <- sprintf(
    "`optimizer` must be %s \"adam\", \"sgd\" or \"sgd_plain\"",
    if (several) "one or more of" else "one of"
  )
  ok_shape <- is.character(optimizer) && !is.object(optimizer) &&
    length(optimizer) >= 1L && (several || length(optimizer) == 1L)
  if (!ok_shape) {
    stop_arg(expected, ".")
  }
  i <- pmatch(optimizer, choices, duplicates.ok = TRUE)
  if (anyNA(i)) {
    stop_arg(expected, ", not \"", optimizer[is.na(i)][[1L]], "\".")
  }
  unique(choices[i])
}

# A single TRUE or FALSE.
check_flag <- function(x, arg) {
  if (!is.logical(x) || length(x) != 1L || is.na(x)) {
    stop_arg("`", arg, "` must be a single TRUE or FALSE.")
  }
  invisible(x)
}

# Bytes in each unit of a budget string, as powers of 1024: the IEC names, and K, M, G and T
# with or without a B, mean the same.
budget_units <- c(
  B = 0, K = 1, KB = 1, KIB = 1, M = 2, MB = 2, MIB = 2, G = 3, GB = 3, GIB = 3,
  T = 4, TB = 4, TIB = 4
)

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

# Upper-cases the ASCII letters of x and nothing else, whatever the locale (in a Turkish locale,
# toupper("i") is a dotted capital I).
ascii_upper <- function(x) {
  chartr("abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ", x)
}

# A number for an error message: as R prints it with 15 significant digits, or with as many up to
# 17 as it takes to write the value exactly, so that a refused value never looks whole or equal
# to a valid one.
format_refused <- function(x) {
  for (digits in 15:17) {
    text <- formatC(x, digits = digits, format = "g")
    if (!is.finite(x) || identical(as.double(text), as.double(x))) break
  }
  trimws(text)
}

# A memory budget in bytes (a double) from a number of bytes or a size string such as "16 GB",
# "16G", "512MB" or "1.5 GiB" (1024-based, units case-insensitive in ASCII, space optional, no
# unit meaning bytes). NULL means the memory available on this machine now (available_memory()).
# `arg` names the argument in messages, which quote a string as the user typed it.
parse_budget <- function(budget, arg = "budget") {
  forms <- "a number of bytes or a size such as \"16 GB\", \"16G\", \"512MB\" or \"1.5 GiB\""
  if (is.null(budget)) {
    avail <- available_memory()
    if (is.null(avail)) {
      stop_arg(
        "`", arg, "` is NULL, which means the memory available now, and reading that needs ",
        "the ps package: install it with install.packages(\"ps\"), or give `", arg, "` as ",
        forms, "."
      )
    }
    if (is.list(avail)) {
      stop_arg(
        "`", arg, "` is NULL, which means the memory available now, but it could not be read (",
        avail$error, "): give `", arg, "` as ", forms, "."
      )
    }
    return(avail)
  }
  if (is.object(budget) || length(budget) != 1L || !(is.numeric(budget) || is.character(budget))) {
    stop_arg("`", arg, "` must be ", forms, ".")
  }
  if (is.character(budget)) {
    if (is.na(budget)) {
      stop_arg("`", arg, "` must be ", forms, ", not NA.")
    }
    typed <- budget
    if (Encoding(budget) == "bytes") {
      Encoding(typed) <- "unknown" # shown with its non-ASCII bytes escaped, as typed
      stop_arg(
        "`", arg, "` must be ", forms, ", not ", encodeString(typed, quote = "\""),
        ", a string marked as bytes in no encoding."
      )
    }
    parts <- regmatches(budget, regexec(
      "^\\s*((?:[0-9]+\\.?[0-9]*|\\.[0-9]+)(?:[eE][+-]?[0-9]+)?)\\s*([A-Za-z]*)\\s*$",
      budget, perl = TRUE
    ))[[1L]]
    if (length(parts) == 0L) {
      stop_arg("`", arg, "` must be ", forms, ", not ", encodeString(typed, quote = "\""), ".")
    }
    unit <- if (nzchar(parts[[3L]])) ascii_upper(parts[[3L]]) else "B"
    if (!unit %in% names(budget_units)) {
      stop_arg(
        "`", arg, "` has the unknown unit \"", parts[[3L]], "\": use B, KB, MB, GB or TB ",
        "(1024-based; K, M, G, T and KiB, MiB, GiB, TiB mean the same)."
      )
    }
    budget <- as.double(parts[[2L]]) * 1024^budget_units[[unit]]
    if (!is.finite(budget)) {
      stop_arg(
        "`", arg, "` must be a finite number of bytes, but ", encodeString(typed, quote = "\""),
        " is more than a double can hold."
      )
    }
  }
  if (is.na(budget) || !is.finite(budget) || budget < 0) {
    stop_arg("`", arg, "` must be a finite number of bytes >= 0, not ", format_refused(budget), ".")
  }
  as.double(budget)
}

# The fraction of a budget to keep free: a single number from 0 up to, not including, 1.
check_margin <- function(margin) {
  if (!is.numeric(margin) || is.object(margin) || length(margin) != 1L || is.na(margin) ||
    margin < 0 || margin >= 1) {
    stop_arg("`margin` must be a single number from 0 up to (not including) 1.")
  }
  invisible(margin)
}

# The parameter shapes for ggmlR's formula: those of a model (an ag_model_spec or a ggmlR model,
# read by as_model_spec()), or x itself, left to the C code's checks; a measurement has no shapes
# and is refused. `arg` names x in messages.
plain_shapes <- function(x, arg) {
  switch(plan_kind(x),
    model = as_model_spec(x, arg)$shapes,
    measured = stop_arg(
      "`", arg, "` is a measurement, which has no parameter shapes: plan on it with ",
      "ag_max_batch_size() or ag_memory_sweep()."
    ),
    x
  )
}
