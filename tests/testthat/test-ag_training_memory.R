mlp <- ag_dense_stack(c(784, 512, 10))
n_mlp <- 784 * 512 + 512 + 512 * 10 + 10

# The model evaluated in R from the rule table, in the C code's order: for each (component,
# where) cell, the parameter rules in table order, then the ops in order with each op's rules in
# table order; the peaks sum the cells in component-then-where order, except the host peak of a
# device with gc rules, which is min(allocated, max(headroom, collected)) for a run of up to
# `steps` of the gc table, and min(allocated, the whole run's ceiling) for a longer one.
# The whole run's regime in R: the bytes live at R's collections from the live rules, R's trigger
# grown as memory.c's AdjustHeapSize() grows it, one growth at a time, and the ceiling it puts
# on the resident memory.
# What an op's units are counted for: the batch, 1 for a parameter table (kind "table"), whose
# units are its scalars, and the batch squared for an attention head (kind "pairs").
per_sample <- function(op, batch) {
  ops <- agmem:::registry_names("ops")
  batch <- as.double(batch)
  switch(ops$kind[ops$name == op], table = 1, pairs = batch * batch, batch)
}

# The op whose rules an op takes: its own, or the one the registry names (an attention's
# dropout takes ag_dropout()'s).
rules_of <- function(op) {
  ops <- agmem:::registry_names("ops")
  other <- ops$rules[ops$name == op]
  if (is.na(other)) op else other
}

# The live rules a model takes: its host device's (path "any") and the rows of its own device
# and backward path; its own per-parameter rows for the optimizer replace the host device's.
live_rules_of <- function(device, host_device, backward, optimizer) {
  live <- training_rules()$live
  own <- live$backward != "any" & live$device == device & live$backward == backward
  host <- live$backward == "any" & live$device == host_device
  if (any(own & is.na(live$op) & live$optimizer %in% c("any", optimizer))) {
    host <- host & !is.na(live$op)
  }
  live[own | host, ]
}

# The host's allocation in resident mode, from the host rules of the model's device, for a model
# whose backward is the graph's and every one of whose ops has a row, on a device with the
# race's gc figures (`fig`): once and a step, fixed and per parameter (in table order), and a
# step per unit and sample of each op, and of that the mini-batch's (the rows marked `batch`);
# NULL otherwise.
reference_host <- function(rules, flat, n, optimizer, device, backward, fig) {
  h <- rules$host[rules$host$device == device, ]
  if (backward != "graph" || length(flat$ops) == 0L ||
      !all(c("level0_freq", "promoted", "level1_freq") %in% names(fig))) {
    return(NULL)
  }
  once <- 0
  step <- 0
  for (i in which(is.na(h$op))) {
    if (h$optimizer[[i]] == "any") {
      once <- once + h$once[[i]]
      step <- step + h$step[[i]]
    } else if (h$optimizer[[i]] == optimizer) {
      once <- once + n * h$once[[i]]
      step <- step + n * h$step[[i]]
    }
  }
  unit <- numeric(length(flat$ops))
  batch <- numeric(length(flat$ops))
  for (k in seq_along(flat$ops)) {
    mine <- which(!is.na(h$op) & h$op == rules_of(flat$ops[[k]]))
    if (length(mine) == 0L) return(NULL)
    unit[[k]] <- Reduce(`+`, h$step[mine], 0)
    batch[[k]] <- Reduce(`+`, h$step[mine[h$batch[mine]]], 0)
  }
  if (!is.finite(once) || !is.finite(step)) return(NULL)
  list(once = once, step = step, unit = unit, batch = batch)
}

# The host's bytes a step allocates in resident mode (`host`, reference_host()), and of them the
# mini-batch's, summed in the C code's order.
reference_step <- function(host, flat, batch) {
  step <- host$step
  mini <- 0
  for (k in seq_along(flat$ops)) {
    units <- flat$units[[k]] * per_sample(flat$ops[[k]], batch)
    step <- step + units * host$unit[[k]]
    mini <- mini + units * host$batch[[k]]
  }
  list(step = step, mini = mini)
}

# The race of R's two triggers (model.c's node_race()): the heap over the start a whole run
# reaches, at most `room`, and the nodes in use at their most; NULL where the host's allocation
# is not counted or a step allocates no nodes.
reference_race <- function(host, per_step, steps, flat, batch, fig, live, room) {
  if (is.null(host) || !(per_step > 0)) return(NULL)
  bytes <- reference_step(host, flat, batch)
  step <- bytes$step
  mini <- bytes$mini
  headroom <- fig[["node_headroom"]]
  once <- fig[["node_once"]]
  made <- once + steps * per_step
  most <- if (made < headroom) made else headroom
  before <- (headroom - once) / per_step
  if (!(before > 0)) before <- 0
  held <- host$once + (if (before < steps) before else steps) * step
  if (steps > before) {
    between <- headroom / per_step
    # the node collections before the last, each a level-0 collection that leaves its share of
    # the mini-batch as old garbage, up to level0_freq - 1 of them
    old <- min(floor((steps - before) / between), fig[["level0_freq"]] - 1)
    later <- (live + (if (between < steps) between else steps) * step) +
      fig[["promoted"]] * (old * mini)
    if (later > held) held <- later
  }
  if (held < room) return(list(heap = held, nodes = most))
  n <- most
  if (step > 0) {
    to_first <- room - host$once
    to_next <- room - live
    first <- once + per_step * ((if (to_first > 0) to_first else 0) / step)
    nxt <- per_step * ((if (to_next > 0) to_next else 0) / step)
    seen <- if (first > nxt) first else nxt
    if (seen < n) n <- seen
  }
  list(heap = room, nodes = n)
}

# R's trigger where the host's allocation is counted (model.c's scheduled_trigger()): R grows it
# only at a full collection, which comes when a collection leaves less than the allocation and
# min_free_frac of the trigger free (the young collections' old garbage counted), one growth
# each as AdjustHeapSize() grows it, or once in (level0_freq + 1) * (level1_freq + 1)
# collections; a run of fewer than half as many collections keeps the trigger where the forced
# ones leave it, when they stop below `settled`. `settled` is the trigger otherwise.
reference_scheduled <- function(host, per_step, steps, flat, batch, fig, needed, start, live,
                                settled) {
  v <- fig[["vsize"]]
  if (is.null(host) || !(settled > v)) return(settled)
  bytes <- reference_step(host, flat, batch)
  collections <- function(room) {
    every <- Inf
    if (bytes$step > 0) every <- room / bytes$step
    if (per_step > 0) every <- min(every, fig[["node_headroom"]] / per_step)
    if (every > 0) steps / every else Inf
  }
  old <- min(floor(collections((v - start) - live)), fig[["level0_freq"]] - 1)
  held <- needed + fig[["promoted"]] * (old * bytes$mini)
  # the forced full collections' climb from R_VSIZE
  trigger <- v
  heap <- needed + fig[["min_free_frac"]] * v
  if (!(fig[["grow_incr_frac"]] > 0)) return(settled)
  growths <- 0
  forced_end <- FALSE
  while (trigger < settled && heap > fig[["grow_frac"]] * trigger) {
    if (!((1 - fig[["min_free_frac"]]) * trigger < held)) {
      forced_end <- TRUE
      break
    }
    if (growths == 10000) return(settled)
    if (heap > trigger) trigger <- heap
    trigger <- trigger + (fig[["grow_incr_min"]] + fig[["grow_incr_frac"]] * trigger)
    growths <- growths + 1
  }
  # where the climb reaches the settled trigger, or the heap needed stops growing it, first,
  # the trigger is the settled one (placed in its range as settled_trigger() places it)
  if (!forced_end) return(settled)
  cycle <- (fig[["level0_freq"]] + 1) * (fig[["level1_freq"]] + 1)
  if (!(collections((trigger - start) - live) < 0.5 * cycle)) settled else trigger
}

# R's trigger as the data's creation leaves it: the data made with one copy of itself for a
# moment, so the heap holds heap_start and twice the data at once; where that passes R_VSIZE, a
# full collection sets the trigger to the heap needed and grows it once (with no data, R_VSIZE).
reference_data_trigger <- function(fig, data) {
  made <- fig[["heap_start"]] + 2 * data
  if (!(data > 0 && made > fig[["vsize"]])) return(fig[["vsize"]])
  t <- made + fig[["min_free_frac"]] * fig[["vsize"]]
  t + (fig[["grow_incr_min"]] + fig[["grow_incr_frac"]] * t)
}

reference_whole_run <- function(spec, flat, batch, optimizer, live_rules, fig, allocated, data,
                                growth, host = NULL, per_step = 0, steps = 100) {
  n <- 0
  for (shape in spec$shapes) n <- n + prod(shape)
  per_param <- live_rules[is.na(live_rules$op) & live_rules$optimizer %in% c("any", optimizer), ]
  # The update of the largest tensor holds temporaries of its size (Adam's, on device "cpu").
  largest <- max(c(0, vapply(spec$shapes, function(s) prod(as.double(s)), 0)))
  live <- sum(n * per_param$bytes) + sum(largest * per_param$largest)
  retained <- sum(n * per_param$retained)
  most <- sum(n * per_param$step_max) + sum(largest * per_param$largest_max)
  widest <- largest
  for (k in seq_along(flat$ops)) {
    units <- flat$units[[k]] * per_sample(flat$ops[[k]], batch)
    mine <- live_rules$op %in% rules_of(flat$ops[[k]]) &
      live_rules$optimizer %in% c("any", optimizer)
    # The host device's rows count at the share the model's path holds of them, and not at all
    # for an op with a row of the model's own (but for their nodes, reference_nodes()); summed
    # in table order as the C code sums them.
    own <- any(live_rules$backward[mine] != "any")
    share <- ifelse(live_rules$backward[mine] == "any", if (own) 0 else fig[["unit_share"]], 1)
    op_sum <- function(col) Reduce(`+`, share * live_rules[[col]][mine], 0)
    live <- live + units * op_sum("bytes")
    retained <- retained + units * op_sum("retained")
    most <- most + units * op_sum("step_max")
    widest <- max(widest, units)
  }
  start <- fig[["heap_start"]] + data
  # Where the trigger climbs from R_VSIZE for a heap needed of at most R_VSIZE.
  climb <- function(needed) {
    trigger <- fig[["vsize"]]
    step <- fig[["grow_incr_min"]]
    if (fig[["grow_incr_frac"]] == 0) {
      # growths of step each: the first count of them whose end holds needed
      if (!(needed > fig[["grow_frac"]] * trigger)) return(trigger)
      k <- max(1, ceiling((needed / fig[["grow_frac"]] - trigger) / step))
      i <- 0
      while (i < 4 && k < 2^52 && needed > fig[["grow_frac"]] * (trigger + k * step)) {
        k <- k + 1
        i <- i + 1
      }
      i <- 0
      while (i < 4 && k > 1 && k < 2^52 &&
             !(needed > fig[["grow_frac"]] * (trigger + (k - 1) * step))) {
        k <- k - 1
        i <- i + 1
      }
      return(trigger + k * step)
    }
    while (needed > fig[["grow_frac"]] * trigger) {
      trigger <- trigger + (step + fig[["grow_incr_frac"]] * trigger)
    }
    trigger
  }
  # A heap needed over R_VSIZE puts the trigger at trigger_place of its range, never below the
  # climb of a heap needed of R_VSIZE.
  settle <- function(needed) {
    needed <- needed + fig[["min_free_frac"]] * fig[["vsize"]]
    if (!(needed > fig[["vsize"]])) return(climb(needed))
    bottom <- needed / fig[["grow_frac"]]
    placed <- bottom + fig[["trigger_place"]] * ((fig[["grow_incr_frac"]] * bottom) +
                                                   fig[["grow_incr_min"]])
    max(placed, climb(fig[["vsize"]]))
  }
  # The trigger expected over the live figures' error (a normal error of sd live_sd, by
  # five-point Gauss-Hermite quadrature), summed in the C code's order.
  needed <- (start + live) + 8 * widest
  trigger <- if (fig[["live_sd"]] > 0) {
    at <- c(-2.8569700138728056, -1.3556261799742659, 0, 1.3556261799742659, 2.8569700138728056)
    weight <- c(0.011257411327720689, 0.22207592200561269, 0.53333333333333333,
                0.22207592200561269, 0.011257411327720689)
    Reduce(`+`, weight * vapply(needed + at * fig[["live_sd"]], settle, 0), 0)
  } else {
    settle(needed)
  }
  trigger <- reference_scheduled(host, per_step, steps, flat, batch, fig, needed, start, live,
                                 trigger)
  # A trigger the data's creation raised stays where the run's heap needed does not grow it.
  made <- reference_data_trigger(fig, data)
  data_trigger <- NA_real_
  if (made > fig[["vsize"]]) {
    data_trigger <- made
    if (!((needed + fig[["min_free_frac"]] * fig[["vsize"]]) > fig[["grow_frac"]] * made)) {
      trigger <- made
    }
  }
  # The heap over the start, up to the trigger, and the nodes' pages: where the host's
  # allocation in resident mode is counted (`host`), from the race of R's two triggers.
  room <- trigger - start
  nodes <- growth
  race <- reference_race(host, per_step, steps, flat, batch, fig, live, room)
  held <- !is.null(race) && race$heap < room
  if (!is.null(race)) {
    room <- race$heap
    nodes <- max(0, fig[["node_bytes"]] * race$nodes - fig[["node_free"]])
  }
  allocated <- allocated + nodes
  # The nodes' pages, on a device whose retained figures do not hold them.
  retained <- retained + fig[["node_apart"]] * nodes
  ceiling <- room + retained
  # The highest peak: the step's largest live heap, and the top of the range R's trigger
  # settles in for it (below needed / grow_frac before its last growth).
  below <- ((start + most) + fig[["min_free_frac"]] * fig[["vsize"]]) / fig[["grow_frac"]]
  top <- max(fig[["vsize"]], (below + fig[["grow_incr_frac"]] * below) + fig[["grow_incr_min"]])
  top <- max(top, made)
  peak <- min(allocated, ceiling)
  list(live = live, trigger = trigger, data_trigger = data_trigger, ceiling = ceiling,
       allocated = allocated,
       binding = if (allocated < ceiling) "allocated" else if (held) "nodes" else "collector",
       high = max(peak, ((top - start) + retained) + fig[["kept_excess"]]))
}

# The R nodes a step of a whole run allocates: the fixed figure, each op's per occurrence and per
# sample, and each parameter tensor's for the optimizer.
reference_nodes <- function(spec, flat, batch, optimizer, live, fig) {
  live <- live[live$optimizer %in% c("any", optimizer), ]
  nodes <- fig[["node_step"]] + length(spec$shapes) * sum(live$nodes[is.na(live$op)])
  for (op in flat$ops) {
    mine <- !is.na(live$op) & live$op == rules_of(op)
    nodes <- nodes + sum(live$nodes[mine]) + batch * sum(live$nodes_sample[mine])
  }
  nodes
}

# The R nodes a step of a dense stack allocates with Adam in resident mode (device "gpu", the
# graph's backward), from the gc figures of device "gpu" over R's own.
resident_adam_nodes <- function(spec, batch) {
  gc <- training_rules()$gc
  fig <- stats::setNames(gc$value, gc$figure)[gc$device %in% c("gpu", "any") &
                                                  gc$backward == "any"]
  fig <- fig[!duplicated(names(fig), fromLast = TRUE)]
  reference_nodes(spec, spec_ops(spec), batch, "adam",
                  live_rules_of("gpu", "gpu", "graph", "adam"), fig)
}

# The path of backward() for a model of these ops in this dtype: "host" when one of them is
# recorded without an op (a batch norm, a layer norm, an embedding or a checkpoint) or the dtype
# is f16 or bf16 (ggmlR's graph backward runs in f32 only), "graph" otherwise; a rule of path
# "any" holds on both. With the backward on the host, the host takes device "cpu"'s rules
# (everything runs in R), whose dtype is "f32", with the rows of its own device and path over
# them. The device's pools hold the graph's path when every op that sends the backward to the
# host leaves them so (pools_graph: a checkpoint) and the dtype is f32.
reference_backward <- function(ops, dtype) {
  reg <- agmem:::registry_names("ops")
  sends <- reg$name %in% ops & reg$host_backward
  host <- any(sends) || dtype != "f32"
  pools <- any(sends & !reg$pools_graph) || dtype != "f32"
  list(host = if (host) "host" else "graph", device = if (pools) "host" else "graph")
}
rule_applies <- function(rule_device, where, rule_backward, device, host_device, backward) {
  on <- if (where == "host") host_device else device
  rule_device == on && rule_backward %in% c("any", backward[[where]])
}

reference_memory <- function(spec, batch, optimizer, device, dtype, steps = 100, data = 0,
                             collector = list(vsize = NA, grow_frac = NA, grow_incr_frac = NA,
                                              set = character(0))) {
  rules <- training_rules()
  flat <- spec_ops(spec)
  paths <- reference_backward(unlist(flat$ops), dtype)
  backward <- paths$host
  host_device <- if (backward == "host") "cpu" else device
  n <- 0
  for (shape in spec$shapes) n <- n + prod(shape)
  cells <- list()
  alloc_step <- 0
  alloc_once <- 0
  add <- function(component, where, bytes, basis) {
    key <- paste(component, where)
    old <- if (is.null(cells[[key]])) list(bytes = 0, source = FALSE) else cells[[key]]
    cells[[key]] <<- list(bytes = old$bytes + bytes, source = old$source || basis != "measured")
  }
  p <- rules$param
  for (i in seq_len(nrow(p))) {
    dt <- if (p$where[[i]] == "host" && host_device != device) "f32" else dtype
    if (p$optimizer[[i]] %in% c("any", optimizer) &&
      rule_applies(p$device[[i]], p$where[[i]], p$backward[[i]], device, host_device,
                   paths) &&
      p$dtype[[i]] %in% c("any", dt)) {
      add(p$component[[i]], p$where[[i]], n * p$bytes[[i]], p$basis[[i]])
      if (p$where[[i]] == "host") {
        alloc_step <- alloc_step + n * p$alloc_step[[i]]
        alloc_once <- alloc_once + n * p$alloc_once[[i]]
      }
    }
  }
  u <- rules$unit
  for (k in seq_along(flat$ops)) {
    units <- flat$units[[k]] * per_sample(flat$ops[[k]], batch)
    mine <- which(u$op == rules_of(flat$ops[[k]]))
    mine <- mine[mapply(rule_applies, u$device[mine], u$where[mine], u$backward[mine],
                        MoreArgs = list(device = device, host_device = host_device,
                                        backward = paths))]
    for (i in mine) {
      add(u$component[[i]], u$where[[i]], units * u$bytes[[i]], u$basis[[i]])
      if (u$where[[i]] == "host") {
        alloc_step <- alloc_step + units * u$alloc_step[[i]]
      }
    }
  }
  order <- c("weights", "gradients", "optimizer_state", "master_weights", "step_transients",
             "build_transients", "activations", "activation_gradients")
  keys <- as.vector(t(outer(order, c("host", "device"), paste)))
  keys <- keys[keys %in% names(cells)]
  parts <- do.call(rbind, strsplit(keys, " "))
  bytes <- vapply(cells[keys], `[[`, numeric(1), "bytes", USE.NAMES = FALSE)
  host <- Reduce(`+`, bytes[parts[, 2] == "host"], 0)
  regime <- NULL
  high <- NULL
  gc <- rules$gc[rules$gc$device %in% c(host_device, "any") & rules$gc$backward == "any", ]
  if (nrow(gc) > 0L) {
    fig <- stats::setNames(gc$value, gc$figure)
    # a later row of a figure replaces an earlier one (a device's own over "any"), as in C
    fig <- fig[!duplicated(names(fig), fromLast = TRUE)]
    # the model's own figures, for its device and path, replace its host device's
    own <- rules$gc[rules$gc$device == device & rules$gc$backward == backward, ]
    fig[own$figure] <- own$value
    # R's collector settings replace R's defaults; the few steps' headroom moves with the first
    # trigger.
    if (!is.na(collector$vsize)) {
      fig[["headroom"]] <- max(0, fig[["headroom"]] + (collector$vsize - fig[["vsize"]]))
      fig[["vsize"]] <- collector$vsize
    }
    if (!is.na(collector$grow_frac)) fig[["grow_frac"]] <- collector$grow_frac
    if (!is.na(collector$grow_incr_frac)) fig[["grow_incr_frac"]] <- collector$grow_incr_frac
    cell <- function(k) if (is.null(cells[[k]])) 0 else cells[[k]]$bytes
    # The weights, gradients and optimizer state, live at once at every peak, are its floor.
    persistent <- (cell("weights host") + cell("gradients host")) + cell("optimizer_state host")
    whole <- "vsize" %in% names(fig) && steps > fig[["steps"]]
    allocated <- max(persistent, fig[["alloc_scale"]] * (alloc_once + steps * alloc_step) +
                       fig[["alloc_offset"]])
    if (whole) {
      # A whole run's nodes add what does not fit in the memory the process holds, until R's
      # node trigger.
      live <- live_rules_of(device, host_device, backward, optimizer)
      nodes <- reference_nodes(spec, flat, batch, optimizer, live, fig)
      growth <- max(0, fig[["node_bytes"]] * min(fig[["node_once"]] + steps * nodes,
                                                  fig[["node_headroom"]]) - fig[["node_free"]])
      host_alloc <- reference_host(rules, flat, n, optimizer, device, backward, fig)
      regime <- c(list(run = "whole run", steps = steps, data_size = data),
                  reference_whole_run(spec, flat, batch, optimizer, live, fig, allocated, data,
                                      growth, host_alloc, nodes, steps))
      host <- min(regime$allocated, regime$ceiling)
      high <- regime$high
      regime$high <- NULL
      regime$collector <- collector$set
    } else {
      # The data fills the first trigger's headroom, and its creation may have raised the
      # trigger (with the whole run's figures, which that needs).
      headroom <- fig[["headroom"]]
      data_trigger <- NA_real_
      if ("vsize" %in% names(fig)) {
        made <- reference_data_trigger(fig, data)
        headroom <- max(0, (headroom + (made - fig[["vsize"]])) - data)
        if (made > fig[["vsize"]]) data_trigger <- made
      }
      binding <- if (allocated < max(headroom, host)) {
        "allocated"
      } else if (host > headroom) {
        "collected"
      } else {
        "headroom"
      }
      regime <- list(run = "few steps", steps = steps, data_size = data,
                     data_trigger = data_trigger, allocated = allocated,
                     headroom = headroom, collected = host, binding = binding,
                     collector = collector$set)
      host <- min(allocated, max(headroom, host))
    }
  }
  list(
    params = n,
    host_peak = host,
    host_high = if (is.null(high)) host else high,
    device_peak = Reduce(`+`, bytes[parts[, 2] == "device"], 0),
    components = data.frame(
      component = parts[, 1], where = parts[, 2], bytes = bytes,
      basis = ifelse(vapply(cells[keys], `[[`, logical(1), "source", USE.NAMES = FALSE),
                     "source only", "measured"),
      stringsAsFactors = FALSE
    ),
    host_regime = regime
  )
}

test_that("a relu layer on the CPU costs the fitted figures, worked out by hand", {
  mem <- ag_training_memory(mlp, 32L, quiet = TRUE, steps = 3)
  expect_identical(mem$params, n_mlp)
  host <- stats::setNames(mem$components$bytes, mem$components$component)
  expect_identical(unique(mem$components$where), "host")
  expect_identical(host[["weights"]], n_mlp * 8)
  expect_identical(host[["gradients"]], n_mlp * 8)
  expect_identical(host[["optimizer_state"]], n_mlp * 16)
  expect_identical(host[["step_transients"]], n_mlp * 55)
  # Fitted per unit and sample: data 8 (784 wide), matmul + add 23 + 45 on every layer's
  # output (512 + 10), relu 72 on the hidden layer, mse 41 on the output.
  acts <- 784 * 32 * 8 + 512 * 32 * 23 + 512 * 32 * 45 + 512 * 32 * 72 + 10 * 32 * 23 +
    10 * 32 * 45 + 10 * 32 * 41
  expect_equal(host[["activations"]], acts)
  collected <- sum(host)
  # Allocated by building and 3 steps, counted from the source: per parameter once 16 + 16,
  # per step 8 + 8 + 32 + 32; per unit and sample per step: data 8, matmul + add 24 + 16,
  # relu 28, mse 24; scaled by 0.909 and offset by -1715200 B, as fitted.
  counted <- n_mlp * 32 + 3 * (n_mlp * 80 + 32 * (784 * 8 + (512 + 10) * 40 + 512 * 28 + 10 * 24))
  allocated <- 0.909 * counted - 1715200
  expect_equal(mem$host_regime$allocated, allocated)
  expect_equal(mem$host_regime$collected, collected)
  expect_identical(mem$host_regime$headroom, 56120320)
  expect_equal(mem$host_peak, min(allocated, max(56120320, collected)))
  expect_identical(mem$host_regime$binding, "headroom")
  expect_identical(mem$device_peak, 0)
  expect_false(mem$source_only)
  expect_identical(unique(mem$components$basis), "measured")
})

test_that("data held in R fills the first steps' headroom, and its making raises the trigger", {
  # 20 MB of data, made with one copy of itself, keep R's heap (6 447 476 bytes once R and ggmlR
  # are loaded) under R_VSIZE: they take their bytes from the headroom.
  some <- ag_training_memory(mlp, 32L, quiet = TRUE, steps = 3, data_size = 2e7)
  expect_identical(some$host_regime$data_size, 2e7)
  expect_identical(some$host_regime$data_trigger, NA_real_)
  expect_identical(some$host_regime$headroom, 56120320 - 2e7)
  expect_identical(some$host_regime$binding, "collected")
  # 100 MB pass it: a full collection sets the trigger to the heap needed (6 447 476 + 2e8 bytes
  # and 0.2 x 64 MiB) and grows it by 640 000 B and a fifth; three steps then allocate less than
  # the headroom, so they peak at what they allocate (measured: 784-512-10, Adam, batch 32,
  # with 20 000 samples held, 102.5 MB against 102.6 here, and 56.1 before the data was read).
  made <- (6447476 + 2e8) + 0.2 * 2^26
  more <- ag_training_memory(mlp, 32L, quiet = TRUE, steps = 3, data_size = 1e8)
  expect_equal(more$host_regime$data_trigger, made + (640000 + 0.2 * made))
  expect_equal(more$host_regime$headroom,
               56120320 + (more$host_regime$data_trigger - 2^26) - 1e8)
  expect_identical(more$host_regime$binding, "allocated")
  expect_identical(more$host_peak, more$host_regime$allocated)
  expect_match(format(more), "95.37 MiB of data held in R, whose making raised R's first trigger",
               fixed = TRUE, all = FALSE)
  expect_match(format(some), "19.07 MiB of data held in R, taken from the first trigger's",
               fixed = TRUE, all = FALSE)
  # Without the whole run's figures (a device with those of a few steps alone, which agmem has
  # none of) nothing would say where the trigger is; both devices have them.
  gpu <- ag_training_memory(mlp, 32L, "adam", "gpu", quiet = TRUE, steps = 3, data_size = 1e8)
  expect_gt(gpu$host_regime$headroom, 54362112)
})

test_that("the host peak follows the regime that binds: allocated, headroom, collected", {
  tiny <- ag_training_memory(ag_dense_stack(c(256, 256, 10)), 64L, quiet = TRUE, steps = 3)
  expect_identical(tiny$host_regime$binding, "allocated")
  expect_identical(tiny$host_peak, tiny$host_regime$allocated)
  expect_gt(tiny$host_peak, 0)
  mid <- ag_training_memory(mlp, 32L, quiet = TRUE, steps = 3)
  expect_identical(mid$host_regime$binding, "headroom")
  expect_identical(mid$host_peak, mid$host_regime$headroom)
  big <- ag_training_memory(ag_dense_stack(c(784, 2048, 2048, 10)), 256L, quiet = TRUE, steps = 3)
  expect_identical(big$host_regime$binding, "collected")
  expect_identical(big$host_peak, sum(big$components$bytes))
  gpu <- ag_training_memory(mlp, 32L, device = "gpu", quiet = TRUE, steps = 3)
  expect_identical(gpu$host_regime$headroom, 54362112)
  # Allocations below the offset are not a negative peak, nor 0: the weights, gradients and
  # the two adam moments of the 3 parameters are live (3 x 8 B x 4).
  one <- ag_training_memory(ag_dense_stack(c(2, 1)), 1L, quiet = TRUE, steps = 3)
  expect_identical(one$host_regime$allocated, 96)
  expect_identical(one$host_peak, 96)
})

test_that("the highest peak of a run is the step's largest live heap at the trigger's top", {
  mem <- ag_training_memory(mlp, 1024L, "adam", quiet = TRUE)
  # The step's largest live heap, as measured under gctorture(): 35.02 B per parameter with
  # adam and 31.99 per scalar of the largest tensor (784 x 512, whose update holds its
  # temporaries); per unit and sample 15.88 for the input, 45.83 + 45.83 for each layer's matmul
  # and add, 1.84 more for the mse output.
  most <- n_mlp * 35.02 + 784 * 512 * 31.99 +
    1024 * (784 * 15.88 + 512 * (45.83 + 45.83) + 10 * (45.83 + 45.83 + 1.84))
  start <- 6447476
  # R grows its trigger while the heap needed (that heap, the start and 0.2 of 64 MiB) is over
  # 0.7 of it, by 640 000 B and 0.2 of itself: the trigger ends below 1.2 / 0.7 of the need.
  top <- max(64 * 2^20, 1.2 * (start + most + 0.2 * 64 * 2^20) / 0.7 + 640000)
  # glibc keeps 22.5 B per parameter with adam and 3.5 B per unit and sample, and was seen to
  # keep up to 16 346 871 B more.
  kept <- n_mlp * 22.5 + 1024 * (784 + 512 + 10) * 3.5 + 16346871
  expect_equal(mem$host_high, max(mem$host_peak, top - start + kept))
  expect_gt(mem$host_high, mem$host_peak)
  # A run of three steps has one figure.
  few <- ag_training_memory(mlp, 1024L, "adam", quiet = TRUE, steps = 3)
  expect_identical(few$host_high, few$host_peak)
})

test_that("the collected cost per parameter is 87, 57 and 46 B on the CPU", {
  params_only <- ag_model_spec(list(fake_tensor(c(2000, 1000))))
  per_param <- c(adam = 87, sgd = 57, sgd_plain = 46)
  for (opt in names(per_param)) {
    expect_warning(mem <- ag_training_memory(params_only, 1, opt, quiet = TRUE, steps = 3),
                   class = "agmem_warning_lower_bound")
    expect_identical(mem$host_peak, 2e6 * per_param[[opt]], label = opt)
    expect_identical(mem$host_regime$binding, "collected", label = opt)
    state <- mem$components$bytes[mem$components$component == "optimizer_state"]
    expect_identical(state, 2e6 * if (opt == "adam") 16 else 8, label = opt)
  }
})

test_that("on the GPU, the device holds 12 B per parameter for adam and 4 for sgd", {
  for (opt in c("adam", "sgd", "sgd_plain")) {
    mem <- ag_training_memory(mlp, 32L, opt, "gpu", quiet = TRUE, steps = 3)
    dev <- mem$components[mem$components$where == "device", ]
    persistent <- sum(dev$bytes[dev$component %in% c("weights", "optimizer_state")])
    expect_identical(persistent, n_mlp * if (opt == "adam") 12 else 4, label = opt)
    # The graph backward's gradients, and the forward's transposed copy of each weight.
    expect_identical(dev$bytes[dev$component == "gradients"], n_mlp * 4)
    expect_identical(dev$bytes[dev$component == "step_transients"], n_mlp * 4)
    unit_bytes <- sum(dev$bytes[dev$component %in% c("activations", "activation_gradients")])
    # pass pool per unit and sample: data 4, matmul + add 16, relu 12, mse 12
    expect_identical(unit_bytes, 784 * 32 * 4 + 512 * 32 * 28 + 10 * 32 * 28, label = opt)
    host <- mem$components[mem$components$where == "host", ]
    host <- stats::setNames(host$bytes, host$component)
    # On the host: the gradients as R doubles; adam's build transient, or sgd's velocity and
    # host step; the data's upload copy (86 per input unit and sample, fitted); no weights.
    expect_false("weights" %in% names(host))
    expect_identical(host[["gradients"]], n_mlp * 8)
    if (opt == "adam") {
      expect_identical(host[["build_transients"]], n_mlp * 6)
    } else {
      expect_identical(host[["optimizer_state"]], n_mlp * 8, label = opt)
      expect_identical(host[["step_transients"]], n_mlp * if (opt == "sgd") 51 else 35)
    }
    expect_identical(host[["activations"]], 784 * 32 * 86)
    r <- mem$host_regime
    expect_identical(r$collected, sum(host))
    expect_identical(mem$host_peak, min(r$allocated, max(r$headroom, r$collected)))
    expect_false(mem$source_only)
    # A whole run changes the host's figure, not the device's.
    run <- ag_training_memory(mlp, 32L, opt, "gpu", quiet = TRUE)
    expect_identical(run$host_regime$run, "whole run")
    expect_identical(run$device_peak, mem$device_peak)
    expect_identical(run$components, mem$components)
  }
})

# The share of device "cpu"'s bytes per unit and sample the host path holds in resident mode.
host_path_share <- function() {
  gc <- training_rules()$gc
  gc$value[gc$device == "gpu" & gc$backward == "host" & gc$figure == "unit_share"]
}

# The bytes live at R's full collections on the host path in resident mode, worked out from
# device "cpu"'s for the same model: its bytes per unit and sample at the path's share, and the
# path's own bytes per parameter in place of device "cpu"'s.
host_path_live <- function(spec, batch, optimizer) {
  rules <- training_rules()
  live <- rules$live
  per_param <- function(device, path, col = "bytes") {
    live[[col]][live$device == device & live$backward == path & is.na(live$op) &
                  live$optimizer == optimizer]
  }
  largest <- max(vapply(spec$shapes, function(s) prod(as.double(s)), 0))
  share <- host_path_share()
  cpu <- ag_training_memory(spec, batch, optimizer, "cpu", quiet = TRUE)
  cpu$params * per_param("gpu", "host") + largest * per_param("gpu", "host", "largest") +
    share * (cpu$host_regime$live - cpu$params * per_param("cpu", "any") -
               largest * per_param("cpu", "any", "largest"))
}

test_that("an attention on the host path in resident mode has its own rows, worked out by hand", {
  # 128-256 (relu), a layer norm, an attention of 4 heads, 10 outputs: the layer norm sends the
  # backward to the host, where the attention's ops take the host path's own rows in place of
  # device "cpu"'s rows at the path's share.
  ln <- fake_layer("ag_layer_norm", list(gamma = fake_tensor(c(256, 1)),
                                         beta = fake_tensor(c(256, 1))))
  spec <- ag_model_spec(list(fake_linear(128, 256, "relu"), ln, fake_attention(256, 4),
                             fake_linear(256, 10)), loss = "softmax_cross_entropy")
  live <- training_rules()$live
  share <- host_path_share()
  fig <- function(op, path, opt = "any") {
    x <- live$bytes[live$op %in% op & live$backward == path & live$optimizer == opt &
                      live$device == if (path == "host") "gpu" else "cpu"]
    if (length(x)) x else 0
  }
  for (opt in c("adam", "sgd")) {
    b <- 96
    # units: the projections d b, each head's pairs b^2 and block d b, the slices' and the
    # concatenation's d^2 tables
    units <- c(attention = 256 * b, attention_head = 4 * b^2, attention_block = 4 * 256 * b,
               attention_slices = 256^2, attention_concat = 256^2)
    cpu_row <- c(fig("attention", "any"), fig("attention_head", "any"),
                 fig("attention_block", "any"), fig("attention_slices", "any", opt),
                 fig("attention_concat", "any"))
    own_row <- vapply(names(units), fig, 0, path = "host")
    mem <- ag_training_memory(spec, b, opt, "gpu", quiet = TRUE)
    expect_equal(mem$host_regime$live,
                 host_path_live(spec, b, opt) - share * sum(units * cpu_row) +
                   sum(units * own_row), label = opt)
    # The heads' pairs hold less on this path than device "cpu"'s rows at the share.
    expect_lt(own_row[["attention_head"]], share * cpu_row[[2]])
  }
})

test_that("a batch norm or a layer norm sends the backward to the host, worked out by hand", {
  bn <- ag_model_spec(list(fake_linear(784, 512, "relu"), fake_layer(
    "ag_batch_norm", list(gamma = fake_tensor(c(512, 1)), beta = fake_tensor(c(512, 1)))
  ), fake_linear(512, 10)), loss = "mse")
  n <- n_mlp + 2 * 512
  for (opt in c("adam", "sgd", "sgd_plain")) {
    mem <- ag_training_memory(bn, 64L, opt, "gpu", quiet = TRUE)
    dev <- mem$components[mem$components$where == "device", ]
    dev <- stats::setNames(dev$bytes, dev$component)
    # The pass pool holds the forward alone: the transposed copy of each weight, and per unit
    # and sample data 4, matmul + add 8, relu 8, the batch norm 20, mse 12; adam's step uploads
    # the host gradients (4 per parameter); no graph backward's gradient.
    expect_identical(dev[["step_transients"]], n * 4)
    if (opt == "adam") {
      expect_identical(dev[["gradients"]], n * 4)
    } else {
      expect_false("gradients" %in% names(dev))
    }
    expect_identical(dev[["activations"]],
                     64 * (784 * 4 + (512 + 10) * 8 + 512 * 8 + 512 * 20 + 10 * 12))
    # The host runs the whole step in R: its components are device "cpu"'s; over a whole run
    # it holds device "cpu"'s bytes per unit and sample at the host path's share, and bytes per
    # parameter of its own (the weights, and Adam's moments, stay on the device).
    cpu <- ag_training_memory(bn, 64L, opt, "cpu", quiet = TRUE)
    expect_identical(mem$host_regime$run, "whole run")
    expect_equal(mem$host_regime$live, host_path_live(bn, 64L, opt), label = opt)
    expect_lt(mem$host_regime$live, cpu$host_regime$live)
    expect_identical(mem$components[mem$components$where == "host", ],
                     cpu$components, ignore_attr = TRUE)
    # A run of three steps keeps device "cpu"'s regime of a few steps.
    expect_identical(ag_training_memory(bn, 64L, opt, "gpu", quiet = TRUE, steps = 3)$host_peak,
                     ag_training_memory(bn, 64L, opt, "cpu", quiet = TRUE, steps = 3)$host_peak)
  }
  # With a dropout in place of the batch norm the backward stays on the device's graph: the
  # pass pool holds the mask's upload, the product and g * mask (12 per unit and sample), and
  # the host, in the device's whole-run regime, the mask R builds each step (29.16 live).
  drop <- ag_model_spec(list(fake_linear(784, 512, "relu"), fake_dropout(0.5),
                             fake_linear(512, 10)), loss = "mse")
  plain <- ag_model_spec(list(fake_linear(784, 512, "relu"), fake_linear(512, 10)), loss = "mse")
  expect_silent(mem <- ag_training_memory(drop, 64L, "sgd", "gpu", quiet = TRUE))
  expect_identical(mem$uncovered, character(0))
  base <- ag_training_memory(plain, 64L, "sgd", "gpu", quiet = TRUE)
  pool <- function(m) {
    m$components$bytes[m$components$where == "device" & m$components$component == "activations"]
  }
  expect_identical(pool(mem) - pool(base), 64 * 512 * 12)
  expect_identical(mem$host_regime$run, "whole run")
  expect_equal(mem$host_regime$live - base$host_regime$live, 64 * 512 * 29.16)
  with_bn <- ag_model_spec(list(fake_linear(784, 512, "relu"), fake_dropout(0.5), fake_layer(
    "ag_batch_norm", list(gamma = fake_tensor(c(512, 1)), beta = fake_tensor(c(512, 1)))
  ), fake_linear(512, 10)), loss = "mse")
  expect_silent(ag_training_memory(with_bn, 64L, "sgd", "gpu", quiet = TRUE))
})

test_that("an embedding sends the backward to the host too, its table without a weight copy", {
  emb <- function(vocab) {
    ag_model_spec(list(fake_layer("ag_embedding", list(weight = fake_tensor(c(256, vocab)))),
                       fake_linear(256, 128, "relu"), fake_linear(128, 10)),
                  loss = "softmax_cross_entropy")
  }
  for (opt in c("adam", "sgd", "sgd_plain")) {
    expect_silent(mem <- ag_training_memory(emb(1000), 64L, opt, "gpu", quiet = TRUE))
    expect_identical(mem$uncovered, character(0))
    more <- ag_training_memory(emb(3000), 64L, opt, "gpu", quiet = TRUE)
    # Per scalar of the table, the pools hold the weight, and with Adam its moments and the
    # gradient's upload (16); no transposed copy, as no matmul reads the table.
    expect_identical(more$device_peak - mem$device_peak,
                     256 * 2000 * if (opt == "adam") 16 else 4, label = opt)
    # The lookup's output is uploaded for the next layer: 4 bytes per unit and sample.
    wider <- ag_training_memory(emb(1000), 128L, opt, "gpu", quiet = TRUE)
    expect_identical(wider$device_peak - mem$device_peak,
                     64 * (256 * 4 + (128 + 10) * 8 + 128 * 8 + 4), label = opt)
    # The host runs the whole step in R: the host path's figures over device "cpu"'s.
    expect_equal(mem$host_regime$live, host_path_live(emb(1000), 64L, opt), label = opt)
    expect_identical(mem$host_regime$run, "whole run")
  }
})

test_that("f16 and bf16 weights are 2 B, adam adds an f32 master copy: source only", {
  for (dt in c("f16", "bf16")) {
    mem <- ag_training_memory(mlp, 32L, "adam", "gpu", dt, quiet = TRUE)
    dev <- mem$components[mem$components$where == "device", ]
    expect_identical(dev$bytes[dev$component == "weights"], n_mlp * 2)
    expect_identical(dev$bytes[dev$component == "master_weights"], n_mlp * 4)
    expect_identical(dev$bytes[dev$component == "optimizer_state"], n_mlp * 8)
    expect_identical(dev$basis[dev$component %in% c("weights", "master_weights")],
                     c("source only", "source only"))
    expect_identical(dev$basis[dev$component == "optimizer_state"], "measured")
    expect_true(mem$source_only)
    sgd <- ag_training_memory(mlp, 32L, "sgd", "gpu", dt, quiet = TRUE)
    expect_false("master_weights" %in% sgd$components$component)
    expect_true(sgd$source_only)
    # ggmlR's graph backward runs in f32 only: in these dtypes backward() runs on the host, so
    # the pass pool has no graph gradients, Adam's step uploads the host's (4 per parameter),
    # and the host is the host path's.
    expect_false("gradients" %in% sgd$components$component[sgd$components$where == "device"])
    expect_identical(dev$bytes[dev$component == "gradients"], n_mlp * 4)
    expect_equal(mem$host_regime$live, host_path_live(mlp, 32L, "adam"))
  }
  expect_false(ag_training_memory(mlp, 32L, "adam", "gpu", "f32", quiet = TRUE)$source_only)
})

test_that("figures from ggmlR's source only are flagged source only", {
  # f16 and bf16 weights on the device cannot be measured on ggml's CPU backend.
  for (dtype in c("f16", "bf16")) {
    mem <- ag_training_memory(fake_linear(4, 8, "softmax"), device = "gpu", dtype = dtype,
                              quiet = TRUE)
    expect_true(mem$source_only)
    comp <- mem$components
    expect_identical(comp$basis[comp$component == "weights" & comp$where == "device"],
                     "source only")
    expect_identical(comp$basis[comp$component == "activations" & comp$where == "device"],
                     "measured")
  }
  for (dev in c("cpu", "gpu")) {
    measured <- ag_training_memory(fake_linear(4, 8, "softmax"), device = dev, quiet = TRUE)
    expect_false(measured$source_only)
  }
})

test_that("the result has the documented fields and types", {
  mem <- ag_training_memory(mlp, 64, "sgd", "gpu", quiet = TRUE)
  expect_s3_class(mem, "ag_training_memory")
  expect_identical(names(mem), c("host_peak", "host_high", "device_peak", "components", "params",
                                 "batch_size", "optimizer", "device", "dtype", "loss",
                                 "uncovered", "source_only", "host_regime",
                                 "beyond_validated"))
  expect_identical(names(mem$components), c("component", "where", "bytes", "basis"))
  expect_identical(mem$batch_size, 64)
  expect_identical(mem[c("optimizer", "device", "dtype", "loss")],
                   list(optimizer = "sgd", device = "gpu", dtype = "f32", loss = "mse"))
  expect_identical(mem$uncovered, character(0))
  known <- c("weights", "gradients", "optimizer_state", "master_weights", "step_transients",
             "build_transients", "activations", "activation_gradients")
  expect_true(all(mem$components$component %in% known))
})

test_that("resident dense stacks race R's two triggers as the rule table says", {
  # The models whose host allocation agmem counts in resident mode (dense stacks with relu, tanh
  # or no activation and mse or the fused cross-entropy, device "gpu", f32) at batches where
  # R's node collections may come first: every figure as the reference evaluates it, and both
  # ways of the race seen. The device's pools, which the planners plan on here, grow with the
  # batch; the host's peak need not: a larger batch's vectors set off R's collections sooner,
  # and fewer of R's nodes pile up between them (fewer of their pages).
  beyond_range_ok({
    set.seed(20261207)
    seen <- character(0)
    mismatches <- 0L
    for (i in seq_len(iterations(60))) {
      widths <- sample(c(16, 64, 128, 384, 1024, 2048), sample(2:5, 1L), TRUE)
      spec <- ag_dense_stack(widths, sample(c("relu", "tanh", "none"), 1L),
                             sample(c("mse", "softmax_cross_entropy"), 1L))
      optimizer <- sample(c("adam", "sgd", "sgd_plain"), 1L)
      steps <- sample(c(10, 100, 1e4), 1L)
      batches <- sort(sample.int(512L, 5L))
      # The first two cases take each way of the race, however few the iterations: a small
      # Adam stack whose nodes collect first, and an SGD one whose vectors do.
      if (i <= 2L) {
        spec <- ag_dense_stack(if (i == 1L) c(1024, 512) else c(1024, 1024))
        optimizer <- if (i == 1L) "adam" else "sgd"
        steps <- 100
        batches <- if (i == 1L) 1:5 else c(16L, 32L, 64L, 128L, 256L)
      }
      peaks <- numeric(0)
      for (b in batches) {
        mem <- ag_training_memory(spec, b, optimizer, "gpu", quiet = TRUE, steps = steps)
        want <- reference_memory(spec, b, optimizer, "gpu", "f32", steps)
        got <- list(params = mem$params, host_peak = mem$host_peak, host_high = mem$host_high,
                    device_peak = mem$device_peak, components = mem$components,
                    host_regime = mem$host_regime)
        if (!identical(got, want)) {
          mismatches <- mismatches + 1L
          expect_identical(got, want, label = paste("case", i, "batch", b))
        }
        seen <- c(seen, mem$host_regime$binding)
        peaks <- c(peaks, mem$device_peak)
      }
      if (is.unsorted(peaks)) {
        mismatches <- mismatches + 1L
        expect_false(is.unsorted(peaks), label = paste("case", i))
      }
    }
    expect_identical(mismatches, 0L)
    expect_true(all(c("nodes", "collector") %in% seen))
  })
})

test_that("a resident run with few collections keeps the trigger its forced ones leave", {
  # 784-2048-1024-64, Adam, batch 2, in resident mode: its host needs more than R_VSIZE at a
  # collection, so the first full collection R forces sets the trigger to the heap needed and
  # grows it once; then the young collections leave enough free, and 100 steps make too few
  # collections for R's schedule to collect in full. Measured (measurements-long-fit-gpu.csv),
  # the run collected in full twice and its trigger ended at 92.7 MiB; agmem had had it climb
  # to where R's full collections settle it, 122.4.
  spec <- ag_dense_stack(c(784, 2048, 1024, 64), loss = "softmax_cross_entropy")
  fig <- training_rules()$gc
  g <- function(name) {
    fig$value[fig$figure == name & fig$device %in% c("any", "gpu")][[1L]]
  }
  mem <- ag_training_memory(spec, 2L, "adam", "gpu", quiet = TRUE)
  needed <- (g("heap_start") + mem$host_regime$live) + 8 * (2048 * 1024)
  heap <- needed + g("min_free_frac") * g("vsize")
  expect_gt(heap, g("vsize"))
  expect_identical(mem$host_regime$trigger,
                   heap + (g("grow_incr_min") + g("grow_incr_frac") * heap))
  # A run of 1000 steps makes enough collections for the schedule's full ones: its trigger
  # settles higher, where R's full collections put it.
  long <- ag_training_memory(spec, 2L, "adam", "gpu", quiet = TRUE, steps = 1000)
  expect_gt(long$host_regime$trigger, mem$host_regime$trigger * 1.2)
  expect_gt(long$host_peak, mem$host_peak)
  # Where the forced collections go on until the heap needed stops growing the trigger (a
  # mini-batch of 2048 leaves old garbage enough), the trigger is the settled one, placed in its
  # last growth's range as on any run: 1536-10 with its data set held in R.
  wide <- ag_dense_stack(c(1536, 10))
  data <- (1536 + 10) * 8192 * 8
  short <- ag_training_memory(wide, 2048L, "adam", "gpu", quiet = TRUE, data_size = data)
  settled <- ag_training_memory(wide, 2048L, "adam", "gpu", quiet = TRUE, data_size = data,
                                steps = 1e4)
  expect_identical(short$host_regime$trigger, settled$host_regime$trigger)
})

test_that("every figure equals the rule table evaluated in R; peaks are sums, monotone in batch", {
  beyond_range_ok({
    set.seed(20261210)
    grid <- expand.grid(optimizer = c("adam", "sgd", "sgd_plain"),
                        device = c("cpu", "gpu"), dtype = c("f32", "f16", "bf16"),
                        stringsAsFactors = FALSE)
    grid <- grid[grid$device == "gpu" | grid$dtype == "f32", ]
    mismatches <- 0L
    for (i in seq_len(iterations(300))) {
      widths <- sample.int(if (stats::runif(1) < 0.2) 1e5L else 300L, sample(2:6, 1L), TRUE)
      spec <- ag_dense_stack(widths, sample(c("relu", "sigmoid", "tanh", "none"), 1L),
                             sample(c("mse", "cross_entropy", "softmax_cross_entropy"), 1L),
                             stats::runif(1) < 0.8)
      g <- grid[sample.int(nrow(grid), 1L), ]
      # Half the models have batch norm (in either mode), dropout, layer norm or a checkpoint's
      # mark after hidden layers (on device "gpu" a dropout alone keeps the graph backward; the
      # others send it to the host, a checkpoint alone with the pools the graph's).
      if (length(widths) > 2L && stats::runif(1) < 0.5) {
        for (h in seq_len(length(widths) - 2L)) {
          norms <- c("batch_norm", "batch_norm_eval", "dropout", "layer_norm", "checkpoint")
          spec$ops[[h]] <- c(spec$ops[[h]], sample(norms, sample(0:2, 1L)))
        }
      }
      # And a third start with an embedding: a table of in x out scalars, and its lookup (on
      # device "gpu" it sends the backward to the host).
      if (stats::runif(1) < 1 / 3) {
        spec$ops[[1]] <- c("embedding_table", "embedding")
        spec$layers$type[[1]] <- "embedding"
      }
      # And a quarter have an attention of 1 to 4 heads after their last hidden layer, a third
      # of those a flash call (on device "gpu" with a layer before it that sends the backward to
      # the host, the host path's own rows take the place of device "cpu"'s for their ops).
      if (length(widths) > 2L && stats::runif(1) < 1 / 4) {
        h <- length(widths) - 2L
        heads <- sample(4L, 1L)
        spec$ops[[h]] <- c(spec$ops[[h]], if (stats::runif(1) < 1 / 3) {
          c("flash_attention", if (stats::runif(1) < 0.5) "flash_causal")
        } else {
          c("attention_slices", "attention", rep("attention_head", heads),
            if (stats::runif(1) < 0.5) rep("attention_dropout", heads),
            if (heads > 1) c("attention_concat", rep("attention_block", heads)))
        })
      }
      batches <- sort(sample.int(if (stats::runif(1) < 0.5) 4096L else .Machine$integer.max, 5L))
      steps <- sample(c(1, 3, 4, 100, 1e4), 1L)
      data <- if (stats::runif(1) < 0.5) 0 else round(stats::runif(1, 0, 1e9))
      # And a third run under settings of R's collector, drawn from what R accepts.
      vars <- if (stats::runif(1) < 1 / 3) {
        c(R_GC_MEM_GROW = sample(c("0", "2", "3"), 1L),
          R_GC_GROWFRAC = sample(c("0.35", "0.5", "0.75"), 1L),
          R_VSIZE = sample(c("300k", "16M", "256M", "4G"), 1L))[sample.int(3L, sample(1:3, 1L))]
      } else {
        character(0)
      }
      collector <- agmem:::collector_settings(c(
        vars, R_NSIZE = NA, R_GC_NGROWINCRFRAC = NA, R_MAX_VSIZE = NA
      ), character(0))
      peaks <- matrix(NA_real_, 5L, 3L)
      for (j in seq_along(batches)) {
        mem <- if (length(vars)) {
          with_env(vars, ag_training_memory(spec, batches[[j]], g$optimizer, g$device, g$dtype,
                                            quiet = TRUE, steps = steps, data_size = data))
        } else {
          ag_training_memory(spec, batches[[j]], g$optimizer, g$device, g$dtype, quiet = TRUE,
                             steps = steps, data_size = data)
        }
        want <- reference_memory(spec, batches[[j]], g$optimizer, g$device, g$dtype, steps, data,
                                 collector)
        got <- list(params = mem$params, host_peak = mem$host_peak, host_high = mem$host_high,
                    device_peak = mem$device_peak, components = mem$components,
                    host_regime = mem$host_regime)
        if (!identical(got, want)) {
          mismatches <- mismatches + 1L
          expect_identical(got, want, label = paste("case", i, "batch", batches[[j]]))
        }
        comp <- mem$components
        host <- Reduce(`+`, comp$bytes[comp$where == "host"], 0)
        r <- mem$host_regime
        if (!is.null(r)) {
          host <- if (r$run == "whole run") {
            min(r$allocated, r$ceiling)
          } else {
            min(r$allocated, max(r$headroom, host))
          }
        }
        if (!identical(mem$host_peak, host) || !(mem$host_high >= mem$host_peak) ||
          !identical(mem$device_peak, Reduce(`+`, comp$bytes[comp$where == "device"], 0))) {
          mismatches <- mismatches + 1L
        }
        peaks[j, ] <- c(mem$host_peak, mem$device_peak, mem$host_high)
      }
      # What the planners plan on grows with the batch: the host's peaks where they plan on the
      # host, the device's pools everywhere. (In resident mode the host's peak may fall as the
      # batch grows, below.)
      planned <- if (agmem:::planned_place(g$device) == "host") 1:3 else 2L
      if (any(apply(peaks[, planned, drop = FALSE], 2L, is.unsorted))) {
        mismatches <- mismatches + 1L
        expect_false(any(apply(peaks[, planned, drop = FALSE], 2L, is.unsorted)),
                     label = paste("case", i))
      }
    }
    expect_identical(mismatches, 0L)
  })
})

test_that("the rule table cites a source for every row and is complete", {
  rules <- training_rules()
  for (tab in rules[c("param", "unit")]) {
    expect_true(all(nzchar(tab$cite)))
    expect_true(all(tab$basis %in% c("measured", "source only")))
    expect_true(all(is.finite(tab$bytes)))
    expect_true(all(grepl("issue #10|issue #16|source only", tab$cite)))
    expect_identical(tab$basis == "source only", grepl("^source only", tab$cite))
    expect_true(all(is.finite(tab$alloc_step) & tab$alloc_step >= 0))
  }
  # Only a table's scalars go below 0: they are parameters too, and its row takes back part of
  # what the parameter rules count for them (an embedding's table on device "gpu", which no
  # matmul reads, has no transposed copy).
  expect_true(all(rules$param$bytes >= 0))
  neg <- rules$unit[rules$unit$bytes < 0, ]
  expect_identical(paste(neg$op, neg$device, neg$where, neg$component),
                   "embedding_table gpu device step_transients")
  gc <- rules$gc
  expect_true(all(grepl("issue #10|issue #15|issue #16|R's source", gc$cite)))
  expect_true(all(is.finite(gc$value)))
  # One figure of each kind per device; R's own constants once, for any device.
  r_constants <- c("vsize", "min_free_frac", "grow_frac", "grow_incr_frac", "grow_incr_min",
                   "node_bytes", "level0_freq", "level1_freq")
  expect_identical(sort(gc$figure[gc$device == "any"]), sort(r_constants))
  expect_identical(unique(gc$backward[gc$device %in% c("any", "cpu")]), "any")
  for (dev in c("cpu", "gpu")) {
    want <- c("steps", "alloc_scale", "alloc_offset", "headroom", "heap_start", "kept_excess",
              "node_step", "node_once", "node_headroom", "node_free", "node_apart", "unit_share",
              "live_sd", "trigger_place",
              # resident mode's own bytes a node in use adds (R's is 56, for any device), and
              # the share of the mini-batch its node collections leave as old garbage (the race,
              # where the host's allocation is counted: resident mode only)
              if (dev == "gpu") c("node_bytes", "promoted"))
    expect_identical(sort(gc$figure[gc$device == dev & gc$backward == "any"]), sort(want))
  }
  # Where the trigger ends in its range is a share of it.
  place <- gc$value[gc$figure == "trigger_place"]
  expect_true(all(place >= 0 & place <= 1))
  # The host path in resident mode has its own figures of a few kinds, each once, and its own
  # figure per parameter for every optimizer.
  own <- gc$figure[gc$backward != "any"]
  expect_identical(unique(gc$device[gc$backward != "any"]), "gpu")
  expect_identical(unique(gc$backward[gc$backward != "any"]), "host")
  expect_false(anyDuplicated(own) > 0)
  expect_setequal(own, c("unit_share", "node_apart", "node_free", "live_sd"))
  # Its own rows of the live rules: a figure per parameter for every optimizer, and the ops of
  # the attentions (ag_multihead_attention() and the flash call), each once, for any optimizer
  # (they take the place of device "cpu"'s rows of the same ops, where it has them).
  own_live <- rules$live[rules$live$backward != "any", ]
  expect_true(all(own_live$device == "gpu" & own_live$backward == "host"))
  expect_setequal(own_live$optimizer[is.na(own_live$op)], c("adam", "sgd", "sgd_plain"))
  own_ops <- own_live$op[!is.na(own_live$op)]
  expect_false(anyDuplicated(own_ops) > 0)
  expect_true(all(startsWith(own_ops, "attention") | startsWith(own_ops, "flash")))
  expect_true(all(own_live$optimizer[!is.na(own_live$op)] == "any"))
  live <- rules$live
  expect_true(all(nzchar(live$cite) & grepl("issue #15|issue #16", live$cite)))
  expect_true(all(is.finite(live$bytes) & live$bytes >= 0))
  # A live figure per parameter for every optimizer, and one for every op of the CPU.
  expect_setequal(live$optimizer[is.na(live$op)], c("adam", "sgd", "sgd_plain"))
  cpu_ops <- unique(rules$unit$op[rules$unit$device == "cpu"])
  expect_true(all(live$op[!is.na(live$op)] %in% cpu_ops))
  # Device "gpu"'s host takes its own whole-run figures where the backward is the graph's: every
  # op modelled on that path has them, and every optimizer.
  u <- rules$unit
  on_host <- registry_names("ops")
  on_host <- on_host$name[on_host$host_backward]
  graph_ops <- setdiff(u$op[u$device == "gpu" & u$backward %in% c("any", "graph")], on_host)
  expect_setequal(live$op[live$device == "gpu" & !is.na(live$op)], graph_ops)
  expect_setequal(live$optimizer[live$device == "gpu" & is.na(live$op)],
                  c("adam", "sgd", "sgd_plain"))
  expect_true(all(gc$value[!gc$figure %in% c("alloc_offset", "node_apart", "live_sd")] > 0))
  expect_true(all(gc$value[gc$figure == "live_sd"] >= 0))
  expect_true(all(gc$value[gc$figure == "node_apart"] %in% c(0, 1)))
  p <- rules$param
  # Every setting that is accepted has weights somewhere, and the CPU is f32 only.
  for (opt in c("adam", "sgd", "sgd_plain")) {
    for (dt in c("f32", "f16", "bf16")) {
      gpu <- p$optimizer %in% c("any", opt) & p$device == "gpu" & p$dtype %in% c("any", dt)
      expect_true(any(gpu & p$component == "weights"), label = paste(opt, dt))
    }
  }
  expect_identical(unique(p$dtype[p$device == "cpu"]), "f32")
})

test_that("the report is written to standard output", {
  expect_snapshot(ag_training_memory(mlp, batch_size = 64L))
  expect_snapshot(ag_training_memory(mlp, 64L, "sgd", "gpu"))
  expect_snapshot(ag_training_memory(mlp, 64L, "adam", "gpu", "f16"))
  model <- fake_sequential(fake_linear(784, 256, "relu"), fake_dropout(0.2),
                           fake_linear(256, 10))
  expect_snapshot(ag_training_memory(model, 128L))
})

test_that("the report takes other units; format() returns its lines", {
  mem <- ag_training_memory(mlp, 64L, quiet = TRUE)
  expect_snapshot(print(mem, units = "si"))
  lines <- format(mem, units = "MiB")
  expect_true(is.character(lines))
  expect_identical(capture.output(print(mem, units = "MiB")), lines)
  expect_match(lines[[3]], sprintf("%.2f MiB$", mem$host_peak / 2^20))
  expect_match(lines[[1]], "adam, device cpu, f32, batch 64")
  expect_agmem_error(format(mem, units = "furlongs"), "`units`")
  expect_identical(capture.output(print(mem)), format(mem))
  expect_output(expect_invisible(print(mem)), "^Peak memory")
})

test_that("the report names what is not modelled and what is source only", {
  emb <- fake_layer("ag_flash_attention", list(w_q = fake_tensor(c(8, 8))), "attention")
  model <- fake_sequential(fake_linear(4, 8, "relu"), emb)
  expect_warning(lines <- capture.output(ag_training_memory(model)), "lower bound",
                 class = "agmem_warning_lower_bound")
  expect_true(any(grepl("Not modelled .*lower bound", lines)))
  expect_true(any(grepl("layer 2 \\(ag_flash_attention", lines)))
  expect_true(any(grepl("loss \"mse\"", lines)))
  lines <- capture.output(ag_training_memory(mlp, device = "gpu", dtype = "bf16"))
  expect_true(any(grepl("\\[source only\\]$", lines)))
  expect_true(any(grepl("^\\[source only\\]: .*not measured", lines)))
  lines <- capture.output(ag_training_memory(mlp))
  expect_false(any(grepl("source only|Not modelled", lines)))
})

test_that("quiet = TRUE prints nothing; the result is invisible", {
  expect_silent(ag_training_memory(mlp, quiet = TRUE))
  expect_invisible(ag_training_memory(mlp, quiet = TRUE))
  expect_output(expect_invisible(ag_training_memory(mlp)), "Peak memory of training")
})

test_that("bad arguments are errors that name them", {
  expect_snapshot(error = TRUE, {
    ag_training_memory(mlp, batch_size = 0)
    ag_training_memory(mlp, optimizer = "rmsprop")
    ag_training_memory(mlp, device = "tpu")
    ag_training_memory(mlp, dtype = "f8")
    ag_training_memory(mlp, dtype = "f16")
    ag_training_memory(mlp, quiet = NA)
    ag_training_memory(NULL)
  })
})

test_that("bad arguments are errors that name them, value by value", {
  for (bad in list(NULL, NA, 0, -1, 1.5, 2^31, Inf, "1", TRUE, 1:2, factor(1), list(1))) {
    expect_agmem_error(ag_training_memory(mlp, bad, quiet = TRUE), "`batch_size`")
  }
  for (bad in list(1, NA, "", "rms", c("sgd", "adam"), factor("adam"))) {
    expect_agmem_error(ag_training_memory(mlp, optimizer = bad, quiet = TRUE), "`optimizer`")
  }
  for (bad in list(NULL, 1, NA, "", "tpu", c("cpu", "gpu")[2:1], factor("cpu"))) {
    expect_agmem_error(ag_training_memory(mlp, device = bad, quiet = TRUE), "`device`")
  }
  for (bad in list(NULL, 1, NA, "", "f64", c("f16", "f32"), factor("f32"))) {
    expect_agmem_error(ag_training_memory(mlp, device = "gpu", dtype = bad, quiet = TRUE),
                       "`dtype`")
  }
  for (dt in c("f16", "bf16")) {
    expect_agmem_error(ag_training_memory(mlp, dtype = dt, quiet = TRUE),
                 "`dtype` \"[bf]+16\" does not apply with device \"cpu\"")
  }
  for (bad in list(NULL, NA, 1, "TRUE", c(TRUE, FALSE))) {
    expect_agmem_error(ag_training_memory(mlp, quiet = bad), "`quiet`")
  }
})

test_that("partial names are matched as match.arg() does", {
  expect_identical(ag_training_memory(mlp, 8, "sgd_p", "g", "bf", quiet = TRUE),
                   ag_training_memory(mlp, 8, "sgd_plain", "gpu", "bf16", quiet = TRUE))
})

test_that("the .Call entry point checks every argument it reads", {
  flat <- spec_ops(mlp)
  call <- function(shapes = mlp$shapes, units = flat$units, ops = flat$ops, batch = 32L,
                   opt = "adam", dev = "cpu", dt = "f32", run = c(3, 0, 0, NA, NA, NA)) {
    .Call(agmem:::agmem_training_memory, shapes, units, ops, batch, opt, dev, dt, run)
  }
  ok <- call()
  expect_identical(ok$host_peak, ag_training_memory(mlp, quiet = TRUE, steps = 3)$host_peak)
  expect_identical(call(units = as.integer(flat$units)), ok)
  expect_identical(call(units = numeric(0), ops = character(0))$params, n_mlp)
  for (bad in list(NULL, "1", list(1), factor(1), TRUE, 1i)) {
    expect_agmem_error(call(units = bad), "`units` must be a numeric vector")
  }
  for (bad in list(flat$units[-1], c(flat$units, 1), numeric(0))) {
    expect_agmem_error(call(units = bad), "`units` has [0-9]+ elements for 7 ops")
  }
  for (v in list(NA, NA_integer_, NaN, Inf, -Inf, 0, -1, -1L, 2.5)) {
    units <- flat$units
    units[[3]] <- v
    expect_agmem_error(call(units = units), "`units`: element 3 is")
  }
  for (bad in list(NULL, 1, list("matmul"), factor(flat$ops))) {
    expect_agmem_error(call(ops = bad), "`ops` must be a character vector")
  }
  for (v in list(NA_character_, "", "MATMUL", "conv2d", "none")) {
    ops <- flat$ops
    ops[[2]] <- v
    expect_agmem_error(call(ops = ops), "`ops`: element 2")
  }
  for (bad in list(NULL, "a", 0, 2^31, NA_integer_, c(1, 2), factor(1), list(1))) {
    expect_agmem_error(call(batch = bad), "`batch_size`")
  }
  for (bad in list(NULL, NA_character_, 1, "ADAM", c("adam", "sgd"), character(0),
                   factor("adam"), list("adam"))) {
    expect_agmem_error(call(opt = bad), "`optimizer`")
    expect_agmem_error(call(dev = bad), "`device`")
    expect_agmem_error(call(dt = bad), "`dtype`")
  }
  for (bad in list(NULL, "a", list(), list("2"), new.env(), list(c(2, -1)))) {
    expect_agmem_error(call(shapes = bad), "`shapes`")
  }
  expect_agmem_error(call(dt = "f16"), "`dtype` \"f16\" does not apply with device \"cpu\"")
  # Every op has rules on device "gpu": an attention's projections cost its pass pool per unit
  # and sample with the graph backward.
  expect_gt(call(units = 4, ops = "attention", dev = "gpu")$device_peak,
            call(units = 4, ops = "matmul", dev = "gpu")$device_peak)
  expect_identical(call(units = 4, ops = "dropout")$params, n_mlp)
  # A parameter table's units are its scalars, counted once whatever the batch; a lookup's are
  # per sample.
  table_at <- function(b, op, run = c(3, 0, 0, NA, NA, NA)) {
    call(units = 1000, ops = op, batch = b, run = run)
  }
  for (run in list(c(3, 0, 0, NA, NA, NA), c(100, 0, 0, NA, NA, NA))) {
    expect_identical(table_at(1L, "embedding_table", run)[c("bytes", "host_peak", "host_high")],
                     table_at(4096L, "embedding_table", run)[c("bytes", "host_peak", "host_high")])
    expect_gt(table_at(4096L, "embedding", run)$host_high, table_at(1L, "embedding", run)$host_high)
  }
})

test_that("a figure that would not be finite is an error, not Inf", {
  call <- function(shapes, units = numeric(0), ops = character(0), batch = 1L,
                   opt = "adam", dev = "cpu", dt = "f32") {
    .Call(agmem:::agmem_training_memory, shapes, units, ops, batch, opt, dev, dt,
          c(3, 0, 0, NA, NA, NA))
  }
  expect_agmem_error(call(list(c(1e300, 1e10))), "more scalars than a double can count")
  expect_agmem_error(call(list(c(1e300, 1e7))), "parameters make its byte counts overflow")
  # Every cell finite, their sum not: 5e306 parameters at 46 B (8 + 8 + 8 + 22).
  expect_agmem_error(call(5e306, opt = "sgd_plain"), "peak overflows a double")
  expect_identical(call(1e306, opt = "sgd_plain")$host_peak,
                   1e306 * 8 + 1e306 * 8 + 1e306 * 8 + 1e306 * 22)
  # The cells' sum finite, the bytes allocated in 3 steps not (24 once + 3 x 24 per step).
  expect_agmem_error(call(1.9e306, opt = "sgd_plain"), "host allocations overflow a double")
  expect_agmem_error(call(1, 1e300, "matmul", .Machine$integer.max),
               "`units` \\(element 1, 1e\\+300\\) times `batch_size` \\(2147483647\\) make")
  expect_agmem_error(call(1, rep(1e306, 30), rep("matmul", 30)),
               "activations overflow a double")
  expect_agmem_error(call(1, 1.5e308, "loss_mse", 2L), "`units`.*overflow")
  expect_agmem_error(ag_training_memory(ag_dense_stack(c(1e300, 1e7, 2)), quiet = TRUE), "overflow")
})

test_that("long op vectors are read to the end", {
  n <- 2e5
  mem <- .Call(agmem:::agmem_training_memory, 1, rep(1, n), rep("matmul", n), 1L, "sgd",
               "cpu", "f32", c(100, 1, 0, NA, NA, NA))
  expect_identical(mem$component[mem$component == "activations"], "activations")
  expect_agmem_error(
    .Call(agmem:::agmem_training_memory, 1, c(rep(1, n), 0), rep("matmul", n + 1), 1L, "sgd",
          "cpu", "f32", c(100, 1, 0, NA, NA, NA)),
    "element 200001 is 0"
  )
})

test_that("real ggmlR training steps fill the device pools as predicted", {
  skip_on_cran()
  skip_if_not_installed("ggmlR")
  skip_if_not(file.exists("/proc/self/status"), "needs Linux's /proc")
  script <- system.file("validation", "measure-one.R", package = "agmem")
  skip_if(!nzchar(script), "inst/validation is not installed")
  for (cfg in list(c("256,512,10", "64", "adam", "relu", "softmax_cross_entropy"),
                   c("128,64,64,32", "16", "sgd", "tanh", "mse"))) {
    out <- system2(file.path(R.home("bin"), "Rscript"),
                   c(script, paste0("--widths=", cfg[[1]]), paste0("--batch=", cfg[[2]]),
                     paste0("--optimizer=", cfg[[3]]), paste0("--activation=", cfg[[4]]),
                     paste0("--loss=", cfg[[5]]), "--device=gpu"),
                   stdout = TRUE, stderr = FALSE)
    line <- grep("^RESULT,", out, value = TRUE)
    expect_length(line, 1L)
    field <- function(name) as.numeric(sub(paste0(".*,", name, "=([0-9.]+).*"), "\\1", line))
    measured <- field("pass_pool") + field("persistent_pool")
    spec <- ag_dense_stack(as.numeric(strsplit(cfg[[1]], ",")[[1]]), cfg[[4]], cfg[[5]])
    mem <- ag_training_memory(spec, as.integer(cfg[[2]]), cfg[[3]], "gpu", quiet = TRUE)
    expect_lt(abs(mem$device_peak / measured - 1), 0.02, label = cfg[[1]])
  }
})

test_that("a figure beyond the validated range is flagged, in the result, report and warning", {
  spec <- ag_dense_stack(c(784, 512, 10))
  expect_silent(mem <- ag_training_memory(spec, 2048, quiet = TRUE))
  expect_identical(mem$beyond_validated, character(0))
  expect_warning(mem <- ag_training_memory(spec, 200000, quiet = TRUE),
                 "batch size 200 000 \\(validated up to 4 096\\)", class = "agmem_warning_range")
  expect_length(mem$beyond_validated, 1L)
  expect_match(format(mem), "Beyond what the model was validated on", all = FALSE)
  wide <- ag_dense_stack(c(784, 4096, 10))
  expect_warning(mem <- ag_training_memory(wide, 8, quiet = TRUE), "layer width 4 096",
                 class = "agmem_warning_range")
  # The planners and the sweep flag it too.
  expect_warning(b <- ag_max_batch_size(spec, "8 GiB"), class = "agmem_warning_range")
  expect_gt(b, 4096)
  expect_warning(ag_memory_sweep(spec, c(1, 8192), "adam"), class = "agmem_warning_range")
  expect_silent(ag_memory_sweep(spec, c(1, 4096), "adam"))
})

test_that("no host peak is below the weights, gradients and optimizer state it holds", {
  mem <- ag_training_memory(ag_dense_stack(c(4, 8, 3)), 16, quiet = TRUE, steps = 3)
  persistent <- sum(mem$components$bytes[mem$components$component %in%
                                            c("weights", "gradients", "optimizer_state")])
  expect_identical(mem$host_peak, persistent)
  expect_gt(mem$host_peak, 0)
  expect_false(any(grepl("host peak +0 B", format(mem))))
})

test_that("R's node collections hold a small resident model's heap, worked out by hand", {
  # 1024-512 (mse), adam, batch 2, on device "gpu": the host allocates once 682 344 B and 72.00
  # per parameter, a step 76 790 B, 0.01 per parameter and per sample 16.10 per input unit and
  # 15.90 per output unit (agmem_host_rules).
  spec <- ag_dense_stack(c(1024, 512))
  mem <- ag_training_memory(spec, 2L, "adam", device = "gpu", quiet = TRUE)
  n <- 1024 * 512 + 512
  once <- 682344 + n * 72
  step <- 76790 + n * 0.01 + 2 * (1024 * 16.10 + 512 * 15.90)
  per_step <- resident_adam_nodes(spec, 2)
  # The nodes reach R's node trigger after (548 024 - 208 478) / per_step steps, with the heap
  # at what the run allocated by then; after that collection, the live heap and a headroom's
  # worth of steps. Both stay under R's vector trigger.
  before <- (548024 - 208478) / per_step
  held <- max(once + before * step, mem$host_regime$live + 548024 / per_step * step)
  expect_lt(held, mem$host_regime$trigger - 6674564)
  # What the allocator keeps (per parameter -2.81, per input and output unit and sample 12.42)
  # and the nodes' pages at R's node trigger (61.48 B a node less 20 187 401 B).
  kept <- n * -2.81 + 2 * (1024 + 512) * 12.42 + (61.48 * 548024 - 20187401)
  expect_equal(mem$host_regime$ceiling, held + kept)
  expect_identical(mem$host_regime$binding, "nodes")
  expect_identical(mem$host_peak, mem$host_regime$ceiling)
  # The node collections' old garbage: 64-256-128-64 (mse), adam, batch 1024, whose later node
  # collections hold the heap. Its mini-batch is 1024 * (64 * 16.10 + 64 * 15.90) B a step (the
  # host rows marked `batch`); each node collection but the last leaves 0.568 of it in the heap
  # (agmem_gc_rules' promoted), up to 19 (R's LEVEL_0_FREQ less one).
  deep <- ag_dense_stack(c(64, 256, 128, 64))
  wide <- ag_training_memory(deep, 1024L, "adam", device = "gpu", quiet = TRUE)
  n2 <- 64 * 256 + 256 + 256 * 128 + 128 + 128 * 64 + 64
  per2 <- resident_adam_nodes(deep, 1024)
  mini <- 1024 * (64 * 16.10 + 64 * 15.90)
  step2 <- 76790 + n2 * 0.01 + mini
  before2 <- (548024 - 208478) / per2
  old <- min(floor((100 - before2) / (548024 / per2)), 19)
  later <- wide$host_regime$live + 548024 / per2 * step2 + 0.568 * old * mini
  expect_gt(old, 0)
  expect_gt(later, 682344 + n2 * 72 + before2 * step2)
  expect_identical(wide$host_regime$binding, "nodes")
  kept2 <- n2 * -2.81 + 1024 * (64 + 256 + 128 + 64) * 12.42 + (61.48 * 548024 - 20187401)
  expect_equal(wide$host_regime$ceiling, later + kept2)
  # The race's terms, which fit-long.R fits `promoted` on, are in the C result: the heap at the
  # first node collection, at the later ones without their old garbage, and the mini-batch
  # bytes those collections promote before the share; NA where no race runs (device "cpu").
  terms <- function(device) {
    flat <- spec_ops(deep)
    fig <- .Call(agmem:::agmem_training_memory, deep$shapes, flat$units, flat$ops, 1024L, "adam",
                 device, "f32", agmem:::model_run(deep, 100, 0, agmem:::collector_settings()))
    c(fig$host_race_first, fig$host_race_later, fig$host_race_old)
  }
  expect_equal(terms("gpu"), c(682344 + n2 * 72 + before2 * step2,
                               wide$host_regime$live + 548024 / per2 * step2, old * mini))
  expect_identical(terms("cpu"), rep(NA_real_, 3))
  # With SGD a step's update allocates 64 B per parameter in R: the vectors reach their trigger
  # first, and the heap climbs to it.
  sgd <- ag_training_memory(ag_dense_stack(c(1024, 1024)), 64L, "sgd", device = "gpu",
                            quiet = TRUE)
  expect_identical(sgd$host_regime$binding, "collector")
  # A dropout's mask is counted (52 B a unit and sample, drawn in R each step): with one after
  # the hidden layer the nodes still come first. A model with an op whose host allocation was
  # not measured in resident mode (an attention) is not held so: its heap reaches R's trigger,
  # as before the host's allocation was counted.
  drop <- ag_training_memory(
    ag_model_spec(list(fake_linear(1024, 512, "relu"), fake_dropout(0.5), fake_linear(512, 10))),
    2L, "adam", device = "gpu", quiet = TRUE
  )
  expect_identical(drop$host_regime$binding, "nodes")
  attn <- ag_training_memory(
    ag_model_spec(list(fake_linear(1024, 512, "relu"), fake_attention(512, 4),
                       fake_linear(512, 10))),
    2L, "adam", device = "gpu", quiet = TRUE
  )
  expect_identical(attn$host_regime$binding, "collector")
})

test_that("R's trigger stays at R_VSIZE in a resident run without a full collection, by hand", {
  # 1024-768-64-512-1536 (mse), adam, batch 4, on device "gpu": the heap needed at a collection
  # (the heap at the start, the live heap and the largest tensor, 1024 * 768 doubles) with a
  # fifth of R_VSIZE is over 0.7 of R_VSIZE, so a full collection would grow the trigger once,
  # to R_VSIZE * 1.2 + 640 000 B. Only full collections grow it.
  spec <- ag_dense_stack(c(1024, 768, 64, 512, 1536))
  n <- sum(vapply(spec$shapes, prod, 0))
  vsize <- 64 * 2^20
  grown <- vsize + (640000 + 0.2 * vsize)
  run <- function(steps, batch = 4L) {
    ag_training_memory(spec, batch, "adam", device = "gpu", quiet = TRUE, steps = steps)
  }
  # What a step's mini-batch allocates on the host (4 * (1024 * 16.10 + 1536 * 15.90) B at batch
  # 4), the heap needed at a collection with a fifth of R_VSIZE, and how many steps the run's
  # collections come apart: the fewer of R_VSIZE less the start and the live heap over a step's
  # bytes (agmem_host_rules), and the nodes' headroom over a step's nodes.
  mini <- function(batch) batch * (1024 * 16.10 + 1536 * 15.90)
  needed <- function(mem) 6674564 + mem$host_regime$live + 8 * 1024 * 768 + 0.2 * vsize
  every <- function(mem, batch) {
    min((vsize - 6674564 - mem$host_regime$live) / (76790 + n * 0.01 + mini(batch)),
        548024 / resident_adam_nodes(spec, batch))
  }
  mem <- run(100)
  expect_gt(needed(mem), 0.7 * vsize)
  expect_lt(needed(mem), vsize)
  # Nothing forces one: a collection leaves more than the allocation and a fifth of R_VSIZE
  # free, even with the old garbage of 19 level-0 collections (0.568 of the mini-batch each).
  # R's schedule collects in full once in 21 * 6 = 126 collections.
  expect_lt(needed(mem) + 0.568 * 19 * mini(4), vsize)
  # 100 steps make fewer than half the cycle's collections: at the median the run has no full
  # collection, and the trigger stays where it started.
  expect_lt(100 / every(mem, 4), 63)
  expect_identical(mem$host_regime$trigger, vsize)
  # A run of 10 000 steps has a full collection by the schedule, and the trigger grows.
  expect_gt(10000 / every(mem, 4), 63)
  expect_equal(run(10000)$host_regime$trigger, grown)
  # A batch whose old garbage would leave too little free forces a full collection within the
  # run's first fewer than 63 collections.
  wide <- run(100, 64L)
  expect_lt(100 / every(wide, 64), 63)
  expect_lt(needed(wide), vsize)
  expect_gt(needed(wide) + 0.568 * min(floor(100 / every(wide, 64)), 19) * mini(64), vsize)
  expect_equal(wide$host_regime$trigger, grown)
})

test_that("a whole run adds R's nodes to what it allocated, worked out by hand", {
  # 4-8-3 (relu, mse), adam: a step allocates 1216 nodes, 2878 per matmul (2), 784 for the relu
  # and 238 per parameter tensor (4): 8708; a run allocates 180665 once. Its vectors stay below
  # the weights, gradients and optimizer state, the floor of what it allocated.
  fig <- stats::setNames(training_rules()$gc$value, training_rules()$gc$figure)[
    training_rules()$gc$device %in% c("cpu", "any")]
  per_step <- 1216 + 2 * 2878 + 784 + 4 * 238
  held <- function(mem) {
    sum(mem$components$bytes[mem$components$component %in%
                               c("weights", "gradients", "optimizer_state")])
  }
  spec <- ag_dense_stack(c(4, 8, 3))
  persistent <- held(ag_training_memory(spec, 16, quiet = TRUE, steps = 3))
  # 10 steps: 267745 nodes, less than the memory the process holds: nothing added.
  mem <- ag_training_memory(spec, 16, quiet = TRUE, steps = 10)
  expect_identical(mem$host_peak, persistent)
  # 30 steps: 441905 nodes of 56 bytes, less the 17 824 025 that fit.
  mem <- ag_training_memory(spec, 16, quiet = TRUE, steps = 30)
  nodes <- 180665 + 30 * per_step
  expect_identical(nodes, 441905)
  expect_identical(mem$host_peak, persistent + (56 * nodes - 17824025))
  expect_identical(mem$host_regime$binding, "allocated")
  # 100 steps: R collects the nodes once 529 231 are allocated.
  mem <- ag_training_memory(spec, 16, quiet = TRUE)
  expect_identical(mem$host_peak, persistent + (56 * 529231 - 17824025))
  expect_identical(unname(fig[c("node_step", "node_once", "node_bytes", "node_headroom",
                                "node_free")]), c(1216, 180665, 56, 529231, 17824025))
  # The nodes count per sample where an op's R code loops over the samples: the fused loss's
  # 16 a sample reach the trigger sooner.
  sce <- ag_dense_stack(c(4, 8, 3), loss = "softmax_cross_entropy")
  short <- function(b) ag_training_memory(sce, b, quiet = TRUE, steps = 20)$host_peak
  expect_identical(short(16) - held(ag_training_memory(sce, 16, quiet = TRUE, steps = 3)),
                   56 * (180665 + 20 * (per_step + 505 + 16 * 16)) - 17824025)
})

test_that("the nodes of the layers measured apart add up to what their runs made", {
  # The nodes a step makes for each op of a model on device "cpu" (Adam), fixed and per sample,
  # from the rules table.
  live <- live_rules_of("cpu", "cpu", "graph", "adam")
  live <- live[live$optimizer %in% c("any", "adam"), ]
  nodes_of <- function(layers, ops = NULL) {
    flat <- agmem:::spec_ops(ag_model_spec(layers))$ops
    if (!is.null(ops)) flat <- flat[flat %in% ops]
    mine <- function(op) !is.na(live$op) & live$op == rules_of(op)
    c(sum(vapply(flat, function(op) sum(live$nodes[mine(op)]), 0)),
      sum(vapply(flat, function(op) sum(live$nodes_sample[mine(op)]), 0)))
  }
  att <- function(heads, causal = FALSE) {
    a <- fake_attention(16, heads)
    nodes_of(list(fake_linear(8, 16, "relu"), if (causal) ag_causal_attention(a) else a,
                  fake_linear(16, 4)), c("attention", "attention_head", "attention_one_head",
                                         "attention_slices", "attention_block",
                                         "attention_concat", "attention_causal"))
  }
  # measurements-nodes.csv: an attention of one head, 16 719 a step and 16 a sample.
  expect_equal(att(1), c(16719, 16))
  # measurements-nodes-layers.csv, over one head (16-8-4 at batches 2 and 64): 2 heads 12 819
  # and 13 811 more, 4 heads 35 999 and 38 975. The fit's residuals are -3 to 11 nodes a run,
  # so a difference of two runs is off by 14 at most.
  over <- function(b2, b64) c(b2 - 2 * (b64 - b2) / 62, (b64 - b2) / 62)
  expect_lte(max(abs(att(2) - att(1) - over(12819, 13811))), 14)
  expect_lte(max(abs(att(4) - att(1) - over(35999, 38975))), 14)
  # Its causal mask, 4 heads: 4 145 and 4 889 more than without.
  expect_lte(max(abs(att(4, TRUE) - att(4) - over(4145, 4889))), 14)
  # A batch norm in eval mode: 5 104 a step (16-8-4 at batch 2), none a sample.
  norm <- fake_layer("ag_batch_norm", list(gamma = fake_tensor(c(16, 1)),
                                           beta = fake_tensor(c(16, 1))))
  norm$training <- FALSE
  bn <- nodes_of(list(fake_linear(8, 16, "relu"), norm, fake_linear(16, 4)), "batch_norm_eval")
  expect_lte(max(abs(bn - c(5104, 0))), 11)
  # A segment run under ag_checkpoint() (measurements-nodes-segments.csv): over the same layers
  # run plainly, 3 578, 5 763 and 8 578 a step for segments of two, three and four relu layers,
  # none a sample; the line fitted to them is off by 211 at most.
  segment <- function(k, checkpointed) {
    layers <- lapply(seq_len(k), function(j) fake_linear(8, 8, "relu"))
    if (checkpointed) layers <- list(do.call(ag_checkpoint_segment, layers))
    nodes_of(c(list(fake_linear(16, 8, "relu")), layers, list(fake_linear(8, 4))))
  }
  for (k in 2:4) {
    more <- segment(k, TRUE) - segment(k, FALSE)
    expect_lte(max(abs(more - c(c(3578, 5763, 8578)[k - 1], 0))), 211)
  }
})

test_that("a whole run's host peak is R's settled trigger as resident memory, worked out by hand", {
  # 256-128-10, adam, batch 16: live at R's collections far below 64 MiB, so R's trigger stays
  # at R_VSIZE (64 MiB); the peak is that heap over the start (6 447 476 B) and what glibc keeps:
  # 22.5 B per parameter and 3.5 per unit and sample (256 + 128 + 10 units).
  small <- ag_dense_stack(c(256, 128, 10))
  mem <- ag_training_memory(small, 16L, quiet = TRUE)
  expect_identical(mem$host_regime$run, "whole run")
  expect_identical(mem$host_regime$trigger, 2^26)
  expect_equal(mem$host_peak, 2^26 - 6447476 + 34186 * 22.5 + 16 * (256 + 128 + 10) * 3.5)
  expect_identical(mem$host_regime$binding, "collector")
  # Live bytes: 34 186 parameters x 37.69 (adam) and the largest tensor's 256 x 128 scalars x
  # 14.28 (its update's temporaries), and per sample 256 x 9.45 (input), 128 x 66.05 (a relu
  # layer: matmul and add) and 10 x (66.05 + 24.21) (the output layer with mse).
  live <- 34186 * 37.69 + 256 * 128 * 14.28 +
    16 * (256 * 9.45 + 128 * 33.02 + 128 * 33.03 + 128 * 0 + 10 * 33.02 + 10 * 33.03 +
            10 * 24.21)
  expect_equal(mem$host_regime$live, live)
  # Data held in R raises the trigger. Made with one copy of itself for a moment (as
  # matrix(rnorm(n), p) makes it), 200 MB of it have R's heap hold 6 447 476 + 4e8 bytes at once:
  # a full collection sets the trigger to that and 0.2 x 64 MiB, then grows it by 640 000 B and a
  # fifth. The run's heap needed (6 447 476 + 2e8 + live + the widest vector + 0.2 x 64 MiB) is
  # under 0.7 of that, so R never grows it: the trigger stays there, and the heap climbs to it.
  data <- ag_training_memory(small, 16L, quiet = TRUE, data_size = "200 MB")
  expect_identical(data$host_regime$data_size, 2e8)
  x <- matrix(0, 1000, 1000)
  from_object <- ag_training_memory(small, 16L, quiet = TRUE, data_size = utils::object.size(x))
  expect_identical(from_object$host_regime$data_size, as.numeric(utils::object.size(x)))
  made <- (6447476 + 2 * 2e8) + 0.2 * 2^26
  expect_equal(data$host_regime$data_trigger, made + (640000 + 0.2 * made))
  expect_identical(data$host_regime$trigger, data$host_regime$data_trigger)
  expect_lt((6447476 + 2e8 + live + 8 * 256 * 128) + 0.2 * 2^26,
            0.7 * data$host_regime$data_trigger)
  expect_gt(data$host_peak, mem$host_peak)
  expect_match(format(data), "R's trigger stays at about 481.11 MiB, where making the data left",
               fixed = TRUE, all = FALSE)
  # 30 MB made so stay within R_VSIZE (6 447 476 + 6e7 bytes): no full collection, no data
  # trigger. At batch 4096 the run's heap needed passes R_VSIZE, so the trigger ends in its
  # range, from needed / 0.7 to 1.2 times that plus 640 000 B, at 0.2433 of it (trigger_place):
  # the widest vector is the input's 4096 x 256 doubles, and every point of the error around the
  # live bytes passes R_VSIZE too, where the place is a line in needed, so the expected trigger
  # is the line's value.
  wide <- ag_training_memory(small, 4096L, quiet = TRUE, data_size = 3e7)
  expect_identical(wide$host_regime$data_trigger, NA_real_)
  bottom <- (6447476 + 3e7 + wide$host_regime$live + 8 * 4096 * 256 + 0.2 * 2^26) / 0.7
  expect_equal(wide$host_regime$trigger, bottom + 0.2433 * (0.2 * bottom + 640000))
  # A run too short to fill the heap peaks at what it allocates; 3 steps are the few steps'.
  expect_identical(ag_training_memory(small, 16L, quiet = TRUE, steps = 3)$host_regime$run,
                   "few steps")
  four <- ag_training_memory(small, 16L, quiet = TRUE, steps = 4)
  expect_identical(four$host_regime$binding, "allocated")
  expect_identical(four$host_peak, four$host_regime$allocated)
  # Longer runs never peak lower.
  peaks <- vapply(c(4, 10, 100, 1e4), function(s) {
    ag_training_memory(small, 16L, quiet = TRUE, steps = s)$host_peak
  }, 0)
  expect_false(is.unsorted(peaks))
  # The report says what run it is for.
  expect_match(format(mem), "a run of 100 steps, 0 B of data held in R", fixed = TRUE, all = FALSE)
})

test_that("steps and data_size are checked, and refused where they do not apply", {
  for (bad in list(0, 2.5, -1, NA, Inf, "100", c(1, 2), 1e13)) {
    expect_agmem_error(ag_training_memory(mlp, 32L, quiet = TRUE, steps = bad), "`steps`",
                       class = "agmem_error_argument")
  }
  for (bad in list(-1, NA, "2 Gb", c(1, 2), NULL)) {
    expect_agmem_error(ag_training_memory(mlp, 32L, quiet = TRUE, data_size = bad),
                       "`data_size`", class = "agmem_error_argument")
  }
  shapes <- ag_dense_shapes(c(784, 512, 10))
  expect_agmem_error(ag_max_batch_size(shapes, "1 GiB", steps = 10), "`steps` applies to a model",
                     class = "agmem_error_argument")
  expect_agmem_error(ag_memory_sweep(shapes, 32, data_size = 1e6), "`data_size` applies",
                     class = "agmem_error_argument")
  # The planners plan on the run they are given: more data held in R, a smaller batch.
  expect_gt(ag_max_batch_size(mlp, "192 MiB"), ag_max_batch_size(mlp, "192 MiB",
                                                                 data_size = "60 MB"))
  # The .Call entries check the run vector.
  flat <- agmem:::spec_ops(mlp)
  na3 <- rep(NA_real_, 3L)
  for (run in list(c(100, 0), c(100, 0, 0), c("100", "0", "0", NA, NA, NA),
                   c(100, 0.5, 0, na3), c(100, 0, -1, na3), c(0, 0, 0, na3),
                   c(100, 0, 0, 262143, NA, NA), c(100, 0, 0, Inf, NA, NA),
                   c(100, 0, 0, NaN, NA, NA), c(100, 0, 0, NA, 0.34, NA),
                   c(100, 0, 0, NA, 0.76, NA), c(100, 0, 0, NA, NA, -0.01),
                   c(100, 0, 0, NA, NA, 0.81))) {
    expect_agmem_error(.Call(agmem:::agmem_training_memory, mlp$shapes, flat$units, flat$ops, 32L,
                             "adam", "cpu", "f32", run), class = "agmem_error_argument")
    expect_agmem_error(.Call(agmem:::agmem_max_batch_model, mlp$shapes, flat$units, flat$ops,
                             "adam", "cpu", "f32", run, 1e9), class = "agmem_error_argument")
  }
})
