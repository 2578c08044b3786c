# Argument checks shared by the exported functions. Each raises an agmem_error_argument (see
# R/conditions.R) whose message names the argument in backticks and says what was expected. The
# numeric arguments that the C code reads (batch sizes, fractions, shapes, byte limits) are
# checked there, once; R checks what C never sees (names, flags, objects, budget strings).

# A choice among `choices` with match.arg() semantics: the full vector of choices (the default)
# means the first (with `several`, all of them), and so does NULL where `null` is TRUE; an
# unambiguous partial name is completed. With `several`, one or more choices, returned without
# repeats. The message names `arg` and lists the choices.
match_choice <- function(x, choices, arg, several = FALSE, null = FALSE) {
  if (null && is.null(x)) {
    return(choices[[1L]])
  }
  if (identical(x, choices)) {
    return(if (several) choices else choices[[1L]])
  }
  expected <- paste0(
    "`", arg, "` must be ", if (several) "one or more of " else "one of ", choice_text(choices)
  )
  ok_shape <- is.character(x) && !is.object(x) && length(x) >= 1L &&
    (several || length(x) == 1L)
  if (!ok_shape || (!several && is.na(x))) {
    stop_arg(expected, ".")
  }
  i <- pmatch(x, choices, duplicates.ok = TRUE)
  if (anyNA(i)) {
    stop_arg(expected, ", not ", encodeString(x[is.na(i)][[1L]], quote = "\""), ".")
  }
  unique(choices[i])
}

# The choices as an English list: "a", "b" or "c".
choice_text <- function(choices) {
  quoted <- paste0("\"", choices, "\"")
  n <- length(quoted)
  if (n == 1L) quoted else paste(paste(quoted[-n], collapse = ", "), "or", quoted[[n]])
}

# The optimizer(s), matched against the registry's optimizers; NULL means "adam", as it does
# for ggmlR's ag_estimate_training_memory().
match_optimizer <- function(optimizer, several = FALSE) {
  match_choice(optimizer, registry_names("optimizers"), "optimizer", several = several,
               null = TRUE)
}

# Whether x is a single positive whole number.
is_count <- function(x) {
  is.numeric(x) && length(x) == 1L && !is.na(x) && is.finite(x) && x >= 1 && x == floor(x)
}

# A single TRUE or FALSE.
check_flag <- function(x, arg) {
  if (!is.logical(x) || length(x) != 1L || is.na(x)) {
    stop_arg("`", arg, "` must be a single TRUE or FALSE.")
  }
  invisible(x)
}

# The fraction of a budget to keep free: a single number from 0 up to, not including, 1.
check_margin <- function(margin) {
  if (!is.numeric(margin) || is.object(margin) || length(margin) != 1L || is.na(margin) ||
    margin < 0 || margin >= 1) {
    stop_arg("`margin` must be a single number from 0 up to (not including) 1.")
  }
  invisible(margin)
}

# Batch sizes, checked by the C code's reader (a non-empty numeric vector of whole numbers from 1
# to .Machine$integer.max, the same message as every other entry point); returned as doubles.
check_batch_sizes <- function(batch_size) {
  .Call(agmem_check_batches, batch_size)
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

# What x is, for a message: its class, or its type.
describe_object <- function(x) {
  if (is.object(x)) paste0("an object of class \"", class(x)[[1L]], "\"") else typeof(x)
}

# a, or b when a is NULL.
if_null <- function(a, b) if (is.null(a)) b else a
