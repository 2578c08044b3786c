/*
 * agmem.h: every C entry point of agmem, and the internals the C files share.
 *
 * All byte counts are doubles. Every intermediate of the estimator's formula passes through
 * agmem_keep(), so that the compiler cannot contract `a * b + c` into a fused multiply-add
 * (GCC does by default where the target has FMA): the figures then round exactly as R's own
 * arithmetic does, operation by operation, on every platform.
 */
#ifndef AGMEM_H
#define AGMEM_H

#define R_NO_REMAP
#include <R.h>
#include <Rinternals.h>

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

/* figures.c */
void agmem_check_finite(const agmem_figures *f);
void agmem_store(const agmem_figures *f, double *const *col, R_xlen_t r);

/* args.c */
R_xlen_t agmem_arg_multipliers(SEXP x, int scalar);
int agmem_arg_multiplier(SEXP x, R_xlen_t i);
double agmem_arg_frac(SEXP x);
R_xlen_t agmem_arg_batches(SEXP x, int scalar);
double agmem_arg_batch(SEXP x, R_xlen_t i);
double agmem_arg_bytes(SEXP x, const char *what);
void agmem_format_number(double v, char *buf, size_t n);

#endif
