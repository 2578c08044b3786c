/* sweep.c: the estimate over a grid of optimizers and batch sizes, counting the shapes once. */
#include "agmem.h"

/* .Call entry of ag_memory_sweep(): a list of six double vectors (params, weights, gradients,
   optimizer, activations, total), one element per row; rows run over the multipliers (outer)
   and the batch sizes (inner). Every figure is the one agmem_estimate() gives for that row.
   Accepts one or more multipliers (0, 1, 2) and batch sizes (1 to INT_MAX), and activation_frac
   and shapes as agmem_estimate() does; refuses the rest, and any figure that is not finite.
   Checks for a user interrupt every AGMEM_INTERRUPT_EVERY elements and rows. */
SEXP agmem_sweep(SEXP shapes, SEXP multipliers, SEXP activation_frac, SEXP batch_sizes)
{
    R_xlen_t nk = agmem_arg_multipliers(multipliers, 0);
    for (R_xlen_t i = 0; i < nk; i++) {
        if (i > 0 && i % AGMEM_INTERRUPT_EVERY == 0)
            R_CheckUserInterrupt();
        agmem_arg_multiplier(multipliers, i);
    }
    double frac = agmem_arg_frac(activation_frac);
    R_xlen_t nb = agmem_arg_batches(batch_sizes, 0);
    if (nb > R_XLEN_T_MAX / nk)   /* refused before the batch sizes are read, at once */
        agmem_abort(AGMEM_E_OVERFLOW, "The sweep has too many rows for one vector.");
    for (R_xlen_t j = 0; j < nb; j++) {
        if (j > 0 && j % AGMEM_INTERRUPT_EVERY == 0)
            R_CheckUserInterrupt();
        agmem_arg_batch(batch_sizes, j);
    }
    double n = agmem_count_params(shapes);

    R_xlen_t rows = nk * nb;
    SEXP out = PROTECT(Rf_allocVector(VECSXP, 6));
    double *col[6];
    for (int c = 0; c < 6; c++) {
        SET_VECTOR_ELT(out, c, Rf_allocVector(REALSXP, rows));
        col[c] = REAL(VECTOR_ELT(out, c));
    }
    R_xlen_t r = 0;
    for (R_xlen_t i = 0; i < nk; i++) {
        int k = agmem_arg_multiplier(multipliers, i);
        for (R_xlen_t j = 0; j < nb; j++, r++) {
            if (r > 0 && r % AGMEM_INTERRUPT_EVERY == 0)
                R_CheckUserInterrupt();
            agmem_figures f;
            agmem_estimate_into(n, k, frac, agmem_arg_batch(batch_sizes, j), &f);
            agmem_check_finite(&f);
            agmem_store(&f, col, r);
        }
    }
    UNPROTECT(1);
    return out;
}
