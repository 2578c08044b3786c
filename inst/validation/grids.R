# grids.R: the configurations the validation measures.
#
# grid_fit() is what the rule figures of src/rules.c are fitted on; grid_holdout() is what the
# goal is judged on, drawn with another seed and with no configuration in common with the fit
# grid; grid_large() is a second holdout of large batches and models; grid_subset() is the part
# of the holdout grid CI runs (a few minutes on 2 cores).
# A configuration is: widths (input first, "-"-separated), batch, optimizer, activation, loss and
# device. Each is kept under ~1.5 GB of host memory and ~6e8 parameter-samples of work (about
# 3 s of reference BLAS per three steps).

grid_widths <- c(64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048)
grid_outputs <- c(1, 10, 64, 256, 1024)
grid_inputs <- c(grid_widths, 784)
grid_batches <- 2^(0:11)

# n configurations drawn with seed: balanced over device, optimizer, activation and loss, with
# random widths (1 to 6 layers), input and output widths and a batch from `batches`, rejecting
# what is too big (more than max_work parameter-samples, or about 1.2 GB of host memory).
draw_grid <- function(n, seed, exclude = character(0), batches = grid_batches, max_work = 6e8) {
  set.seed(seed)
  levels <- expand.grid(optimizer = c("adam", "sgd", "sgd_plain"),
                        activation = c("relu", "sigmoid", "tanh", "none"),
                        loss = c("mse", "cross_entropy", "softmax_cross_entropy"),
                        stringsAsFactors = FALSE)
  rows <- vector("list", n)
  keys <- exclude
  i <- 0L
  while (i < n) {
    lv <- levels[sample.int(nrow(levels), 1L), ]
    device <- if (i %% 3L == 2L) "gpu" else "cpu"
    layers <- sample.int(6L, 1L)
    hidden <- sample(grid_widths, layers - 1L, replace = TRUE)
    input <- sample(grid_inputs, 1L)
    output <- if (stats::runif(1) < 0.5) sample(grid_outputs, 1L) else sample(grid_widths, 1L)
    widths <- c(input, hidden, output)
    batch <- sample(batches, 1L)
    params <- sum(widths[-length(widths)] * widths[-1L] + widths[-1L])
    units <- sum(widths) * batch
    if (params * batch > max_work || 110 * params + 400 * units > 1.2e9 || params < 64) next
    key <- config_key(paste(widths, collapse = "-"), batch, lv$optimizer, lv$activation,
                      lv$loss, device)
    if (key %in% keys) next
    keys <- c(keys, key)
    i <- i + 1L
    rows[[i]] <- data.frame(widths = paste(widths, collapse = "-"), batch = batch,
                            optimizer = lv$optimizer, activation = lv$activation,
                            loss = lv$loss, device = device, stringsAsFactors = FALSE)
  }
  do.call(rbind, rows)
}

config_key <- function(widths, batch, optimizer, activation, loss, device) {
  paste(widths, batch, optimizer, activation, loss, device, sep = "|")
}
grid_keys <- function(g) {
  config_key(g$widths, g$batch, g$optimizer, g$activation, g$loss, g$device)
}

grid_fit <- function() draw_grid(240L, 20261203L)
grid_holdout <- function() draw_grid(150L, 777L, exclude = grid_keys(grid_fit()))

# A second holdout of large batches (256 to 2048) and up to 4e9 parameter-samples of work
# (about 20 s each): where the fit grid, capped at 6e8, has few configurations.
grid_large <- function() {
  draw_grid(45L, 4242L, exclude = c(grid_keys(grid_fit()), grid_keys(grid_holdout())),
            batches = 2^(8:11), max_work = 4e9)
}

# The CI subset: the 100 holdout configurations of least work (parameters x batch), which
# cover every optimizer, activation, loss and device; a few minutes on 2 cores.
grid_subset <- function() {
  h <- grid_holdout()
  w <- lapply(strsplit(h$widths, "-", fixed = TRUE), as.numeric)
  work <- vapply(w, function(x) sum(x[-length(x)] * x[-1L]), numeric(1)) * h$batch
  h[sort(order(work)[seq_len(min(nrow(h), 100L))]), ]
}

# The configurations of g run in resident mode, ag_device("gpu") (measure-long.R --device=gpu).
resident <- function(g) cbind(g, device = "gpu", stringsAsFactors = FALSE)

# ---- long runs (measure-long.R): the whole training loop, 100 steps ----
#
# A configuration: widths, batch, optimizer, activation, loss and variant (how the step gets
# the gradients), all on device "cpu". Drawn over widths 64 to 2048, 1 to 8 linear layers,
# batches 1 to 4096, adam, sgd and sgd_plain, softmax cross-entropy and mse; each kept under
# 4e7 parameter-samples per step (about 15 s for 100 steps of reference BLAS) and about 1.5 GB.
# The batch is drawn first, evenly over its powers of 2; the model is redrawn until it fits.
draw_long_grid <- function(n, seed, exclude = character(0), batches = 2^(0:12), max_work = 4e7) {
  set.seed(seed)
  long_widths <- c(64, 128, 256, 384, 512, 768, 1024, 1536, 2048)
  rows <- vector("list", n)
  keys <- exclude
  i <- 0L
  draw_batch <- function() batches[[sample.int(length(batches), 1L)]]
  batch <- draw_batch()
  while (i < n) {
    layers <- sample.int(8L, 1L)
    widths <- c(sample(c(long_widths, 784), 1L), sample(long_widths, layers - 1L, TRUE),
                sample(c(10, long_widths), 1L))
    optimizer <- sample(c("adam", "sgd", "sgd_plain"), 1L)
    loss <- sample(c("softmax_cross_entropy", "mse"), 1L)
    activation <- sample(c("relu", "relu", "tanh"), 1L)
    variant <- if (stats::runif(1) < 0.75) "grads" else "field"
    params <- sum(widths[-length(widths)] * widths[-1L] + widths[-1L])
    if (params * batch > max_work || 120 * params + 300 * sum(widths) * batch > 1.5e9) next
    key <- paste(paste(widths, collapse = "-"), batch, optimizer, activation, loss, variant,
                 sep = "|")
    if (key %in% keys) next
    keys <- c(keys, key)
    i <- i + 1L
    batch_i <- batch
    batch <- draw_batch()
    rows[[i]] <- data.frame(widths = paste(widths, collapse = "-"), batch = batch_i,
                            optimizer = optimizer, activation = activation, loss = loss,
                            variant = variant, stringsAsFactors = FALSE)
  }
  do.call(rbind, rows)
}
long_keys <- function(g) {
  paste(g$widths, g$batch, g$optimizer, g$activation, g$loss, g$variant, sep = "|")
}
# The long grids are four draws. Seeds 1501 and 1502 (60 runs each) are the first fit and the
# first holdout, which became fit data once the model was revised after seeing it; seed 1503 (60)
# is the holdout. Seed 1504 (16 runs) covers where the planners work: batches of 256 to 2048 on
# models of up to 1.2e9 parameter-samples per step (a minute or more per run), which the other
# draws leave out; its first half joins the fit, its second half the holdout.
# Each exclusion is an argument that draws again when draw_long_grid() reads it, after its own
# set.seed(): the later draws continue the random stream of the draws they exclude. That is how
# the measured grids were drawn, and it is kept so that these functions give them again.
long_draws <- function() {
  d1 <- draw_long_grid(60L, 1501L)
  d2 <- draw_long_grid(60L, 1502L, exclude = long_keys(draw_long_grid(60L, 1501L)))
  first_fit <- function() {
    first <- draw_long_grid(60L, 1501L)
    rbind(first, draw_long_grid(60L, 1502L, exclude = long_keys(first)))
  }
  d3 <- draw_long_grid(60L, 1503L, exclude = long_keys(first_fit()))
  d4 <- draw_long_grid(
    16L, 1504L,
    exclude = c(long_keys(first_fit()),
                long_keys(draw_long_grid(60L, 1503L, exclude = long_keys(first_fit())))),
    batches = 2^(8:11), max_work = 1.2e9
  )
  list(d1 = d1, d2 = d2, d3 = d3, d4 = d4)
}
grid_long_fit <- function() {
  d <- long_draws()
  rbind(d$d1, d$d2, d$d4[1:8, ])
}
grid_long_holdout <- function() {
  d <- long_draws()
  rbind(d$d3, d$d4[9:16, ])
}

# The CI subset of the long holdout: its 30 configurations of least work (parameters x batch),
# a few minutes.
grid_long_subset <- function() {
  h <- grid_long_holdout()
  w <- lapply(strsplit(h$widths, "-", fixed = TRUE), as.numeric)
  work <- vapply(w, function(x) sum(x[-length(x)] * x[-1L]), numeric(1)) * h$batch
  h[sort(order(work)[seq_len(min(nrow(h), 30L))]), ]
}

# ---- layers (measure-long.R --after): batch norm, dropout and layer norm, 100 steps ----
#
# The fit grid pairs each of ten dense stacks with itself followed, after each hidden layer, by
# ag_batch_norm(), by ag_dropout(0.3), by ag_layer_norm() and by none: the difference of a pair
# is what the layers cost, whatever the dense stack's own figures. Chosen by hand to span
# widths 128 to 1024, batches 8 to 512, the three optimizers and both losses, each under 5.2e7
# parameter-samples per step. The holdout grid is twelve other models, with these layers alone
# and combined (ggmlR's autograd vignette puts batch norm and dropout after a hidden layer), on
# widths, batches and optimizers the fit grid does not have.
grid_layers_fit <- function() {
  base <- data.frame(
    widths = c("256-512-512-10", "256-512-512-10", "784-256-256-10", "784-256-256-10",
               "128-1024-1024-1", "128-1024-1024-1", "512-128-128-128-10", "512-128-128-128-10",
               "64-256-256-10", "64-256-256-10"),
    batch = c(32, 128, 48, 160, 8, 32, 100, 500, 64, 512),
    optimizer = rep(c("adam", "sgd", "adam", "sgd_plain", "sgd"), each = 2L),
    activation = rep(c("relu", "relu", "relu", "tanh", "relu"), each = 2L),
    loss = rep(c("softmax_cross_entropy", "softmax_cross_entropy", "mse",
                 "softmax_cross_entropy", "mse"), each = 2L),
    variant = "grads", stringsAsFactors = FALSE
  )
  after <- c("none", "batch_norm", "dropout", "layer_norm")
  g <- base[rep(seq_len(nrow(base)), each = length(after)), ]
  g$after <- rep(after, times = nrow(base))
  rownames(g) <- NULL
  g
}
# A batch norm in eval mode (ag_eval(): a frozen batch norm, its running statistics in place of
# the batch's): the same ten stacks, alone and with it after each hidden layer, measured together.
grid_layers_eval_fit <- function() {
  g <- grid_layers_fit()
  g <- g[g$after == "none", ]
  g <- g[rep(seq_len(nrow(g)), each = 2L), ]
  g$after <- rep(c("none", "batch_norm_eval"), length.out = nrow(g))
  rownames(g) <- NULL
  g
}
# On device "gpu" (three steps, validate.R), the fit grid and four small stacks more, whose
# host peaks end before R's first collection, where the bytes allocated per step show.
grid_layers_fit_gpu <- function() {
  small <- data.frame(
    widths = c("64-256-256-10", "512-128-128-128-10", "784-256-256-10", "256-512-512-10"),
    batch = c(16, 24, 12, 8), optimizer = c("sgd", "sgd_plain", "sgd", "adam"),
    activation = c("relu", "tanh", "relu", "relu"),
    loss = c("mse", "softmax_cross_entropy", "softmax_cross_entropy", "softmax_cross_entropy"),
    variant = "grads", stringsAsFactors = FALSE
  )
  after <- c("none", "batch_norm", "dropout", "layer_norm")
  g <- small[rep(seq_len(nrow(small)), each = length(after)), ]
  g$after <- rep(after, times = nrow(small))
  g <- rbind(grid_layers_fit(), g)
  rownames(g) <- NULL
  resident(g)
}
# A dropout alone in resident mode (ag_device("gpu")): its backward stays the graph's, so the
# host takes device "gpu"'s whole-run figures. The fit grid's ten stacks and two wider ones
# (a million unit-samples and more, where the mask's bytes stand out of the host's noise), each
# alone and with ag_dropout(0.3) after each hidden layer, 100 steps and one more under
# gctorture() (fit-layers.R).
grid_layers_dropout_gpu <- function() {
  g <- grid_layers_fit()
  g <- g[g$after %in% c("none", "dropout"), c("widths", "batch", "optimizer", "activation",
                                               "loss", "variant", "after")]
  wide <- data.frame(widths = rep(c("256-1024-1024-10", "64-2048-10"), each = 2L),
                     batch = rep(c(256, 1024), each = 2L),
                     optimizer = rep(c("adam", "sgd"), each = 2L), activation = "relu",
                     loss = rep(c("softmax_cross_entropy", "mse"), each = 2L),
                     variant = "grads", after = c("none", "dropout"), stringsAsFactors = FALSE)
  g <- rbind(g, wide)
  rownames(g) <- NULL
  resident(g)
}
# The host path in resident mode (ag_device("gpu")): a batch norm or a layer norm sends
# backward() to the host, where the step runs in R as on device "cpu" but the weights and Adam's
# moments stay on the device. The layers' fit grid's rows with either layer, 100 steps and one
# more under gctorture(): what the host path's own figures are fitted on (fit-layers.R).
grid_layers_host_gpu <- function() {
  g <- grid_layers_fit()
  g <- g[g$after %in% c("batch_norm", "layer_norm"), ]
  rownames(g) <- NULL
  resident(g)
}
grid_layers_holdout <- function() {
  data.frame(
    widths = c("784-512-256-10", "784-512-256-10", "1024-768-768-10", "300-2048-10",
               "64-256-256-256-2", "64-256-256-256-2", "512-384-384-10", "200-1000-500-50",
               "96-64-64-64-64-8", "128-2048-10", "784-128-64-10", "32-512-512-512-4"),
    batch = c(64, 16, 24, 64, 384, 96, 120, 64, 2048, 160, 400, 96),
    optimizer = c("adam", "adam", "sgd", "adam", "sgd", "sgd", "adam", "sgd_plain", "adam",
                  "adam", "sgd", "sgd_plain"),
    activation = c("relu", "relu", "relu", "relu", "relu", "relu", "tanh", "relu", "relu",
                   "relu", "relu", "relu"),
    loss = c("softmax_cross_entropy", "softmax_cross_entropy", "softmax_cross_entropy",
             "softmax_cross_entropy", "mse", "mse", "softmax_cross_entropy",
             "softmax_cross_entropy", "mse", "softmax_cross_entropy", "softmax_cross_entropy",
             "mse"),
    variant = "grads",
    after = c("batch_norm+dropout", "batch_norm+dropout", "layer_norm", "dropout", "batch_norm",
              "batch_norm", "layer_norm+dropout", "batch_norm", "dropout",
              "batch_norm+dropout+layer_norm", "batch_norm+dropout", "layer_norm"),
    stringsAsFactors = FALSE
  )
}

# The long fit grid in resident mode (ag_device("gpu")): what the host's figures of the graph
# backward on device "gpu" are fitted on (fit-long.R --device=gpu).
grid_long_fit_gpu <- function() {
  resident(grid_long_fit())
}

# The host's allocation in resident mode (agmem_host_rules of src/rules.c, fitted by fit-long.R):
# the long fit grid with ag_device("gpu"), each configuration run for 3 and for 8 steps with R's
# triggers out of reach (R_VSIZE of 8 GB and R_NSIZE of 40 million nodes, under R's 50 million
# limit, set in the run's environment), so that nothing is collected and gc()'s "max used" over
# the baseline is what the run allocated.
grid_host_alloc_gpu <- function() host_alloc_runs(grid_long_fit_gpu())
# Each configuration of g run for 3 and for 8 steps with R's triggers out of reach.
host_alloc_runs <- function(g) {
  g <- once_each(g, "steps", c(3, 8))
  g$collector <- "R_VSIZE:8G;R_NSIZE:40000000"
  g
}

# The same for the ops of the layers' grids whose backward stays the graph's in resident mode
# and that the long fit grid does not have (agmem_host_rules' rows for them, fitted by
# fit-long.R): each run of grid_layers_dropout_gpu() with its dropout, the sigmoid stacks of
# grid_activations_fit(), the softmax stacks of grid_activations_softmax() and the
# cross-entropy's wide stacks of grid_activations_wide(), on ag_device("gpu"), 3 and 8 steps;
# then, measured after them, the attentions of grid_attention_fit_gpu(), with and without the
# causal mask (grid_attention_causal_gpu()), and the flash blocks of grid_flash_fit_gpu().
grid_host_alloc_layers_gpu <- function() {
  cols <- c("widths", "batch", "optimizer", "activation", "loss", "variant", "after", "heads")
  drop <- grid_layers_dropout_gpu()
  act <- grid_activations_fit()
  soft <- grid_activations_softmax()
  wide <- grid_activations_wide()
  plain <- cols[-length(cols)]
  dense <- rbind(drop[drop$after == "dropout", plain], act[act$activation == "sigmoid", plain],
                 soft[soft$activation == "softmax", plain],
                 wide[wide$loss == "cross_entropy", plain])
  dense$heads <- 1
  attn <- grid_attention_fit_gpu()
  flash <- grid_flash_fit_gpu()
  heads <- rbind(attn[attn$after == "attention", cols], grid_attention_causal_gpu()[, cols],
                 flash[flash$after != "none", cols])
  g <- rbind(host_alloc_runs(resident(dense[, cols])), host_alloc_runs(resident(heads)))
  rownames(g) <- NULL
  g
}

# The step's largest live heap in resident mode (--torture=true): a step under gctorture() takes
# a minute there (the graph's R objects), so every fourth configuration of the fit grid.
grid_step_max_gpu <- function() grid_long_fit_gpu()[seq(1L, 128L, by = 4L), ]

# The long holdout in resident mode (ag_device("gpu")): dense stacks, whose backward is the
# graph's, judged on the host (the RSS growth less the device pools) and on the pools.
grid_long_holdout_gpu <- function() {
  resident(grid_long_holdout())
}

# The layers' holdout in resident mode (ag_device("gpu")): a batch norm or a layer norm sends
# backward() to the host, a dropout alone keeps the graph backward (issue 16).
grid_layers_holdout_gpu <- function() {
  resident(grid_layers_holdout())
}

# Held out for a dropout alone in resident mode: the layers' holdout stacks with ag_dropout(0.3)
# after each hidden layer in place of their layers (two of them have just that already).
grid_layers_dropout_holdout_gpu <- function() {
  g <- grid_layers_holdout_gpu()
  g$after <- "dropout"
  g
}

# Held out for a batch norm in eval mode: four models of the layers' holdout, with a frozen batch
# norm in place of the batch norm, alone and with dropout.
grid_layers_eval_holdout <- function() {
  g <- grid_layers_holdout()[c(1L, 5L, 8L, 11L), ]
  g$after <- sub("batch_norm", "batch_norm_eval", g$after, fixed = TRUE)
  rownames(g) <- NULL
  g
}

# The same in resident mode: a batch norm in eval mode keeps its backward on the host, as in
# training mode.
grid_layers_eval_holdout_gpu <- function() {
  resident(grid_layers_eval_holdout())
}

# ---- embeddings (measure-long.R --embed): ag_embedding() first, 100 steps ----
#
# Pairs: each dense stack trained on dense inputs of its first width, and the same stack after
# an ag_embedding(V, first width) trained on token indices, with a vocabulary V of 64 and of 4096,
# for each optimizer: the vocabulary separates what the embedding's table costs per parameter
# from what its output costs per unit and sample.
grid_embed_fit <- function() {
  base <- expand.grid(widths = c("256-128-10", "128-256-1"),
                      optimizer = c("adam", "sgd", "sgd_plain"), stringsAsFactors = FALSE)
  base$loss <- ifelse(base$widths == "128-256-1", "mse", "softmax_cross_entropy")
  base$batch <- 128
  big <- data.frame(widths = "256-128-10", optimizer = "adam", loss = "softmax_cross_entropy",
                    batch = 1024, stringsAsFactors = FALSE)
  g <- rbind(
    cbind(base[rep(seq_len(nrow(base)), each = 3L), ], embed = rep(c(0, 64, 4096), nrow(base))),
    cbind(big[c(1L, 1L), ], embed = c(0, 64))
  )
  g$activation <- "relu"
  g$variant <- "grads"
  rownames(g) <- NULL
  g
}
grid_embed_holdout <- function() {
  data.frame(widths = c("512-256-10", "64-512-512-10", "300-128-1", "128-1024-10"),
             batch = c(64, 256, 512, 32), optimizer = c("adam", "sgd", "sgd_plain", "adam"),
             loss = c("softmax_cross_entropy", "softmax_cross_entropy", "mse",
                      "softmax_cross_entropy"),
             embed = c(2000, 10000, 1000, 30000), activation = "relu", variant = "grads",
             stringsAsFactors = FALSE)
}
# The embedding in resident mode (ag_device("gpu")): its fit grid's pairs, to check the pools
# and the host against the rules (nothing is fitted on them), and the held-out models.
grid_embed_fit_gpu <- function() {
  resident(grid_embed_fit())
}
grid_embed_holdout_gpu <- function() {
  resident(grid_embed_holdout())
}
# Three steps (validate.R): pairs that end before R's first collection, over vocabularies and
# batches that tell the table from the lookup, and four that end after it.
grid_embed_three <- function() {
  small <- expand.grid(embed = c(0, 64, 1024), batch = c(32, 256),
                       optimizer = c("adam", "sgd", "sgd_plain"), stringsAsFactors = FALSE)
  small$widths <- "256-128-10"
  small$loss <- "softmax_cross_entropy"
  mse <- expand.grid(embed = c(0, 64, 1024), batch = c(32, 256), optimizer = "adam",
                     stringsAsFactors = FALSE)
  mse$widths <- "128-256-1"
  mse$loss <- "mse"
  big <- data.frame(
    embed = c(0, 4096, 0, 4096, 0, 8192, 0, 2048, 0, 1024),
    batch = c(3072, 3072, 2048, 2048, 4096, 4096, 3072, 3072, 2048, 2048),
    optimizer = rep(c("adam", "sgd", "sgd_plain", "adam", "sgd"), each = 2L),
    widths = rep(c("256-128-10", "128-256-1", "256-128-10", "128-256-1", "512-256-10"),
                 each = 2L),
    loss = rep(c("softmax_cross_entropy", "mse", "softmax_cross_entropy", "mse",
                 "softmax_cross_entropy"), each = 2L),
    stringsAsFactors = FALSE
  )
  g <- rbind(small, mse, big)
  g$activation <- "relu"
  g$variant <- "grads"
  g$device <- "cpu"
  g
}

# ---- attention (measure-long.R --after=attention --heads): 100 steps ----
#
# Pairs: a dense stack alone and with an ag_multihead_attention() after its hidden layer, of 1 and
# of 4 heads, at batches 64, 256 and 512 (the batch is the attention's sequence), each run with
# one step more under gctorture(): the head counts and the batches separate what grows with the
# units from what grows with the heads and the square of the sequence. A second stack
# (64-128-128-1, sgd, attention of 2 and 8 heads) was begun too, but a step under gctorture()
# with 8 heads took over 4 minutes at batch 64 (R collects before each of the softmax's
# allocations): it is in the holdout instead, without gctorture().
grid_attention_fit <- function() attention_pairs("128-256-10", c(64, 256, 512), c(1, 4))

# A stack of `widths` at each of `batches`, alone and with an attention after its hidden layer
# of each head count of `heads` (Adam, softmax cross-entropy, relu).
attention_pairs <- function(widths, batches, heads) {
  base <- data.frame(widths = widths, batch = batches, optimizer = "adam",
                     loss = "softmax_cross_entropy", stringsAsFactors = FALSE)
  per <- 1L + length(heads)
  g <- base[rep(seq_len(nrow(base)), each = per), ]
  g$after <- rep(c("none", rep("attention", length(heads))), nrow(base))
  g$heads <- rep(c(1, heads), nrow(base))
  g$activation <- "relu"
  g$variant <- "grads"
  rownames(g) <- NULL
  g
}
# And a wider attention (d_model 512, twice the fit grid's), so that the slices' term, which
# grows with d_model squared, is told apart from the projections' (d_model per sample): a
# 64-512-10 stack alone and with an attention of 1 and 2 heads, at batches 64 and 256, with one
# step more under gctorture() (measurements-attention-wide.csv; validate.R gives its three-step
# runs and measure-alloc.R its allocations).
grid_attention_wide <- function() attention_pairs("64-512-10", c(64, 256), c(1, 2))
# And more heads than those two grids have (8 and 16), so that the per-head terms are not fitted
# on 1 to 4 heads alone: the fit grid's stack with 8 heads at batches 64 and 256 and 16 at 128,
# the wider stack with 8 heads at 64 and 128, each alone and with the attention, 100 steps and
# one more under gctorture() (measurements-attention-heads.csv).
grid_attention_heads <- function() {
  rbind(attention_pairs("128-256-10", c(64, 256), 8), attention_pairs("128-256-10", 128, 16),
        attention_pairs("64-512-10", c(64, 128), 8))
}
# And the other optimizers, as the fit grids train every attention with Adam: both stacks, each
# alone and with an attention (4 heads at batch 256, and 2 at 128), with SGD and with SGD
# without momentum, 100 steps and one more under gctorture() (measurements-attention-optim.csv).
grid_attention_optim <- function() {
  g <- rbind(attention_pairs("128-256-10", 256, 4), attention_pairs("64-512-10", 128, 2))
  g <- g[rep(seq_len(nrow(g)), 2L), ]
  g$optimizer <- rep(c("sgd", "sgd_plain"), each = nrow(g) / 2L)
  rownames(g) <- NULL
  g
}
# Held out: other stacks, head counts, batches and optimizers, attention alone and with layer
# norm (a transformer block's pair), and the second stack above.
grid_attention_holdout <- function() {
  data.frame(widths = c("256-512-10", "96-192-192-4", "512-128-10", "64-256-2", "64-128-128-1",
                        "64-128-128-1"),
             batch = c(128, 384, 768, 192, 256, 512),
             optimizer = c("sgd_plain", "adam", "sgd", "adam", "sgd", "sgd"),
             loss = c("softmax_cross_entropy", "mse", "softmax_cross_entropy", "mse", "mse",
                      "mse"),
             after = c("attention", "attention+layer_norm", "attention", "layer_norm+attention",
                       "attention", "attention"),
             heads = c(8, 3, 2, 4, 8, 2), activation = "relu", variant = "grads",
             stringsAsFactors = FALSE)
}

# The attentions in resident mode (ag_device("gpu")): the fit grid and its wider stack, each stack
# alone and with an attention after its hidden layer, and the flash blocks' fit grid (100 steps
# each; a step under gctorture() takes minutes there), fitted by fit-layers.R on the host; and
# the held-out models, with the causal mask and the attention's dropout on two of them each.
grid_attention_fit_gpu <- function() {
  g <- rbind(grid_attention_fit(), grid_attention_wide())
  resident(g)
}
# Their pools, three steps each (validate.R --grid=attention_pools_gpu, measure-one.R): three
# stacks at batches 64, 128 and 256, alone and with an attention of 1, 2 and 4 heads (with its
# causal mask and its dropout at 1 and 4) or a flash block of 1 and 4 heads (with the mask at 4),
# each optimizer of two; and, with a layer norm after the hidden layer (backward() then runs on
# the host), two stacks at batches 64 and 256 with the same layers. fit-layers.R reads the pass
# pool's growth off them, to the byte.
grid_attention_pools_gpu <- function() {
  after <- c("none", rep("attention", 3), rep(c("attention_causal", "attention_dropout"), 2),
             "flash", "flash", "flash_causal")
  heads <- c(1, 1, 2, 4, 1, 1, 4, 4, 1, 4, 4)
  graph <- expand.grid(k = seq_along(after), optimizer = c("adam", "sgd"),
                       batch = c(64, 128, 256),
                       widths = c("128-256-10", "64-512-10", "64-128-10"),
                       stringsAsFactors = FALSE)
  graph$after <- after[graph$k]
  graph$heads <- heads[graph$k]
  host_after <- c("layer_norm", paste0("layer_norm+", c("attention", "attention", "attention",
                                                        "attention_causal", "attention_dropout",
                                                        "flash", "flash_causal")))
  host_heads <- c(1, 1, 2, 4, 4, 4, 4, 4)
  host <- expand.grid(k = seq_along(host_after), optimizer = "sgd", batch = c(64, 256),
                      widths = c("128-256-10", "64-512-10"), stringsAsFactors = FALSE)
  host$after <- host_after[host$k]
  host$heads <- host_heads[host$k]
  g <- rbind(graph, host)
  g$k <- NULL
  cbind(g, activation = "relu", loss = "softmax_cross_entropy", device = "gpu",
        stringsAsFactors = FALSE)
}
# The causal mask in resident mode: the fit grid's attentions with the mask (measure-alloc.R
# pairs them with the attentions of grid_attention_fit_gpu()).
grid_attention_causal_gpu <- function() {
  g <- grid_attention_fit_gpu()
  g <- g[g$after == "attention", ]
  g$after <- "attention_causal"
  rownames(g) <- NULL
  g
}
# The attentions on the host path in resident mode (a layer norm before them: backward() then
# runs in R): the attentions' fit grid in resident mode with a layer norm after the hidden layer
# of every run (the stack with the layer norm alone is each group's pair), and the fit grid's
# stack with the causal mask of 4 heads at each batch; and the flash blocks' fit grid in resident
# mode the same way; 100 steps each. fit-layers.R fits their own figures on the host path on them.
after_layer_norm <- function(g) {
  g$after <- ifelse(g$after == "none", "layer_norm", paste0("layer_norm+", g$after))
  rownames(g) <- NULL
  g
}
grid_attention_host_gpu <- function() {
  g <- grid_attention_fit_gpu()
  causal <- g[g$widths == "128-256-10" & g$heads == 4, ]
  causal$after <- "attention_causal"
  after_layer_norm(rbind(g, causal))
}
grid_flash_fit_gpu <- function() {
  resident(grid_flash_fit())
}
grid_flash_host_gpu <- function() after_layer_norm(grid_flash_fit_gpu())
grid_attention_holdout_gpu <- function() {
  g <- grid_attention_holdout()
  g$after[c(2L, 5L)] <- sub("attention", "attention_causal", g$after[c(2L, 5L)], fixed = TRUE)
  g$after[c(3L, 6L)] <- sub("attention", "attention_dropout", g$after[c(3L, 6L)], fixed = TRUE)
  resident(g)
}

# Attention dropout (measure-long.R --after=attention_dropout: ag_multihead_attention(dropout =
# 0.1)): its rule is ag_dropout()'s, counted on each head's pairs (the same code, R/ag_layers.R
# of ggmlR 0.8.8.1, lines 750-758 against 184-188), so nothing is fitted on these: each run
# is a configuration of the attention grids with the dropout on, and the two rows at batch 256
# and 512 of the fit grid's stack are their pairs.
# And its parts: the fit grid's stack with an attention of 1 and 4 heads at batches 256 and 512,
# with its dropout and without, each for 5 steps and one more under gctorture() (validate-long.R
# --steps=5 --torture=true): what a pair differs by in the step's largest live heap, per pair of
# samples and head, against ag_dropout()'s `step_max` (fit-layers.R).
grid_attention_dropout_step <- function() {
  data.frame(widths = "128-256-10", batch = rep(c(256, 512), each = 4L), optimizer = "adam",
             loss = "softmax_cross_entropy", after = rep(c("attention", "attention_dropout"), 4L),
             heads = rep(c(1, 1, 4, 4), 2L), activation = "relu", variant = "grads",
             stringsAsFactors = FALSE)
}
grid_attention_dropout_holdout <- function() {
  fit <- grid_attention_fit()
  fit <- fit[fit$after == "attention", ]
  g <- rbind(fit[fit$batch == 256 & fit$heads == 4, ], fit[fit$batch == 512 & fit$heads == 1, ],
             grid_attention_holdout()[c(2L, 4L, 5L, 3L), names(fit)])
  g$after <- sub("attention", "attention_dropout", g$after, fixed = TRUE)
  rownames(g) <- NULL
  g
}

# A causal mask (measure-long.R --after=attention_causal: the attention called with
# causal_mask = TRUE by a module of its own, described to agmem by ag_causal_attention()).
# Fit: the attention fit grid's attentions, each with the mask and without, in one session,
# 100 steps and one more under gctorture(): what a pair differs by, per head and pair of samples,
# gives the mask's rules (fit-layers.R). Held out: the attention holdout with the mask on.
grid_attention_causal_fit <- function() {
  fit <- grid_attention_fit()
  fit <- fit[fit$after == "attention", ]
  causal <- fit
  causal$after <- "attention_causal"
  g <- rbind(fit, causal)
  rownames(g) <- NULL
  g
}
grid_attention_causal_holdout <- function() {
  g <- grid_attention_holdout()
  g$after <- sub("attention", "attention_causal", g$after, fixed = TRUE)
  g
}

# ggmlR's fused ag_flash_attention() in a block of its own (measure-long.R --after=flash: three
# ag_linear(w, w) projections, the call, an ag_linear(w, w) after it; flash_causal with
# causal = TRUE), described to agmem by its layers and ag_flash_attention_call(). Fit: the
# attention fit grid's stack alone and with a flash block of 1 and 4 heads, and of 4 heads with
# the causal mask, at batches 64, 256 and 512 (its sequence); and a narrower stack with sgd
# (32-128-10, 2 heads) at 384 and 1024, whose runs collect in full often enough to give the
# live bytes; each 100 steps and one more under gctorture() (fit-layers.R). Held out: other
# stacks, heads, batches and optimizers.
grid_flash_fit <- function() {
  g <- attention_pairs("128-256-10", c(64, 256, 512), c(1, 4, 4))
  g$after[seq(4L, nrow(g), by = 4L)] <- "flash_causal"
  narrow <- attention_pairs("32-128-10", c(384, 1024), 2)
  narrow$optimizer <- "sgd"
  g <- rbind(g, narrow)
  g$after <- sub("^attention$", "flash", g$after)
  g
}
# The runs of grid_flash_fit() measured after its first twelve.
grid_flash_fit_narrow <- function() grid_flash_fit()[-(1:12), ]
# More of the call's fit, as the fit grid's two stacks gave its live bytes from three pairs only:
# eight stacks alone and with a flash block (d_model 64 to 512, 2 to 8 heads, each optimizer,
# sequences of 160 to 2048) at batches whose runs collect in full, 100 steps and one more under
# gctorture() (validate-long.R --grid=flash_fit_wide --torture=true).
grid_flash_fit_wide <- function() {
  runs <- data.frame(widths = c("64-512-10", "64-512-10", "256-128-10", "64-192-10",
                                "96-384-10", "32-64-10", "128-256-10", "64-320-10"),
                     batch = c(160, 256, 640, 512, 256, 2048, 1024, 384),
                     optimizer = c("sgd_plain", "adam", "sgd_plain", "adam", "sgd", "sgd",
                                   "sgd_plain", "adam"),
                     heads = c(4, 2, 4, 3, 6, 8, 8, 5), stringsAsFactors = FALSE)
  g <- runs[rep(seq_len(nrow(runs)), each = 2L), ]
  g$after <- rep(c("none", "flash"), nrow(runs))
  g$heads[g$after == "none"] <- 1
  g$loss <- "softmax_cross_entropy"
  g$activation <- "relu"
  g$variant <- "grads"
  rownames(g) <- NULL
  g
}
# Held out: the attention holdout's stacks, heads and optimizers with a flash block in place of
# the attention, three with the mask, and its last at a sequence of 1024 with Adam.
grid_flash_holdout <- function() {
  g <- grid_attention_holdout()
  g$after <- c("flash", "flash_causal+layer_norm", "flash", "layer_norm+flash_causal",
               "flash_causal", "flash")
  g[6L, c("batch", "optimizer")] <- list(1024, "adam")
  g
}

# The same in resident mode (ag_device("gpu")): the flash call and its mask are graph ops, so the
# backward is the graph's unless a layer norm sends it to the host; judged on the host (the RSS
# growth less the device pools) and on the pools.
grid_flash_holdout_gpu <- function() {
  resident(grid_flash_holdout())
}

# ---- the other activation and loss (sigmoid, ag_cross_entropy_loss()), 100 steps ----
#
# Fit: the layers' ten stacks, each with relu hidden layers and softmax cross-entropy, with
# sigmoid hidden layers in their place, and with ag_cross_entropy_loss() on the output in place
# of the fused loss (the output layer stays linear: the loss clamps what it is given to
# [1e-7, 1 - 1e-7] and computes in R doubles, R/autograd.R:831-849), all measured together;
# each 100 steps and one more under gctorture() (fit-layers.R). Held out: the layers' holdout
# stacks without their layers, four with sigmoid, four with cross-entropy, and three with softmax
# (measured after the others).
grid_activations_fit <- function() {
  base <- grid_layers_fit()
  base <- base[base$after == "none", ]
  base$activation <- "relu"
  base$loss <- "softmax_cross_entropy"
  g <- base[rep(seq_len(nrow(base)), each = 3L), ]
  g$activation[seq(2L, nrow(g), by = 3L)] <- "sigmoid"
  g$loss[seq(3L, nrow(g), by = 3L)] <- "cross_entropy"
  rownames(g) <- NULL
  g
}
# Softmax on the hidden layers (an op of its own wherever it stands: ag_softmax(),
# R/autograd.R:726-760), measured after the others with baselines of its own: the ten stacks
# with relu and with softmax.
grid_activations_softmax <- function() {
  g <- grid_activations_fit()
  g <- g[g$loss == "softmax_cross_entropy" & g$activation == "relu", ]
  g <- g[rep(seq_len(nrow(g)), each = 2L), ]
  g$activation[seq(2L, nrow(g), by = 2L)] <- "softmax"
  rownames(g) <- NULL
  g
}
# The cross-entropy's pairs of grid_activations_fit() have 1 or 10 outputs, too few units for
# its figures to show over the runs' noise: four stacks with wide outputs (768 to 2048), each with
# the fused loss and with ag_cross_entropy_loss(), measured after them.
grid_activations_wide <- function() {
  base <- data.frame(widths = c("64-1024", "128-2048", "256-512-1024", "64-256-768"),
                     batch = c(512, 256, 256, 1024),
                     optimizer = c("sgd", "adam", "sgd_plain", "adam"), activation = "relu",
                     loss = "softmax_cross_entropy", variant = "grads", after = "none",
                     stringsAsFactors = FALSE)
  g <- base[rep(seq_len(nrow(base)), each = 2L), ]
  g$loss[seq(2L, nrow(g), by = 2L)] <- "cross_entropy"
  rownames(g) <- NULL
  g
}
grid_activations_holdout <- function() {
  g <- grid_layers_holdout()[c(1L, 3L, 4L, 6L, 7L, 8L, 9L, 11L, 2L, 5L, 10L), ]
  g$after <- "none"
  g$activation <- c(rep(c("sigmoid", "relu"), times = 4L), rep("softmax", 3L))
  g$loss <- c(rep(c("softmax_cross_entropy", "cross_entropy"), times = 4L),
              "softmax_cross_entropy", "mse", "softmax_cross_entropy")
  rownames(g) <- NULL
  g
}
# The runs of grid_activations_holdout() measured after its first eight: softmax.
grid_activations_holdout_softmax <- function() grid_activations_holdout()[-(1:8), ]

# In resident mode (ag_device("gpu")): the cross-entropy's wide pairs, which fit-long.R fits the
# loss's host figures on, and the activations' holdout, which judges sigmoid, softmax and the
# cross-entropy there.
grid_activations_wide_gpu <- function() {
  resident(grid_activations_wide())
}
grid_activations_holdout_gpu <- function() {
  resident(grid_activations_holdout())
}

# ---- ag_checkpoint() (measure-long.R --after=checkpoint), 100 steps ----
#
# Pairs: each stack with two ag_linear(w, w, "relu") after its hidden layer (--after=dense2), and
# the same two run under ag_checkpoint() by a module of its own (--after=checkpoint), described to
# agmem by the two layers, as if not checkpointed; each 100 steps and one more under gctorture().
# The last stack's runs end before R's first collection.
grid_checkpoint <- function() {
  checkpoint_pairs(data.frame(
    widths = c("128-512-10", "256-256-10", "64-1024-10", "64-128-10"),
    batch = c(256, 512, 128, 32),
    optimizer = c("adam", "sgd", "sgd_plain", "sgd"), activation = "relu",
    loss = c("softmax_cross_entropy", "mse", "softmax_cross_entropy", "mse"),
    variant = "grads", stringsAsFactors = FALSE), layers = 2)
}
# Each configuration of `base` twice: with `layers` (2, 3 or 4 each) ag_linear(w, w, "relu")
# after its hidden layer plainly (--after=dense2, dense3, dense4), then the same under
# ag_checkpoint() (--after=checkpoint, checkpoint3, checkpoint4).
checkpoint_pairs <- function(base, layers) {
  g <- base[rep(seq_len(nrow(base)), each = 2L), ]
  ck <- ifelse(layers == 2, "checkpoint", paste0("checkpoint", layers))
  g$after <- as.vector(rbind(paste0("dense", layers), ck))
  rownames(g) <- NULL
  g
}
# Held out: six stacks that grid_checkpoint() does not have, with segments of two, three and four
# ag_linear(w, w, "relu") (--after=checkpoint, checkpoint3, checkpoint4), each with its plain
# pair, at batches whose runs collect in full; nothing is fitted on them.
grid_checkpoint_holdout <- function() {
  checkpoint_pairs(data.frame(
    widths = c("128-384-10", "256-768-10", "64-256-10", "512-512-10", "32-1024-10",
               "784-256-10"),
    batch = c(384, 256, 1024, 192, 96, 768),
    optimizer = c("adam", "sgd", "sgd_plain", "adam", "sgd", "adam"), activation = "relu",
    loss = c("softmax_cross_entropy", "mse", "softmax_cross_entropy", "mse",
             "softmax_cross_entropy", "softmax_cross_entropy"),
    variant = "grads", stringsAsFactors = FALSE), layers = c(2, 2, 3, 3, 4, 2))
}
# The checkpointed runs of a checkpoint grid g alone, its plain pairs left out.
checkpointed_only <- function(g) {
  g <- g[startsWith(g$after, "checkpoint"), ]
  rownames(g) <- NULL
  g
}
# The checkpointed runs of grid_checkpoint() (what CI measures on the CPU).
grid_checkpointed <- function() checkpointed_only(grid_checkpoint())
# The checkpointed runs of the held-out grid, segments of two, three and four layers (what CI
# measures of it, every second: one of each length).
grid_checkpointed_holdout <- function() checkpointed_only(grid_checkpoint_holdout())
# The same in resident mode, ag_device("gpu"): ggmlR's graph backward declines a tape that holds
# a checkpoint (its record has no op, R/ag_checkpoint.R), so the whole backward runs on the host.
grid_checkpoint_gpu <- function() resident(grid_checkpoint())
# Its checkpointed runs alone (what CI measures in resident mode: the plain runs are dense stacks,
# which the long holdout in resident mode judges).
grid_checkpointed_gpu <- function() checkpointed_only(grid_checkpoint_gpu())

# ---- R's collector settings (measure-long.R run with the variable set), 100 steps ----
#
# Six configurations drawn like the long holdout grid's, each run with R's defaults and with one
# of R's start-up settings of its vector heap's collector: R_GC_MEM_GROW 0 (the trigger grows by
# R_VGrowIncrMin alone), 2 (by 30%) and 3 (by 40%, from an occupancy of 50%), and R_VSIZE=256M (a
# first trigger of 256 MiB). agmem reads them from the environment as R does at start-up
# (R/collector.R); nothing is fitted on these runs.
grid_collector <- function() {
  base <- data.frame(
    widths = c("1024-384-256", "256-256", "64-512-512", "1536-512-1024-384",
               "384-512-1024-128-256-512-128-768", "768-128"),
    batch = c(32, 512, 128, 16, 4, 2048),
    optimizer = c("sgd", "sgd", "adam", "sgd", "adam", "adam"), activation = "relu",
    loss = c("mse", "mse", "mse", "softmax_cross_entropy", "softmax_cross_entropy", "mse"),
    variant = c("field", "grads", "grads", "grads", "grads", "grads"), stringsAsFactors = FALSE)
  settings <- c("none", "R_GC_MEM_GROW:0", "R_GC_MEM_GROW:2", "R_GC_MEM_GROW:3", "R_VSIZE:256M")
  once_each(base, "collector", settings)
}

# The grid `base` run once for each of `values` of the field `column`: base with the first value,
# then base with the second, ...
once_each <- function(base, column, values) {
  g <- base[rep(seq_len(nrow(base)), times = length(values)), ]
  g[[column]] <- rep(values, each = nrow(base))
  rownames(g) <- NULL
  g
}

# ---- the process's past (measure-long.R --pad_nodes), 100 steps ----
#
# The long holdout's 68 configurations, each run three times: as measured, and with 10 000 and
# 30 000 more of R's nodes (one-element vectors) kept live from before the loop to its end.
# Nothing else changes; the loop's own allocations are the same to the byte. Where R's trigger
# settles depends on when its collections fall, and R's nodes set some of them off, so this
# measures how far a run's peak moves with what the session did before the loop (issue 15).
grid_history <- function() once_each(grid_long_holdout(), "pad_nodes", c(0, 10000, 30000))

# ---- a data set larger than the loop's needs (measure-long.R --samples) ----
#
# Ten models, each with a data set of 8 000 to 200 000 samples (25 to 414 MB, made as the harness
# makes it: matrix(rnorm(n), p), one copy of itself for a moment), run for 100 steps and for 3
# steps, on the CPU; three of them in resident mode too. The data's creation raises R's trigger,
# and a loop whose heap needs less never grows it (src/model.c, data_trigger()); nothing is fitted
# on these runs.
grid_data_held <- function() {
  base <- data.frame(
    widths = c("784-512-10", "784-512-10", "784-256-10", "256-256-10", "1024-1024-10",
               "128-64-10", "512-256-10", "784-512-512-10", "64-64-10", "2048-128-10"),
    batch = c(32, 2085, 128, 256, 512, 64, 128, 256, 1024, 64),
    samples = c(60000, 60000, 30000, 30000, 50000, 200000, 10000, 20000, 100000, 8000),
    optimizer = c("adam", "adam", "sgd", "sgd", "adam", "sgd_plain", "adam", "adam", "sgd",
                  "sgd_plain"),
    activation = "relu",
    loss = c("softmax_cross_entropy", "softmax_cross_entropy", "mse", "softmax_cross_entropy",
             "mse", "softmax_cross_entropy", "mse", "softmax_cross_entropy", "mse", "mse"),
    variant = "grads", device = "cpu", stringsAsFactors = FALSE)
  gpu <- base[c(1L, 4L, 6L), ]
  gpu$device <- "gpu"
  once_each(rbind(base, gpu), "steps", c(100, 3))
}
