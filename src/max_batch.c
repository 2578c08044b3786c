/* max_batch.c: the largest batch size that fits a byte limit, exactly under the arithmetic of
   the figure planned on: ggmlR's formula, the training-memory model of model.c, or a measured
   line (fixed + per_sample * batch). One search serves all three. */
#include <limits.h>
#include "agmem.h"

/* Whether the figure planned on, at a whole batch size, is within the limit; ctx is the
   planner's own data. Must be monotone: once false, false for every larger batch. Must
   call no R API. */
typedef int (*fits_fn)(const void *ctx, double batch);

/* The largest whole b in [1, INT_MAX] with fits(ctx, b), by bisection, as a double: 0 when
   batch 1 does not fit, INT_MAX when INT_MAX fits. `grows` is 0 when the figure does not depend
   on the batch at all: then Inf when batch 1 fits, else 0. fits must be monotone (true up to a
   batch, false beyond); at most 33 calls. Checks for a user interrupt between calls. */
static double largest_batch(fits_fn fits, const void *ctx, int grows)
{
    if (!fits(ctx, 1.0))
        return 0.0;
    if (!grows)
        return R_PosInf;
    if (fits(ctx, (double) INT_MAX))
        return (double) INT_MAX;
    long long lo = 1, hi = INT_MAX;      /* invariant: lo fits, hi does not */
    while (hi - lo > 1) {
        R_CheckUserInterrupt();
        long long mid = lo + (hi - lo) / 2;
        if (fits(ctx, (double) mid))
            lo = mid;
        else
            hi = mid;
    }
    return (double) lo;
}

/* ggmlR's formula: the fixed part, the weights, activation_frac and the limit. */
typedef struct {
    double fixed, weights, frac, limit;
} formula_plan;

/* Whether the estimated total at batch b is within the limit. The total is fixed +
   activations(b), and both steps are correctly rounded, so it never decreases as b grows. A
   total that overflows does not fit. */
static int formula_fits(const void *ctx, double b)
{
    const formula_plan *p = ctx;
    double total = agmem_keep(p->fixed + agmem_activation_bytes(p->weights, p->frac, b));
    return total <= p->limit;
}

/* .Call entry of ag_max_batch_size() for shapes: the largest whole b in [1, INT_MAX] for which
   the estimator's total is <= limit bytes, as a double; 0 when batch 1 does not fit; Inf when
   activation_frac is 0 and the fixed part fits. A total that overflows does not fit. Accepts the
   shapes, multiplier and activation_frac as agmem_estimate() does and a finite limit >= 0;
   refuses anything else, and shapes whose fixed part overflows, with an R error. */
SEXP agmem_max_batch(SEXP shapes, SEXP multiplier, SEXP activation_frac, SEXP limit)
{
    agmem_arg_multipliers(multiplier, 1);
    int k = agmem_arg_multiplier(multiplier, 0);
    double frac = agmem_arg_frac(activation_frac);
    double lim = agmem_arg_bytes(limit, "budget");
    double n = agmem_count_params(shapes);

    agmem_figures f = {0};
    double fixed = agmem_fixed_bytes(n, k, &f);
    f.total = fixed;               /* activations overflowing at some batch only mean it does not fit */
    agmem_check_finite(&f);

    formula_plan p = {fixed, f.weights, frac, lim};
    return Rf_ScalarReal(largest_batch(formula_fits, &p, frac != 0.0));
}

/* The training-memory model, the place planned on (AGMEM_HOST or AGMEM_DEVICE), the limit. */
typedef struct {
    const agmem_model *model;
    int where;
    double limit;
} model_plan;

/* Whether the model's peak at `where`, at batch b, is within the limit: the figure
   agmem_training_memory() returns at b, on the host its host_high (the highest peak of the
   run). Each cell is a sum of correctly rounded products of
   non-negative factors, one of them b, and R's trigger grows with what it is given, so the peak
   never decreases as b grows. A figure that overflows (agmem_training_memory() refuses it) does
   not fit. */
static int model_fits(const void *ctx, double b)
{
    const model_plan *p = ctx;
    agmem_cells cells;
    double peak[AGMEM_N_WHERE], regime[AGMEM_N_REGIME];
    agmem_model_fail fail;
    if (agmem_model_eval(p->model, b, &cells, peak, regime, &fail) != AGMEM_MODEL_OK)
        return 0;
    double planned = p->where == AGMEM_HOST ? regime[AGMEM_REGIME_HIGH] : peak[p->where];
    return planned <= p->limit;
}

/* .Call entry of ag_max_batch_size() for a model: the largest whole b in [1, INT_MAX] for which
   the peak of agmem_training_memory() at b (host_high on device "cpu", device_peak on "gpu") is
   <= limit bytes, as a double; 0 when batch 1 does not fit; Inf when no rule makes that peak
   grow with the batch and it fits. Accepts shapes, units, ops, optimizer, device, dtype and run as
   agmem_model_read() does and a finite limit >= 0; refuses anything else with an R error. */
SEXP agmem_max_batch_model(SEXP shapes, SEXP units, SEXP ops, SEXP optimizer, SEXP device,
                           SEXP dtype, SEXP run, SEXP limit)
{
    agmem_model m;
    agmem_model_read(shapes, units, ops, optimizer, device, dtype, run, &m);
    double lim = agmem_arg_bytes(limit, "budget");
    int where = agmem_device_place[m.device];
    model_plan p = {&m, where, lim};
    return Rf_ScalarReal(largest_batch(model_fits, &p, m.grows[where]));
}

/* A measured line: peak(b) = fixed + per_sample * b, and the limit. */
typedef struct {
    double fixed, per_sample, limit;
} line_plan;

/* Whether fixed + per_sample * b, rounded step by step as R computes it, is within the limit.
   per_sample >= 0, so it never decreases as b grows; a peak that overflows does not fit. */
static int line_fits(const void *ctx, double b)
{
    const line_plan *p = ctx;
    double peak = agmem_keep(p->fixed + agmem_keep(p->per_sample * b));
    return R_FINITE(peak) && peak <= p->limit;
}

/* .Call entry of ag_max_batch_size() for a measurement: the largest whole b in [1, INT_MAX]
   for which fixed + per_sample * b is <= limit bytes, as a double; 0 when batch 1 does not
   fit; Inf when per_sample is 0 and the fixed part fits. Accepts a finite fixed (bytes, of
   either sign: a fitted intercept), a finite per_sample >= 0 and a finite limit >= 0; refuses
   anything else with an R error naming the argument. */
SEXP agmem_max_batch_line(SEXP fixed, SEXP per_sample, SEXP limit)
{
    double a = agmem_arg_finite(fixed, "fixed");
    double s = agmem_arg_finite(per_sample, "per_sample");
    if (s < 0.0) {
        char value[64];
        agmem_format_number(s, value, sizeof value);
        agmem_abort(AGMEM_E_ARGUMENT,
                    "`per_sample` must be >= 0 (memory that shrinks as the batch grows cannot "
                    "be planned on), not %s.", value);
    }
    double lim = agmem_arg_bytes(limit, "budget");
    line_plan p = {a, s, lim};
    return Rf_ScalarReal(largest_batch(line_fits, &p, s > 0.0));
}
