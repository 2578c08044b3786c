/* rules.c: every byte count of ag_training_memory(), in four tables, and the lookups over them.
 *
 * A rule is a number of bytes that one unit of something costs during a training step of
 * ggmlR 0.8.8.1's autograd path, attributed to a component (weights, gradients, ...) and to a
 * place (host RAM or the device's memory):
 *   - agmem_param_rules: bytes per parameter (scalar of the model), for an optimizer, device
 *     and dtype (AGMEM_ANY matches every optimizer or dtype);
 *   - agmem_unit_rules: bytes per unit and sample, for an op of a layer (units = the layer's
 *     output width), a loss (units = the output width of the model) or the data ("input",
 *     units = the input width), on a device;
 *   - agmem_gc_rules: the figures of the host's garbage-collection regime per device (the host
 *     peak under R's collector, model.c's host_regime());
 *   - agmem_live_rules: the bytes live at R's collections over a whole run, per parameter and
 *     per unit and sample, with what the C allocator keeps and the R nodes a step makes.
 * A gc or live row is a device's host figure (backward "any"), or a model's own on one device
 * and path of backward() (the host path in resident mode), which takes the place of its host
 * device's.
 * The measured figures are fitted on the fit grid of inst/validation (measurements-fit.csv) by
 * inst/validation/fit.R, which prints them and checks them against this table; the goal is
 * judged on the holdout grids only (validate.R).
 * Rows that match a question ADD UP into their (component, where) cell, so one figure may be
 * written as several rows, each with its own source. Every row carries its citation in `cite`
 * (the ggmlR source line, or the measurement), readable from R through agmem_training_rules().
 *
 * The name tables below are agmem's registry: the one place that names the optimizers,
 * devices, dtypes, ops, losses and layer types. R reads them once, when the package loads
 * (registry.c, R/registry.R), for argument matching, help and reports. CONTRIBUTING.md says how
 * to add an optimizer, a device, a dtype, an op or a layer.
 * Paths below are in ggmlR_0.8.8.1.tar.gz: R/autograd.R and R/ag_device.R.
 */
#include <string.h>
#include "agmem.h"

/* The ggmlR release every rule below was read from and measured on. */
const char *const agmem_ggmlr_version = "0.8.8.1";

const char *const agmem_optimizer_names[AGMEM_N_OPTIMIZERS] = {"adam", "sgd", "sgd_plain"};
/* The optimizer-state copies of the weights that ggmlR's own formula counts for each optimizer
   (ag_estimate_training_memory(): adam's m and v, sgd's velocity, nothing for sgd_plain), in the
   order of agmem_optimizer_names. ag_estimate_training_memory() and its planners use these. */
const int agmem_optimizer_copies[AGMEM_N_OPTIMIZERS] = {2, 1, 0};
const char *const agmem_device_names[AGMEM_N_DEVICES] = {"cpu", "gpu"};
/* The place whose peak limits a run on each device, the one the planners plan on: the host for
   "cpu" (everything is an R double), the device for "gpu" (ag_device("gpu") keeps the weights,
   optimizer moments and the tape in the device's pools). */
const int agmem_device_place[AGMEM_N_DEVICES] = {AGMEM_HOST, AGMEM_DEVICE};
const char *const agmem_dtype_names[AGMEM_N_DTYPES] = {"f32", "f16", "bf16"};
/* Whether a compute dtype sends backward() to the host whatever the model's ops: ggmlR's graph
   backward runs in f32 only and refuses a tape of another compute dtype
   (R/ag_backward_graph.R:286-292), so backward() runs the records' R closures on the host. */
const int agmem_dtype_host_backward[AGMEM_N_DTYPES] = {0, 1, 1};
const char *const agmem_component_names[AGMEM_N_COMPONENTS] = {
    "weights", "gradients", "optimizer_state", "master_weights", "step_transients",
    "build_transients", "activations", "activation_gradients"
};
const char *const agmem_where_names[AGMEM_N_WHERE] = {"host", "device"};
const char *const agmem_basis_names[AGMEM_N_BASES] = {"measured", "source only"};
const char *const agmem_backward_names[AGMEM_N_BACKWARDS] = {"any", "graph", "host"};
const char *const agmem_op_kind_names[AGMEM_N_OP_KINDS] = {"data", "linear", "activation",
                                                          "loss", "layer", "table", "pairs"};

/* Every op the unit rules below may name, with its kind: "data" (the input batch), "linear" (the
   product and the bias of an ag_linear()), "activation" (an activation an ag_linear() applies,
   R/autograd.R:1696-1701), "loss" (a loss, named "loss_" and the loss's name as agmem's
   functions take it), "layer" (a layer that is one op, named as its layer type, its units
   the layer's width), "table" (a layer's parameter table: its units are the table's
   scalars, counted once, not per sample; its rules are what a scalar of it costs over the
   parameter rules) and "pairs" (an op on every pair of samples: its units count per batch
   squared, as an attention head's scores over a sequence that is the batch). Every op has
   rules for device "cpu"; an op without rules for a device is not modelled there, and
   R/ag_model_spec.R's spec_on_device() says so (tests/testthat/test-registry.R). An op that
   runs another op's R code on other units takes that op's rules, named in its third field:
   the attention dropout of ag_multihead_attention() (R/ag_layers.R:750-758 of ggmlR 0.8.8.1)
   is ag_dropout()'s forward (R/ag_layers.R:182-188) line for line, on a head's weights, one
   per pair of samples, so "attention_dropout" takes the rules of "dropout" per pair
   (measurements-attention-dropout-holdout.csv judges it). Batch norm (R/ag_layers.R:225, 245,
   337) and layer norm (R/ag_layers.R:475) are recorded without an op, and so is the embedding,
   its lookup and its table in one record (R/ag_layers.R:565): the graph backward refuses such a
   tape (R/ag_backward_graph.R:295). So does a segment run under ag_checkpoint(), whose record
   has no op (R/ag_checkpoint.R:170-181): "checkpoint" marks it, after the segment's own ops,
   and costs nothing of its own (the segment is counted by its layers, as if not checkpointed)
   but R's nodes, which grow with the segment's length: "checkpoint_layer" follows it once for
   each of the segment's layers after its first (it costs nodes alone, and is part of the
   same record).
   Its closures compute on the device's tensors, so the pools stay the graph backward's (its
   fifth field; measured: measurements-checkpoint-gpu.csv, pass pools 0.2% to 6% under the same
   models without the checkpoint), while the host runs the backward in R. */
const agmem_op agmem_ops[] = {
    {"input", AGMEM_OP_DATA, NULL},
    {"matmul", AGMEM_OP_LINEAR, NULL},
    {"add", AGMEM_OP_LINEAR, NULL},
    {"relu", AGMEM_OP_ACTIVATION, NULL},
    {"sigmoid", AGMEM_OP_ACTIVATION, NULL},
    {"tanh", AGMEM_OP_ACTIVATION, NULL},
    {"softmax", AGMEM_OP_ACTIVATION, NULL},
    {"loss_mse", AGMEM_OP_LOSS, NULL},
    {"loss_cross_entropy", AGMEM_OP_LOSS, NULL},
    {"loss_softmax_cross_entropy", AGMEM_OP_LOSS, NULL},
    {"batch_norm", AGMEM_OP_LAYER, NULL, AGMEM_BACKWARD_HOST},
    {"batch_norm_eval", AGMEM_OP_LAYER, NULL, AGMEM_BACKWARD_HOST},
    {"dropout", AGMEM_OP_LAYER, NULL},
    {"layer_norm", AGMEM_OP_LAYER, NULL, AGMEM_BACKWARD_HOST},
    {"embedding", AGMEM_OP_LAYER, NULL, AGMEM_BACKWARD_HOST},
    {"embedding_table", AGMEM_OP_TABLE, NULL, AGMEM_BACKWARD_HOST},
    {"attention", AGMEM_OP_LAYER, NULL},
    {"attention_head", AGMEM_OP_PAIRS, NULL},
    {"attention_slices", AGMEM_OP_TABLE, NULL},
    {"attention_dropout", AGMEM_OP_PAIRS, "dropout"},
    {"attention_concat", AGMEM_OP_TABLE, NULL},
    {"attention_block", AGMEM_OP_LAYER, NULL},
    {"attention_one_head", AGMEM_OP_LAYER, NULL},
    {"attention_causal", AGMEM_OP_PAIRS, NULL},
    {"flash_attention", AGMEM_OP_LAYER, NULL},
    {"flash_causal", AGMEM_OP_PAIRS, NULL},
    {"checkpoint", AGMEM_OP_LAYER, NULL, AGMEM_BACKWARD_HOST, 1},
    {"checkpoint_layer", AGMEM_OP_LAYER, NULL, AGMEM_BACKWARD_HOST, 1},
};
const R_xlen_t agmem_n_ops = sizeof agmem_ops / sizeof agmem_ops[0];

/* How far the model of ag_training_memory() was validated: the largest batch size, layer width
   and parameter count among the measured configurations of inst/validation (measurements-fit,
   -holdout, -large and -long50.csv, three steps: batch sizes 1 to 2048, widths 1 to 2048, 65 to
   10 559 872 parameters; measurements-long-fit and -long-holdout.csv, whole runs of 100 steps:
   batch sizes 1 to 4096, widths 10 to 2048, 650 to 9 764 992 parameters): the largest of each
   over both. The sequence an attention scores is the batch: its own limit is the largest batch
   of the attention grids (measurements-attention-fit and -holdout.csv, batches 64 to 768); an
   attention's width, the widest of its fit grids (512, measurements-attention-wide.csv). A
   figure beyond any of these is flagged with a warning (R/estimator-model.R). */
const agmem_limit agmem_validated[] = {
    {"batch_size", 4096},
    {"width", 2048},
    {"params", 10559872},
    {"sequence", 768},
    {"attention_width", 512},
};
const R_xlen_t agmem_n_validated = sizeof agmem_validated / sizeof agmem_validated[0];

/* The ggmlR layer types agmem models, each read by the reader of the same name in R/layers.R:
   "linear" is ag_linear() (R/autograd.R:1683-1705), a product, a bias and an activation;
   "batch_norm", "dropout" and "layer_norm" are ag_batch_norm(), ag_dropout() and
   ag_layer_norm() (R/ag_layers.R:273-395, 173-195, 397-521), each one op of its name (a batch
   norm in eval mode, "batch_norm_eval");
   "embedding" is ag_embedding() (R/ag_layers.R:523-580): its table ("embedding_table") and its
   lookup ("embedding"); "attention" is ag_multihead_attention() (R/ag_layers.R:681-781): its
   projections ("attention"), one "attention_head" per head, the scores of every pair of the
   sequence, which is the batch, and the constant matrices that slice the heads' rows
   ("attention_slices", a table of d_model x d_model units); with more than one head, the
   matrices that place the heads' rows in their concatenation ("attention_concat", a table of
   d_model x d_model units) and one "attention_block" per head, the head's block of d_model rows
   and the sum it goes into; called with causal_mask = TRUE (described by ag_causal_attention()),
   one "attention_causal" per head, the mask added to the head's scores; "flash_attention" is
   a call of ag_flash_attention() (R/ag_flash_attn.R:277-363) in a block of the user's own,
   described by ag_flash_attention_call(): its heads split and joined in R around the fused op
   ("flash_attention", d_model per sample) and with causal = TRUE its mask ("flash_causal", one
   per pair of the sequence); "checkpoint" is a segment of layers run under ag_checkpoint()
   (R/ag_checkpoint.R:95-182), described by ag_checkpoint_segment(): its layers, then the
   "checkpoint" op, the segment's output width per sample, and one "checkpoint_layer" for each
   of its layers after the first. */
const char *const agmem_layer_names[] = {"linear", "batch_norm", "dropout", "layer_norm",
                                         "embedding", "attention", "flash_attention",
                                         "checkpoint"};
const R_xlen_t agmem_n_layers = sizeof agmem_layer_names / sizeof agmem_layer_names[0];

#define ANY AGMEM_ANY
#define ADAM AGMEM_ADAM
#define SGD AGMEM_SGD
#define SGD_PLAIN AGMEM_SGD_PLAIN
#define CPU AGMEM_CPU
#define GPU AGMEM_GPU
#define F32 AGMEM_F32
#define F16 AGMEM_F16
#define BF16 AGMEM_BF16
#define HOST AGMEM_HOST
#define DEVICE AGMEM_DEVICE
#define MEASURED AGMEM_MEASURED
#define SOURCE AGMEM_SOURCE_ONLY

/* Bytes per parameter.
 *
 * `bytes` is the row's share of the peak once R's garbage collector runs (the "collected"
 * heap of model.c's host_regime()); `alloc_step` and `alloc_once` count, from the source, the
 * bytes the host allocates per training step and once. The CPU figures of `bytes` are fitted
 * by least squares on the fit grid of inst/validation (measurements-fit.csv, fit.R): the total
 * per parameter of each optimizer is the measurement, split into components by the source's
 * live objects (weight, gradient, optimizer state: 8 B per double each); the rest, garbage R
 * has not yet collected and the pre-step weight the tape holds, is the step transient. The CPU
 * path keeps R doubles whatever ag_dtype() says, so its rows are f32 only: another dtype with
 * the device "cpu" matches no row, and agmem_training_memory() refuses it. */
const agmem_param_rule agmem_param_rules[] = {
    /* optimizer, device, dtype, component, where, bytes, basis, cite, alloc_step, alloc_once */

    /* ---- device "cpu": everything is an R double on the host ---- */
    {ANY, CPU, F32, AGMEM_WEIGHTS, HOST, 8, MEASURED,
     "issue #10 measurement (fit grid; source split): the weight is an R double matrix "
     "(R/autograd.R:80, 121-124). Allocated: once the runif() vector and its matrix() copy "
     "(R/autograd.R:1715); per step t(W) for the input gradient (R/autograd.R:361); the new "
     "weight w - ... reuses the step's last temporary (R/autograd.R:1430-1432, 1593)", 8, 16},
    {ANY, CPU, F32, AGMEM_GRADIENTS, HOST, 8, MEASURED,
     "issue #10 measurement (fit grid; source split): backward() computes each weight "
     "gradient grad_out %*% t(x) (R/autograd.R:360) and keeps it in its environment and $grad "
     "(R/autograd.R:1026, 1076)", 8, 0},
    {ADAM, CPU, F32, AGMEM_OPTIMIZER_STATE, HOST, 16, MEASURED,
     "issue #10 measurement (fit grid; source split): optimizer_adam() keeps m and v as R "
     "double matrices (R/autograd.R:1527-1528, zeros made at 1158); each step allocates beta1 * m, "
     "(1 - beta1) * g, g^2 and beta2 * v for the new ones (R/autograd.R:1584-1585)", 32, 16},
    {SGD, CPU, F32, AGMEM_OPTIMIZER_STATE, HOST, 8, MEASURED,
     "issue #10 measurement (fit grid; source split): optimizer_sgd() keeps a velocity, an R "
     "double matrix per parameter (R/autograd.R:1407); each step allocates "
     "momentum * velocity for the new one (R/autograd.R:1429)", 8, 8},
    {SGD_PLAIN, CPU, F32, AGMEM_OPTIMIZER_STATE, HOST, 8, MEASURED,
     "issue #10 measurement (fit grid; source split): optimizer_sgd() allocates the velocity "
     "even with momentum = 0 (R/autograd.R:1407) and never updates it", 0, 8},
    {ADAM, CPU, F32, AGMEM_STEP_TRANSIENTS, HOST, 55, MEASURED,
     "issue #10 measurement (fit grid): the rest of adam's fitted bytes per parameter; "
     "allocated per step: m_hat, v_hat, sqrt(v_hat) and lr * m_hat (R/autograd.R:1587-1593; "
     "R's arithmetic reuses an operand nothing else references, so + eps, the quotient and "
     "w - ... allocate nothing); held: the old m and v and the pre-step weight the tape keeps "
     "(R/autograd.R:347) until R collects them", 32, 0},
    {SGD, CPU, F32, AGMEM_STEP_TRANSIENTS, HOST, 33, MEASURED,
     "issue #10 measurement (fit grid): the rest of sgd's fitted bytes per parameter; "
     "allocated per step: lr * velocity (R/autograd.R:1430; + g and w - ... reuse their "
     "temporary operand); held: the old velocity and the pre-step weight the tape keeps "
     "(R/autograd.R:347)", 8, 0},
    {SGD_PLAIN, CPU, F32, AGMEM_STEP_TRANSIENTS, HOST, 22, MEASURED,
     "issue #10 measurement (fit grid): the rest of sgd_plain's fitted bytes per parameter; "
     "allocated per step: lr * g (R/autograd.R:1432; w - ... reuses it); held: the pre-step "
     "weight the tape keeps (R/autograd.R:347)", 8, 0},

    /* ---- device "gpu" (ag_device("gpu")), resident weights: host side. Measured on ggml's
       CPU backend as the RSS growth less the device pools (which a GPU keeps in its own
       memory); uploads copy to a plain double vector first (as.numeric(), R/ag_device.R:1650)
       and reads of a resident value download to an R double matrix (R/ag_device.R:1720-1734).
       ---- */
    {ANY, GPU, ANY, AGMEM_GRADIENTS, HOST, 8, MEASURED,
     "issue #10 measurement (fit grid; source split): backward() installs the leaf gradients "
     "in $grad as host doubles (R/autograd.R:1076, .ag_bwd_write_leaf_grads). Allocated: that "
     "per step; once the weight's runif()/matrix() and its upload copy (R/autograd.R:1715, "
     "142)", 8, 24},
    {ADAM, GPU, ANY, AGMEM_BUILD_TRANSIENTS, HOST, 6, MEASURED,
     "issue #10 measurement (fit grid): the rest of adam's fitted host bytes per parameter; "
     "optimizer_adam() builds each device moment from a host zero matrix, downloading the "
     "weight for its shape and copying the zeros to upload them (.ag_opt_zero_like, "
     "R/autograd.R:1156-1162); per step the host gradient is uploaded (R/autograd.R:1565-1567)",
     8, 48},
    {SGD, GPU, ANY, AGMEM_OPTIMIZER_STATE, HOST, 8, MEASURED,
     "issue #10 measurement (fit grid; source split): the sgd velocity stays an R double "
     "matrix (R/autograd.R:1407), built from a download of the weight", 8, 16},
    {SGD, GPU, ANY, AGMEM_STEP_TRANSIENTS, HOST, 51, MEASURED,
     "issue #10 measurement (fit grid): the rest of sgd's fitted host bytes per parameter; "
     "the step runs on the host: the weight downloaded, momentum * velocity, lr * velocity "
     "and the upload of the new weight (R/autograd.R:1424-1430)", 24, 0},
    {SGD_PLAIN, GPU, ANY, AGMEM_OPTIMIZER_STATE, HOST, 8, MEASURED,
     "issue #10 measurement (fit grid; source split): optimizer_sgd() allocates the host "
     "velocity even with momentum = 0 (R/autograd.R:1407)", 0, 16},
    {SGD_PLAIN, GPU, ANY, AGMEM_STEP_TRANSIENTS, HOST, 35, MEASURED,
     "issue #10 measurement (fit grid): the rest of sgd_plain's fitted host bytes per "
     "parameter; the weight downloaded, lr * g and the upload of the new weight "
     "(R/autograd.R:1424-1432)", 24, 0},

    /* ---- device "gpu": device side, persistent pool ---- */
    {ANY, GPU, F32, AGMEM_WEIGHTS, DEVICE, 4, MEASURED,
     "issue #10 measurement (fit grid, persistent pool): ag_param() uploads the weight in f32 "
     "to the persistent pool (R/autograd.R:142)"},
    {ANY, GPU, F16, AGMEM_WEIGHTS, DEVICE, 2, SOURCE,
     "source only (f16 aborts on the CPU backend, not measured): the weight is uploaded in "
     "the dtype (R/autograd.R:142)"},
    {ANY, GPU, BF16, AGMEM_WEIGHTS, DEVICE, 2, SOURCE,
     "source only (bf16 aborts on the CPU backend, not measured): the weight is uploaded in "
     "the dtype (R/autograd.R:142)"},
    {ADAM, GPU, ANY, AGMEM_OPTIMIZER_STATE, DEVICE, 8, MEASURED,
     "issue #10 measurement (fit grid, persistent pool): m and v are f32 in the persistent "
     "pool whatever the dtype (R/autograd.R:1159-1161, 1527-1528)"},
    {ADAM, GPU, F16, AGMEM_MASTER_WEIGHTS, DEVICE, 4, SOURCE,
     "source only (not measurable here): an f16 weight gets an f32 master copy in the "
     "persistent pool (R/ag_device.R:1251-1265)"},
    {ADAM, GPU, BF16, AGMEM_MASTER_WEIGHTS, DEVICE, 4, SOURCE,
     "source only (not measurable here): a bf16 weight gets an f32 master copy in the "
     "persistent pool (R/ag_device.R:1251-1265)"},

    /* ---- device "gpu": device side, pass pool (freed at every with_grad_tape()) ---- */
    {ANY, GPU, ANY, AGMEM_STEP_TRANSIENTS, DEVICE, 4, MEASURED,
     "issue #16 measurement (measure-one.R on device \"gpu\", pass pool, f32: 3.97 bytes per "
     "parameter at the intercept with a batch norm or a layer norm, 7.99 without): the "
     "forward's contiguous transposed copy of each resident weight (R/ag_device.R:874), on "
     "either path of backward()", 0, 0, AGMEM_BACKWARD_ANY},
    {ANY, GPU, ANY, AGMEM_GRADIENTS, DEVICE, 4, MEASURED,
     "issue #10 measurement (fit grid, pass pool, f32), less the forward's copy: the graph "
     "backward's weight gradient (out_prod, R/ag_backward_graph.R:534) and the bias's "
     "(R/ag_backward_graph.R:499-500)", 0, 0, AGMEM_BACKWARD_GRAPH},
    {ADAM, GPU, ANY, AGMEM_GRADIENTS, DEVICE, 4, MEASURED,
     "issue #16 measurement (measure-one.R on device \"gpu\", pass pool, f32: 4.00 bytes per "
     "parameter over sgd's with a layer norm): with the backward on the host, "
     "optimizer_adam()'s step uploads each host gradient to the pass pool "
     "(R/autograd.R:1565-1567)", 0, 0, AGMEM_BACKWARD_HOST},
};
const R_xlen_t agmem_n_param_rules = sizeof agmem_param_rules / sizeof agmem_param_rules[0];

/* Bytes per unit and sample. The units of an op are its layer's output width, of a loss the
 * model's output width, of "input" the model's input width. `bytes`: on the CPU, fitted as for
 * the parameters: "matmul" + "add" is the fitted cost of a layer without activation, each
 * activation's row the fitted extra of a hidden layer with it, each loss's row the fitted extra
 * of the output layer over a layer without activation (the tape of the previous step stays
 * reachable from `loss` until the next forward pass replaces it, so the figures hold about two
 * tapes and two sets of activation gradients, and R's uncollected garbage). On the GPU, the pass
 * pool, fitted the same way on the fit grid. `alloc_step`: the host bytes allocated per step,
 * from the source (8 B per double, 4 per logical). The layers' rows (batch norm, dropout, layer
 * norm; CPU only) are fitted on pairs of three-step runs with and without the layer
 * (measurements-layers-three.csv, fit-layers.R): `alloc_step` from pairs that end before R's
 * first collection, `bytes` from pairs that end after it. */
const agmem_unit_rule agmem_unit_rules[] = {
    /* op, device, component, where, bytes, basis, cite, alloc_step */

    /* ---- device "cpu": R doubles ---- */
    {"input", CPU, AGMEM_ACTIVATIONS, HOST, 8, MEASURED,
     "issue #10 measurement (fit grid): per input unit and sample; t(x) of the first layer's "
     "weight gradient (R/autograd.R:360)", 8},
    {"matmul", CPU, AGMEM_ACTIVATIONS, HOST, 23, MEASURED,
     "issue #10 measurement (fit grid): a third of the fitted matmul + add, as the source's "
     "live objects split: the product W %*% x (R/autograd.R:340); allocated: it, and t(x) and "
     "t(W) %*% g of the next layer, which reads these units (R/autograd.R:360-361)", 24},
    {"add", CPU, AGMEM_ACTIVATIONS, HOST, 45, MEASURED,
     "issue #10 measurement (fit grid): two thirds of the fitted matmul + add: the broadcast "
     "bias matrix, which the backward closure keeps with its frame, and the sum, both "
     "allocated (R/autograd.R:416-421)", 16},
    {"relu", CPU, AGMEM_ACTIVATIONS, HOST, 72, MEASURED,
     "issue #10 measurement (fit grid): a hidden relu layer over one without activation; "
     "allocated: pmax(x, 0), the logical x > 0, the double mask (R/autograd.R:640, 649) and "
     "grad_out * mask (R/autograd.R:651)", 28},
    {"sigmoid", CPU, AGMEM_ACTIVATIONS, HOST, 46, MEASURED,
     "issue #10 measurement (fit grid): a hidden sigmoid layer over one without activation; "
     "allocated: -x (exp, 1 + and 1 / reuse it), 1 - s (s * reuses it) (R/autograd.R:672, "
     "683) and grad_out * mult (R/autograd.R:684)", 24},
    {"tanh", CPU, AGMEM_ACTIVATIONS, HOST, 47, MEASURED,
     "issue #10 measurement (fit grid): a hidden tanh layer over one without activation; "
     "allocated: tanh(x), t^2 (1 - reuses it) (R/autograd.R:701, 710) and grad_out * mult "
     "(R/autograd.R:711)", 24},
    {"softmax", CPU, AGMEM_ACTIVATIONS, HOST, 72, MEASURED,
     "issue #16 measurement (activations' softmax pairs, fit-layers.R): a hidden softmax layer "
     "over a relu layer, on ten stacks with each; at the three-step peak once R collects, "
     "relu's (the four pairs over the headroom differ by -22.44 to 52.00 bytes per unit and "
     "sample, fitted -8.01); allocated, by Rprofmem(): relu's 28 and 48.51 more (48.12 to "
     "49.05 per pair): apply()'s copy and columns, the max matrix, x - mx (exp reuses it), the "
     "sums matrix, p (R/autograd.R:737-741), and pm * g, dot_m, g - dot_m "
     "(R/autograd.R:752-755)", 76.51},
    {"loss_mse", CPU, AGMEM_ACTIVATIONS, HOST, 41, MEASURED,
     "issue #10 measurement (fit grid): the output layer with ag_mse_loss() over a layer "
     "without activation; allocated: diff, diff^2 (R/autograd.R:796-798) and (2 / n) * diff "
     "(* g reuses it) (R/autograd.R:809)", 24},
    {"loss_cross_entropy", CPU, AGMEM_ACTIVATIONS, HOST, 45, MEASURED,
     "issue #10 measurement (fit grid): the output layer with ag_cross_entropy_loss() over "
     "a layer without activation; allocated: pmin, pmax, log (t * reuses it), -t (/ p reuses "
     "it) (R/autograd.R:836-849) and -t in the backward (R/autograd.R:845)", 40},
    {"loss_softmax_cross_entropy", CPU, AGMEM_ACTIVATIONS, HOST, 95, MEASURED,
     "issue #10 measurement (fit grid): the output layer with "
     "ag_softmax_cross_entropy_loss() over a layer without activation; allocated: apply()'s "
     "copy and columns, the max matrix, l - mx (exp reuses it), the sums matrix, p, pmax, log "
     "(t * reuses it), p - t (R/autograd.R:883-903), which the closure's frame keeps, and "
     "p - t in the backward (R/autograd.R:899)", 80},
    {"batch_norm", CPU, AGMEM_ACTIVATIONS, HOST, 144.08, MEASURED,
     "issue #16 measurement (layers' fit grid, fit-layers.R): per unit and sample of "
     "ag_batch_norm() in training mode, the three-step peak once R collects; allocated per "
     "step, from the three-step peaks before R collects: in the forward x - mu, its square, "
     "the mu and std matrices, x_hat "
     "(R/ag_layers.R:290-312), which the backward closure's frame keeps, gamma's and beta's "
     "broadcast copies with their product and sum (R/ag_layers.R:207-251); in the backward "
     "its own and their gradients (R/ag_layers.R:330-334)", 148.37},
    {"batch_norm_eval", CPU, AGMEM_ACTIVATIONS, HOST, 117.31, MEASURED,
     "issue #16 measurement (layers' eval fit grid, fit-layers.R): per unit and sample of "
     "ag_batch_norm() in eval mode (ag_eval(), frozen), the three-step peak once R collects; "
     "allocated per step: the forward's as in training mode less x - mu and its square (its "
     "statistics are the running ones, R/ag_layers.R:299-302), and a backward of one "
     "division (R/ag_layers.R:333)", 114.12},
    {"dropout", CPU, AGMEM_ACTIVATIONS, HOST, 3.47, MEASURED,
     "issue #16 measurement (layers' fit grid, fit-layers.R): per unit and sample of "
     "ag_dropout() in training mode, the three-step peak once R collects (its mask is "
     "garbage by then); allocated per step: runif(), the logical comparison, the scaled "
     "mask and its matrix() copy (R/ag_layers.R:184-187), ag_mul()'s product and its "
     "gradient's copy of the mask (R/autograd.R:537-580)", 52.75},
    {"layer_norm", CPU, AGMEM_ACTIVATIONS, HOST, 10.35, MEASURED,
     "issue #16 measurement (layers' fit grid, fit-layers.R): per unit and sample of "
     "ag_layer_norm(), the three-step peak once R collects; allocated per step: the centred "
     "input (twice), its square, x_hat, the affine "
     "output (R/ag_layers.R:430-437), and in the backward g, its product with x_hat and dx "
     "(R/ag_layers.R:467-471)", 87.18},
    {"embedding", CPU, AGMEM_ACTIVATIONS, HOST, 40.86, MEASURED,
     "issue #16 measurement (embedding's three-step grid, fit-layers.R): per unit of dim and "
     "sample of ag_embedding()'s lookup, over the dense input it replaces, the three-step "
     "peak once R collects; allocated per step: the looked-up columns (R/ag_layers.R:541), "
     "and in the backward each sample's gradient column, read, added and written back one "
     "sample at a time (R/ag_layers.R:555-558)", 22.55},
    {"embedding_table", CPU, AGMEM_STEP_TRANSIENTS, HOST, 8.61, MEASURED,
     "issue #16 measurement (embedding's three-step grid, fit-layers.R): per scalar of "
     "ag_embedding()'s table, over the parameter rules, the three-step peak once R collects; "
     "allocated per step: the dense dim x vocab gradient its backward builds every step "
     "(R/ag_layers.R:553), 8 B a scalar in the source", 7.27},
    {"attention", CPU, AGMEM_ACTIVATIONS, HOST, 313.65, MEASURED,
     "issue #16 measurement (attention's fit grids, d_model 256 and 512, fit-layers.R): per "
     "unit of d_model and sample of ag_multihead_attention()'s projections, the three-step "
     "peak once R collects; allocated per step (Rprofmem(), measure-alloc.R): Q, K and V, each "
     "head's slices of them and its output, W_o's product and the bias "
     "(R/ag_layers.R:712-771), and their gradients", 241.03},
    {"attention_head", CPU, AGMEM_ACTIVATIONS, HOST, 238.44, MEASURED,
     "issue #16 measurement (attention's fit grids, fit-layers.R): per head and pair of "
     "samples, the three-step peak once R collects; allocated per step (Rprofmem()): the "
     "head's scores, their scaling, the transposes around the softmax, the softmax and the "
     "transpose the weighted sum reads (R/ag_layers.R:735-763), and their gradients", 163.64},
    {"attention_slices", CPU, AGMEM_STEP_TRANSIENTS, HOST, 67.68, MEASURED,
     "issue #16 measurement (attention's fit grids, fit-layers.R): per d_model x d_model unit "
     "of an attention, once a step, the three-step peak once R collects (with what the "
     "attention's 4 d_model^2 parameters cost over the parameter rules, which only a d_model^2 "
     "term can tell); allocated per step (Rprofmem()): the constant d_k x d_model matrices "
     "that slice each head's rows of Q, K and V (R/ag_layers.R:801-816), 3 d_model^2 doubles, "
     "and their transposes in the backward", 50.89},
    {"attention_concat", CPU, AGMEM_STEP_TRANSIENTS, HOST, 0.30, MEASURED,
     "issue #16 measurement (attention's fit grids, fit-layers.R): per d_model x d_model unit "
     "of an attention of more than one head, once a step, the three-step peak once R "
     "collects; allocated per step (Rprofmem()): the constant matrices that place each head's "
     "d_k rows in the d_model rows of their concatenation (.ag_row_concat(), "
     "R/ag_layers.R:818-846), d_model^2 doubles, and their transposes in the backward", 5.31},
    {"attention_block", CPU, AGMEM_ACTIVATIONS, HOST, 107.41, MEASURED,
     "issue #16 measurement (attention's fit grids, fit-layers.R): per head, unit of d_model "
     "and sample of an attention of more than one head, the three-step peak once R collects; "
     "allocated per step (Rprofmem()): the head's block of d_model rows in the concatenation "
     "and the sum it goes into (R/ag_layers.R:836-843), and their gradients", 57.32},
    {"attention_one_head", CPU, AGMEM_ACTIVATIONS, HOST, 0, MEASURED,
     "issue #16 measurement (attention's fit grids, fit-layers.R): per unit of d_model and "
     "sample of an attention of one head, whose .ag_row_concat() returns the head as it is "
     "(R/ag_layers.R:819): nothing over the projections' figure, which was fitted on one head "
     "and on several (the term is device \"gpu\"'s)"},
    {"attention_causal", CPU, AGMEM_ACTIVATIONS, HOST, 0, MEASURED,
     "issue #16 measurement (causal fit grid, fit-layers.R): per head and pair of samples of "
     "an attention called with causal_mask = TRUE, the three-step peak once R collects: "
     "fitted -8.43 (R's collections, not the mask, decide those peaks), written 0; allocated "
     "per step (Rprofmem()): the seq x seq mask and the masked scores (.ag_causal_mask(), "
     "R/ag_layers.R:860-870), 8 B a pair each", 16.02},
    {"flash_attention", CPU, AGMEM_ACTIVATIONS, HOST, 310.69, MEASURED,
     "issue #16 measurement (flash fit grid, fit-layers.R): per unit of d_model and sample of a "
     "call of ag_flash_attention(), over its block's four ag_linear() at the table's figures, "
     "the three-step peak once R collects; allocated per step (Rprofmem()): Q, K and V split "
     "into their heads in R (array() and aperm() copies, R/ag_flash_attn.R:53-68), their "
     "as.numeric() uploads, the result and its join, and the same for the gradient and the "
     "three gradients in the backward (R/ag_flash_attn.R:319-363, 125-230)", 357.32},
    {"flash_causal", CPU, AGMEM_ACTIVATIONS, HOST, 0, MEASURED,
     "issue #16 measurement (flash fit grid, fit-layers.R): per pair of samples of a call of "
     "ag_flash_attention(causal = TRUE), the three-step peak once R collects: fitted -7.06, "
     "written 0; allocated per step (Rprofmem()): the seq x seq mask (.ag_flash_mask(), "
     "R/ag_flash_attn.R:83-96) and its as.numeric() upload in the forward and the backward",
     26.08},
    {"checkpoint", CPU, AGMEM_ACTIVATIONS, HOST, 0, MEASURED,
     "issue #16 measurement (measurements-checkpoint.csv, validate-long.R --grid=checkpoint): "
     "per unit and sample of a segment's output, nothing of its own: the segment is counted by "
     "its layers as if not checkpointed (its 100-step peaks 0.55 to 0.93 of host_high); "
     "allocated per step (Rprofmem(), measure-alloc.R --grid=checkpoint): -84 to +32 bytes per "
     "unit and sample of the segment's layers against the plain segment (the replay's second "
     "forward, and the closures' backward in place of the graph's), written 0", 0},
    {"checkpoint_layer", CPU, AGMEM_ACTIVATIONS, HOST, 0, MEASURED,
     "issue #16 measurement (measurements-nodes-segments.csv): each layer of a segment run "
     "under ag_checkpoint() after its first, nothing of its own in bytes (see \"checkpoint\"); "
     "it counts R's nodes, which grow with the segment's length", 0},

    /* ---- device "gpu": f32 in the device's pass pool ---- */
    {"input", GPU, AGMEM_ACTIVATIONS, DEVICE, 4, MEASURED,
     "issue #10 measurement (fit grid, pass pool): the f32 upload of the data X "
     "(R/autograd.R:312, .ag_operand at R/ag_device.R:2037)"},
    {"matmul", GPU, AGMEM_ACTIVATIONS, DEVICE, 8, MEASURED,
     "issue #10 measurement (fit grid, pass pool): half the fitted matmul + add; the f32 "
     "product (R/autograd.R:332) and its gradient in the backward graph", 0, AGMEM_BACKWARD_GRAPH},
    {"add", GPU, AGMEM_ACTIVATIONS, DEVICE, 8, MEASURED,
     "issue #10 measurement (fit grid, pass pool): half the fitted matmul + add; the f32 sum "
     "(R/autograd.R:403) and its gradient", 0, AGMEM_BACKWARD_GRAPH},
    {"relu", GPU, AGMEM_ACTIVATIONS, DEVICE, 12, MEASURED,
     "issue #10 measurement (fit grid, pass pool): a hidden relu layer over one without "
     "activation; the f32 output, the step mask (R/autograd.R:637, 649) and g * mask", 0,
     AGMEM_BACKWARD_GRAPH},
    {"sigmoid", GPU, AGMEM_ACTIVATIONS, DEVICE, 16, MEASURED,
     "issue #10 measurement (fit grid, pass pool): a hidden sigmoid layer over one without "
     "activation; the f32 output, its multiplier (R/autograd.R:670, 682) and g * mult", 0,
     AGMEM_BACKWARD_GRAPH},
    {"tanh", GPU, AGMEM_ACTIVATIONS, DEVICE, 16, MEASURED,
     "issue #10 measurement (fit grid, pass pool): a hidden tanh layer over one without "
     "activation; the f32 output, its multiplier (R/autograd.R:699, 709) and g * mult", 0,
     AGMEM_BACKWARD_GRAPH},
    {"softmax", GPU, AGMEM_ACTIVATIONS, DEVICE, 16, MEASURED,
     "issue #16 measurement (activations' softmax pairs, pass pool, fit-layers.R): a hidden "
     "softmax layer over a relu layer, on ten stacks with each: relu's 12 and 4.00 to 4.03 "
     "more per unit and sample (its f32 output p, R/autograd.R:733, kept for "
     "p * (g - colSums(p * g)) in the backward graph); the host does not grow with it", 0,
     AGMEM_BACKWARD_GRAPH},
    {"loss_mse", GPU, AGMEM_ACTIVATIONS, DEVICE, 12, MEASURED,
     "issue #10 measurement (fit grid, pass pool): the output layer with ag_mse_loss() over a "
     "layer without activation; the f32 difference kept on the device and the target's "
     "upload (R/autograd.R:782-786)"},
    {"loss_cross_entropy", GPU, AGMEM_ACTIVATIONS, DEVICE, 4, MEASURED,
     "issue #10 measurement (fit grid, pass pool): the output layer with "
     "ag_cross_entropy_loss() over a layer without activation; computed on the host from "
     "downloaded data (R/autograd.R:831-838), its gradient uploaded for the backward graph", 0,
     AGMEM_BACKWARD_GRAPH},
    {"loss_softmax_cross_entropy", GPU, AGMEM_ACTIVATIONS, DEVICE, 4, MEASURED,
     "issue #10 measurement (fit grid, pass pool): the output layer with "
     "ag_softmax_cross_entropy_loss() over a layer without activation; computed on the host "
     "(R/autograd.R:864-893), its gradient uploaded for the backward graph", 0,
     AGMEM_BACKWARD_GRAPH},

    {"dropout", GPU, AGMEM_ACTIVATIONS, DEVICE, 12, MEASURED,
     "issue #16 measurement (layers' fit grid in resident mode, fit-layers.R: 12.00 per unit "
     "and sample in every pair, three steps and 100): the f32 mask's upload, ag_mul()'s "
     "product (R/ag_layers.R:185-189) and g * mask in the backward graph "
     "(R/ag_backward_graph.R:654)", 0, AGMEM_BACKWARD_GRAPH},

    /* The attentions with the graph backward (every op ag_multihead_attention() and
       ag_flash_attention() record is one it emits: matmul, transpose, scale, softmax, mul, add,
       slice_rows, concat_rows, flash_attn; R/ag_backward_graph.R:272-275). Measured with
       measure-one.R on device "gpu" (measurements-attention-pools-gpu.csv, validate.R
       --grid=attention_pools_gpu: 64-128-10, 128-256-10 and 64-512-10 alone and with an
       attention of 1, 2 and 4 heads after the hidden layer, batches 64, 128 and 256, with its
       causal mask and its dropout; and with a flash block of 1 and 4 heads; fitted by
       fit-layers.R): what the pass pool grows by is, to the byte, 56 h b^2 + (104 d + 4) b +
       56 d^2 + 4 d for one head, and 56 h b^2 + 80 d b + (32 d + 4) h b + 64 d^2 + 4 d for
       h > 1 heads (d = d_model, b = the batch, the sequence). The parameters' 8 bytes each
       (their rules above) leave the rows below; the 4 bytes per head and sample are not
       counted (at most 4 KB at 4 heads and batch 256), nor 4 per bias scalar that the
       parameter rules count over. */
    {"attention", GPU, AGMEM_ACTIVATIONS, DEVICE, 80, MEASURED,
     "issue #16 measurement (measure-one.R, pass pool): per unit of d_model and sample, Q, K "
     "and V, each head's slices of them and its output, W_o's product and the bias "
     "(R/ag_layers.R:712-771), f32, and their gradients in the backward graph", 0,
     AGMEM_BACKWARD_GRAPH},
    {"attention_one_head", GPU, AGMEM_ACTIVATIONS, DEVICE, 24, MEASURED,
     "issue #16 measurement (measure-one.R, pass pool): per unit of d_model and sample of an "
     "attention of one head, 104 in all against 80 with more heads: its head goes to W_o "
     "without a concatenation (R/ag_layers.R:819)", 0, AGMEM_BACKWARD_GRAPH},
    {"attention_head", GPU, AGMEM_ACTIVATIONS, DEVICE, 56, MEASURED,
     "issue #16 measurement (measure-one.R, pass pool): per head and pair of samples, the "
     "scores, their scaling, the transposes around the softmax, the softmax and the transpose "
     "the weighted sum reads (R/ag_layers.R:735-763), f32, and their gradients", 0,
     AGMEM_BACKWARD_GRAPH},
    {"attention_slices", GPU, AGMEM_STEP_TRANSIENTS, DEVICE, 24, MEASURED,
     "issue #16 measurement (measure-one.R, pass pool): per d_model x d_model unit, over the "
     "parameter rules' 8 for each of W_q, W_k, W_v and W_o: the constant slice matrices' f32 "
     "upload (3 d_model^2, R/ag_layers.R:806-811) and their transposes in the backward graph", 0,
     AGMEM_BACKWARD_GRAPH},
    {"attention_concat", GPU, AGMEM_STEP_TRANSIENTS, DEVICE, 8, MEASURED,
     "issue #16 measurement (measure-one.R, pass pool): per d_model x d_model unit of an "
     "attention of more than one head, the constant matrices that place each head's rows "
     "(R/ag_layers.R:838-839, 842), f32, and their transposes in the backward graph", 0,
     AGMEM_BACKWARD_GRAPH},
    {"attention_block", GPU, AGMEM_ACTIVATIONS, DEVICE, 32, MEASURED,
     "issue #16 measurement (measure-one.R, pass pool): per head, unit of d_model and sample "
     "of an attention of more than one head, the head's block of d_model rows and the sum it "
     "goes into (R/ag_layers.R:842-843), f32, and their gradients", 0, AGMEM_BACKWARD_GRAPH},
    {"attention_causal", GPU, AGMEM_ACTIVATIONS, DEVICE, 8, MEASURED,
     "issue #16 measurement (measure-one.R, pass pool: 8.00 per head and pair in every "
     "configuration): the mask's f32 upload and the masked scores (R/ag_layers.R:869); "
     "the sum's gradient passes through", 0, AGMEM_BACKWARD_GRAPH},
    {"flash_attention", GPU, AGMEM_ACTIVATIONS, DEVICE, 64, MEASURED,
     "issue #16 measurement (measure-one.R, pass pool: a flash block grows it by 128 per unit "
     "of d_model and sample whatever the heads, its four ag_linear() 64 of it): the fused op's "
     "f32 result and the gradients of Q, K and V in the backward graph "
     "(R/ag_backward_graph.R:705-720)", 0, AGMEM_BACKWARD_GRAPH},
    {"flash_causal", GPU, AGMEM_ACTIVATIONS, DEVICE, 2, MEASURED,
     "issue #16 measurement (measure-one.R, pass pool: 2.00 per pair of samples whatever the "
     "heads): the causal mask, kept in f16 as the fused kernel reads it", 0,
     AGMEM_BACKWARD_GRAPH},

    /* ---- device "gpu": the pass pool when backward() runs on the host (a batch norm or a
       layer norm in the model, AGMEM_BACKWARD_HOST): the forward's f32 results alone, as no
       backward tensor is made on the device (R/autograd.R:1004-1031). Measured with
       measure-one.R on device "gpu" (256-512-512-10 after a layer norm on each hidden layer,
       batches 128 and 256, each activation and loss, and with a batch norm, in eval mode, and
       with dropout): per unit and sample, exact to the byte over 128 samples. "input" and
       "loss_mse" hold on both paths (above), and a dropout has a row for each path. ---- */
    {"matmul", GPU, AGMEM_ACTIVATIONS, DEVICE, 4, MEASURED,
     "issue #16 measurement (pass pool, backward on the host): the f32 product W x "
     "(R/autograd.R:332)", 0, AGMEM_BACKWARD_HOST},
    {"add", GPU, AGMEM_ACTIVATIONS, DEVICE, 4, MEASURED,
     "issue #16 measurement (pass pool, backward on the host): the f32 sum with the bias "
     "(R/autograd.R:403)", 0, AGMEM_BACKWARD_HOST},
    {"relu", GPU, AGMEM_ACTIVATIONS, DEVICE, 8, MEASURED,
     "issue #16 measurement (pass pool, backward on the host): the f32 output and its step "
     "mask (R/autograd.R:637, 649)", 0, AGMEM_BACKWARD_HOST},
    {"sigmoid", GPU, AGMEM_ACTIVATIONS, DEVICE, 12, MEASURED,
     "issue #16 measurement (pass pool, backward on the host): the f32 output and its "
     "multiplier's parts (R/autograd.R:670, 682)", 0, AGMEM_BACKWARD_HOST},
    {"tanh", GPU, AGMEM_ACTIVATIONS, DEVICE, 12, MEASURED,
     "issue #16 measurement (pass pool, backward on the host): the f32 output and its "
     "multiplier's parts (R/autograd.R:699, 709)", 0, AGMEM_BACKWARD_HOST},
    {"softmax", GPU, AGMEM_ACTIVATIONS, DEVICE, 4, MEASURED,
     "issue #16 measurement (pass pool, backward on the host): the f32 output p "
     "(R/autograd.R:733)", 0, AGMEM_BACKWARD_HOST},
    {"loss_cross_entropy", GPU, AGMEM_ACTIVATIONS, DEVICE, 0, MEASURED,
     "issue #16 measurement (pass pool, backward on the host): computed on the host from "
     "downloaded data (R/autograd.R:831-838); nothing is uploaded for a backward graph", 0,
     AGMEM_BACKWARD_HOST},
    {"loss_softmax_cross_entropy", GPU, AGMEM_ACTIVATIONS, DEVICE, 0, MEASURED,
     "issue #16 measurement (pass pool, backward on the host): computed on the host "
     "(R/autograd.R:864-893); nothing is uploaded for a backward graph", 0,
     AGMEM_BACKWARD_HOST},
    {"batch_norm", GPU, AGMEM_ACTIVATIONS, DEVICE, 20, MEASURED,
     "issue #16 measurement (pass pool; its backward is always on the host): the uploads of "
     "x_hat and of gamma and beta broadcast to the input's size (R/ag_layers.R:312, 216, 236) "
     "and the results of ag_mul() and ag_add() (R/ag_layers.R:227, 247), f32", 0},
    {"batch_norm_eval", GPU, AGMEM_ACTIVATIONS, DEVICE, 20, MEASURED,
     "issue #16 measurement (pass pool; its backward is always on the host): as in training "
     "mode, x_hat from the running statistics (R/ag_layers.R:299-302)", 0},
    {"layer_norm", GPU, AGMEM_ACTIVATIONS, DEVICE, 4, MEASURED,
     "issue #16 measurement (pass pool; its backward is always on the host): its output, a "
     "host ag_tensor (R/ag_layers.R:440), uploaded when the next op reads it "
     "(R/ag_device.R:2065), f32", 0},
    /* The attentions in a model whose backward runs on the host (a transformer block's layer
       norm): measure-one.R on device "gpu", 128-256-10 and 64-512-10 with a layer norm after the
       hidden layer, alone and with an attention of 1, 2 and 4 heads (with its causal mask and its
       dropout at 4) or a flash block of 4 heads, batches 64 and 256: the pass pool grows, to the
       byte, by 24 h b^2 + 48 d b + 40 d^2 for one head and 24 h b^2 + (44 + 8 h) d b + 48 d^2
       for h > 1 (the parameters' transposed copies, 4 bytes each above, leave the rows below);
       the forward's f32 results alone. */
    {"attention", GPU, AGMEM_ACTIVATIONS, DEVICE, 44, MEASURED,
     "issue #16 measurement (measure-one.R, pass pool, backward on the host): per unit of "
     "d_model and sample, the f32 results of the projections, the heads' slices and outputs, "
     "W_o's product and the bias (R/ag_layers.R:712-771)", 0, AGMEM_BACKWARD_HOST},
    {"attention_one_head", GPU, AGMEM_ACTIVATIONS, DEVICE, 4, MEASURED,
     "issue #16 measurement (measure-one.R, pass pool, backward on the host): per unit of "
     "d_model and sample of an attention of one head, 48 in all against 44 with more heads "
     "(R/ag_layers.R:819)", 0, AGMEM_BACKWARD_HOST},
    {"attention_head", GPU, AGMEM_ACTIVATIONS, DEVICE, 24, MEASURED,
     "issue #16 measurement (measure-one.R, pass pool, backward on the host): per head and "
     "pair of samples, the f32 scores, their scaling, the softmax and its transposes "
     "(R/ag_layers.R:735-763)", 0, AGMEM_BACKWARD_HOST},
    {"attention_slices", GPU, AGMEM_STEP_TRANSIENTS, DEVICE, 24, MEASURED,
     "issue #16 measurement (measure-one.R, pass pool, backward on the host): per d_model x "
     "d_model unit, over the parameter rules' 4 for each of W_q, W_k, W_v and W_o: the slice "
     "matrices' f32 upload (R/ag_layers.R:806-811) and the transposed copy the product makes "
     "of each", 0, AGMEM_BACKWARD_HOST},
    {"attention_concat", GPU, AGMEM_STEP_TRANSIENTS, DEVICE, 8, MEASURED,
     "issue #16 measurement (measure-one.R, pass pool, backward on the host): per d_model x "
     "d_model unit of an attention of more than one head, the matrices that place each "
     "head's rows (R/ag_layers.R:838-839, 842) and their transposed copies", 0,
     AGMEM_BACKWARD_HOST},
    {"attention_block", GPU, AGMEM_ACTIVATIONS, DEVICE, 8, MEASURED,
     "issue #16 measurement (measure-one.R, pass pool, backward on the host): per head, unit "
     "of d_model and sample of an attention of more than one head, the head's f32 block and "
     "the sum it goes into (R/ag_layers.R:842-843)", 0, AGMEM_BACKWARD_HOST},
    {"attention_causal", GPU, AGMEM_ACTIVATIONS, DEVICE, 8, MEASURED,
     "issue #16 measurement (measure-one.R, pass pool, backward on the host: 8.00 per head and "
     "pair): the mask's f32 upload and the masked scores (R/ag_layers.R:869)", 0,
     AGMEM_BACKWARD_HOST},
    {"flash_attention", GPU, AGMEM_ACTIVATIONS, DEVICE, 24, MEASURED,
     "issue #16 measurement (measure-one.R, pass pool, backward on the host: a flash block "
     "grows it by 56 per unit of d_model and sample, its four ag_linear() 32 of it): the fused "
     "op's f32 result and what it reads", 0, AGMEM_BACKWARD_HOST},
    {"flash_causal", GPU, AGMEM_ACTIVATIONS, DEVICE, 2, MEASURED,
     "issue #16 measurement (measure-one.R, pass pool, backward on the host: 2.00 per pair "
     "of samples): the causal mask in f16", 0, AGMEM_BACKWARD_HOST},
    {"checkpoint", GPU, AGMEM_ACTIVATIONS, DEVICE, 0, MEASURED,
     "issue #16 measurement (measurements-checkpoint-gpu.csv, validate-long.R "
     "--grid=checkpoint_gpu): a segment run under ag_checkpoint() sends the backward to the "
     "host's closures (its record has no op, R/ag_checkpoint.R:170-181), which compute on the "
     "device's tensors: the pass pool was 0.2% to 6% under the same model without the "
     "checkpoint, whose graph backward's rows agmem keeps (the segment's first forward and its "
     "replay are not kept apart); nothing of its own", 0},
    {"checkpoint_layer", GPU, AGMEM_ACTIVATIONS, DEVICE, 0, MEASURED,
     "issue #16 measurement (measurements-checkpoint-gpu.csv): each layer of a checkpointed "
     "segment after its first, nothing of its own (see \"checkpoint\")", 0},
    {"dropout", GPU, AGMEM_ACTIVATIONS, DEVICE, 8, MEASURED,
     "issue #16 measurement (pass pool, backward on the host): the f32 mask's upload and "
     "ag_mul()'s product (R/ag_layers.R:185-189)", 0, AGMEM_BACKWARD_HOST},
    {"embedding", GPU, AGMEM_ACTIVATIONS, DEVICE, 4, MEASURED,
     "issue #16 measurement (measure-one.R, 256-128-10 after ag_embedding(2000, 256), batches "
     "128 and 256: 3152 bytes a sample in the pass pool, the lookup's 1024 and the dense "
     "layers'; its backward is always on the host, as it is recorded without an op, "
     "R/ag_layers.R:565): its output, a host ag_tensor of the looked-up columns "
     "(R/ag_layers.R:545-547), uploaded when the next op reads it, f32", 0},
    {"embedding_table", GPU, AGMEM_STEP_TRANSIENTS, DEVICE, -4, MEASURED,
     "issue #16 measurement (measure-one.R, 256-128-10 after ag_embedding() of 1000 and 3000 "
     "tokens, each optimizer): per scalar of the table, the pools grew by 16.00 with Adam (the "
     "weight 4, its moments 8, the gradient's upload at the step 4) and 4.00 with SGD (the "
     "weight): the parameter rules' 4 for the transposed copy of a weight a matmul reads is "
     "not made for a table, which the lookup reads from a host copy (R/ag_layers.R:544); its "
     "gradient is an R matrix (R/ag_layers.R:556-561)", 0},

    /* ---- device "gpu": host side (RSS growth less the device pools, see above) ---- */
    {"input", GPU, AGMEM_ACTIVATIONS, HOST, 86, MEASURED,
     "issue #10 measurement (fit grid): per input unit and sample on the host; the data's "
     "upload copies it to a plain vector each step (R/ag_device.R:1650)", 8},
    {"loss_mse", GPU, AGMEM_ACTIVATIONS, HOST, 0, MEASURED,
     "issue #10 measurement (fit grid): per output unit and sample on the host with "
     "ag_mse_loss(); the target's upload copy each step (R/autograd.R:782, R/ag_device.R:1650)",
     8},
    {"loss_cross_entropy", GPU, AGMEM_ACTIVATIONS, HOST, 56, MEASURED,
     "issue #10 measurement (fit grid): per output unit and sample on the host with "
     "ag_cross_entropy_loss(), which downloads pred and computes in R doubles "
     "(R/autograd.R:831-849), and the gradient's upload copy", 56},
    {"loss_softmax_cross_entropy", GPU, AGMEM_ACTIVATIONS, HOST, 105, MEASURED,
     "issue #10 measurement (fit grid): per output unit and sample on the host with "
     "ag_softmax_cross_entropy_loss(), which downloads the logits and computes in R doubles "
     "(R/autograd.R:864-903), and the gradient's upload copy", 96},
    {"dropout", GPU, AGMEM_ACTIVATIONS, HOST, 29.16, MEASURED,
     "issue #16 measurement (layers' fit grid in resident mode, fit-layers.R): per unit and "
     "sample of ag_dropout() with the graph backward, the bytes live at R's full collections "
     "(as agmem_live_rules; the three-step pairs over the first headroom both end at it); "
     "allocated per step, fitted on the three-step pairs under it: the input's download, "
     "runif(), the comparison, the scaled mask and its matrix() copy, the mask's upload "
     "(R/ag_layers.R:183-189)", 90.68, AGMEM_BACKWARD_GRAPH},
    /* The attentions in resident mode with the graph backward, on the host: fitted by
       fit-layers.R on the fit grids run in resident mode (measurements-attention-fit-gpu.csv,
       100 steps; measurements-attention-alloc-gpu.csv, Rprofmem() over a step), per term, a
       term fitted below 0 dropped: the three-step peak once R collects is bounded by the bytes
       live at full collections (agmem_live_rules), which a three-step run was not measured for;
       the scores stay on the device. */
    {"attention", GPU, AGMEM_ACTIVATIONS, HOST, 26.45, MEASURED,
     "issue #16 measurement (attention's fit grids in resident mode, fit-layers.R): per unit of "
     "d_model and sample, the bytes live at full collections; allocated per step (Rprofmem()): "
     "the downloads of Q, K and V (.ag_data(), R/ag_layers.R:717-718, 802) and the gradients "
     "backward() hands back", 15.59, AGMEM_BACKWARD_GRAPH},
    {"attention_one_head", GPU, AGMEM_ACTIVATIONS, HOST, 6.09, MEASURED,
     "issue #16 measurement (attention's fit grids in resident mode, fit-layers.R): per head, "
     "unit of d_model and sample, as attention_block's (each head reads its slices of Q, K and "
     "V the same way whatever the heads)", 11.58, AGMEM_BACKWARD_GRAPH},
    {"attention_block", GPU, AGMEM_ACTIVATIONS, HOST, 6.09, MEASURED,
     "issue #16 measurement (attention's fit grids in resident mode, fit-layers.R): per head, "
     "unit of d_model and sample, the bytes live at full collections; allocated per step "
     "(Rprofmem()): the head's slices and its download for the concatenation "
     "(R/ag_layers.R:802, 822)", 11.58, AGMEM_BACKWARD_GRAPH},
    {"attention_head", GPU, AGMEM_ACTIVATIONS, HOST, 0, MEASURED,
     "issue #16 measurement (attention's fit grids in resident mode, fit-layers.R): the scores "
     "and the softmax stay on the device; no per-pair term fits on the host", 0,
     AGMEM_BACKWARD_GRAPH},
    {"attention_slices", GPU, AGMEM_STEP_TRANSIENTS, HOST, 0, MEASURED,
     "issue #16 measurement (attention's fit grids in resident mode, fit-layers.R): per d_model "
     "x d_model unit, over the parameter rules (device \"gpu\"'s host figures per parameter, "
     "which count the attention's 4 d_model^2 weights): fitted below 0, written 0", 0,
     AGMEM_BACKWARD_GRAPH},
    {"attention_concat", GPU, AGMEM_STEP_TRANSIENTS, HOST, 11.81, MEASURED,
     "issue #16 measurement (attention's fit grids in resident mode, fit-layers.R): per d_model "
     "x d_model unit of an attention of more than one head, the bytes live at full "
     "collections (the placement matrices on the tape, R/ag_layers.R:838-839); allocated per "
     "step (Rprofmem())", 7.52, AGMEM_BACKWARD_GRAPH},
    {"attention_causal", GPU, AGMEM_ACTIVATIONS, HOST, 31.96, MEASURED,
     "issue #16 measurement (causal fit grid in resident mode, fit-layers.R): per head and pair "
     "of samples, the bytes live at full collections, taken for the three-step peak once R "
     "collects: the seq x seq doubles R builds for the mask and keeps on the tape, the head's "
     "scores it reads back and the mask's conversion for the upload (.ag_causal_mask(), "
     "R/ag_layers.R:860-870); allocated per step (Rprofmem(), "
     "measurements-attention-causal-alloc-gpu.csv: 32.01 to 32.88 per head and pair)", 32.03,
     AGMEM_BACKWARD_GRAPH},
    {"flash_attention", GPU, AGMEM_ACTIVATIONS, HOST, 0, MEASURED,
     "issue #16 measurement (flash fit grid in resident mode, fit-layers.R): per unit of "
     "d_model and sample over its block's four ag_linear() at the table's figures, allocated "
     "per step (Rprofmem()): fitted below 0, written 0; the fused op's operands and results "
     "stay on the device (R/ag_backward_graph.R:705-725); no run collected in full, so the "
     "three-step peak once R collects is written 0 too", 0, AGMEM_BACKWARD_GRAPH},
    {"flash_causal", GPU, AGMEM_ACTIVATIONS, HOST, 8, MEASURED,
     "issue #16 measurement (fit-layers.R) and source: per pair of samples, the seq x seq "
     "doubles of the mask R builds and keeps for the backward (.ag_flash_mask(), "
     "R/ag_flash_attn.R:83-96), 8 B a pair from the source; allocated per step (Rprofmem())",
     18.09, AGMEM_BACKWARD_GRAPH},
};
const R_xlen_t agmem_n_unit_rules = sizeof agmem_unit_rules / sizeof agmem_unit_rules[0];

/* The host's garbage-collection regime (model.c, host_regime()), for each device.
 *
 * Device "cpu" has the regime of a whole run (model.c, whole_run()): the validation measures the
 * peak of a training loop of 100 steps (inst/validation/measure-long.R, the loop of ggmlR's
 * autograd vignette). Until R's vector heap reaches its first trigger nothing is collected and
 * the peak follows the bytes allocated; after, the heap climbs to the trigger between
 * collections, and the trigger settles where R's policy (AdjustHeapSize() in R's
 * src/main/memory.c) puts it for the heap live at its full collections (agmem_live_rules).
 * A run of at most three steps keeps the regime of a few steps (model.c, few_steps()), measured
 * on the first three steps (inst/validation/measure-one.R).
 * Device "gpu" (resident mode) has both regimes too, for its host: what R holds while the graph
 * backward runs the step on the device (the data, the mini-batch, the gradients it hands back to
 * R, the graph's R objects). Its figures are fitted as device "cpu"'s, on the same long fit grid
 * run with ag_device("gpu") (measurements-long-fit-gpu.csv: the host is the RSS growth less the
 * device pools). A model whose backward runs on the host (a batch norm or a layer norm) takes
 * device "cpu"'s figures (model.c, backward_path()) but for its own rows below. R's own
 * constants (device "any") are the same on both. */
const char *const agmem_gc_names[AGMEM_N_GC] = {
    "steps", "alloc_scale", "alloc_offset", "headroom", "heap_start", "vsize", "min_free_frac",
    "grow_frac", "grow_incr_frac", "grow_incr_min", "kept_excess", "node_step", "node_once",
    "node_bytes", "node_headroom", "node_free", "node_apart", "unit_share", "live_sd",
    "trigger_place", "level0_freq", "promoted", "level1_freq"
};
const agmem_gc_rule agmem_gc_rules[] = {
    /* device, figure, value, cite, backward (AGMEM_BACKWARD_ANY when not written) */
    {CPU, AGMEM_GC_STEPS, 3,
     "issue #10 protocol: the peak of building the model and optimizer, then three steps; a "
     "run of at most this many steps is planned on the few steps' regime, with the headroom "
     "below"},
    {CPU, AGMEM_GC_HEADROOM, 56120320,
     "issue #10 measurement (fit grid, configurations whose peak is R's first collection): "
     "the plateau, R's default vector trigger of 64 MiB less the heap in use after loading "
     "ggmlR and the data"},
    {CPU, AGMEM_GC_ALLOC_SCALE, 0.909,
     "issue #10 measurement (fit grid, configurations that end before R's first "
     "collection): measured peak per byte allocated as counted from the source (freed pages "
     "the process already holds take part of it)"},
    {CPU, AGMEM_GC_ALLOC_OFFSET, -1715200,
     "issue #10 measurement (fit grid, the same configurations): the intercept of that fit"},
    {CPU, AGMEM_GC_HEAP_START, 6447476,
     "issue #15 measurement (long fit grid, measurements-long-fit.csv): R's vector heap in use "
     "once R and ggmlR are loaded, the median over the runs of gc()'s Vcells used at the start "
     "less the data set (6.42 to 6.47 MB)"},
    {ANY, AGMEM_GC_VSIZE, 67108864,
     "R's source, src/include/Defn.h: R_VSIZE, the vector heap's first trigger (64 MiB), "
     "which gc() reports as Vcells' gc trigger at start-up"},
    {ANY, AGMEM_GC_MIN_FREE_FRAC, 0.2,
     "R's source, src/main/memory.c: R_MinFreeFrac; AdjustHeapSize() counts this fraction "
     "of the first trigger on top of the heap in use"},
    {ANY, AGMEM_GC_GROW_FRAC, 0.7,
     "R's source, src/main/memory.c: R_VGrowFrac; a full collection that leaves the heap "
     "needed above this fraction of the trigger grows the trigger"},
    {ANY, AGMEM_GC_GROW_INCR_FRAC, 0.2,
     "R's source, src/main/memory.c: R_VGrowIncrFrac, the growth's share of the trigger"},
    {ANY, AGMEM_GC_GROW_INCR_MIN, 640000,
     "R's source, src/main/memory.c: R_VGrowIncrMin, 80000 vector cells of 8 bytes, the "
     "growth's fixed part"},
    {ANY, AGMEM_GC_LEVEL0_FREQ, 20,
     "R's source, src/main/memory.c: LEVEL_0_FREQ; after this many level-0 collections (the "
     "youngest generation) R collects the two youngest: what was live at a level-0 collection "
     "and dies after it stays in the heap until then"},
    {ANY, AGMEM_GC_LEVEL1_FREQ, 5,
     "R's source, src/main/memory.c: LEVEL_1_FREQ; after this many level-1 collections R "
     "collects in full (RunGenCollect()), so a full collection comes once in (LEVEL_0_FREQ + 1) "
     "x (LEVEL_1_FREQ + 1) = 126 collections unless one leaves too little free; only a full "
     "collection grows the trigger (AdjustHeapSize())"},
    {CPU, AGMEM_GC_KEPT_EXCESS, 16346871,
     "issue #15 measurement (long fit grid, measurements-long-fit.csv): the most the resident "
     "memory over R's heap peak went past the C allocator's fitted figures (retained, "
     "agmem_live_rules), 16.35 MB in 128 runs; the highest peak allows for it"},
    {CPU, AGMEM_GC_NODE_STEP, 1216,
     "issue #15 measurement (inst/validation/measure-nodes.R, measurements-nodes.csv: gc()'s "
     "Ncells \"max used\" over 10 steps with R's triggers out of reach, 75 runs, residuals "
     "-253 to 42 nodes): the R nodes (cons cells) a step of the loop allocates besides its "
     "ops' and its parameter tensors' (agmem_live_rules), with ag_mse_loss()"},
    {CPU, AGMEM_GC_NODE_ONCE, 180665,
     "issue #15 measurement (measure-nodes.R --grid=once, measurements-nodes-once.csv: "
     "measure-long.R's loop run for 50 and 100 steps with R's triggers out of reach, 177503 "
     "to 188498 nodes in six models, the median): the nodes a run allocates once, building "
     "the model and R's byte-code compiler on the first calls of the loop's own code"},
    {ANY, AGMEM_GC_NODE_BYTES, 56,
     "R's source, src/include/Defn.h (SEXPREC: a header and three pointers) and ?Memory: a "
     "node is 56 bytes on a 64-bit platform"},
    {CPU, AGMEM_GC_NODE_HEADROOM, 529231,
     "issue #15 measurement (measure-nodes.R, measurements-nodes.csv, the three runs under "
     "R's default triggers, R 4.2.2 with ggmlR loaded): R's node trigger R_NSize less the "
     "nodes in use where measure-long.R takes its baseline, 526973 to 529292, the median; R "
     "collects once a run has allocated this many"},
    {CPU, AGMEM_GC_NODE_FREE, 17824025,
     "issue #15 measurement (long fit grid, measurements-long-fit.csv): the bytes of nodes "
     "that fill memory the process already holds (free pages and blocks from before the "
     "loop), fitted on the fit grid's runs whose vector heap stayed below R's first trigger "
     "with at most one collection, the nodes' (64-10 at batches 64 and 128: the peak with "
     "none of it free over the measured by 14.42 and 21.23 MB, their mean)"},
    {CPU, AGMEM_GC_NODE_APART, 0,
     "issue #15 measurement (long fit grid, measurements-long-fit.csv): the allocator's "
     "retained figures (agmem_live_rules) were fitted on the RSS peak less R's vector heap, "
     "so they hold the pages of R's nodes; the ceiling does not count them again"},
    {CPU, AGMEM_GC_UNIT_SHARE, 1,
     "issue #15 measurement (long fit grid): the per-unit figures of agmem_live_rules are "
     "device \"cpu\"'s own, fitted on its runs; they count whole"},
    {CPU, AGMEM_GC_LIVE_SD, 5395158,
     "issue #15 measurement (long fit grid, measurements-long-fit.csv): the standard deviation "
     "of the bytes live at R's full collections less agmem's live figures, over the 101 runs "
     "that collected in full (mean -0.46 MB; fit-long.R); R's trigger is a staircase in them, so the "
     "whole run's peak takes the trigger expected over that error (model.c, "
     "expected_trigger())"},
    {CPU, AGMEM_GC_TRIGGER_PLACE, 0.2433,
     "issue #15 measurement (long fit grid, measurements-long-fit.csv): where R's trigger ends "
     "in its range when the heap needed at a full collection passes R_VSIZE, between needed / "
     "R_VGrowFrac and (1 + R_VGrowIncrFrac) times that plus R_VGrowIncrMin (AdjustHeapSize() "
     "sets a trigger below the heap needed to it, then grows it; which full collection did so "
     "decides the place): the median over the 47 such runs of the fit grid of the trigger's "
     "place, 0 at the bottom and 1 at the top (quartiles 0.04 and 0.53; fit-long.R)"},
    {GPU, AGMEM_GC_STEPS, 3,
     "issue #10 protocol: the peak of building the model and optimizer, then three steps"},
    {GPU, AGMEM_GC_ALLOC_SCALE, 0.782,
     "issue #10 measurement (fit grid, device \"gpu\", host RSS growth less the device pools, "
     "configurations that end before R's first collection): measured per counted byte"},
    {GPU, AGMEM_GC_ALLOC_OFFSET, -12288,
     "issue #10 measurement (fit grid, device \"gpu\", the same configurations): the "
     "intercept of that fit"},
    {GPU, AGMEM_GC_HEADROOM, 54362112,
     "issue #10 measurement (fit grid, device \"gpu\", configurations whose host peak is R's "
     "first collection): the plateau"},
    {GPU, AGMEM_GC_HEAP_START, 6674564,
     "issue #15 measurement (long fit grid in resident mode, measurements-long-fit-gpu.csv): "
     "R's vector heap in use once R and ggmlR are loaded and ag_device(\"gpu\") is set, the "
     "median over the runs of gc()'s Vcells used at the start less the data set (6.66 to 6.74 MB)"},
    {GPU, AGMEM_GC_KEPT_EXCESS, 86987935,
     "issue #15 measurement (long fit grid in resident mode, measurements-long-fit-gpu.csv): the "
     "most the host's resident memory over R's heap peak went past the fitted figures "
     "(retained, agmem_live_rules, and the nodes' pages), 86.99 MB in 128 runs (1536-10, "
     "sgd_plain, "
     "batch 2048, 350.4 MB; the same run made twice more peaked at 272.8 MB both times); the "
     "highest peak allows for it"},
    {GPU, AGMEM_GC_NODE_STEP, 5505,
     "issue #15 measurement (measure-nodes.R --device=gpu, measurements-nodes-gpu.csv: gc()'s "
     "Ncells \"max used\" over 10 steps with R's triggers out of reach, 59 runs, residuals "
     "-542 to 737 nodes): the R nodes a step of the loop allocates in resident mode besides its "
     "ops' and its parameter tensors', with ag_cross_entropy_loss() (the graph's R objects: "
     "every op of a step is built anew)"},
    {GPU, AGMEM_GC_NODE_ONCE, 208478,
     "issue #15 measurement (measure-nodes.R --grid=once --device=gpu, "
     "measurements-nodes-once-gpu.csv: 203153 to 233206 nodes in four models, the median): the "
     "nodes a run allocates once in resident mode"},
    {GPU, AGMEM_GC_NODE_HEADROOM, 548024,
     "issue #15 measurement (measure-nodes.R --device=gpu, measurements-nodes-gpu.csv, the "
     "three runs under R's default triggers): R's node trigger less the nodes in use where "
     "measure-long.R takes its baseline, 546830 to 548532, the median"},
    {GPU, AGMEM_GC_NODE_BYTES, 61.48,
     "issue #15 measurement (long fit grid in resident mode, measurements-long-fit-gpu.csv): "
     "the resident memory a node in use at the run's most adds, fitted with the RSS peak less "
     "the pools and R's vector heap on the most nodes each run had in use over its start "
     "(gc()'s Ncells \"max used\": 143 599 to 549 268, R's node trigger in 38 of the 128 "
     "runs, fewer where the vectors set off the collections first; standard error 10.06): a "
     "node's 56 bytes and the pages it holds"},
    {GPU, AGMEM_GC_NODE_FREE, 20187401,
     "issue #15 measurement (long fit grid in resident mode, measurements-long-fit-gpu.csv): "
     "the bytes of nodes that fill memory the process already holds: the nodes' pages are "
     "node_bytes times the nodes in use at the run's most (model.c's node_race()) less this, "
     "the intercept of the same fit (standard error 4.36 MB)"},
    {GPU, AGMEM_GC_NODE_APART, 1,
     "issue #15 measurement (long fit grid in resident mode, measurements-long-fit-gpu.csv): "
     "the pages of R's nodes are counted apart from the allocator's retained figures, which "
     "were fitted on the RSS peak less the pools, R's vector heap and the nodes' pages; the "
     "graph's R objects make a step allocate 17 000 to 90 000 nodes, so every run of the grid "
     "reached R's node trigger while most never reached the vector heap's"},
    {GPU, AGMEM_GC_UNIT_SHARE, 1,
     "issue #15 measurement (long fit grid in resident mode): the per-unit figures of "
     "agmem_live_rules for device \"gpu\" are its own, fitted on its runs; they count whole"},
    {GPU, AGMEM_GC_LIVE_SD, 0,
     "issue #15 measurement (long fit grid in resident mode, measurements-long-fit-gpu.csv): "
     "the host's bytes live at R's full collections differ from agmem's live figures by a "
     "standard deviation of 5.26 MB over the 73 runs that collected in full, but taking the "
     "trigger expected over that error left the fit grid's runs within tolerance as they were "
     "(88 of 128) and its mean error as it was (0.161 and 0.162 in log ratio): R's nodes set "
     "off most collections in resident mode, so the settled trigger is taken"},
    {GPU, AGMEM_GC_PROMOTED, 0.568,
     "issue #15 measurement (long fit grid in resident mode, measurements-long-fit-gpu.csv): "
     "the share of a step's mini-batch bytes (agmem_host_rules' batch rows) that each "
     "collection R's nodes set off leaves in the heap as old garbage, until a level-1 "
     "collection: fitted on R's heap peak (gc()'s \"max used\" over the start) of the 24 runs "
     "whose nodes set off every collection (fit-long.R)"},
    {GPU, AGMEM_GC_TRIGGER_PLACE, 0.2551,
     "issue #15 measurement (long fit grid in resident mode, measurements-long-fit-gpu.csv): "
     "where R's trigger ends in its range when the heap needed at a full collection passes "
     "R_VSIZE, as on device \"cpu\": the median over the 26 such runs (quartiles 0.08 and "
     "0.54; fit-long.R)"},

    /* The host path in resident mode: a model of device "gpu" whose backward runs on the host
       (a batch norm or a layer norm, model.c's backward_path()) takes device "cpu"'s figures
       but these, fitted by inst/validation/fit-layers.R on measurements-layers-host-gpu.csv
       (validate-long.R --grid=layers_host_gpu: the layers' fit grid's runs with either layer,
       100 steps and one more under gctorture()). */
    {GPU, AGMEM_GC_UNIT_SHARE, 0.64,
     "issue #16 measurement (layers' fit grid with a batch norm or a layer norm in resident "
     "mode, 20 runs, fit-layers.R): the host holds this share of device \"cpu\"'s bytes per "
     "unit and sample (live, the step's largest and retained): backward() runs the tape's R "
     "closures on the host (R/autograd.R:1004-1031), but the forward's values are in the "
     "device's pass pool; standard error 0.03",
     AGMEM_BACKWARD_HOST},
    {GPU, AGMEM_GC_LIVE_SD, 0,
     "issue #16 measurement (the same 20 runs): as on resident mode's graph path, the settled "
     "trigger: the trigger expected over device \"cpu\"'s live error (live_sd) left the runs "
     "within tolerance as they were (19 of 20) and raised their mean error (0.047 to 0.053 in "
     "log ratio)",
     AGMEM_BACKWARD_HOST},
    {GPU, AGMEM_GC_NODE_APART, 1,
     "issue #16 measurement (the same 20 runs): every run reached R's node trigger, and the "
     "host's RSS over R's heap peak less the pools has an intercept, the nodes' pages, which "
     "are counted apart as on resident mode's graph path",
     AGMEM_BACKWARD_HOST},
    {GPU, AGMEM_GC_NODE_FREE, 21215357,
     "issue #16 measurement (the same 20 runs): node_bytes times device \"cpu\"'s node "
     "headroom less that intercept (8.42 MB, standard error 1.82)",
     AGMEM_BACKWARD_HOST},
};

const R_xlen_t agmem_n_gc_rules = sizeof agmem_gc_rules / sizeof agmem_gc_rules[0];

/* The bytes live at R's full collections during a whole run on device "cpu", by least squares
 * on the long fit grid (measurements-long-fit.csv, 128 runs of 100 steps): gc()'s report of the
 * vector heap after each full collection (gcinfo(), level 2), its largest over the run, less the
 * heap at the start. Per parameter for each optimizer: the weight, its gradient (twice while
 * `grads` holds the last step's), the optimizer state and the temporaries of one parameter's
 * update; per unit and sample: the tape's activations and their gradients
 * (R/autograd.R:340-421), fitted per activation of the hidden layers and per loss of the output
 * layer.
 * `retained`, per parameter and per unit and sample: the resident memory over R's heap peak (the
 * 100-step RSS peak less gc()'s "max used" over the start), by least squares on the same runs,
 * per optimizer and over all units. It is the C
 * allocator's: with MALLOC_MMAP_THRESHOLD_=131072 (glibc's threshold fixed, every large block
 * mapped and unmapped) a 512-2048-1024 adam run peaked at 318.8 MB, against 394.1 MB with
 * glibc's default dynamic threshold, for the same R heap.
 * `step_max`, per parameter and per unit and sample: the largest heap live at any point of a
 * step of the loop, by least squares on the same 128 configurations run for 5 steps and one
 * more under gctorture() (measurements-step-max.csv: gc()'s "max used" over that step, less the
 * heap at the start; R collects before every allocation, so it is the live heap plus the
 * allocation being made, to the byte). It is measured exactly where the live heap at full
 * collections is a sample: over the fit grid that sample was 0.51 to 0.99 of it (median 0.89).
 * The planners plan on it (model.c, whole_run()). Per unit and sample it is 15.88 for the input,
 * 91.66 for a relu layer, 94.09 for a tanh layer, 93.50 for an output layer with mse and 159.12
 * with softmax cross-entropy.
 * Under Adam both are fitted with a term per scalar of the model's largest tensor too
 * (`largest`, `largest_max`): the update of each tensor holds m_hat, v_hat and the expression's
 * temporaries at once, of that tensor's size (R/autograd.R:1584-1593), so the step's largest live
 * heap is the largest tensor's update. With it the step's largest came out at 35.02 bytes per
 * parameter (weight, gradient, m and v) and 31.99 per scalar of the largest tensor (t = 15.3),
 * against 53.78 per parameter without it.
 * The layers' rows (batch norm, dropout, layer norm) are fitted by inst/validation/fit-layers.R
 * on their own fit grid (measurements-layers-fit.csv): what a run with the layer after each
 * hidden layer differs by from the same dense stack without it (design/layers.md). So are
 * sigmoid's, softmax's and ag_cross_entropy_loss()'s (measurements-activations-*.csv): what a
 * run with them differs by from the same stack with relu and the fused loss.
 * `nodes` and `nodes_sample`: the R nodes (cons cells) a step of the loop allocates, per op (or,
 * in a per-parameter row, per parameter tensor, over optimizer_sgd() without momentum) and per
 * op and sample, by least squares on 75 runs of inst/validation/measure-nodes.R with R's
 * triggers out of reach (measurements-nodes.csv: gc()'s Ncells "max used" over 10 steps,
 * residuals -253 to 42 nodes a step). An op always used with another is fitted with it: an
 * ag_linear()'s add and its two tensors with its matmul, an embedding's lookup with its table.
 * The ops the 75 runs do not have (eval-mode batch norm, ag_checkpoint(), the embedding, an
 * attention of more than one head, its causal mask and its dropout, flash attention) are fitted
 * the same way over those figures, which they leave as they are, by measure-nodes.R --only on 52
 * runs of their own (measurements-nodes-layers.csv, residuals -3 to 11 nodes a step): an
 * attention's nodes are its projections' (attention_slices) and each head's (attention_head),
 * and an attention's dropout takes ag_dropout()'s (1 187 a head measured, against 1 223). The
 * fixed part and what a run allocates once are in agmem_gc_rules (model.c, node_growth()).
 * Device "gpu"'s rows of backward "host" are the host path's own in resident mode (a batch norm
 * or a layer norm with ag_device("gpu")): per parameter, in place of device "cpu"'s, whose
 * per-unit rows count there at agmem_gc_rules' unit_share (fit-layers.R). */
const agmem_live_rule agmem_live_rules[] = {
    /* device, optimizer, op (NULL: per parameter), bytes, cite, retained, step_max, nodes,
       nodes_sample, backward (AGMEM_BACKWARD_ANY when not written) */
    {CPU, ADAM, NULL, 37.69,
     "issue #15 measurement (long fit grid): live bytes per parameter with optimizer_adam(): "
     "weight, gradient, m and v (32) and the update's temporaries; retained by the allocator: "
     "22.5; the step's largest: 35.02 (gctorture()); and per scalar of the model's largest "
     "tensor, 14.28 live and 31.99 at the step's largest (standard errors 5.82 and 2.09): the "
     "update of a tensor holds m_hat, v_hat and the expression's temporaries, each of the "
     "tensor's size, at once (R/autograd.R:1584-1593)", 22.5, 35.02, 238, 0,
     AGMEM_BACKWARD_ANY, 14.28, 31.99},
    {CPU, SGD, NULL, 30.4,
     "issue #15 measurement (long fit grid): live bytes per parameter with optimizer_sgd() and "
     "momentum: weight, gradient, velocity (24) and the update's temporaries; retained by the "
     "allocator: 9.9; the step's largest: 33.70", 9.9, 33.70, 61, 0},
    {CPU, SGD_PLAIN, NULL, 28.3,
     "issue #15 measurement (long fit grid): live bytes per parameter with optimizer_sgd() "
     "without momentum: weight, gradient, the velocity it still allocates (24) and the "
     "update's temporaries; retained by the allocator: 6.3; the step's largest: 32.28", 6.3,
     32.28, 0, 0},
    {CPU, ANY, "input", 9.45,
     "issue #15 measurement (long fit grid): per input unit and sample, the mini-batch and its "
     "ag_tensor(); retained by the allocator: 3.5, as every unit; the step's largest: 15.88",
     3.5, 15.88},
    {CPU, ANY, "matmul", 33.02,
     "issue #15 measurement (long fit grid): half of a relu layer's live bytes per output unit "
     "and sample (66.05 fitted): the product and its gradient on the tape; retained by the "
     "allocator: 3.5 per unit and sample, input, hidden and output units alike (the step's "
     "batch-sized blocks); the step's largest: half of 91.66", 3.5, 45.83, 2878, 0},
    {CPU, ANY, "add", 33.03,
     "issue #15 measurement (long fit grid): the other half: the broadcast bias and the sum",
     0, 45.83},
    {CPU, ANY, "relu", 0,
     "issue #15 measurement (long fit grid): a relu layer's live bytes are its matmul's and "
     "add's (the fit cannot tell them apart: every layer of the grid has an activation or a "
     "loss), relu's mask with them", 0, 0, 784, 0},
    {CPU, ANY, "tanh", 30.32,
     "issue #15 measurement (long fit grid): a tanh layer's live bytes per unit and sample "
     "(96.37 fitted) over a relu layer's; the step's largest: 94.09 over 91.66", 0, 2.43, 636,
     0},
    {CPU, ANY, "sigmoid", 6.14,
     "issue #16 measurement (activations' fit grid, fit-layers.R): a sigmoid layer's live bytes "
     "per unit and sample over a relu layer's, from ten pairs of runs with each; the step's "
     "largest is a relu layer's (fitted -0.32; the pairs differ by -0.57 to 1.01 bytes per unit "
     "and sample): each keeps one multiplier per unit, R/autograd.R:672-684; retained: fitted "
     "-8.22", 0, 0, 638, 0},
    {CPU, ANY, "softmax", 31.22,
     "issue #16 measurement (activations' fit grid, fit-layers.R): a softmax layer's live bytes "
     "per unit and sample over a relu layer's, from ten pairs of runs with each (softmax on the "
     "hidden layers); retained by the allocator: 15.13; the step's largest: 30.41 (16.00 to "
     "32.00 per pair: ag_softmax() keeps p for its backward, R/autograd.R:726-760)", 15.13,
     30.41, 1107, 0},
    {CPU, ANY, "loss_mse", 24.21,
     "issue #15 measurement (long fit grid): the output layer's live bytes per unit and sample "
     "with ag_mse_loss() (90.26 fitted) over a relu layer's; the step's largest: 93.50 over "
     "91.66", 0, 1.84},
    {CPU, ANY, "loss_cross_entropy", 29.23,
     "issue #16 measurement (activations' fit grids, fit-layers.R): the output layer's live "
     "bytes per unit and sample with ag_cross_entropy_loss() over a relu layer's, from 14 pairs "
     "of runs with it and with the fused loss (below) added to the fused loss's figures: it "
     "keeps the clamped input and -target / pred, R/autograd.R:831-849, where the fused loss "
     "keeps the softmax's doubles too; retained by the allocator: 5.67; the step's largest: "
     "11.44 (the fused loss's less 56.01 to 56.02 on the four wide outputs)", 5.67, 11.44, 336, 0},
    {CPU, ANY, "loss_softmax_cross_entropy", 87.95,
     "issue #15 measurement (long fit grid): the output layer's live bytes per unit and sample "
     "with ag_softmax_cross_entropy_loss() (154.00 fitted) over a relu layer's; the step's "
     "largest: 159.12 over 91.66", 0, 67.46, 505, 16},
    {CPU, ANY, "batch_norm", 136.96,
     "issue #16 measurement (layers' fit grid, fit-layers.R): per unit and sample of "
     "ag_batch_norm() in training mode, what a pair of runs with and without it differs by in "
     "the bytes live at full collections; retained by the allocator: 13.08; the step's "
     "largest: 131.84 (the tape's x_hat, its mean and std matrices, gamma's and beta's "
     "broadcasts and their results)", 13.08, 131.84, 5575, 0},
    {CPU, ANY, "batch_norm_eval", 137.33,
     "issue #16 measurement (layers' eval fit grid, fit-layers.R): per unit and sample of "
     "ag_batch_norm() in eval mode, as in training mode: x_hat, the mean and std matrices, "
     "gamma's and beta's broadcasts and their results; retained by the allocator: 14.68; the "
     "step's largest: 132.82; nodes (measure-nodes.R --only=eval): 5107, against 5575 in "
     "training mode", 14.68, 132.82, 5107, 0},
    {CPU, ANY, "dropout", 49.96,
     "issue #16 measurement (layers' fit grid, fit-layers.R): per unit and sample of "
     "ag_dropout() in training mode, as batch norm's: the mask and the product on the tape; "
     "retained by the allocator: 12.88; the step's largest: 37.90", 12.88, 37.90, 1223, 0},
    {CPU, ANY, "layer_norm", 53.56,
     "issue #16 measurement (layers' fit grid, fit-layers.R): per unit and sample of "
     "ag_layer_norm(), as batch norm's: x_hat and the output on the tape; retained by the "
     "allocator: 3.18; the step's largest: 39.70", 3.18, 39.70, 2506, 0},
    {CPU, ANY, "embedding", 24.42,
     "issue #16 measurement (embedding's fit grid, fit-layers.R): per unit of dim and sample "
     "of ag_embedding()'s lookup, over the dense input it replaces, the step's largest live "
     "heap (the looked-up columns and their gradient), taken for the live bytes too (too few of "
     "the grid's runs collected in full to fit those); retained by the allocator: 48.51; nodes "
     "(measure-nodes.R --only=embed, with its table's): 1174, and 22 a sample", 48.51, 24.42,
     1174, 22},
    {CPU, ADAM, "embedding_table", 0,
     "issue #16 measurement (embedding's fit grid, fit-layers.R): per scalar of "
     "ag_embedding()'s table with optimizer_adam(), over the parameter rules (with their "
     "figure per scalar of the largest tensor, which the table is in most of the grid's runs), "
     "the step's largest live heap: fitted -3.51, written 0 (27.34 over the parameter rules "
     "without the largest tensor's figure: its update's temporaries, which that figure, "
     "fitted on dense stacks, counts at 31.99), taken for the live bytes too; retained by the "
     "allocator: -18.14 (the table's large blocks keep less than the dense weights the "
     "parameter rules were fitted on)", -18.14, 0},
    {CPU, SGD, "embedding_table", 4.60,
     "issue #16 measurement (embedding's fit grid, fit-layers.R): the same with "
     "optimizer_sgd() and momentum; retained: -6.01", -6.01, 4.60},
    {CPU, SGD_PLAIN, "embedding_table", 0,
     "issue #16 measurement (embedding's fit grid, fit-layers.R): the same without momentum "
     "(-0.29 fitted, written 0); retained: -11.13", -11.13, 0},
    {CPU, ANY, "attention", 248.82,
     "issue #16 measurement (attention's fit grids, d_model 256 and 512, 1 to 16 heads, "
     "fit-layers.R): per unit of d_model and sample of ag_multihead_attention()'s "
     "projections, the step's largest live heap, taken for the live bytes too (the grid's "
     "smaller runs end before a full collection); retained by the allocator: 170.64; nodes: "
     "its heads' (attention_head)", 170.64, 248.82, 0, 0},
    {CPU, ANY, "attention_head", 191.33,
     "issue #16 measurement (attention's fit grids, fit-layers.R): per head and pair of "
     "samples, the step's largest live heap (the scores and the softmax the tape keeps, and "
     "their gradients), taken for the live bytes too; retained by the allocator: -21.23; "
     "nodes (measure-nodes.R, one head, and --only=attention, 1, 2 and 4 heads): 11556 a head, "
     "and 16 a head and sample", -21.23, 191.33, 11556, 16},
    {CPU, ADAM, "attention_slices", 40.13,
     "issue #16 measurement (attention's fit grids, fit-layers.R): per d_model x d_model unit "
     "of an attention trained with optimizer_adam(), the step's largest live heap (the slice "
     "matrices, 3 d^2 doubles a layer, and their transposes in the backward); taken for the "
     "live bytes too; retained by the allocator: -81.74; nodes: the projections', 5163 "
     "(16 719 for an attention of one head, less its head's)", -81.74, 40.13, 5163, 0},
    {CPU, SGD, "attention_slices", 40.87,
     "issue #16 measurement (measurements-attention-optim.csv, fit-layers.R): the same with "
     "optimizer_sgd() and momentum, the attention's other terms at Adam's figures: the step's "
     "largest point falls before the optimizer's step (the same to the byte with momentum and "
     "without), where the parameter rules count a parameter at 1.3 bytes less than Adam's; "
     "4 pairs, 32.82 to 47.06 each (Adam's: 40.13); taken for the live bytes too; retained by "
     "the allocator: -102.35", -102.35, 40.87, 5163, 0},
    {CPU, SGD_PLAIN, "attention_slices", 46.55,
     "issue #16 measurement (measurements-attention-optim.csv, fit-layers.R): the same "
     "without momentum (its parameter rules count 1.4 bytes a parameter less than SGD's); "
     "taken for the live bytes too; retained by the allocator: -66.18", -66.18, 46.55, 5163,
     0},
    {CPU, ANY, "attention_concat", 12.51,
     "issue #16 measurement (attention's fit grids, fit-layers.R): per d_model x d_model unit "
     "of an attention of more than one head, the step's largest live heap (the matrices that "
     "place the heads' rows, on the tape), taken for the live bytes too; retained by the "
     "allocator: 57.80; nodes (measure-nodes.R --only=attention): 1231", 57.80, 12.51, 1231,
     0},
    {CPU, ANY, "attention_block", 33.50,
     "issue #16 measurement (attention's fit grids, fit-layers.R): per head, unit of d_model "
     "and sample of an attention of more than one head, the step's largest live heap (the "
     "head's block and its sum on the tape), taken for the live bytes too; retained by the "
     "allocator: 17.49", 17.49, 33.50},
    {CPU, ANY, "attention_causal", 32.01,
     "issue #16 measurement (causal fit grid, fit-layers.R): per head and pair of samples of "
     "an attention called with causal_mask = TRUE, the step's largest live heap (the mask and "
     "the masked scores on the tape, and in the backward the scores' gradient through the "
     "sum), taken for the live bytes too; retained by the allocator: 9.13; nodes "
     "(measure-nodes.R --only=attention): 1027 a head, and 3 a head and sample", 9.13, 32.01,
     1027, 3},
    {CPU, ANY, "flash_attention", 41.03,
     "issue #16 measurement (flash fit grids, fit-layers.R: measurements-flash-fit.csv and "
     "-flash-fit-wide.csv): per unit of d_model and sample of a call of ag_flash_attention(), "
     "over its block's four ag_linear() at the table's figures, the bytes live at full "
     "collections (the pairs that collected in full); retained by the allocator: 37.25 (the "
     "fused op's ggml buffers outside R's heap); the step's largest: fitted -57.53 (the "
     "table's linear figures, fitted on dense stacks, count more than a projection without "
     "activation keeps at that point), written 0; nodes (measure-nodes.R --only=flash, over "
     "its four ag_linear()): 3790, with 1 head and with 4", 37.25, 0, 3790, 0},
    {CPU, ANY, "flash_causal", 16.00,
     "issue #16 measurement (flash fit grid, fit-layers.R): per pair of samples of a call of "
     "ag_flash_attention(causal = TRUE), the step's largest live heap (the mask the backward "
     "keeps, and its upload's copy), taken for the live bytes too; retained by the allocator: "
     "12.73; nodes (measure-nodes.R --only=flash): 280, and 10 a sample", 12.73, 16.00, 280,
     10},
    {CPU, ANY, "checkpoint", 0,
     "issue #16 measurement (measurements-checkpoint.csv): a segment run under ag_checkpoint() "
     "is counted by its layers as if not checkpointed, the upper side: the checkpoint lowered "
     "the step's largest live heap by 19% to 30% where the heap passed R's first trigger (it "
     "keeps the segment's values and gradients only while the backward replays it, "
     "R/ag_checkpoint.R:204-297), by a share that depends on where the step peaks, not on the "
     "segment's units (a saving per unit and sample fitted on these pairs, 48.5 bytes live, "
     "put two of six held-out checkpointed runs under by more than 15%, "
     "measurements-checkpoint-holdout.csv); nothing of its own live, retained or at the "
     "step's largest; nodes (measure-nodes.R --only=segments, "
     "measurements-nodes-segments.csv: segments of two, three and four "
     "ag_linear(w, w, \"relu\") made 3578, 5763 and 8578 a step over the segment's own, its "
     "replay's forward less the graph's backward it replaces, in two models of one and four "
     "segments, the same to 2 nodes): fitted as a line in the segment's layers "
     "(measure-nodes.R --segments=), -1527.6 + 2500.5 per layer (residuals -211 to 106), so "
     "973 for the segment with its first layer and 2500 for each more "
     "(\"checkpoint_layer\"); one layer alone was not measured; --only=checkpoint's 52-run "
     "fit gave 3602 for two layers (3473 here)",
     0, 0, 973, 0},
    {CPU, ANY, "checkpoint_layer", 0,
     "issue #16 measurement (measurements-nodes-segments.csv): each layer of a checkpointed "
     "segment after its first, nothing live, retained or at the step's largest; nodes: 2500, "
     "the slope of the line fitted for \"checkpoint\" (whose comment has the figures)",
     0, 0, 2500, 0},
    /* Device "gpu" with the graph backward (resident mode): the host's figures, fitted by
       fit-long.R on the long fit grid run with ag_device("gpu") (measurements-long-fit-gpu.csv,
       measurements-step-max-gpu.csv), the nodes by measure-nodes.R --device=gpu
       (measurements-nodes-gpu.csv, residuals -542 to 737 nodes a step). */
    {GPU, ADAM, NULL, 12.84,
     "issue #15 measurement (long fit grid in resident mode): live host bytes per parameter "
     "with optimizer_adam() (the weights and moments are on the device; the gradients backward() "
     "hands back to R); retained by the allocator: -2.81; the step's largest: 0.12; "
     "nodes per parameter tensor: 1732", -2.81, 0.12, 1732, 0},
    {GPU, SGD, NULL, 20.35,
     "issue #15 measurement (long fit grid in resident mode): live host bytes per parameter "
     "with optimizer_sgd() and momentum; retained by the allocator: 27.68; the step's "
     "largest: 19.82; nodes per parameter tensor: 51", 27.68, 19.82, 51,
     0},
    {GPU, SGD_PLAIN, NULL, 16.74,
     "issue #15 measurement (long fit grid in resident mode): live host bytes per parameter "
     "with optimizer_sgd() without momentum; retained by the allocator: 15.30; the "
     "step's largest: 25.07", 15.30, 25.07, 0, 0},
    /* The host path in resident mode (a batch norm or a layer norm with device "gpu"): these
       rows take the place of device "cpu"'s per-parameter rows, whose per-unit rows hold at the
       share agmem_gc_rules gives (fit-layers.R, measurements-layers-host-gpu.csv). */
    {GPU, ADAM, NULL, 21.24,
     "issue #16 measurement (layers' fit grid with a batch norm or a layer norm in resident "
     "mode, fit-layers.R): live host bytes per parameter with optimizer_adam() on the host "
     "path: the gradients backward() computes in R (the weights and the moments are on the "
     "device, R/autograd.R:1517-1528, and the step runs there); retained by the allocator: "
     "6.44; the step's largest: 28.10; nodes per parameter tensor: 2490, over sgd_plain's "
     "(measure-nodes.R --device=gpu --only=host, measurements-nodes-host-gpu.csv: 2477 to "
     "2609 by model)", 6.44, 28.10, 2490, 0, AGMEM_BACKWARD_HOST},
    {GPU, SGD, NULL, 25.54,
     "issue #16 measurement (the same runs): live host bytes per parameter with optimizer_sgd() "
     "on the host path, with and without momentum as one: the gradient, the velocity (an R "
     "matrix, R/autograd.R:1407) and the step's download of the weight and its new value "
     "(R/autograd.R:1424-1432); retained by the allocator: 20.36; the step's largest: 36.58; "
     "nodes per parameter tensor: 61, over sgd_plain's (measurements-nodes-host-gpu.csv)",
     20.36, 36.58, 61, 0, AGMEM_BACKWARD_HOST},
    {GPU, SGD_PLAIN, NULL, 25.54,
     "issue #16 measurement (the same runs): as optimizer_sgd() with momentum, fitted as one; "
     "retained by the allocator: 20.36; the step's largest: 36.58", 20.36, 36.58, 0, 0,
     AGMEM_BACKWARD_HOST},
    /* The attentions on the host path in resident mode (a layer norm or a batch norm before
       them): these rows take the place of device "cpu"'s rows of the same ops at the share,
       but for their nodes (model.c, own_live_row()); fitted by fit-layers.R on
       measurements-attention-host-gpu.csv and measurements-flash-host-gpu.csv (validate-long.R
       --grid=attention_host_gpu and flash_host_gpu: the fit grids of the attention and of the
       flash block in resident mode with a layer norm in every run, 100 steps), per term, a
       term fitted below 0 written 0; the step's largest, not measured there, is the bytes
       live, as device "cpu"'s attention rows. */
    {GPU, ANY, "attention", 167.82,
     "issue #16 measurement (attentions' fit grid with a layer norm in resident mode, "
     "fit-layers.R): per unit of d_model and sample, the bytes live at full collections on the "
     "host path: the projections' closures run in R (R/ag_layers.R:712-771); retained by the "
     "allocator: fitted below 0, 0", 0, 167.82, 0, 0, AGMEM_BACKWARD_HOST},
    {GPU, ANY, "attention_one_head", 6.64,
     "issue #16 measurement (the same runs): per head, unit of d_model and sample, as "
     "attention_block's", 0, 6.64, 0, 0, AGMEM_BACKWARD_HOST},
    {GPU, ANY, "attention_block", 6.64,
     "issue #16 measurement (the same runs): per head, unit of d_model and sample, the bytes "
     "live at full collections: each head's slices of Q, K and V (R/ag_layers.R:801-816); "
     "retained: fitted below 0, 0", 0, 6.64, 0, 0, AGMEM_BACKWARD_HOST},
    {GPU, ANY, "attention_head", 96.33,
     "issue #16 measurement (the same runs): per head and pair of samples, the bytes live at "
     "full collections: the head's scores and softmax the closures read back into R for the "
     "backward (122.45 at device \"cpu\"'s share); retained by the allocator: 36.95",
     36.95, 96.33, 0, 0, AGMEM_BACKWARD_HOST},
    {GPU, ANY, "attention_slices", 0,
     "issue #16 measurement (the same runs): per d_model x d_model unit, over the parameter "
     "rules: fitted below 0, written 0", 0, 0, 0, 0, AGMEM_BACKWARD_HOST},
    {GPU, ANY, "attention_concat", 12.21,
     "issue #16 measurement (the same runs): per d_model x d_model unit of an attention of "
     "more than one head, the placement matrices on the tape (R/ag_layers.R:838-839); "
     "retained: fitted below 0, 0", 0, 12.21, 0, 0, AGMEM_BACKWARD_HOST},
    {GPU, ANY, "attention_causal", 2.14,
     "issue #16 measurement (the same grid's stack with the mask, 4 heads at each batch, "
     "against the same attention without it, fit-layers.R): per head and pair of samples, the "
     "bytes live at full collections (1.50 to 102.22 by pair, through the origin); retained: "
     "fitted below 0, 0", 0, 2.14, 0, 0, AGMEM_BACKWARD_HOST},
    {GPU, ANY, "flash_attention", 0,
     "issue #16 measurement (flash blocks' fit grid with a layer norm in resident mode, "
     "fit-layers.R): per unit of d_model and sample of a call of ag_flash_attention() on the "
     "host path, over its block's four ag_linear() at device \"cpu\"'s figures at the share: "
     "fitted below 0 (-295.81 to -29.69 by pair), written 0; retained by the allocator: 16.52",
     16.52, 0, 0, 0, AGMEM_BACKWARD_HOST},
    {GPU, ANY, "flash_causal", 17.98,
     "issue #16 measurement (the same grid, the block with the mask against the same block "
     "without it, fit-layers.R): per pair of samples, the bytes live at full collections on "
     "the host path (16.00 to 435.20 by pair, through the origin); retained by the allocator: "
     "10.98", 10.98, 17.98, 0, 0, AGMEM_BACKWARD_HOST},
    {GPU, ANY, "input", 15.56,
     "issue #15 measurement (long fit grid in resident mode): per input unit and sample, the "
     "mini-batch R subsets and the copy ag_tensor() uploads; retained by the allocator: "
     "12.42, as every unit; the step's largest: 24.01", 12.42, 24.01},
    {GPU, ANY, "matmul", 0,
     "issue #15 measurement (long fit grid in resident mode): a layer's values live on the "
     "device (fitted per hidden unit and sample: -6.1 for relu, standard error 4.9; -0.2 for "
     "tanh, 4.5; so 0); retained by the allocator: 12.42 per unit and sample, as every "
     "unit; nodes: an ag_linear()'s graph ops (its matmul, add and tensors)", 12.42, 0,
     10375, 0},
    {GPU, ANY, "add", 0,
     "issue #15 measurement (long fit grid in resident mode): on the device, with the matmul",
     0, 0},
    {GPU, ANY, "relu", 0,
     "issue #15 measurement (long fit grid in resident mode): on the device; nodes: the op's "
     "graph node and its R objects", 0, 0, 3813, 0},
    {GPU, ANY, "tanh", 0,
     "issue #15 measurement (long fit grid in resident mode): on the device, as relu (fitted "
     "-0.2 per unit and sample)", 0, 0, 3890, 0},
    {GPU, ANY, "sigmoid", 0,
     "issue #16 measurement (measure-nodes.R --device=gpu): on the device as relu and tanh (a "
     "graph op; judged on the activations' holdout in resident mode)", 0, 0, 3894, 0},
    {GPU, ANY, "softmax", 0,
     "issue #16 measurement (measure-nodes.R --device=gpu): on the device as relu and tanh (a "
     "graph op; judged on the activations' holdout in resident mode)", 0, 0, 2844, 0},
    {GPU, ANY, "loss_mse", 13.61,
     "issue #15 measurement (long fit grid in resident mode): per output unit and sample with "
     "ag_mse_loss(), the target's mini-batch and its upload; the step's largest: 9.61; "
     "nodes: ag_mse_loss()'s over ag_cross_entropy_loss()'s", 0, 9.61, 1887, 0},
    {GPU, ANY, "loss_cross_entropy", 52.86,
     "issue #16 measurement (four stacks of wide outputs in resident mode, each with the fused "
     "loss and with ag_cross_entropy_loss(), measurements-activations-wide-gpu.csv, fit-long.R): "
     "per output unit and sample, the fused loss's figures and what the pairs differ by; "
     "retained: -3.55; the step's largest: 21.54", -3.55, 21.54, 0, 0},
    {GPU, ANY, "dropout", 29.16,
     "issue #16 measurement (the layers' fit grid and two wider stacks in resident mode, each "
     "alone and with ag_dropout(0.3), measurements-layers-dropout-gpu.csv, fit-layers.R): per "
     "unit and sample with the graph backward, the bytes live at full collections over the "
     "stack's figures (six runs); retained: 1.26; the step's largest: 41.60 (pairs under "
     "gctorture()); nodes: measure-nodes.R --device=gpu --only=dropout, over the dense "
     "stacks' figures", 1.26, 41.60, 4936, 0},
    {GPU, ANY, "loss_softmax_cross_entropy", 103.64,
     "issue #15 measurement (long fit grid in resident mode): per output unit and sample with "
     "ag_softmax_cross_entropy_loss(); the step's largest: 76.22; nodes: its own over "
     "ag_cross_entropy_loss()'s, and per sample", 0, 76.22, 250, 16},
    /* The attentions in resident mode with the graph backward (fit-layers.R on
       measurements-attention-fit-gpu.csv and -alloc-gpu.csv; see the unit rules): the bytes
       live at full collections and what the allocator keeps, fitted per term (one below 0
       dropped); the step's largest, not measured (a step under gctorture() takes minutes in
       resident mode), bounded by the bytes live and those a step allocates. Nodes:
       measure-nodes.R --device=gpu --only=attention (measurements-nodes-attention-gpu.csv, 28
       runs, residuals -88 to 26 nodes a step): 24 286 an attention, 45 544 a head, 4 835 fewer
       with one head (written as a head's 40 709 and each block's 4 835 with more than one). */
    {GPU, ANY, "attention", 26.45,
     "issue #16 measurement (attention's fit grids in resident mode, fit-layers.R): per unit of "
     "d_model and sample, the downloads of Q, K and V and the gradients R holds; retained by "
     "the allocator: 79.03; the step's largest, bounded: 42.04", 79.03, 42.04, 0, 0},
    {GPU, ANY, "attention_one_head", 6.09,
     "issue #16 measurement (attention's fit grids in resident mode, fit-layers.R): as "
     "attention_block's, per unit of d_model and sample of its one head; retained: 3.66; the "
     "step's largest, bounded: 17.67", 3.66, 17.67, 0, 0},
    {GPU, ANY, "attention_block", 6.09,
     "issue #16 measurement (attention's fit grids in resident mode, fit-layers.R): per head, "
     "unit of d_model and sample; retained: 3.66; the step's largest, bounded: 17.67; nodes: "
     "the head's placement and sum", 3.66, 17.67, 4835, 0},
    {GPU, ANY, "attention_head", 0,
     "issue #16 measurement (attention's fit grids in resident mode, fit-layers.R): its scores "
     "live on the device; nodes: the head's slices, scores, softmax and weighted sum, each op "
     "and its graph objects", 0, 0, 40709, 0},
    {GPU, ANY, "attention_slices", 0,
     "issue #16 measurement (attention's fit grids in resident mode, fit-layers.R): nothing "
     "live per d_model x d_model unit (fitted below 0, written 0); retained by the allocator: "
     "0.36; nodes: the attention's projections and their graph objects, once", 0.36, 0, 24286,
     0},
    {GPU, ANY, "attention_concat", 11.81,
     "issue #16 measurement (attention's fit grids in resident mode, fit-layers.R): per d_model "
     "x d_model unit of an attention of more than one head; retained: 7.82; the step's "
     "largest, bounded: 19.33", 7.82, 19.33, 0, 0},
    {GPU, ANY, "attention_causal", 31.96,
     "issue #16 measurement (causal fit grid in resident mode, fit-layers.R: 100-step runs, "
     "measurements-attention-causal-gpu.csv, 26.7 to 37.1 a pair in the runs of 65 536 pairs "
     "and more): per head and pair of samples, the bytes live at full collections over the "
     "rules of the same attention without the mask (the mask, the scores read back into R and "
     "the upload's conversion, R/ag_layers.R:860-870); retained by the allocator: fitted below "
     "0, written 0; the step's largest, bounded by the bytes live and the 32.03 a step "
     "allocates (Rprofmem()): 63.99; nodes (measure-nodes.R --only=attention): 4339 a head and "
     "3 a head and sample", 0, 63.99, 4339, 3},
    {GPU, ANY, "flash_attention", 0,
     "issue #16 measurement (flash fit grid in resident mode, fit-layers.R): per unit of "
     "d_model and sample, no run collected in full: its tensors stay on the device, 0; "
     "retained by the allocator: 11.06; the step's largest, bounded by what a step allocates: "
     "0; nodes (measure-nodes.R --device=gpu --only=flash, measurements-nodes-flash-gpu.csv, "
     "residuals -82 to 20): the call's R code and graph objects", 11.06, 0, 5205, 0},
    {GPU, ANY, "flash_causal", 8,
     "issue #16 source (R/ag_flash_attn.R:83-96): per pair of samples, the mask's doubles kept "
     "for the backward; retained by the allocator: 11.27 (fit-layers.R); the step's largest, "
     "bounded by the bytes live and the 18.09 a step allocates: 26.09; nodes: 172, and 10 a "
     "sample", 11.27, 26.09, 172, 10},
};
const R_xlen_t agmem_n_live_rules = sizeof agmem_live_rules / sizeof agmem_live_rules[0];

/* The host's allocation in resident mode (agmem_host_rule), by least squares on the long fit
 * grid run with ag_device("gpu") and R's triggers out of reach (validate-long.R
 * --grid=host_alloc_gpu, measurements-host-alloc-gpu.csv: each of its 126 configurations run
 * for 3 and for 8 steps with R_VSIZE=8G and R_NSIZE=40000000 in the environment, so that nothing
 * is collected; gc()'s Vcells "max used" over the baseline, less 3 steps' worth, is what the run
 * allocated once, and a fifth of the two runs' difference what a step allocates; fit-long.R
 * fits and checks them). Residuals: once, 0.05 MB at most; a step, 0.49 MB at most. */
const agmem_host_rule agmem_host_rules[] = {
    /* device, optimizer, op (NULL: per parameter, or fixed with AGMEM_ANY), once, step, cite */
    {GPU, ANY, NULL, 682344, 76790,
     "issue #15 measurement (measurements-host-alloc-gpu.csv): the fit's intercepts, what a "
     "run allocates once and a step whatever its model (ggmlR's and the loop's own objects)"},
    {GPU, ADAM, NULL, 72.00, 0.01,
     "issue #15 measurement (measurements-host-alloc-gpu.csv): per parameter with "
     "optimizer_adam(), nine doubles once (the weights made in R and sent to the device, and "
     "the moments' zeros) and nothing a step: its update runs on the device"},
    {GPU, SGD, NULL, 31.99, 64.01,
     "issue #15 measurement (measurements-host-alloc-gpu.csv): per parameter with "
     "optimizer_sgd() and momentum, four doubles once and eight a step: its update runs in R "
     "on the weights it downloads"},
    {GPU, SGD_PLAIN, NULL, 31.99, 48.01,
     "issue #15 measurement (measurements-host-alloc-gpu.csv): per parameter with "
     "optimizer_sgd() without momentum, four doubles once and six a step"},
    {GPU, ANY, "input", 0, 16.10,
     "issue #15 measurement (measurements-host-alloc-gpu.csv): per input unit and sample, two "
     "doubles a step: the mini-batch's subset of the data and its upload", 1},
    {GPU, ANY, "matmul", 0, 0,
     "issue #15 measurement (measurements-host-alloc-gpu.csv): the hidden layers' values stay "
     "on the device (fitted with a term per hidden unit and sample: -0.01, standard error "
     "0.06; written 0)"},
    {GPU, ANY, "add", 0, 0,
     "issue #15 measurement (measurements-host-alloc-gpu.csv): with matmul"},
    {GPU, ANY, "relu", 0, 0,
     "issue #15 measurement (measurements-host-alloc-gpu.csv): with matmul"},
    {GPU, ANY, "tanh", 0, 0,
     "issue #15 measurement (measurements-host-alloc-gpu.csv): with matmul"},
    {GPU, ANY, "sigmoid", 0, 0,
     "issue #16 measurement (measurements-host-alloc-layers-gpu.csv): its values stay on the "
     "device, as relu's (fitted 0.15 a unit and sample, standard error 0.13; written 0)"},
    {GPU, ANY, "softmax", 0, 0,
     "issue #16 measurement (measurements-host-alloc-layers-gpu.csv): with sigmoid (fitted "
     "0.13, standard error 0.13; written 0)"},
    {GPU, ANY, "dropout", 0, 52.00,
     "issue #16 measurement (measurements-host-alloc-layers-gpu.csv): per unit and sample, 6.5 "
     "doubles a step: its input downloaded to R, the mask drawn in R and sent to the device "
     "(ggmlR 0.8.8.1 R/ag_layers.R:182-189)"},
    {GPU, ANY, "flash_attention", 0, 1.14,
     "issue #16 measurement (measurements-host-alloc-layers-gpu.csv): per unit (d_model) and "
     "sample, the call's R objects; its tensors stay on the device (standard error 0.19)"},
    {GPU, ANY, "flash_causal", 0, 18.02,
     "issue #16 measurement (measurements-host-alloc-layers-gpu.csv): per pair of samples, two "
     "doubles a step: the mask made in R and sent to the device (ggmlR 0.8.8.1 "
     "R/ag_flash_attn.R:83-96)"},
    {GPU, ANY, "loss_mse", 0, 15.90,
     "issue #15 measurement (measurements-host-alloc-gpu.csv): per output unit and sample, two "
     "doubles a step: the targets' subset and their upload", 1},
    {GPU, ANY, "loss_softmax_cross_entropy", 0, 108.27,
     "issue #15 measurement (measurements-host-alloc-gpu.csv): per output unit and sample, "
     "13.5 doubles a step: the targets and the loss's own values in R", 1},
    {GPU, ANY, "loss_cross_entropy", 0, 71.94,
     "issue #16 measurement (measurements-host-alloc-layers-gpu.csv): per output unit and "
     "sample, nine doubles a step: the predictions downloaded to R, clamped, and the targets' "
     "quotient kept for backward (ggmlR 0.8.8.1 R/autograd.R:830-852)", 1},
};
const R_xlen_t agmem_n_host_rules = sizeof agmem_host_rules / sizeof agmem_host_rules[0];

/* Whether a rule of device rule_device, into place `where`, for backward path rule_backward,
   applies to a model on `device` whose backward takes path `backward` on the host and whose
   pools hold path device_backward's, and whose host takes the host rules of host_device: a host
   row of host_device and of `backward`, a device row of device and of device_backward, either of
   the path or of any. All codes in range. */
int agmem_rule_place_matches(int rule_device, int where, int rule_backward, int device,
                             int host_device, int backward, int device_backward)
{
    int on = where == AGMEM_HOST ? host_device : device;
    int path = where == AGMEM_HOST ? backward : device_backward;
    return rule_device == on && (rule_backward == AGMEM_BACKWARD_ANY || rule_backward == path);
}

/* Whether parameter rule r applies to a model of (optimizer, device, dtype) whose backward takes
   path `backward` and whose host takes the rules of host_device (agmem_rule_place_matches()).
   Host rows of another device are device "cpu"'s, R doubles, whose dtype is "f32" whatever the
   model's. All codes in range. */
int agmem_param_rule_matches(const agmem_param_rule *r, int optimizer, int device,
                             int host_device, int dtype, int backward, int device_backward)
{
    int dt = r->where == AGMEM_HOST && host_device != device ? AGMEM_F32 : dtype;
    return (r->optimizer == AGMEM_ANY || r->optimizer == optimizer) &&
        agmem_rule_place_matches(r->device, r->where, r->backward, device, host_device,
                                 backward, device_backward) &&
        (r->dtype == AGMEM_ANY || r->dtype == dt);
}

/* The index of the first unit rule for the op named `name` (a NUL-terminated string), or -1
   when no rule names it: the unit table is the list of the ops agmem models. */
R_xlen_t agmem_unit_op_index(const char *name)
{
    for (R_xlen_t i = 0; i < agmem_n_unit_rules; i++)
        if (strcmp(agmem_unit_rules[i].op, name) == 0)
            return i;
    return -1;
}

/* The entry of agmem_ops for the op named `name` (a NUL-terminated string), or NULL when
   agmem_ops does not name it. */
const agmem_op *agmem_op_named(const char *name)
{
    for (R_xlen_t i = 0; i < agmem_n_ops; i++)
        if (strcmp(agmem_ops[i].name, name) == 0)
            return &agmem_ops[i];
    return NULL;
}
