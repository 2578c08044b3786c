/* line.c: the straight line of a measured peak against the batch size (bytes = fixed +
   per_sample * batch), fitted by least squares. The largest batch on such a line is planned in
   max_batch.c, with the other plans. */
#include "agmem.h"

/* Checks that x is an unclassed double vector (integer accepted, read as double) and returns
   its length; refuses anything else, naming `what`. */
static R_xlen_t line_numbers(SEXP x, const char *what)
{
    int type = TYPEOF(x);
    if (!(type == INTSXP || type == REALSXP) || Rf_isObject(x))
        agmem_abort(AGMEM_E_ARGUMENT, "`%s` must be an unclassed numeric vector.", what);
    return XLENGTH(x);
}

/* The mean of the n finite values of x (checked by the caller), summed in long double and then
   rounded: no overflow for any finite values, since |mean| <= max |x|. */
static double line_mean(SEXP x, R_xlen_t n)
{
    long double s = 0.0L;
    for (R_xlen_t i = 0; i < n; i++) {
        if (i % AGMEM_INTERRUPT_EVERY == 0)
            R_CheckUserInterrupt();
        s += (long double) agmem_number_at(x, i) / (long double) n;
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
        agmem_abort(AGMEM_E_ARGUMENT, "`batch_size` and `peak` must have the same length.");
    if (n < 2)
        agmem_abort(AGMEM_E_ARGUMENT, "A line needs at least 2 points, not %lld.", (long long) n);
    for (R_xlen_t i = 0; i < n; i++) {
        if (i % AGMEM_INTERRUPT_EVERY == 0)
            R_CheckUserInterrupt();
        double xi = agmem_number_at(x, i), yi = agmem_number_at(y, i);
        if (!R_FINITE(xi))
            agmem_abort(AGMEM_E_ARGUMENT, "`batch_size` must be finite, not %s at position %lld.",
                        ISNA(xi) ? "NA" : "NaN or infinite", (long long) i + 1);
        if (!R_FINITE(yi))
            agmem_abort(AGMEM_E_ARGUMENT, "`peak` must be finite, not %s at position %lld.",
                        ISNA(yi) ? "NA" : "NaN or infinite", (long long) i + 1);
    }

    /* Centred sums: sxx = sum (x - mx)^2, sxy = sum (x - mx)(y - my). */
    double mx = line_mean(x, n), my = line_mean(y, n);
    long double sxx = 0.0L, sxy = 0.0L;
    for (R_xlen_t i = 0; i < n; i++) {
        if (i % AGMEM_INTERRUPT_EVERY == 0)
            R_CheckUserInterrupt();
        long double dx = (long double) agmem_number_at(x, i) - mx;
        long double dy = (long double) agmem_number_at(y, i) - my;
        sxx += dx * dx;
        sxy += dx * dy;
    }
    if (sxx == 0.0L)
        agmem_abort(AGMEM_E_ARGUMENT, "A line needs at least two different `batch_size` values.");
    double slope = (double) (sxy / sxx);
    double fixed = (double) ((long double) my - (long double) slope * mx);
    if (!R_FINITE(slope) || !R_FINITE(fixed))
        agmem_abort(AGMEM_E_OVERFLOW, "The fitted line overflows a double: the peaks are too large "
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
