# Runs the testthat suite against the installed agmem and prints testthat's own counts as the
# closing line "N passed, N failed, N skipped": passed expectations; failed expectations plus
# tests that stopped with an error; skipped tests. Exits 1 on any failure, error or warning.
suppressPackageStartupMessages(library(testthat))
results <- test_dir("tests/testthat", package = "agmem", load_package = "installed",
                    reporter = "summary", stop_on_failure = FALSE, stop_on_warning = FALSE)
df <- as.data.frame(results)
passed <- sum(df$passed)
failed <- sum(df$failed) + sum(df$error)
skipped <- sum(df$skipped)
warned <- sum(df$warning)
if (warned > 0) cat(sprintf("%d warnings: a test that warns is a defect\n", warned))
cat(sprintf("%d passed, %d failed, %d skipped\n", passed, failed, skipped))
quit(save = "no", status = if (failed > 0 || warned > 0 || passed == 0) 1 else 0)
