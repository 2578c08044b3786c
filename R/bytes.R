# Byte counts and counts as text, for every report and plot of the package, and budgets read
# from text. Byte counts are written in the unit that suits each count, 1024-based ("iec": B,
# KiB, MiB, ... YiB) or 1000-based ("si": B, kB, MB, ... YB), or all in one fixed unit.

# The units of each system, by name, with their size in bytes, smallest first.
byte_units <- list(
  iec = c(B = 1, KiB = 1024, MiB = 1024^2, GiB = 1024^3, TiB = 1024^4, PiB = 1024^5,
          EiB = 1024^6, ZiB = 1024^7, YiB = 1024^8),
  si = c(B = 1, kB = 1e3, MB = 1e6, GB = 1e9, TB = 1e12, PB = 1e15, EB = 1e18, ZB = 1e21,
         YB = 1e24)
)

# Checks `units`: "iec", "si" or the name of one unit of either system.
check_units <- function(units) {
  fixed <- unique(unlist(lapply(byte_units, names), use.names = FALSE))
  if (!is.character(units) || is.object(units) || length(units) != 1L || is.na(units) ||
    !units %in% c(names(byte_units), fixed)) {
    stop_arg(
      "`units` must be \"iec\", \"si\" or one of the units ",
      paste0("\"", fixed, "\"", collapse = ", "), "."
    )
  }
  invisible(units)
}

# The unit that suits the byte counts x in a system ("iec" or "si"), or the fixed unit `units`:
# a list of the unit names and their sizes in bytes, one per count. In a system, a count takes
# the largest unit not above it (found by comparison: log() can land just below a whole power),
# bytes for counts below 1 (and NA).
byte_scale <- function(x, units = "iec") {
  if (units %in% names(byte_units)) {
    table <- byte_units[[units]]
    power <- findInterval(abs(x), table)
    power[is.na(power) | power < 1L] <- 1L
  } else {
    table <- c(byte_units$iec, byte_units$si)[units]
    power <- rep(1L, length(x))
  }
  list(unit = names(table)[power], bytes = unname(table[power]))
}

# Formats the byte counts x (a numeric vector) as strings such as "512 B", "1.50 MiB" or
# "23.71 GB": bytes as a whole number, every larger unit with two decimals, and a count of 1024
# or more of the largest unit (YiB, YB) as a mantissa with a power of ten ("8.27e+283 YiB").
# In a fixed unit the digits are grouped in threes ("40 039.06 KiB"), and a count of 1e15 or
# more of it, which has no exact whole digits to show, takes the mantissa form.
# `units` as check_units() takes it. NA is written "NA"; an infinite count "Inf B".
format_bytes_scaled <- function(x, units = "iec") {
  check_units(units)
  if (!is.numeric(x) || is.object(x)) {
    stop_arg("`x` must be a numeric vector of byte counts.")
  }
  x <- as.double(x)
  scale <- byte_scale(x, units)
  value <- x / scale$bytes
  fixed <- !units %in% names(byte_units)
  text <- paste(formatC(value, format = "f", digits = 2, big.mark = if (fixed) " " else ""),
                scale$unit)
  top <- scale$unit %in% c("YiB", "YB")
  huge <- !is.na(value) & abs(value) >= if (fixed) ifelse(top, 1024, 1e15) else 1024
  text[huge] <- paste(formatC(value[huge], format = "e", digits = 2), scale$unit[huge])
  whole <- scale$unit == "B"
  text[whole] <- sprintf("%.0f B", value[whole])
  text[is.infinite(x)] <- paste(format(x[is.infinite(x)]), "B")
  text[is.na(x)] <- "NA"
  text
}

# A whole number of scalars with its digits grouped in threes by spaces, in full at any size.
format_count <- function(n) {
  formatC(n, format = "f", digits = 0, big.mark = " ")
}

# Whole counts as text with a space every three digits ("1 048 576"); counts of 1e15 or more,
# which have no exact whole digits to show, in scientific notation.
format_count_table <- function(v) {
  text <- trimws(format_count(v))
  big <- !is.na(v) & abs(v) >= 1e15
  text[big] <- trimws(formatC(v[big], format = "g", digits = 6))
  text[is.na(v)] <- "NA"
  text
}

# Bytes in each unit of a budget string, by the unit in upper case: "B"; SI, powers of 1000 ("kB",
# "MB", "GB", "TB", as agmem's reports write them with units = "si"); IEC, powers of 1024
# ("KiB", "MiB", "GiB", "TiB", as the reports write them by default); and the bare prefixes
# "K", "M", "G", "T" (and "Ki", "Mi", ...), powers of 1024 as in R's and most tools' memory
# options. A unit that ends in a lower-case "b" means bits and is refused (see parse_budget()).
budget_units <- c(
  B = 1,
  KB = 1e3, MB = 1e6, GB = 1e9, TB = 1e12,
  KIB = 1024, MIB = 1024^2, GIB = 1024^3, TIB = 1024^4,
  K = 1024, M = 1024^2, G = 1024^3, T = 1024^4,
  KI = 1024, MI = 1024^2, GI = 1024^3, TI = 1024^4
)

# The units a budget may take, for messages.
budget_unit_text <- paste(
  "B; kB, MB, GB, TB (powers of 1000); KiB, MiB, GiB, TiB (powers of 1024; K, M, G, T alone",
  "mean the same)"
)

# A memory budget in bytes (a double) from a number of bytes or a size string such as "16 GiB",
# "16 GB", "16G" or "512MiB" (units as budget_units, case-insensitive in ASCII but for the final
# B, which must be upper case; any space, Unicode's too, may stand around the unit, and digits
# may be grouped in threes by spaces, as the reports write them; no unit means bytes). NULL
# means the memory available on this machine now (available_memory()).
# `arg` names the argument in messages, which quote a string as the user typed it.
parse_budget <- function(budget, arg = "budget") {
  forms <- "a number of bytes or a size such as \"16 GiB\", \"16 GB\", \"16G\" or \"512MiB\""
  if (is.null(budget)) {
    avail <- available_memory()
    if (is.null(avail)) {
      abort(
        "`", arg, "` is NULL, which means the memory available now, and reading that needs ",
        "the ps package: install it with install.packages(\"ps\"), or give `", arg, "` as ",
        forms, ".",
        class = "unavailable"
      )
    }
    if (is.list(avail)) {
      abort(
        "`", arg, "` is NULL, which means the memory available now, but it could not be read (",
        avail$error, "): give `", arg, "` as ", forms, ".",
        class = "unavailable"
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
    utf8 <- enc2utf8(budget)
    if (!validUTF8(utf8)) {
      stop_arg("`", arg, "` must be ", forms, ", not ", encodeString(typed, quote = "\""),
               ", which is not valid text in its encoding.")
    }
    # Every Unicode space (a no-break space pasted from a report, say) is a space.
    spaced <- gsub("[\\s\\p{Z}]+", " ", utf8, perl = TRUE)
    parts <- regmatches(spaced, regexec(
      paste0("^ ?((?:(?:[0-9]{1,3}(?: [0-9]{3})+|[0-9]+)\\.?[0-9]*|\\.[0-9]+)",
             "(?:[eE][+-]?[0-9]+)?) ?([A-Za-z]*) ?$"), spaced,
      perl = TRUE
    ))[[1L]]
    if (length(parts) == 0L) {
      stop_arg("`", arg, "` must be ", forms, ", not ", encodeString(typed, quote = "\""), ".")
    }
    unit <- if (nzchar(parts[[3L]])) ascii_upper(parts[[3L]]) else "B"
    if (grepl("b$", parts[[3L]])) {
      prefix <- ascii_upper(sub("[iI]?b$", "", parts[[3L]]))
      bytes <- if (nzchar(prefix)) {
        paste0("\"", parts[[2L]], " ", sub("^K", "k", prefix), "B\" (powers of 1000) or \"",
               parts[[2L]], " ", prefix, "iB\" (powers of 1024)")
      } else {
        paste0("\"", parts[[2L]], " B\"")
      }
      stop_arg("`", arg, "` is ", encodeString(typed, quote = "\""), ", in bits (a unit that ",
               "ends in a lower-case b): give bytes, such as ", bytes, ".")
    }
    if (!unit %in% names(budget_units)) {
      stop_arg("`", arg, "` has the unknown unit \"", parts[[3L]], "\": use ", budget_unit_text,
               ".")
    }
    # Digits grouped in threes by spaces, as a report in a fixed unit writes them, read as one.
    budget <- as.double(gsub(" ", "", parts[[2L]], fixed = TRUE)) * budget_units[[unit]]
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
