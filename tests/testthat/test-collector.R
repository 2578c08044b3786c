# R's collector settings, as R reads them at start-up (R/collector.R).

settings_of <- function(..., args = character(0), session = Inf) {
  agmem:::collector_settings(c(...), args, session)
}
values <- function(s) unlist(s[c("vsize", "grow_frac", "grow_incr_frac")])

test_that("no variable set keeps every default", {
  s <- settings_of()
  expect_identical(values(s), c(vsize = NA_real_, grow_frac = NA_real_, grow_incr_frac = NA_real_))
  expect_identical(s$set, character(0))
  expect_identical(s$not_modelled, character(0))
})

test_that("R_GC_MEM_GROW is read as R reads it: the number truncated, 0 to 3", {
  incr <- function(v) settings_of(R_GC_MEM_GROW = v)$grow_incr_frac
  expect_identical(incr("0"), 0)
  expect_identical(incr("2"), 0.3)
  expect_identical(incr("3"), 0.4)
  expect_identical(settings_of(R_GC_MEM_GROW = "3")$grow_frac, 0.5)
  # atof(): a leading number, 0 when there is none; 1 and values past 3 keep the defaults.
  expect_identical(incr("3.9"), 0.4)
  expect_identical(incr(" 2"), 0.3)
  expect_identical(incr("abc"), 0)
  expect_identical(incr(""), 0)
  expect_identical(values(settings_of(R_GC_MEM_GROW = "1")), values(settings_of()))
  expect_identical(values(settings_of(R_GC_MEM_GROW = "7")), values(settings_of()))
  expect_identical(settings_of(R_GC_MEM_GROW = "1")$set, character(0))
  expect_identical(settings_of(R_GC_MEM_GROW = "3")$set, "R_GC_MEM_GROW=3")
})

test_that("the fractions are taken within R's bounds and override R_GC_MEM_GROW", {
  expect_identical(settings_of(R_GC_GROWFRAC = "0.4")$grow_frac, 0.4)
  expect_identical(settings_of(R_GC_GROWFRAC = "0.3")$grow_frac, NA_real_)
  expect_identical(settings_of(R_GC_GROWFRAC = "0.8")$grow_frac, NA_real_)
  expect_identical(settings_of(R_GC_GROWINCRFRAC = "0.5")$grow_incr_frac, 0.5)
  expect_identical(settings_of(R_GC_GROWINCRFRAC = "0.04")$grow_incr_frac, NA_real_)
  expect_identical(settings_of(R_GC_GROWINCRFRAC = "0.5", R_GC_VGROWINCRFRAC = "0.25")$
                     grow_incr_frac, 0.25)
  s <- settings_of(R_GC_MEM_GROW = "3", R_GC_GROWFRAC = "0.6")
  expect_identical(values(s), c(vsize = NA, grow_frac = 0.6, grow_incr_frac = 0.4))
  expect_identical(s$set, c("R_GC_MEM_GROW=3", "R_GC_GROWFRAC=0.6"))
})

test_that("R_VSIZE and --min-vsize are sizes as R reads them, R_VSIZE winning", {
  vsize <- function(...) settings_of(...)$vsize
  expect_identical(vsize(R_VSIZE = "256M"), 2^28)
  expect_identical(vsize(R_VSIZE = "1G"), 2^30)
  expect_identical(vsize(R_VSIZE = "2Gb"), 2^31)
  expect_identical(vsize(R_VSIZE = "300k"), 3e5)
  expect_identical(vsize(R_VSIZE = "+5M"), 5 * 2^20)
  expect_identical(vsize(R_VSIZE = "100000001"), 1e8) # whole cells of 8 bytes
  expect_identical(vsize(R_VSIZE = "262144"), 262144)
  for (ignored in c("262143", "1.5G", "-5M", "abc", "", "10X")) {
    expect_identical(vsize(R_VSIZE = ignored), NA_real_, label = ignored)
  }
  expect_identical(vsize(args = c("R", "--min-vsize=200M")), 200 * 2^20)
  expect_identical(vsize(R_VSIZE = "100M", args = c("R", "--min-vsize=200M")), 100 * 2^20)
  expect_identical(vsize(R_VSIZE = "1.5G", args = c("R", "--min-vsize=200M")), 200 * 2^20)
  expect_identical(settings_of(R_VSIZE = "256M")$set, "R_VSIZE=256M")
  expect_identical(settings_of(args = "--min-vsize=200M")$set, "--min-vsize=200M")
})

test_that("the settings agmem does not model are listed, and the heap's cap is read", {
  s <- settings_of(R_NSIZE = "1000000", R_GC_NGROWINCRFRAC = "0.3")
  expect_identical(s$not_modelled, c("R_NSIZE=1000000", "R_GC_NGROWINCRFRAC=0.3"))
  expect_identical(values(s), values(settings_of()))
  expect_identical(settings_of()$cap, Inf)
  expect_identical(settings_of()$cap_from, character(0))
  expect_identical(settings_of(R_MAX_VSIZE = "4G")[c("cap", "cap_from")],
                   list(cap = 2^32, cap_from = "R_MAX_VSIZE=4G"))
  # the lowest of the variable, the command line and the session's mem.maxVSize()
  expect_identical(settings_of(R_MAX_VSIZE = "4G", args = "--max-vsize=2G")$cap_from,
                   "--max-vsize=2G")
  expect_identical(settings_of(R_MAX_VSIZE = "4G", session = 2^30)[c("cap", "cap_from")],
                   list(cap = 2^30, cap_from = "mem.maxVSize()"))
  expect_identical(settings_of(R_MAX_VSIZE = "lots")$cap, Inf)
  expect_identical(agmem:::collector_settings()$cap, agmem:::session_cap())
})

test_that("R itself grows its trigger as the settings agmem reads say", {
  skip_on_cran()
  skip_on_os("windows") # system2()'s `env` sets variables through the shell
  rscript <- file.path(R.home("bin"), "Rscript")
  skip_if_not(file.exists(rscript))
  # AdjustHeapSize() in R's src/main/memory.c, in vector cells of 8 bytes, after a full
  # collection that finds `used` cells in use (gc() asks for none more).
  adjust <- function(trigger, used, s) {
    vsize <- if (is.na(s$vsize)) 2^26 / 8 else s$vsize / 8
    grow <- if (is.na(s$grow_frac)) 0.7 else s$grow_frac
    incr <- if (is.na(s$grow_incr_frac)) 0.2 else s$grow_incr_frac
    needed <- used + floor(0.2 * vsize)
    occupancy <- needed / trigger
    if (occupancy > 1) trigger <- needed
    if (occupancy > grow) trigger <- trigger + floor(80000 + incr * trigger)
    trigger
  }
  code <- paste("x <- numeric(2.5e7); g1 <- gc(); g2 <- gc();",
                "cat(g1['Vcells', 'gc trigger'], g2['Vcells', 'used'], g2['Vcells', 'gc trigger'])")
  cases <- list(c(R_GC_MEM_GROW = "0"), c(R_GC_MEM_GROW = "2"), c(R_GC_MEM_GROW = "3"),
                c(R_GC_MEM_GROW = "abc"), c(R_GC_GROWFRAC = "0.4"),
                c(R_GC_VGROWINCRFRAC = "0.5"), c(R_VSIZE = "256M"), c(R_GC_MEM_GROW = "1"))
  for (vars in cases) {
    out <- system2(rscript, c("--vanilla", "-e", shQuote(code)), stdout = TRUE,
                   env = paste0(names(vars), "=", vars))
    got <- as.numeric(strsplit(trimws(out[length(out)]), " +")[[1]])
    s <- settings_of(vars)
    expect_identical(adjust(got[1], got[2], s), got[3], label = paste(names(vars), vars))
  }
})

test_that("the model's trigger follows the settings", {
  spec <- ag_dense_stack(c(784, 512, 512, 10), loss = "softmax_cross_entropy")
  at <- function(vars = character(0)) {
    if (length(vars)) {
      with_env(vars, ag_training_memory(spec, 256, quiet = TRUE))
    } else {
      ag_training_memory(spec, 256, quiet = TRUE)
    }
  }
  base <- at()
  expect_identical(base$host_regime$collector, character(0))
  slow <- at(c(R_GC_MEM_GROW = "0"))
  fast <- at(c(R_GC_MEM_GROW = "3"))
  expect_lt(slow$host_regime$trigger, base$host_regime$trigger)
  expect_gt(fast$host_regime$trigger, base$host_regime$trigger)
  expect_gt(fast$host_high, base$host_high)
  expect_identical(fast$host_regime$collector, "R_GC_MEM_GROW=3")
  # A first trigger above what the run needs is where the trigger stays.
  big <- at(c(R_VSIZE = "1G"))
  expect_identical(big$host_regime$trigger, 2^30)
  # The same with the settings R takes by default as without them.
  same <- at(c(R_GC_GROWFRAC = "0.7", R_GC_GROWINCRFRAC = "0.2", R_VSIZE = "64M"))
  expect_identical(same[c("host_peak", "host_high")], base[c("host_peak", "host_high")])
  expect_snapshot(print(fast))
  # The planners plan on them too.
  expect_lt(with_env(c(R_GC_MEM_GROW = "3"), ag_max_batch_size(spec, "256 MiB")),
            ag_max_batch_size(spec, "256 MiB"))
  # A run of a few steps: the first trigger's headroom moves with R_VSIZE.
  few <- function(vars) {
    with_env(vars, ag_training_memory(spec, 64, quiet = TRUE, steps = 3))$host_regime$headroom
  }
  expect_identical(few(c(R_VSIZE = "128M")) - few(c(R_VSIZE = "64M")), 2^26)
  expect_identical(few(c(R_VSIZE = "300k")), 0)
})

test_that("a setting agmem does not model is a classed warning wherever the model is used", {
  spec <- ag_dense_stack(c(784, 512, 10))
  with_env(c(R_NSIZE = "2000000"), {
    expect_warning(ag_training_memory(spec, 32, quiet = TRUE), "R_NSIZE=2000000",
                   class = "agmem_warning_collector")
    expect_warning(ag_max_batch_size(spec, "256 MiB"), class = "agmem_warning_collector")
    expect_warning(ag_memory_sweep(spec, c(8, 16)),
                   class = "agmem_warning_collector")
  })
  expect_snapshot(with_env(c(R_GC_NGROWINCRFRAC = "0.3", R_NSIZE = "1e6"),
                           ag_training_memory(spec, 32, quiet = TRUE)))
  expect_no_warning(ag_training_memory(spec, 32, quiet = TRUE))
})

test_that("a cap on R's heap below what the run reaches is a classed warning", {
  spec <- ag_dense_stack(c(784, 512, 512, 10), loss = "softmax_cross_entropy")
  trigger <- ag_training_memory(spec, 256, quiet = TRUE)$host_regime$trigger
  below <- c(R_MAX_VSIZE = format(floor(trigger / 2^20) - 1, scientific = FALSE))
  below[[1]] <- paste0(below[[1]], "M")
  above <- c(R_MAX_VSIZE = "16G")
  expect_snapshot(with_env(below, ag_training_memory(spec, 256, quiet = TRUE)))
  expect_no_warning(with_env(above, ag_training_memory(spec, 256, quiet = TRUE)))
  # The planners, the sweep, its summary and plot: a cap below the budget, and the data.
  with_env(c(R_MAX_VSIZE = "200M"), {
    expect_warning(b <- ag_max_batch_size(spec, "256 MiB"), "capped at 200.00 MiB",
                   class = "agmem_warning_collector")
    expect_identical(b, suppressWarnings(ag_max_batch_size(spec, "256 MiB"),
                                         classes = "agmem_warning_collector"))
  })
  with_env(c(R_MAX_VSIZE = "600M"), {
    expect_no_warning(ag_max_batch_size(spec, "512 MiB"))
    expect_warning(ag_max_batch_size(spec, "512 MiB", data_size = "100 MB"),
                   class = "agmem_warning_collector")
  })
  with_env(c(R_MAX_VSIZE = "200M"), {
    expect_warning(sweep <- ag_memory_sweep(spec, c(64, 4096)),
                   class = "agmem_warning_collector")
    expect_warning(summary(sweep, "256 MiB"), class = "agmem_warning_collector")
    pdf(NULL)
    on.exit(dev.off(), add = TRUE)
    expect_warning(plot(sweep, budget = "256 MiB"), class = "agmem_warning_collector")
    expect_no_warning(ag_memory_sweep(spec, c(8, 16)))
  })
  # ggmlR's formula knows nothing of R's collector.
  with_env(c(R_MAX_VSIZE = "200M"), {
    expect_no_warning(ag_max_batch_size(ag_dense_shapes(c(784, 512, 10)), "256 MiB"))
  })
})
