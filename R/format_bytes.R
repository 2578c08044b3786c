# Byte counts as text for reports: in the unit that suits each count, 1024-based ("iec": B, KiB,
# MiB, GiB, TiB) or 1000-based ("si": B, kB, MB, GB, TB), or all in one fixed unit.

# The units of each system, by name, with their size in bytes, smallest first.
byte_units <- list(
  iec = c(B = 1, KiB = 1024, MiB = 1024^2, GiB = 1024^3, TiB = 1024^4),
  si = c(B = 1, kB = 1e3, MB = 1e6, GB = 1e9, TB = 1e12)
)

# Formats the byte counts x (a numeric vector) as strings such as "512 B", "1.50 MiB" or
# "23.71 GB": bytes as a whole number, every larger unit with two decimals. `units` is "iec"
# (the default: the largest 1024-based unit in which the count is at least 1, up to TiB),
# "si" (the same, 1000-based) or the name of one unit of either system ("MiB", "GB", ...), in
# which every count is then written. NA is written "NA"; an infinite count "Inf B".
format_bytes_scaled <- function(x, units = "iec") {
  fixed <- unlist(lapply(byte_units, names), use.names = FALSE)
  choices <- c(names(byte_units), unique(fixed))
  if (!is.character(units) || is.object(units) || length(units) != 1L || is.na(units) ||
    !units %in% choices) {
    stop_arg(
      "`units` must be \"iec\", \"si\" or one of the units ",
      paste0("\"", unique(fixed), "\"", collapse = ", "), "."
    )
  }
  if (!is.numeric(x) || is.object(x)) {
    stop_arg("`x` must be a numeric vector of byte counts.")
  }
  x <- as.double(x)
  if (units %in% names(byte_units)) {
    table <- byte_units[[units]]
    power <- findInterval(abs(x), table)
    power[is.na(power) | power < 1L] <- 1L
    size <- table[power]
    name <- names(table)[power]
  } else {
    size <- rep(c(byte_units$iec, byte_units$si)[[units]], length(x))
    name <- rep(units, length(x))
  }
  value <- x / size
  text <- sprintf("%.2f %s", value, name)
  whole <- name == "B"
  text[whole] <- sprintf("%.0f B", value[whole])
  text[is.infinite(x)] <- paste(format(x[is.infinite(x)]), "B")
  text[is.na(x)] <- "NA"
  text
}
