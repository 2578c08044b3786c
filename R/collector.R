# R's collector settings: the start-up settings of R's vector heap that the whole-run model takes
# from the environment, read as R reads them (R's src/main/memory.c, init_gc_grow_settings(), and
# src/main/startup.c, R_SizeFromEnv(); checked against R 4.2.2 by test-collector.R).

# The variables R reads at start-up for its vector heap's collector, which agmem models; those of
# its node heap, which it does not (it takes R's defaults for them); and the vector heap's cap.
collector_modelled <- c("R_VSIZE", "R_GC_MEM_GROW", "R_GC_GROWFRAC", "R_GC_GROWINCRFRAC",
                        "R_GC_VGROWINCRFRAC")
collector_not_modelled <- c("R_NSIZE", "R_GC_NGROWINCRFRAC")
collector_cap <- "R_MAX_VSIZE"


# The leading number of `s` as C's atof() reads it (blanks, a sign, digits with a decimal point
# and an exponent), 0 when there is none: how R reads R_GC_MEM_GROW and the fractions.
c_atof <- function(s) {
  m <- regmatches(s, regexpr("^[[:space:]]*[-+]?([0-9]+[.]?[0-9]*|[.][0-9]+)([eE][-+]?[0-9]+)?",
                             s))
  if (length(m) == 0L) 0 else as.numeric(m)
}

# The bytes R reads from a size such as "256M" (R_Decode2Long() in R's src/main/startup.c: a
# whole number, then optionally a letter G, M, K (1024-based) or k (1000) whose rest is ignored),
# or NA when R would ignore it: not of that form, or below R's smallest vector heap (262144 bytes).
c_size <- function(s) {
  m <- regmatches(s, regexec("^[[:space:]]*[+]?([0-9]+)(.?)", s))[[1L]]
  if (length(m) == 0L) {
    return(NA_real_)
  }
  unit <- c(G = 2^30, M = 2^20, K = 2^10, k = 1000)
  n <- as.numeric(m[2L])
  size <- if (!nzchar(m[3L])) n else if (m[3L] %in% names(unit)) n * unit[[m[3L]]] else NA_real_
  if (is.na(size) || size < 262144 || size > 2^52) NA_real_ else size
}

# The cap on R's vector heap in this session, in bytes: mem.maxVSize() (R >= 4.1; in units of
# 2^20 bytes), Inf when there is none or R cannot say.
session_cap <- function() {
  if (!exists("mem.maxVSize", envir = baseenv(), inherits = FALSE)) {
    return(Inf)
  }
  cap <- get("mem.maxVSize", envir = baseenv())()
  if (is.numeric(cap) && length(cap) == 1L && !is.na(cap)) cap * 2^20 else Inf
}

# The values R reads for one size, in the order it reads them: the command line's `flag`
# (--min-vsize, --max-vsize; the last one given) in `args`, then the variable `var` of `env`;
# named by where each is set, those not set left out.
size_sources <- function(args, flag, env, var) {
  out <- character(0)
  given <- grep(paste0("^", flag, "="), args, value = TRUE)
  if (length(given)) out[[flag]] <- sub("^[^=]*=", "", given[[length(given)]])
  if (!is.na(env[[var]])) out[[var]] <- env[[var]]
  out
}

# The settings of R's vector-heap collector in `env` (Sys.getenv()'s values of the variables, NA
# where one is not set) and the command line `args` (commandArgs(): --min-vsize, which R_VSIZE
# overrides), as a process started with them takes them: `vsize` (R_VSIZE: the first
# trigger, in bytes, whole vector cells of 8 bytes), `grow_frac` (R_VGrowFrac: the occupancy over
# which a full collection grows the trigger) and `grow_incr_frac` (R_VGrowIncrFrac: the growth's
# share of the trigger), each NA where R keeps its default; `set`, the modelled variables that
# changed one of them ("NAME=VALUE"); `not_modelled`, the node heap's variables that are set;
# and `cap`, the lowest cap on the vector heap in bytes (Inf: none) of R_MAX_VSIZE,
# --max-vsize and this session's `session` (mem.maxVSize()), with `cap_from`, where it is set.
collector_settings <- function(env = Sys.getenv(c(collector_modelled, collector_not_modelled,
                                                  collector_cap), unset = NA, names = TRUE),
                               args = commandArgs(), session = session_cap()) {
  # a variable `env` does not name is not set
  vars <- c(collector_modelled, collector_not_modelled, collector_cap)
  env <- vapply(vars, function(v) {
    if (v %in% names(env)) as.character(env[[v]]) else NA_character_
  }, "")
  out <- list(vsize = NA_real_, grow_frac = NA_real_, grow_incr_frac = NA_real_)
  used <- character(0)
  v <- env[["R_GC_MEM_GROW"]]
  if (!is.na(v)) {
    # R truncates the number to an int; 1 and anything outside 0 to 3 keep the defaults.
    level <- trunc(c_atof(v))
    if (level == 0) out$grow_incr_frac <- 0
    if (level == 2) out$grow_incr_frac <- 0.3
    if (level == 3) out[c("grow_incr_frac", "grow_frac")] <- list(0.4, 0.5)
    if (level %in% c(0, 2, 3)) used <- c(used, "R_GC_MEM_GROW")
  }
  frac <- function(name, lo, hi) {
    v <- env[[name]]
    if (is.na(v)) return(NA_real_)
    f <- c_atof(v)
    if (f >= lo && f <= hi) f else NA_real_
  }
  f <- frac("R_GC_GROWFRAC", 0.35, 0.75)
  if (!is.na(f)) {
    out$grow_frac <- f
    used <- c(used, "R_GC_GROWFRAC")
  }
  for (name in c("R_GC_GROWINCRFRAC", "R_GC_VGROWINCRFRAC")) {
    f <- frac(name, 0.05, 0.80)
    if (!is.na(f)) {
      out$grow_incr_frac <- f
      used <- c(used, name)
    }
  }
  # R reads --min-vsize on its command line, then R_VSIZE, which wins where both are valid.
  sizes <- size_sources(args, "--min-vsize", env, "R_VSIZE")
  bytes <- vapply(sizes, c_size, 0)
  if (any(!is.na(bytes))) {
    last <- max(which(!is.na(bytes)))
    # R keeps the heap's size in vector cells: (bytes + 1) / 8, rounded down.
    out$vsize <- floor((bytes[[last]] + 1) / 8) * 8
    used <- c(used, names(sizes)[last])
  }
  values <- c(env, sizes)
  other <- env[collector_not_modelled]
  out$set <- if (length(used)) paste0(used, "=", values[used]) else character(0)
  out$not_modelled <- if (any(!is.na(other))) {
    paste0(collector_not_modelled[!is.na(other)], "=", other[!is.na(other)])
  } else {
    character(0)
  }
  caps <- size_sources(args, "--max-vsize", env, "R_MAX_VSIZE")
  cap_bytes <- c(vapply(caps, c_size, 0), `mem.maxVSize()` = session)
  cap_bytes <- cap_bytes[!is.na(cap_bytes)]
  out$cap <- min(cap_bytes)
  lowest <- names(cap_bytes)[which.min(cap_bytes)]
  out$cap_from <- if (!is.finite(out$cap)) {
    character(0)
  } else if (lowest == "mem.maxVSize()") {
    "mem.maxVSize()"
  } else {
    paste0(lowest, "=", caps[[lowest]])
  }
  out
}

# Warns (agmem_warning_collector) when `settings` (collector_settings()) has variables set that
# the whole-run model does not follow, naming them.
warn_collector <- function(settings) {
  if (length(settings$not_modelled) == 0L) {
    return(invisible())
  }
  warn(
    "The environment sets ", paste(settings$not_modelled, collapse = ", "), ": agmem's host ",
    "figures take R's default for ", if (length(settings$not_modelled) > 1L) "them" else "it",
    " (R's node heap is not modelled).",
    class = "collector"
  )
}

# Warns (agmem_warning_collector) when the cap on R's vector heap in `settings`
# (collector_settings(); NULL: none known) is below `heap`, the bytes R's heap reaches in the run
# planned or predicted: R then collects at the cap instead of its trigger, and stops the run
# with its vector memory error if the live heap reaches the cap, which agmem does not model.
warn_capped <- function(settings, heap) {
  if (is.null(settings) || !is.finite(settings$cap) || !(settings$cap < max(heap))) {
    return(invisible())
  }
  warn(
    "R's vector heap is capped at ", format_bytes_scaled(settings$cap), " (",
    settings$cap_from, "), below the ", format_bytes_scaled(max(heap)), " the run's heap may ",
    "reach: R collects at the cap instead, and stops the run with its vector memory error when ",
    "the live heap reaches it. agmem does not model a capped heap.",
    class = "collector"
  )
}

# warn_capped() for a plan of estimator `est` whose host peak goes up to `peak` bytes over the
# process (a budget, or the highest peak of a sweep): R's heap reaches at most that plus the data
# held in R. Only the model's estimators know R's collector (est$collector).
warn_capped_plan <- function(est, peak) {
  if (!is.null(est$collector)) {
    warn_capped(est$collector, peak + est$run[[3L]])
  }
}
