/* rules.c: every byte count of ag_training_memory(), in two tables, and the lookups over them.
 *
 * A rule is a number of bytes that one unit of something costs during a training step of
 * ggmlR 0.8.8.1's autograd path, attributed to a component (weights, gradients, ...) and to a
 * place (host RAM or the device's memory):
 *   - agmem_param_rules: bytes per parameter (scalar of the model), for an optimizer, device
 *     and dtype (AGMEM_ANY matches every optimizer or dtype);
 *   - agmem_unit_rules: bytes per unit and sample, for an op of a layer (units = the layer's
 *     output width) or a loss (units = the output width of the model), on a device.
 * Rows that match a question ADD UP into their (component, where) cell, so one figure may be
 * written as several rows, each with its own source. Every row carries its citation in `cite`
 * (the ggmlR source line, or the measurement), readable from R through agmem_training_rules().
 *
 * To add an optimizer, a dtype or an op: add its name to the name table below (optimizers,
 * devices, dtypes) or nothing (ops are named by their rows), then its rows, then a test.
 * Paths below are in ggmlR_0.8.8.1.tar.gz: R/autograd.R and R/ag_device.R.
 */
#include <string.h>
#include "agmem.h"

const char *const agmem_optimizer_names[AGMEM_N_OPTIMIZERS] = {"adam", "sgd", "sgd_plain"};
const char *const agmem_device_names[AGMEM_N_DEVICES] = {"cpu", "gpu"};
const char *const agmem_dtype_names[AGMEM_N_DTYPES] = {"f32", "f16", "bf16"};
const char *const agmem_component_names[AGMEM_N_COMPONENTS] = {
    "weights", "gradients", "optimizer_state", "master_weights", "step_transients",
    "build_transients", "activations", "activation_gradients"
};
const char *const agmem_where_names[AGMEM_N_WHERE] = {"host", "device"};
const char *const agmem_basis_names[AGMEM_N_BASES] = {"measured", "source only"};

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

/* Bytes per parameter. The CPU figures are issue #10's measured peak fixed cost per parameter,
   adam 68, sgd 56, sgd_plain 46, broken into components by reading the source. The CPU path
   keeps R doubles whatever ag_dtype() says, so its rows are f32 only: another dtype with the
   device "cpu" matches no row, and agmem_training_memory() refuses it. */
const agmem_param_rule agmem_param_rules[] = {
    /* optimizer, device, dtype, component, where, bytes, basis, cite */

    /* ---- device "cpu": everything is an R double on the host ---- */
    {ANY, CPU, F32, AGMEM_WEIGHTS, HOST, 8, MEASURED,
     "issue #10 measurement, to be re-derived: ag_param() keeps the weight as an R double "
     "matrix (R/autograd.R:80, 121-124)"},
    {ANY, CPU, F32, AGMEM_GRADIENTS, HOST, 8, MEASURED,
     "issue #10 measurement, to be re-derived: backward() writes each gradient as an R double "
     "matrix into $grad (R/autograd.R:1076)"},
    {ADAM, CPU, F32, AGMEM_OPTIMIZER_STATE, HOST, 16, MEASURED,
     "issue #10 measurement, to be re-derived: optimizer_adam() keeps m and v as R double "
     "matrices (R/autograd.R:1527-1528, zeros made at 1158)"},
    {SGD, CPU, F32, AGMEM_OPTIMIZER_STATE, HOST, 8, MEASURED,
     "issue #10 measurement, to be re-derived: optimizer_sgd() keeps a velocity, an R double "
     "matrix per parameter (R/autograd.R:1407)"},
    {SGD_PLAIN, CPU, F32, AGMEM_OPTIMIZER_STATE, HOST, 8, MEASURED,
     "issue #10 measurement, to be re-derived: optimizer_sgd() allocates the velocity even "
     "with momentum = 0 (R/autograd.R:1407)"},
    {ADAM, CPU, F32, AGMEM_STEP_TRANSIENTS, HOST, 36, MEASURED,
     "issue #10 measurement, to be re-derived: the rest of adam's 68 B; each *, +, ^2, / and "
     "sqrt of the step allocates a full-size double (R/autograd.R:1584-1593), and the tape "
     "keeps the pre-step weights (a_snap, R/autograd.R:347) until zero_grad()"},
    {SGD, CPU, F32, AGMEM_STEP_TRANSIENTS, HOST, 32, MEASURED,
     "issue #10 measurement, to be re-derived: the rest of sgd's 56 B; momentum * velocity, "
     "+ g, lr * velocity and w - ... allocate full-size doubles (R/autograd.R:1429-1430), and "
     "the tape keeps the pre-step weights (R/autograd.R:347) until zero_grad()"},
    {SGD_PLAIN, CPU, F32, AGMEM_STEP_TRANSIENTS, HOST, 22, MEASURED,
     "issue #10 measurement, to be re-derived: the rest of sgd_plain's 46 B; lr * g and "
     "w - lr * g (R/autograd.R:1432), and the pre-step weights the tape keeps "
     "(R/autograd.R:347) until zero_grad()"},

    /* ---- device "gpu" (ag_device("gpu")), resident weights: host side ---- */
    {SGD, GPU, ANY, AGMEM_OPTIMIZER_STATE, HOST, 8, MEASURED,
     "issue #10 measurement, to be re-derived: the sgd velocity stays an R double matrix and "
     "the step runs on the host (R/autograd.R:1407, 1429-1432)"},
    {SGD_PLAIN, GPU, ANY, AGMEM_OPTIMIZER_STATE, HOST, 8, MEASURED,
     "issue #10 measurement, to be re-derived: optimizer_sgd() allocates the host velocity "
     "even with momentum = 0 (R/autograd.R:1407)"},
    {ADAM, GPU, ANY, AGMEM_BUILD_TRANSIENTS, HOST, 24, MEASURED,
     "issue #10 measurement, to be re-derived: transient host doubles while optimizer_adam() "
     "builds its device moments (.ag_opt_zero_like, R/autograd.R:1156-1162)"},

    /* ---- device "gpu": device side, persistent pool ---- */
    {ANY, GPU, F32, AGMEM_WEIGHTS, DEVICE, 4, MEASURED,
     "issue #10 measurement, to be re-derived: ag_param() uploads the weight in f32 to the "
     "persistent pool (R/autograd.R:142)"},
    {ANY, GPU, F16, AGMEM_WEIGHTS, DEVICE, 2, SOURCE,
     "source only (f16 aborts on the CPU backend, not measured): the weight is uploaded in "
     "the dtype (R/autograd.R:142)"},
    {ANY, GPU, BF16, AGMEM_WEIGHTS, DEVICE, 2, SOURCE,
     "source only (bf16 aborts on the CPU backend, not measured): the weight is uploaded in "
     "the dtype (R/autograd.R:142)"},
    {ADAM, GPU, ANY, AGMEM_OPTIMIZER_STATE, DEVICE, 8, MEASURED,
     "issue #10 measurement, to be re-derived: m and v are f32 in the persistent pool "
     "whatever the dtype (R/autograd.R:1160-1161)"},
    {ADAM, GPU, F16, AGMEM_MASTER_WEIGHTS, DEVICE, 4, SOURCE,
     "source only (not measurable here): an f16 weight gets an f32 master copy in the "
     "persistent pool (R/ag_device.R:1251-1265)"},
    {ADAM, GPU, BF16, AGMEM_MASTER_WEIGHTS, DEVICE, 4, SOURCE,
     "source only (not measurable here): a bf16 weight gets an f32 master copy in the "
     "persistent pool (R/ag_device.R:1251-1265)"},

    /* ---- device "gpu": device side, pass pool (freed at every with_grad_tape()) ---- */
    {ANY, GPU, ANY, AGMEM_GRADIENTS, DEVICE, 8, MEASURED,
     "issue #10 measurement, to be re-derived: the pass pool's per-parameter part, ~8 B "
     "(f32 gradients and the step's uploads, R/autograd.R:1565-1567), measured in f32"},
};
const R_xlen_t agmem_n_param_rules = sizeof agmem_param_rules / sizeof agmem_param_rules[0];

/* Bytes per unit and sample. Issue #10 measured, on the CPU, ~37 B of activations per unit and
   sample for a relu dense layer (matmul, add, relu) and a peak slope of ~90 B in all, so ~53 B
   of activation gradients; on the GPU, ~29 B in the device's pass pool. Those totals are split
   over the ops by reading the source; sigmoid, tanh and softmax were not measured. */
const agmem_unit_rule agmem_unit_rules[] = {
    /* op, device, component, where, bytes, basis, cite */

    /* ---- device "cpu": R doubles ---- */
    {"matmul", CPU, AGMEM_ACTIVATIONS, HOST, 8, MEASURED,
     "issue #10 measurement, to be re-derived: the product W %*% x, kept on the tape "
     "(R/autograd.R:340)"},
    {"matmul", CPU, AGMEM_ACTIVATION_GRADIENTS, HOST, 24, MEASURED,
     "issue #10 measurement, to be re-derived: share of the 53 B; the input gradient "
     "t(W) %*% g and t(x) (R/autograd.R:361) kept in backward()'s environment "
     "(R/autograd.R:1026)"},
    {"add", CPU, AGMEM_ACTIVATIONS, HOST, 8, MEASURED,
     "issue #10 measurement, to be re-derived: the sum a + b (R/autograd.R:421); the "
     "broadcast bias matrix is transient"},
    {"add", CPU, AGMEM_ACTIVATION_GRADIENTS, HOST, 8, MEASURED,
     "issue #10 measurement, to be re-derived: share of the 53 B; the gradient passed "
     "through the add (R/autograd.R:430-445)"},
    {"relu", CPU, AGMEM_ACTIVATIONS, HOST, 21, MEASURED,
     "issue #10 measurement, to be re-derived: the rest of the 37 B; pmax(x, 0) and the "
     "double mask (x > 0) * 1 (R/autograd.R:640, 649) and the logical x > 0"},
    {"relu", CPU, AGMEM_ACTIVATION_GRADIENTS, HOST, 21, MEASURED,
     "issue #10 measurement, to be re-derived: the rest of the 53 B; grad_out and "
     "grad_out * mask (R/autograd.R:651)"},
    {"sigmoid", CPU, AGMEM_ACTIVATIONS, HOST, 21, SOURCE,
     "source only: as relu, an output and a multiplier s * (1 - s) (R/autograd.R:672, 682-683)"},
    {"sigmoid", CPU, AGMEM_ACTIVATION_GRADIENTS, HOST, 21, SOURCE,
     "source only: as relu, grad_out * mult (R/autograd.R:684)"},
    {"tanh", CPU, AGMEM_ACTIVATIONS, HOST, 21, SOURCE,
     "source only: as relu, an output and a multiplier 1 - t^2 (R/autograd.R:701, 709-710)"},
    {"tanh", CPU, AGMEM_ACTIVATION_GRADIENTS, HOST, 21, SOURCE,
     "source only: as relu, grad_out * mult (R/autograd.R:711)"},
    {"softmax", CPU, AGMEM_ACTIVATIONS, HOST, 8, SOURCE,
     "source only: the output p, which the tape keeps (R/autograd.R:741, 748)"},
    {"softmax", CPU, AGMEM_ACTIVATION_GRADIENTS, HOST, 24, SOURCE,
     "source only: pm * grad_out, dot_m and the result (R/autograd.R:752-755)"},
    {"loss_mse", CPU, AGMEM_ACTIVATIONS, HOST, 0, MEASURED,
     "issue #10: unknown, 0 for now; the difference pred - target (R/autograd.R:796, 803) "
     "is inside the measured ~90 B slope"},
    {"loss_cross_entropy", CPU, AGMEM_ACTIVATIONS, HOST, 0, MEASURED,
     "issue #10: unknown, 0 for now; the clamped p and the target (R/autograd.R:836, 842-843)"},
    {"loss_softmax_cross_entropy", CPU, AGMEM_ACTIVATIONS, HOST, 0, MEASURED,
     "issue #10: unknown, 0 for now; the softmax p and the target (R/autograd.R:885-890, 896-897)"},

    /* ---- device "gpu": f32 in the device's pass pool ---- */
    {"matmul", GPU, AGMEM_ACTIVATIONS, DEVICE, 4, MEASURED,
     "issue #10 measurement, to be re-derived: share of the ~29 B; the f32 product "
     "(R/autograd.R:332)"},
    {"matmul", GPU, AGMEM_ACTIVATION_GRADIENTS, DEVICE, 4, MEASURED,
     "issue #10 measurement, to be re-derived: share of the ~29 B; the f32 input gradient"},
    {"add", GPU, AGMEM_ACTIVATIONS, DEVICE, 4, MEASURED,
     "issue #10 measurement, to be re-derived: share of the ~29 B; the f32 sum "
     "(R/autograd.R:399)"},
    {"add", GPU, AGMEM_ACTIVATION_GRADIENTS, DEVICE, 4, MEASURED,
     "issue #10 measurement, to be re-derived: share of the ~29 B; the f32 gradient"},
    {"relu", GPU, AGMEM_ACTIVATIONS, DEVICE, 8, MEASURED,
     "issue #10 measurement, to be re-derived: share of the ~29 B; the f32 output and the "
     "step mask (R/autograd.R:637, 649)"},
    {"relu", GPU, AGMEM_ACTIVATION_GRADIENTS, DEVICE, 5, MEASURED,
     "issue #10 measurement, to be re-derived: the rest of the ~29 B; g * mask in f32"},
    {"sigmoid", GPU, AGMEM_ACTIVATIONS, DEVICE, 8, SOURCE,
     "source only: as relu, an f32 output and multiplier (R/autograd.R:669, 682)"},
    {"sigmoid", GPU, AGMEM_ACTIVATION_GRADIENTS, DEVICE, 5, SOURCE,
     "source only: as relu"},
    {"tanh", GPU, AGMEM_ACTIVATIONS, DEVICE, 8, SOURCE,
     "source only: as relu, an f32 output and multiplier (R/autograd.R:698, 709)"},
    {"tanh", GPU, AGMEM_ACTIVATION_GRADIENTS, DEVICE, 5, SOURCE,
     "source only: as relu"},
    {"softmax", GPU, AGMEM_ACTIVATIONS, DEVICE, 4, SOURCE,
     "source only: the f32 output p (R/autograd.R:733)"},
    {"softmax", GPU, AGMEM_ACTIVATION_GRADIENTS, DEVICE, 12, SOURCE,
     "source only: p * (g - colSums(p * g)) built in the backward graph"},
    {"loss_mse", GPU, AGMEM_ACTIVATIONS, DEVICE, 0, MEASURED,
     "issue #10: unknown, 0 for now; the f32 difference kept on the device "
     "(R/autograd.R:782-786)"},
    {"loss_cross_entropy", GPU, AGMEM_ACTIVATIONS, HOST, 0, MEASURED,
     "issue #10: unknown, 0 for now; computed on the host from downloaded data "
     "(R/autograd.R:831-846)"},
    {"loss_softmax_cross_entropy", GPU, AGMEM_ACTIVATIONS, HOST, 0, MEASURED,
     "issue #10: unknown, 0 for now; computed on the host from downloaded data "
     "(R/autograd.R:865-895)"},
};
const R_xlen_t agmem_n_unit_rules = sizeof agmem_unit_rules / sizeof agmem_unit_rules[0];

/* Whether parameter rule r applies to (optimizer, device, dtype), all codes in range. */
int agmem_param_rule_matches(const agmem_param_rule *r, int optimizer, int device, int dtype)
{
    return (r->optimizer == AGMEM_ANY || r->optimizer == optimizer) && r->device == device &&
        (r->dtype == AGMEM_ANY || r->dtype == dtype);
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
