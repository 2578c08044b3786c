# Runs ggmlR's own tests of ag_estimate_training_memory() against agmem, the drop-in: from
# ggmlR's source package (the path is the first argument), the test_that() blocks of
# tests/testthat/test-ag-memory-budget.R that call ag_estimate_training_memory() are run with
# agmem attached and ggmlR neither attached nor loaded. Their file is read at CI time and never
# kept in this repository. Fails when no block is found, when any fails, or when ggmlR was loaded.
# Usage: Rscript .ci/ggmlr-tests.R path/to/ggmlR_x.y.z.tar.gz   (with agmem installed)
suppressPackageStartupMessages({
  library(testthat)
  library(agmem)
})
source_package <- commandArgs(TRUE)[[1L]]
unpacked <- tempfile("ggmlR-source-")
member <- "ggmlR/tests/testthat/test-ag-memory-budget.R"
utils::untar(source_package, files = member, exdir = unpacked)
exprs <- parse(file.path(unpacked, member), keep.source = TRUE)

# The blocks about the estimator: test_that() calls whose code names it.
about_estimator <- vapply(exprs, function(e) {
  is.call(e) && identical(e[[1L]], as.name("test_that")) &&
    any(grepl("ag_estimate_training_memory", deparse(e), fixed = TRUE))
}, logical(1))
blocks <- exprs[about_estimator]
if (length(blocks) == 0L) {
  stop("no test_that() block about ag_estimate_training_memory() in ", member, call. = FALSE)
}
cat(sprintf("%d of the %d blocks of %s are about ag_estimate_training_memory():\n",
            length(blocks), length(exprs), basename(member)))
cat(paste0("  ", vapply(blocks, function(e) e[[2L]], ""), "\n"), sep = "")

selected <- tempfile(fileext = ".R")
writeLines(unlist(lapply(attr(blocks, "srcref"), as.character)), selected)
results <- as.data.frame(test_file(selected, reporter = "summary", stop_on_failure = FALSE))

for (pkg in "ggmlR") {
  if (pkg %in% loadedNamespaces()) {
    stop("ggmlR was loaded: the blocks did not run against agmem alone", call. = FALSE)
  }
}
passed <- sum(results$passed)
failed <- sum(results$failed) + sum(results$error)
cat(sprintf("ggmlR's tests against agmem: %d blocks, %d expectations passed, %d failed\n",
            nrow(results), passed, failed))
quit(save = "no", status = if (failed > 0 || passed == 0) 1 else 0)
