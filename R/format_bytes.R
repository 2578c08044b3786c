# Byte counts as text, for every report and plot of the package: in the unit that suits each
# count, 1024-based ("iec": B, KiB, MiB, ... YiB) or 1000-based ("si": B, kB, MB, ... YB), or all
# in one fixed unit.

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
