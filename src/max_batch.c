/* max_batch.c: the largest batch size that fits a byte limit, exactly under the estimator's
   own floating-point arithmetic. */
#include <limits.h>
#include "agmem.h"

/* Whether the estimated total at batch b is within limit. The total is fixed + activations(b),
   and both steps are correctly rounded, so it never decreases as b grows: bisection is exact. */
static int fits(double fixed, double weights, double frac, double b, double limit)
{
    double total = agmem_keep(fixed + agmem_activation_bytes(weights, frac, b));
    return total <= limit;
}

/* .Call entry of ag_max_batch_size(): the largest whole b in [1, INT_MAX] for which the
   estimator's total is <= limit bytes, as a double; 0 when batch 1 does not fit; Inf when
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
    double w = f.weights;

    double answer;
    if (frac == 0.0) {
        answer = fixed <= lim ? R_PosInf : 0.0;
    } else if (!fits(fixed, w, frac, 1.0, lim)) {
        answer = 0.0;
    } else if (fits(fixed, w, frac, (double) INT_MAX, lim)) {
        answer = (double) INT_MAX;
    } else {
        long long lo = 1, hi = INT_MAX;      /* invariant: lo fits, hi does not */
        while (hi - lo > 1) {
            long long mid = lo + (hi - lo) / 2;
            if (fits(fixed, w, frac, (double) mid, lim))
                lo = mid;
            else
                hi = mid;
        }
        answer = (double) lo;
    }
    return Rf_ScalarReal(answer);
}
