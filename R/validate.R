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

# Bytes in each unit of a budget string: 1024-based, and the IEC names mean the same.
budget_units <- c(B = 0, KB = 1, MB = 2, GB = 3, TB = 4, KIB = 1, MIB = 2, GIB = 3, TIB = 4)

# A memory budget in bytes (a double) from a number of bytes or a size string such as "16 GB",
# "512MB" or "1.5 GiB" (units case-insensitive, space optional, no unit meaning bytes). NULL
# means the memory available on this machine now, read with the ps package (a Suggests) when
# `has_ps`; `arg` names the argument in messages.
parse_budget <- function(budget, arg = "budget", has_ps = requireNamespace("ps", quietly = TRUE)) {
  forms <- "a number of bytes or a size such as \"16 GB\", \"512MB\" or \"1.5 GiB\""
  if (is.null(budget)) {
    if (!has_ps) {
      stop_arg(
        "`", arg, "` is NULL, which means the memory available now, and reading that needs ",
        "the ps package: install it with install.packages(\"ps\"), or give `", arg, "` as ",
        forms, "."
      )
    }
    return(as.double(ps::ps_system_memory()$avail))
  }
  if (is.object(budget) || length(budget) != 1L || !(is.numeric(budget) || is.character(budget))) {
    stop_arg("`", arg, "` must be ", forms, ".")
  }
  if (is.character(budget)) {
    if (is.na(budget)) {
      stop_arg("`", arg, "` must be ", forms, ", not NA.")
    }
    parts <- regmatches(budget, regexec(
      "^\\s*((?:[0-9]+\\.?[0-9]*|\\.[0-9]+)(?:[eE][+-]?[0-9]+)?)\\s*([A-Za-z]*)\\s*$",
      budget, perl = TRUE
    ))[[1L]]
    if (length(parts) == 0L) {
      stop_arg("`", arg, "` must be ", forms, ", not \"", budget, "\".")
    }
    unit <- if (nzchar(parts[[3L]])) toupper(parts[[3L]]) else "B"
    if (!unit %in% names(budget_units)) {
      stop_arg(
        "`", arg, "` has the unknown unit \"", parts[[3L]], "\": use B, KB, MB, GB or TB ",
        "(1024-based; KiB, MiB, GiB and TiB mean the same)."
      )
    }
    budget <- as.double(parts[[2L]]) * 1024^budget_units[[unit]]
  }
  if (is.na(budget) || !is.finite(budget) || budget < 0) {
    stop_arg("`", arg, "` must be a finite number of bytes >= 0, not ", format(budget), ".")
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
