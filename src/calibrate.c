/* calibrate.c: the activation_frac that reproduces a measured activation size. */
#include <math.h>
#include "agmem.h"

/* How many doubles on each side of the first guess are tried for an exact reproduction. */
#define AGMEM_NEIGHBOURS 4

/* .Call entry of ag_activation_frac(): the activation_frac f for which the estimator's
   activations at batch_size, weights * f * batch_size, equal measured bytes; where no double
   does it exactly, the one that comes closest among measured / weights / batch_size and its
   nearest neighbours (ties go to the first guess). Accepts a finite measured >= 0, one
   batch_size from 1 to INT_MAX and the shapes as agmem_estimate() does; refuses the rest. */
SEXP agmem_activation_frac(SEXP measured, SEXP shapes, SEXP batch_size)
{
    double m = agmem_arg_bytes(measured, "measured");
    agmem_arg_batches(batch_size, 1);
    double b = agmem_arg_batch(batch_size, 0);
    double n = agmem_count_params(shapes);

    agmem_figures f = {0};
    f.total = agmem_fixed_bytes(n, 0, &f);
    agmem_check_finite(&f);
    double w = f.weights;

    double best = agmem_keep(agmem_keep(m / w) / b);
    double best_err = fabs(agmem_activation_bytes(w, best, b) - m);
    double below = best, above = best;
    for (int i = 0; i < AGMEM_NEIGHBOURS && best_err > 0.0; i++) {
        below = below > 0.0 ? nextafter(below, 0.0) : below;
        above = nextafter(above, R_PosInf);
        double candidates[2] = {below, above};
        for (int j = 0; j < 2; j++) {
            double err = fabs(agmem_activation_bytes(w, candidates[j], b) - m);
            if (err < best_err) {
                best = candidates[j];
                best_err = err;
            }
        }
    }
    return Rf_ScalarReal(best);
}
