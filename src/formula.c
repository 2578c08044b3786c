/* formula.c: checks and stores the estimator's figures (computed by the inline functions of
   agmem.h), and the .Call entry point of ag_estimate_training_memory(). */
#include "agmem.h"

/* Returns when every figure of f is finite; otherwise an R error that says which input made it
   overflow: the shapes (too many scalars for a finite byte count) or the activation factor. */
void agmem_check_finite(const agmem_figures *f)
{
    if (!R_FINITE(f->params))
        agmem_abort(AGMEM_E_OVERFLOW,
                    "`shapes` describe more scalars than a double can count.");
    if (!R_FINITE(f->weights) || !R_FINITE(f->optimizer))
        agmem_abort(AGMEM_E_OVERFLOW,
                    "`shapes` describe %.6g scalars: their byte counts overflow a double.",
                    f->params);
    if (!R_FINITE(f->activations))
        agmem_abort(AGMEM_E_OVERFLOW,
                    "`activation_frac` times `batch_size` makes the activation bytes overflow "
                    "a double.");
    if (!R_FINITE(f->total))
        agmem_abort(AGMEM_E_OVERFLOW,
                    "The total of the estimate overflows a double: `shapes` describe %.6g scalars.",
                    f->params);
}

/* Writes the six figures of f, in the order of the returned list, to row r of col[0..5]. */
void agmem_store(const agmem_figures *f, double *const *col, R_xlen_t r)
{
    col[0][r] = f->params;
    col[1][r] = f->weights;
    col[2][r] = f->gradients;
    col[3][r] = f->optimizer;
    col[4][r] = f->activations;
    col[5][r] = f->total;
}

/* .Call entry of ag_estimate_training_memory(): a double vector of the six figures (params,
   weights, gradients, optimizer, activations, total). Accepts the shapes as agmem_count_params()
   does, the multiplier 0, 1 or 2, a finite activation_frac >= 0 and one batch_size from 1 to
   INT_MAX. Refuses anything else, and any figure that is not finite, with an R error. */
SEXP agmem_estimate(SEXP shapes, SEXP multiplier, SEXP activation_frac, SEXP batch_size)
{
    agmem_arg_multipliers(multiplier, 1);
    int k = agmem_arg_multiplier(multiplier, 0);
    double frac = agmem_arg_frac(activation_frac);
    agmem_arg_batches(batch_size, 1);
    double batch = agmem_arg_batch(batch_size, 0);
    double n = agmem_count_params(shapes);

    agmem_figures f;
    agmem_estimate_into(n, k, frac, batch, &f);
    agmem_check_finite(&f);

    SEXP out = PROTECT(Rf_allocVector(REALSXP, 6));
    double *o = REAL(out);
    double *const col[6] = {o, o + 1, o + 2, o + 3, o + 4, o + 5};
    agmem_store(&f, col, 0);
    UNPROTECT(1);
    return out;
}
