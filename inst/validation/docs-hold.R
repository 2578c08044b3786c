# docs-hold.R: whether README.md and vignettes/checks.Rmd show what agmem and the validation
# scripts print today.
#
#   Rscript inst/validation/docs-hold.R            # from the package's sources
#
# README.md shows the output of its example command. The guide quotes validate.R and
# validate-long.R on the committed measurements: a command naming its csvs (--from-csv=, with
# --markdown for a table, --collector= and --history when given on the same line), then the
# table and the summary it prints. A change to the rule table changes those figures, and a page
# that still shows the old ones says what is no longer true.
# This runs the README's example (the R code of the Rscript -e in its first sh block) and checks
# that it prints the block that follows, and each of the README's R blocks that show output ("#>"
# lines; not the one that measures a run) and checks that it prints them. For each fenced block of
# the guide that starts with a summary line ("N configurations: ..." or "host peak, device ..."), it
# runs the command named last before it and checks that every line of the block is one the command
# prints and that every such summary line it prints is in the block; for each row of a table of runs
# after such a command (a table may show some of the rows), that the command prints it with
# --markdown; and for the by-layer table, that validate-long.R --by-layer on the csvs its paragraph
# names prints each row; for each row of a plan table after a plan-holds.R command, that the planner
# gives its batch today (plan-holds.R --plan-only: a rule that moves a plan leaves the real peak
# shown beside it one of another batch, which the runs must be made again to show). Exit status 1
# when something differs, with the lines that do. With --write it puts what is printed now in their
# place instead (a summary line or a row in place of the one of the same shape or the same run; the
# README's example block whole, and an R block's output lines when it prints as many), and says what
# it rewrote: for a change to the rule table, whose figures the pages quote. Needs agmem and ggmlR
# installed: validate-long.R builds each run's model from ggmlR's layers, as agmem reads them, and
# validate.R names ggmlR's version.

here <- local({
  file_arg <- grep("^--file=", commandArgs(FALSE), value = TRUE)
  if (length(file_arg)) dirname(normalizePath(sub("^--file=", "", file_arg[1L]))) else "."
})
top <- file.path(here, "..", "..")
write <- "--write" %in% commandArgs(trailingOnly = TRUE)
guide <- file.path(top, "vignettes", "checks.Rmd")
readme <- file.path(top, "README.md")
if (!file.exists(guide) || !file.exists(readme)) {
  stop("README.md or vignettes/checks.Rmd not found: run from the package's sources")
}
if (!requireNamespace("agmem", quietly = TRUE) || !requireNamespace("ggmlR", quietly = TRUE)) {
  stop("docs-hold.R needs agmem and ggmlR installed (R_LIBS names their libraries)")
}
rscript <- file.path(R.home("bin"), "Rscript")

# What `script` prints for `args` (validate-long.R exits 1 when a goal is missed; that is not an
# error here).
printed <- local({
  seen <- list()
  function(script, args) {
    key <- paste(script, paste(args, collapse = " "))
    if (is.null(seen[[key]])) {
      out <- suppressWarnings(system2(rscript, c("--vanilla", file.path(here, script), args),
                                      stdout = TRUE, stderr = FALSE))
      seen[[key]] <<- out
    }
    seen[[key]]
  }
})
is_summary <- function(x) grepl("^([0-9]+ configurations:|host peak, device |device pools, )", x)
# The csvs of a --from-csv= argument, as paths here.
csvs <- function(arg) {
  files <- strsplit(arg, ",", fixed = TRUE)[[1L]]
  paste(file.path(here, basename(files)), collapse = ",")
}

# What differs, as "<file>:<line>: <what>".
differ <- character(0)
note <- function(at, what, file = "checks.Rmd") {
  differ <<- c(differ, sprintf("%s:%d: %s", file, at, what))
}
# With --write, the guide's lines to put in place (by line number) and how many it rewrote.
fixes <- character(0)
# A line's shape: its figures taken out, so that a summary line matches its new self.
shape <- function(x) gsub("[0-9][0-9.,]*", "#", x)
# A table row's run: its cells before the figures (the model, batch, optimizer, activation and
# loss; a by-layer row's first cell).
run_of <- function(x, cells) {
  vapply(strsplit(x, "|", fixed = TRUE), function(c) paste(trimws(c[2:(cells + 1L)]),
                                                           collapse = "|"), "")
}
# Puts, with --write, the line of `out` that is `line`'s at guide line `at`: the one line of the
# same `key`, or of the same `key2` (a history's table names its draw in one cell).
fix <- function(at, line, out, key, key2 = key) {
  if (!write) return(invisible())
  new <- out[key(out) == key(line)]
  if (length(new) != 1L) new <- out[key2(out) == key2(line)]
  if (length(new) == 1L) fixes[[as.character(at)]] <<- new
}

# Where `out`, what a piece of code prints, first differs from `block`, what a page shows: the
# index of that line, and what the code prints there ("nothing" past its end), quoted.
first_difference <- function(out, block) {
  n <- max(length(out), length(block))
  k <- which(!mapply(identical, out[seq_len(n)], block[seq_len(n)]))[1L]
  list(at = k, prints = if (is.na(out[k])) "nothing" else sprintf("\"%s\"", out[k]))
}

# The README's example: the R code its first sh block runs, and the block after it.
lines <- readLines(readme)
sh <- which(lines == "```sh")[1L]
code <- sub("^.*Rscript -e '([^']*)'.*$", "\\1", lines[[sh + 1L]])
fences <- which(lines == "```")
shown <- fences[fences > sh + 2L][1:2]
out <- suppressWarnings(system2(rscript, c("--vanilla", "-e", shQuote(code)), stdout = TRUE,
                                stderr = FALSE))
block <- lines[(shown[1L] + 1L):(shown[2L] - 1L)]
if (!identical(out, block)) {
  if (write) {
    writeLines(c(lines[seq_len(shown[1L])], out, lines[shown[2L]:length(lines)]), readme)
    cat("README.md: its example's block rewritten\n")
  } else {
    d <- first_difference(out, block)
    note(shown[1L] + d$at, paste("the example prints", d$prints, "here"), "README.md")
  }
}

# The README's R blocks that show output ("#> " lines): the code before the block's last output
# line, run in a fresh R, prints those lines. A block that measures (ag_measure_training_memory())
# shows one run's figures, which another run does not repeat, and is left out. (Read again: with
# --write the example's block may have been rewritten.)
lines <- readLines(readme)
fences <- which(lines == "```")
opens <- which(lines == "```r")
for (o in opens) {
  close <- fences[fences > o][1L]
  body <- seq.int(o + 1L, close - 1L)
  shown_at <- body[startsWith(lines[body], "#>")]
  if (!length(shown_at) || any(grepl("ag_measure_training_memory(", lines[body], fixed = TRUE))) {
    next
  }
  run <- body[body < max(shown_at) & !startsWith(lines[body], "#>")]
  file <- tempfile(fileext = ".R")
  writeLines(lines[run], file)
  out <- suppressWarnings(system2(rscript, c("--vanilla", file), stdout = TRUE, stderr = FALSE))
  unlink(file)
  block <- sub("^#> ?", "", lines[shown_at])
  if (identical(out, block)) next
  if (write && length(out) == length(block)) {
    lines[shown_at] <- paste("#>", out)
    writeLines(lines, readme)
    cat(sprintf("README.md: the output of its R block at line %d rewritten\n", o))
  } else {
    d <- first_difference(out, block)
    at <- if (d$at <= length(shown_at)) shown_at[d$at] else max(shown_at)
    note(at, paste("the block prints", d$prints, "here"), "README.md")
  }
}

lines <- readLines(guide)

command <- NULL
script <- "validate-long.R"
in_fence <- FALSE
fence <- integer(0)
in_runs <- FALSE
plan_args <- NULL
in_plans <- FALSE
for (i in seq_along(lines)) {
  l <- lines[[i]]
  if (startsWith(l, "```")) {
    if (in_fence && length(fence) && is_summary(lines[[fence[1L]]])) {
      if (is.null(command)) stop(sprintf("checks.Rmd:%d: a summary with no command before it", i))
      out <- printed(command$script, command$args)
      block <- lines[fence]
      for (k in which(!block %in% out)) {
        note(fence[k], block[k])
        fix(fence[k], block[k], out, shape)
      }
      for (x in setdiff(out[is_summary(out)], block)) {
        note(fence[1L], sprintf("the block lacks \"%s\"", x))
      }
    }
    in_fence <- !in_fence
    fence <- integer(0)
    next
  }
  if (in_fence) {
    fence <- c(fence, i)
    next
  }
  # The script a --from-csv= belongs to is the one named last before it.
  named <- regmatches(l, gregexpr("validate(-long)?\\.R", l))[[1L]]
  if (length(named)) script <- named[length(named)]
  at <- regmatches(l, regexpr("--from-csv=[^` ]+", l))
  if (length(at) && !grepl("--by-layer|--repeats", l)) {
    args <- paste0("--from-csv=", csvs(sub("^--from-csv=", "", at)))
    if (grepl("--markdown", l)) args <- c(args, "--markdown")
    args <- c(args, regmatches(l, regexpr("--collector=[a-z]+", l)))
    if (grepl("--history", l)) args <- c("--history", args)
    command <- list(script = script, args = args)
  }
  # A plan table after a plan-holds.R command: each row's planned batch is the one the
  # planner gives today (plan-holds.R --plan-only; the real peaks are the runs' own).
  at <- regmatches(l, regexpr("plan-holds\\.R( --[a-z0-9.=-]+)*", l))
  if (length(at)) {
    opts <- strsplit(at, " ", fixed = TRUE)[[1L]][-1L]
    plan_args <- c("--plan-only", "--markdown", opts[!opts %in% "--markdown"])
  }
  if (startsWith(l, "| model (widths) | after each hidden layer |")) in_plans <- TRUE
  if (!startsWith(l, "|")) in_plans <- FALSE
  if (in_plans && !startsWith(l, "|---") && !startsWith(l, "| model (widths)")) {
    if (is.null(plan_args)) {
      stop(sprintf("checks.Rmd:%d: a plan table with no command before it", i))
    }
    md <- printed("plan-holds.R", plan_args)
    now <- md[run_of(md, 6L) == run_of(l, 6L)]
    batch <- function(x) trimws(strsplit(x, "|", fixed = TRUE)[[1L]][8L])
    if (length(now) != 1L || batch(now) != batch(l)) {
      note(i, sprintf("the planner gives %s here", if (length(now) == 1L) {
        sprintf("batch %s", batch(now))
      } else {
        "no such plan"
      }))
    }
  }
  # A table of runs, or of a history's draws (--history), after a command (its header is the one
  # the scripts print): each row is one the command prints with --markdown.
  if (startsWith(l, "| layers (widths) |") ||
      startsWith(l, "| more nodes live before the loop |")) in_runs <- TRUE
  if (!startsWith(l, "|")) in_runs <- FALSE
  if (in_runs && !startsWith(l, "|---")) {
    if (is.null(command)) stop(sprintf("checks.Rmd:%d: a table with no command before it", i))
    md <- printed(command$script, union(command$args, "--markdown"))
    if (!l %in% md) {
      note(i, l)
      fix(i, l, md[startsWith(md, "| ")], function(x) run_of(x, 5L), function(x) run_of(x, 1L))
    }
  }
}

# The by-layer table: the csvs its paragraph names, in backticks ("-x.csv" short for
# "measurements-x.csv").
head_at <- grep("^\\| layer, activation or loss \\|", lines)
for (h in head_at) {
  blank <- which(lines[seq_len(h - 2L)] == "")
  text <- paste(lines[(max(blank) + 1L):(h - 2L)], collapse = " ")
  named <- gsub("`", "", regmatches(text, gregexpr("`-?[a-z0-9-]+\\.csv`", text))[[1L]])
  named <- ifelse(startsWith(named, "-"), paste0("measurements", named), named)
  if (!length(named)) stop(sprintf("checks.Rmd:%d: the by-layer table names no csv", h))
  out <- printed("validate-long.R", c("--by-layer", "--markdown",
                                      paste0("--from-csv=", csvs(paste(named, collapse = ",")))))
  rows <- h + 2L
  while (rows <= length(lines) && startsWith(lines[[rows]], "| ")) {
    if (!lines[[rows]] %in% out) {
      note(rows, lines[[rows]])
      fix(rows, lines[[rows]], out[startsWith(out, "| ")], function(x) run_of(x, 1L))
    }
    rows <- rows + 1L
  }
  n_out <- sum(startsWith(out, "| ")) - 1L
  if (rows - h - 2L != n_out) {
    note(h, sprintf("the by-layer table has %d rows, --by-layer prints %d", rows - h - 2L, n_out))
  }
}

if (write && length(fixes)) {
  lines[as.integer(names(fixes))] <- unname(fixes)
  writeLines(lines, guide)
  cat(sprintf("vignettes/checks.Rmd: %d lines rewritten; run again to see what is left\n",
              length(fixes)))
  quit(status = 0L)
}
if (length(differ)) {
  cat("README.md or vignettes/checks.Rmd differs from what is printed now:\n")
  cat(differ, sep = "\n")
  quit(status = 1L)
}
cat(sprintf(paste0("README.md shows what its example and its R blocks print; ",
                   "vignettes/checks.Rmd what the validation scripts print (%d commands, %d ",
                   "by-layer tables)\n"),
            length(environment(printed)$seen), length(head_at)))
