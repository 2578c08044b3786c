/* line.c: the straight line of a measured peak against the batch size (bytes = fixed +
   per_sample * batch), fitted by least squares, and the largest batch whose peak on that line
   fits a budget. */
#include <limits.h>
#include "agmem.h"

/* Loops over user data poll for an interrupt once every this many elements. */
#define AGMEM_INTERRUPT_EVERY 65536

/* Checks that x is an unclassed double vector (integer accepted, read as double) and returns
   its length; refuses anything else, naming `what`. */
static R_xlen_t line_numbers(SEXP x, const char *what)
{
    int type = TYPEOF(x);
    if (!(type == INTSXP || type == REALSXP) || Rf_isObject(x))
        Rf_errorcall(R_NilValue, "`%s` must be an unclassed numeric vector.", what);
    return XLENGTH(x);
}

/* Element i of x (checked by line_numbers()) as a double; an NA integer becomes NA_real_. */
static double line_value(SEXP x, R_xlen_t i)
{
    if (TYPEOF(x) == REALSXP)
        return REAL_ELT(x, i);
    int v = INTEGER_ELT(x, i);
    return v == NA_INTEGER ? NA_REAL : (double) v;
}

/* A single finite number (any sign), named `what` in the error. */
static double line_scalar(SEXP x, const char *what)
{
    if (line_numbers(x, what) != 1)
        Rf_errorcall(R_NilValue, "`%s` must be a single finite number.", what);
    double v = line_value(x, 0);
    if (!R_FINITE(v)) {
        char value[64];
        agmem_format_number(v, value, sizeof value);
        Rf_errorcall(R_NilValue, "`%s` must be a single finite number, not %s.", what, value);
    }
    return v;
}

/* The mean of the n finite values of x (checked by the caller), summed in long double and then
   rounded: no overflow for any finite values, since |mean| <= max |x|. */
static double line_mean(SEXP x, R_xlen_t n)
{
    long double s = 0.0L;
    for (R_xlen_t i = 0; i < n; i++) {
        if (i % AGMEM_INTERRUPT_EVERY == 0)
            R_CheckUserInterrupt();
        s += (long double) line_value(x, i) / (long double) n;
    }
    return (double) s;
}

/* .Call entry of the measured line: the least-squares line through the points (x[i], y[i]), as
   the double vector c(fixed, per_sample), the intercept and the slope. Through two points with
   different x it is the line through both. Accepts numeric x (the batch sizes) and y (the
   peaks in bytes) of one length, 2 or more, all values finite, with at least two different x.
   Refuses anything else, and a fit whose slope or intercept overflows a double, with an R
   error. */
SEXP agmem_line_fit(SEXP x, SEXP y)
{
    R_xlen_t n = line_numbers(x, "batch_size");
    if (line_numbers(y, "peak") != n)
        Rf_errorcall(R_NilValue, "`batch_size` and `peak` must have the same length.");
    if (n < 2)
        Rf_errorcall(R_NilValue, "A line needs at least 2 points, not %lld.", (long long) n);
    for (R_xlen_t i = 0; i < n; i++) {
        if (i % AGMEM_INTERRUPT_EVERY == 0)
            R_CheckUserInterrupt();
        if (!R_FINITE(line_value(x, i)))
            Rf_errorcall(R_NilValue, "`batch_size` must be finite, not %s at position %lld.",
                         ISNA(line_value(x, i)) ? "NA" : "NaN or infinite", (long long) i + 1);
        if (!R_FINITE(line_value(y, i)))
            Rf_errorcall(R_NilValue, "`peak` must be finite, not %s at position %lld.",
                         ISNA(line_value(y, i)) ? "NA" : "NaN or infinite", (long long) i + 1);
    }

    /* Centred sums: sxx = sum (x - mx)^2, sxy = sum (x - mx)(y - my). */
    double mx = line_mean(x, n), my = line_mean(y, n);
    long double sxx = 0.0L, sxy = 0.0L;
    for (R_xlen_t i = 0; i < n; i++) {
        if (i % AGMEM_INTERRUPT_EVERY == 0)
            R_CheckUserInterrupt();
        long double dx = (long double) line_value(x, i) - mx;
        long double dy = (long double) line_value(y, i) - my;
        sxx += dx * dx;
        sxy += dx * dy;
    }
    if (sxx == 0.0L)
        Rf_errorcall(R_NilValue, "A line needs at least two different `batch_size` values.");
    double slope = (double) (sxy / sxx);
    double fixed = (double) ((long double) my - (long double) slope * mx);
    if (!R_FINITE(slope) || !R_FINITE(fixed))
        Rf_errorcall(R_NilValue, "The fitted line overflows a double: the peaks are too large "
                     "for the spread of `batch_size`.");

    SEXP out = PROTECT(Rf_allocVector(REALSXP, 2));
    REAL(out)[0] = fixed;
    REAL(out)[1] = slope;
    SEXP names = PROTECT(Rf_allocVector(STRSXP, 2));
    SET_STRING_ELT(names, 0, Rf_mkChar("fixed"));
    SET_STRING_ELT(names, 1, Rf_mkChar("per_sample"));
    Rf_setAttrib(out, R_NamesSymbol, names);
    UNPROTECT(2);
    return out;
}

/* Whether the peak on the line at batch b, fixed + per_sample * b in doubles, is within limit. */
static int line_fits(double fixed, double per_sample, double b, double limit)
{
    double peak = agmem_keep(fixed + agmem_keep(per_sample * b));
    return peak <= limit;
}

/* .Call entry of the largest batch on a measured line: the largest whole b in [1, INT_MAX] for
   which fixed + per_sample * b, each operation rounded to a double, is <= budget, as a double;
   0 when batch 1 does not fit; INT_MAX (the cap) when every batch fits. With per_sample >= 0 the
   peak never decreases as b grows, so bisection is exact; with per_sample < 0 it never
   increases, so the answer is INT_MAX when the cap fits and 0 otherwise. A peak that overflows
   does not fit. Accepts a finite fixed and per_sample (any sign) and a finite budget >= 0;
   refuses anything else with an R error. */
SEXP agmem_line_max_batch(SEXP fixed, SEXP per_sample, SEXP budget)
{
    double a = line_scalar(fixed, "fixed");
    double s = line_scalar(per_sample, "per_sample");
    double lim = agmem_arg_bytes(budget, "budget");
    double cap = (double) INT_MAX;

    double answer;
    if (s < 0.0) {
        answer = line_fits(a, s, cap, lim) ? cap : 0.0;
    } else if (!line_fits(a, s, 1.0, lim)) {
        answer = 0.0;
    } else if (line_fits(a, s, cap, lim)) {
        answer = cap;
    } else {
        long long lo = 1, hi = INT_MAX;      /* invariant: lo fits, hi does not */
        while (hi - lo > 1) {
            long long mid = lo + (hi - lo) / 2;
            if (line_fits(a, s, (double) mid, lim))
                lo = mid;
            else
                hi = mid;
        }
        answer = (double) lo;
    }
    return Rf_ScalarReal(answer);
}
