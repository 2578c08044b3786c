/*
 * agmem.h: every C entry point of agmem, and the internals the C files share.
 *
 * All byte counts are doubles. Every intermediate of the estimator's formula passes through
 * agmem_keep(), so that the compiler cannot contract `a * b + c` into a fused multiply-add
 * (GCC does by default where the target has FMA): the figures then round exactly as R's own
 * arithmetic does, operation by operation, on every platform.
 *
 * The R entry points the C code uses (the symbols agmem.so imports from R), by their level in
 * Writing R Extensions, as R 4.5.0's tools:::funAPI() classifies them:
 *   API: Rf_allocVector, Rf_error, Rf_eval, Rf_getAttrib, Rf_setAttrib, Rf_install,
 *     Rf_isObject, Rf_lang2, Rf_mkChar, Rf_mkNamed, Rf_mkString, Rf_ScalarReal,
 *     Rf_ScalarLogical, Rf_type2char,
 *     Rf_protect and Rf_unprotect (PROTECT, UNPROTECT), R_alloc, R_CheckUserInterrupt,
 *     R_registerRoutines, R_useDynamicSymbols, R_forceSymbols, TYPEOF, XLENGTH, R_CHAR (CHAR),
 *     STRING_ELT, SET_STRING_ELT, VECTOR_ELT, SET_VECTOR_ELT, REAL, INTEGER, LOGICAL,
 *     REAL_ELT, INTEGER_ELT, R_IsNA (ISNA), R_finite (R_FINITE); and the documented variables
 *     and constants R_NilValue, R_BaseEnv, R_ClassSymbol, R_DimSymbol, R_NamesSymbol,
 *     R_PosInf, R_NaReal (NA_REAL), R_NaInt (NA_INTEGER), R_NaString (NA_STRING), R_xlen_t,
 *     R_XLEN_T_MAX (funAPI() lists functions only).
 *   Experimental API (ALTREP): DATAPTR_OR_NULL, REAL_GET_REGION, INTEGER_GET_REGION, used by
 *     shapes.c to read a compact sequence without expanding it.
 * No entry point outside those two levels is used.
 */
#ifndef AGMEM_H
#define AGMEM_H

#define R_NO_REMAP
#include <R.h>
#include <Rinternals.h>

/* How many elements (or rows, or list items) a loop over user data handles between two calls
   of R_CheckUserInterrupt(). */
#define AGMEM_INTERRUPT_EVERY 65536

/* conditions.c: every error of the C code is an R condition of class
   c("agmem_error_<subclass>", "agmem_error", "error", "condition"); these are the subclasses it
   uses (R/conditions.R lists and documents every class agmem signals). */
#define AGMEM_E_ARGUMENT "argument" /* an argument is not of the form the entry point takes */
#define AGMEM_E_OVERFLOW "overflow" /* a figure would not be finite in a double */
#ifdef __GNUC__
__attribute__((format(printf, 2, 3)))
#endif
void NORET agmem_abort(const char *subclass, const char *fmt, ...);

/* .Call entry points (registered in init.c) */
SEXP agmem_estimate(SEXP shapes, SEXP multiplier, SEXP activation_frac, SEXP batch_size);
SEXP agmem_max_batch(SEXP shapes, SEXP multiplier, SEXP activation_frac, SEXP limit);
SEXP agmem_activation_frac(SEXP measured, SEXP shapes, SEXP batch_size);
SEXP agmem_sweep(SEXP shapes, SEXP multipliers, SEXP activation_frac, SEXP batch_sizes);

/* Rounds x to a double in memory; a barrier against FMA contraction and excess precision. */
static inline double agmem_keep(double x)
{
    volatile double v = x;
    return v;
}

/* The six figures of one estimate, in the order of the returned list. */
typedef struct {
    double params, weights, gradients, optimizer, activations, total;
} agmem_figures;

/* shapes.c */
double agmem_count_params(SEXP shapes);

/* The estimator's arithmetic. Every figure is evaluated in the order R would evaluate
       weights     = n * 8
       gradients   = n * 8
       optimizer   = n * 8 * k
       activations = weights * activation_frac * batch_size
       total       = weights + gradients + optimizer + activations
   one rounded double operation at a time. These are inline, so that every caller's loop is
   compiled with them, and so the agmem_keep() barriers are what keeps each caller exact. */

/* Fills params, weights, gradients and optimizer of out for params scalars and multiplier
   optimizer-state copies (0, 1 or 2); returns the fixed part, weights + gradients + optimizer.
   Overflow shows as Inf or NaN: check with agmem_check_finite(). */
static inline double agmem_fixed_bytes(double params, int multiplier, agmem_figures *out)
{
    out->params = params;
    out->weights = agmem_keep(params * 8.0);
    out->gradients = out->weights;
    out->optimizer = agmem_keep(out->weights * (double) multiplier);
    return agmem_keep(agmem_keep(out->weights + out->gradients) + out->optimizer);
}

/* Activation bytes at one batch size: weights * frac * batch, left to right. */
static inline double agmem_activation_bytes(double weights, double frac, double batch)
{
    return agmem_keep(agmem_keep(weights * frac) * batch);
}

/* All six figures of one estimate into out (unchecked: see agmem_check_finite()). */
static inline void agmem_estimate_into(double params, int multiplier, double frac,
                                       double batch, agmem_figures *out)
{
    double fixed = agmem_fixed_bytes(params, multiplier, out);
    out->activations = agmem_activation_bytes(out->weights, frac, batch);
    out->total = agmem_keep(fixed + out->activations);
}

/* formula.c */
void agmem_check_finite(const agmem_figures *f);
void agmem_store(const agmem_figures *f, double *const *col, R_xlen_t r);

/* args.c */
R_xlen_t agmem_arg_multipliers(SEXP x, int scalar);
int agmem_arg_multiplier(SEXP x, R_xlen_t i);
double agmem_arg_frac(SEXP x);
R_xlen_t agmem_arg_batches(SEXP x, int scalar);
double agmem_arg_batch(SEXP x, R_xlen_t i);
double agmem_arg_bytes(SEXP x, const char *what);
double agmem_arg_finite(SEXP x, const char *what);
double agmem_number_at(SEXP x, R_xlen_t i);
void agmem_format_number(double v, char *buf, size_t n);
int agmem_arg_name(SEXP x, const char *what, const char *const *names, int count);

/* ---- ag_training_memory(): a model of what ggmlR 0.8.8.1 allocates (model.c, rules.c) ---- */

/* .Call entry points (registered in init.c) */
SEXP agmem_training_memory(SEXP shapes, SEXP units, SEXP ops, SEXP batch_size, SEXP optimizer,
                           SEXP device, SEXP dtype, SEXP run);
SEXP agmem_training_rules(void);
SEXP agmem_registry(void);
SEXP agmem_check_batches(SEXP batch_size);

/* child.c: the measuring child process (R/measure.R) */
SEXP agmem_die_with_parent(SEXP parent);

/* ---- ag_measure_training_memory(): the line of a measured peak (line.c) ---- */
SEXP agmem_line_fit(SEXP x, SEXP y);

/* Codes of the names in rules.c's name tables; AGMEM_ANY in a rule matches every code. */
#define AGMEM_ANY (-1)
enum { AGMEM_ADAM, AGMEM_SGD, AGMEM_SGD_PLAIN, AGMEM_N_OPTIMIZERS };
enum { AGMEM_CPU, AGMEM_GPU, AGMEM_N_DEVICES };
enum { AGMEM_F32, AGMEM_F16, AGMEM_BF16, AGMEM_N_DTYPES };
enum { AGMEM_WEIGHTS, AGMEM_GRADIENTS, AGMEM_OPTIMIZER_STATE, AGMEM_MASTER_WEIGHTS,
       AGMEM_STEP_TRANSIENTS, AGMEM_BUILD_TRANSIENTS, AGMEM_ACTIVATIONS,
       AGMEM_ACTIVATION_GRADIENTS, AGMEM_N_COMPONENTS };
enum { AGMEM_HOST, AGMEM_DEVICE, AGMEM_N_WHERE };
enum { AGMEM_MEASURED, AGMEM_SOURCE_ONLY, AGMEM_N_BASES };
enum { AGMEM_OP_DATA, AGMEM_OP_LINEAR, AGMEM_OP_ACTIVATION, AGMEM_OP_LOSS, AGMEM_OP_LAYER,
       AGMEM_OP_TABLE, AGMEM_OP_PAIRS, AGMEM_N_OP_KINDS };
/* The path ggmlR's backward() takes (R/autograd.R:1004-1031 of ggmlR 0.8.8.1): the graph
   backward, built on the device, when every record of the tape names its op; the R closures of
   the records, on the host, when one does not (ag_batch_norm() and ag_layer_norm() record
   without one). A rule of AGMEM_BACKWARD_ANY (0, a row that does not say) holds on both. */
enum { AGMEM_BACKWARD_ANY, AGMEM_BACKWARD_GRAPH, AGMEM_BACKWARD_HOST, AGMEM_N_BACKWARDS };

/* A limit of the validated range: what it limits, and its largest validated value. */
typedef struct {
    const char *name;
    double max;
} agmem_limit;

/* An op a model may name: its name, its kind (AGMEM_OP_*), the op whose unit and live rules
   it takes, NULL for its own (an op that runs another op's R code on other units), whether
   ggmlR records it without an op, which sends the whole tape's backward to the host
   (AGMEM_BACKWARD_HOST; 0 for an op the graph backward takes), and, for such an op, whether the
   device's pools stay those of the graph backward all the same (1: the closures the host runs
   compute on the device's tensors, as around a checkpoint; 0: the pass pool holds the forward
   alone, as with a batch norm). */
typedef struct {
    const char *name;
    int kind;
    const char *rules;
    int host_backward;
    int pools_graph;
} agmem_op;

/* Bytes per parameter for an (optimizer, device, dtype), into one (component, where) cell:
   `bytes` at the peak once R's garbage collector has run; `alloc_step` and `alloc_once`, the
   bytes the host allocates per training step and once (building the model and optimizer),
   counted from ggmlR's source (0 where the row is not on the host or not counted); `backward`,
   the path of backward() the row holds on (AGMEM_BACKWARD_*; 0, any). */
typedef struct {
    int optimizer, device, dtype, component, where;
    double bytes;
    int basis;
    const char *cite;
    double alloc_step, alloc_once;
    int backward;
} agmem_param_rule;

/* Bytes per unit and sample for an op (or a loss) on a device, into one (component, where);
   `alloc_step` and `backward` as for a parameter rule. */
typedef struct {
    const char *op;
    int device, component, where;
    double bytes;
    int basis;
    const char *cite;
    double alloc_step;
    int backward;
} agmem_unit_rule;

/* One figure of the host's garbage-collection regime on a device (see rules.c): the first four
   make the regime of a few steps, the allocation figures and those from heap_start to
   trigger_place the whole run's, and the last three the race of R's two triggers. */
enum { AGMEM_GC_STEPS, AGMEM_GC_ALLOC_SCALE, AGMEM_GC_ALLOC_OFFSET, AGMEM_GC_HEADROOM,
       AGMEM_GC_HEAP_START, AGMEM_GC_VSIZE, AGMEM_GC_MIN_FREE_FRAC, AGMEM_GC_GROW_FRAC,
       AGMEM_GC_GROW_INCR_FRAC, AGMEM_GC_GROW_INCR_MIN, AGMEM_GC_KEPT_EXCESS,
       AGMEM_GC_NODE_STEP, AGMEM_GC_NODE_ONCE, AGMEM_GC_NODE_BYTES, AGMEM_GC_NODE_HEADROOM,
       AGMEM_GC_NODE_FREE, AGMEM_GC_NODE_APART, AGMEM_GC_UNIT_SHARE, AGMEM_GC_LIVE_SD,
       AGMEM_GC_TRIGGER_PLACE, AGMEM_GC_LEVEL0_FREQ, AGMEM_GC_PROMOTED, AGMEM_GC_LEVEL1_FREQ,
       AGMEM_N_GC };
/* The figures a device needs for each regime, as bit masks over AGMEM_GC_*: the first four,
   the allocation figures with those from heap_start to trigger_place, and for the race of R's
   two triggers where the host's allocation is counted (model.c, node_race() and
   scheduled_trigger()) the last three. */
#define AGMEM_GC_FEW_STEPS ((1 << AGMEM_GC_STEPS) | (1 << AGMEM_GC_ALLOC_SCALE) | \
                            (1 << AGMEM_GC_ALLOC_OFFSET) | (1 << AGMEM_GC_HEADROOM))
#define AGMEM_GC_WHOLE_RUN ((1 << AGMEM_GC_ALLOC_SCALE) | (1 << AGMEM_GC_ALLOC_OFFSET) | \
                            (((1 << AGMEM_GC_LEVEL0_FREQ) - 1) & \
                             ~((1 << AGMEM_GC_HEAP_START) - 1)))
#define AGMEM_GC_RACE ((1 << AGMEM_GC_LEVEL0_FREQ) | (1 << AGMEM_GC_PROMOTED) | \
                       (1 << AGMEM_GC_LEVEL1_FREQ))

/* The regimes a device has figures for (agmem_model's has_gc), as bits. */
#define AGMEM_HAS_FEW_STEPS 1
#define AGMEM_HAS_WHOLE_RUN 2
#define AGMEM_HAS_RACE 4

/* Bytes live at R's full collections during a whole run, per parameter (op NULL) for an
   optimizer, or per unit and sample for an op, on a device; `retained` is the bytes per
   parameter, or per unit and sample, the C allocator keeps over R's heap; `step_max` the bytes
   live at the most of any point of a step (see rules.c); `nodes` the R cons cells a training step
   allocates per op, or per parameter tensor (op NULL), and `nodes_sample` per op and sample;
   `largest` and `largest_max`, in a per-parameter row, the bytes per scalar of the model's
   largest tensor live at full collections and at the step's most (its update's temporaries).
   `backward` is AGMEM_BACKWARD_ANY for a row of the host's rules (device: the device whose host
   rules they are, the model's host_device); a row of another path is a model's own (device: the
   model's device, backward: its path), and its per-parameter rows take the place of the host
   device's for their optimizer (model.c, agmem_model_read()). */
typedef struct {
    int device, optimizer;
    const char *op;
    double bytes;
    const char *cite;
    double retained;
    double step_max;
    double nodes, nodes_sample;
    int backward;
    double largest, largest_max;
} agmem_live_rule;
/* A gc figure of a device's host. `backward` is AGMEM_BACKWARD_ANY for the host's figures of a
   device (the model's host_device); a row of another path is a model's own (device: the model's
   device, backward: its path) and takes the place of the host device's figure. */
typedef struct {
    int device, figure;
    double value;
    const char *cite;
    int backward;
} agmem_gc_rule;

/* rules.c */
extern const char *const agmem_ggmlr_version;
extern const char *const agmem_optimizer_names[AGMEM_N_OPTIMIZERS];
extern const int agmem_optimizer_copies[AGMEM_N_OPTIMIZERS];
extern const int agmem_device_place[AGMEM_N_DEVICES];
extern const char *const agmem_op_kind_names[AGMEM_N_OP_KINDS];
extern const agmem_op agmem_ops[];
extern const R_xlen_t agmem_n_ops;
extern const agmem_limit agmem_validated[];
extern const R_xlen_t agmem_n_validated;
extern const char *const agmem_layer_names[];
extern const R_xlen_t agmem_n_layers;
extern const char *const agmem_device_names[AGMEM_N_DEVICES];
extern const char *const agmem_dtype_names[AGMEM_N_DTYPES];
extern const int agmem_dtype_host_backward[AGMEM_N_DTYPES];
extern const char *const agmem_component_names[AGMEM_N_COMPONENTS];
extern const char *const agmem_where_names[AGMEM_N_WHERE];
extern const char *const agmem_basis_names[AGMEM_N_BASES];
extern const char *const agmem_backward_names[AGMEM_N_BACKWARDS];
extern const agmem_param_rule agmem_param_rules[];
extern const R_xlen_t agmem_n_param_rules;
extern const agmem_unit_rule agmem_unit_rules[];
extern const R_xlen_t agmem_n_unit_rules;
extern const char *const agmem_gc_names[AGMEM_N_GC];
extern const agmem_gc_rule agmem_gc_rules[];
extern const R_xlen_t agmem_n_gc_rules;
extern const agmem_live_rule agmem_live_rules[];
extern const R_xlen_t agmem_n_live_rules;

/* The bytes R's vector heap gains on the host of a device whose graph backward runs there
   (resident mode), measured with R's triggers out of reach: `once` over the run (building the
   model and the optimizer, the loop's first calls) and `step` a training step; per parameter for
   an optimizer (op NULL), per unit and sample of an op, or fixed (op NULL, optimizer AGMEM_ANY).
   `batch` is 1 for the bytes of the mini-batch, which stay live through the step: what a
   collection in mid-step finds live of it, it promotes (agmem_gc_rules' `promoted`).
   A model with an op that has no row here is not counted so (model.c, node_race()). */
typedef struct {
    int device, optimizer;
    const char *op;
    double once, step;
    const char *cite;
    int batch;
} agmem_host_rule;
extern const agmem_host_rule agmem_host_rules[];
extern const R_xlen_t agmem_n_host_rules;
int agmem_param_rule_matches(const agmem_param_rule *r, int optimizer, int device,
                             int host_device, int dtype, int backward, int device_backward);
int agmem_rule_place_matches(int rule_device, int where, int rule_backward, int device,
                             int host_device, int backward, int device_backward);
R_xlen_t agmem_unit_op_index(const char *name);
const agmem_op *agmem_op_named(const char *name);

/* ---- model.c: a model read once from its R arguments, then evaluated at any batch in C ---- */

/* The figures of one question, cell by cell: bytes, whether a rule reached the cell, and whether
   a source-only rule did. */
typedef struct {
    double bytes[AGMEM_N_COMPONENTS][AGMEM_N_WHERE];
    int used[AGMEM_N_COMPONENTS][AGMEM_N_WHERE];
    int source_only[AGMEM_N_COMPONENTS][AGMEM_N_WHERE];
    double alloc_step, alloc_once; /* host bytes allocated per step and once (source counts) */
} agmem_cells;

/* A model as agmem_model_read() leaves it: the parameter count, the device, the cells of the
   parameter rules (`fixed`), the units and first unit rule of every op, the power of the batch
   each op's units are counted for (0 for a parameter table, AGMEM_OP_TABLE; 2 for the pairs of
   samples an attention head scores, AGMEM_OP_PAIRS; 1 for every other op), and, per place,
   whether some unit rule makes its peak grow with the batch size. */
typedef struct {
    double params;
    int device;
    int backward;               /* the path of backward() (AGMEM_BACKWARD_GRAPH or _HOST) ... */
    int device_backward;        /* ... the path the device's pools hold (agmem_op pools_graph) */
    int host_device;            /* ... and the device whose host rules the host takes */
    agmem_cells fixed;
    R_xlen_t n_ops;
    const double *units;
    const R_xlen_t *first;
    const int *power;           /* per op: its units count per batch^power */
    int grows[AGMEM_N_WHERE];
    int has_gc;                 /* the regimes the device has figures for (AGMEM_HAS_*) ... */
    double gc[AGMEM_N_GC];      /* ... and the figures, by AGMEM_GC_* */
    double steps;               /* the run's training steps */
    double largest;             /* the scalars of the model's largest tensor */
    double data;                /* bytes of data the session holds in R's heap */
    double live_fixed;          /* live bytes at a collection that do not grow with the batch */
    double retained;            /* bytes the C allocator keeps over R's heap */
    double max_fixed;           /* the step's largest live heap that does not grow with the batch */
    const double *live_unit;    /* per op: live bytes per unit and sample, ... */
    const double *kept_unit;    /* ... the C allocator's bytes over them ... */
    const double *max_unit;     /* ... and the step's largest live bytes per unit and sample */
    double nodes_fixed;         /* R cons cells a step allocates that do not grow with the batch */
    double nodes_sample;        /* ... and per sample */
    int host_counted;           /* whether agmem_host_rules count every op of the model ... */
    double host_once;           /* ... then the host's vector bytes allocated once ... */
    double host_step;           /* ... and a step, those that do not grow with the batch ... */
    const double *host_unit;    /* ... and per op, per unit and sample, ... */
    const double *host_batch;   /* ... of which the mini-batch's (agmem_host_rule's batch) */
} agmem_model;

/* Why agmem_model_eval() stopped: the code, and the op (0-based) or component it concerns. */
enum { AGMEM_MODEL_OK, AGMEM_MODEL_UNITS_OVERFLOW, AGMEM_MODEL_CELL_OVERFLOW,
       AGMEM_MODEL_PEAK_OVERFLOW, AGMEM_MODEL_ALLOC_OVERFLOW };
typedef struct {
    int code;
    R_xlen_t op;
    int component;
} agmem_model_fail;

void agmem_model_read(SEXP shapes, SEXP units, SEXP ops, SEXP optimizer, SEXP device,
                      SEXP dtype, SEXP run, agmem_model *m);
/* The parts of the host's regime agmem_model_eval() writes, in order. */
enum { AGMEM_REGIME_HELD, AGMEM_REGIME_ALLOCATED, AGMEM_REGIME_BOUND, AGMEM_REGIME_TRIGGER,
       AGMEM_REGIME_HIGH, AGMEM_REGIME_NODES, AGMEM_REGIME_FIRST, AGMEM_REGIME_LATER,
       AGMEM_REGIME_OLD, AGMEM_REGIME_DATA, AGMEM_N_REGIME };
int agmem_model_eval(const agmem_model *m, double batch, agmem_cells *c,
                     double peak[AGMEM_N_WHERE], double regime[AGMEM_N_REGIME],
                     agmem_model_fail *fail);

/* ---- max_batch.c: planning on the training-memory model and on a measured line ---- */

/* .Call entry points (registered in init.c) */
SEXP agmem_max_batch_model(SEXP shapes, SEXP units, SEXP ops, SEXP optimizer, SEXP device,
                           SEXP dtype, SEXP run, SEXP limit);
SEXP agmem_max_batch_line(SEXP fixed, SEXP per_sample, SEXP limit);

#endif
