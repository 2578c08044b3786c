/* args.c: reads the numeric arguments of the .Call entry points, checking type, length and
   value before any use, so that a malformed direct call is an R error and never a crash. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <limits.h>
#include <string.h>
#include "agmem.h"

/* Element i of x as a double (NA_integer_ becomes NA_real_). x must be an integer or double
   vector longer than i: the callers check its type and length first. */
double agmem_number_at(SEXP x, R_xlen_t i)
{
    if (TYPEOF(x) == REALSXP)
        return REAL_ELT(x, i);
    int v = INTEGER_ELT(x, i);
    return v == NA_INTEGER ? NA_REAL : (double) v;
}

/* Writes v into buf for an error message: NA, NaN, Inf, -Inf, or v with 15 significant digits
   as R prints it, or with as many up to 17 as it takes to write v exactly, so that a refused
   value such as 3 + 4e-15 never reads as a whole number. */
void agmem_format_number(double v, char *buf, size_t n)
{
    if (ISNA(v))
        snprintf(buf, n, "NA");
    else if (ISNAN(v))
        snprintf(buf, n, "NaN");
    else if (!R_FINITE(v))
        snprintf(buf, n, v > 0 ? "Inf" : "-Inf");
    else
        for (int digits = 15; digits <= 17; digits++) {
            snprintf(buf, n, "%.*g", digits, v);
            if (strtod(buf, NULL) == v)
                break;
        }
}

/* Checks that x is an unclassed integer or double vector, of length 1 when scalar is true and
   of length 1 or more otherwise; returns its length. Refuses anything else, naming `what`. */
static R_xlen_t numbers(SEXP x, const char *what, int scalar)
{
    int type = TYPEOF(x);
    R_xlen_t len = (type == INTSXP || type == REALSXP) && !Rf_isObject(x) ? XLENGTH(x) : -1;
    if (scalar && len != 1)
        agmem_abort(AGMEM_E_ARGUMENT, "`%s` must be a single number.", what);
    if (!scalar && len < 1)
        agmem_abort(AGMEM_E_ARGUMENT, "`%s` must be a non-empty numeric vector.", what);
    return len;
}

/* The number of optimizer multipliers in x: one when scalar is true, one or more otherwise. */
R_xlen_t agmem_arg_multipliers(SEXP x, int scalar)
{
    return numbers(x, "multiplier", scalar);
}

/* Element i of the multipliers x (checked by agmem_arg_multipliers): the number of
   optimizer-state copies, 0 (sgd_plain), 1 (sgd) or 2 (adam). */
int agmem_arg_multiplier(SEXP x, R_xlen_t i)
{
    double v = agmem_number_at(x, i);
    if (!(v == 0.0 || v == 1.0 || v == 2.0)) {
        char value[64];
        agmem_format_number(v, value, sizeof value);
        agmem_abort(AGMEM_E_ARGUMENT,
                    "`multiplier` must be 0, 1 or 2 optimizer-state copies, not %s.", value);
    }
    return (int) v;
}

/* activation_frac: a single finite number >= 0. */
double agmem_arg_frac(SEXP x)
{
    numbers(x, "activation_frac", 1);
    double v = agmem_number_at(x, 0);
    if (!(R_FINITE(v) && v >= 0.0)) {
        char value[64];
        agmem_format_number(v, value, sizeof value);
        agmem_abort(AGMEM_E_ARGUMENT,
                    "`activation_frac` must be a single finite number >= 0, not %s.", value);
    }
    return v;
}

/* The number of elements of batch_size: one when scalar is true, one or more otherwise. */
R_xlen_t agmem_arg_batches(SEXP x, int scalar)
{
    return numbers(x, "batch_size", scalar);
}

/* Element i of batch_size (checked by agmem_arg_batches): a whole number from 1 to INT_MAX,
   the largest batch the estimator accepts. The error for a vector of more than one names the
   position of the refused element. */
double agmem_arg_batch(SEXP x, R_xlen_t i)
{
    double v = agmem_number_at(x, i);
    if (!(v >= 1.0 && v <= (double) INT_MAX && v == floor(v))) {
        char value[64];
        agmem_format_number(v, value, sizeof value);
        if (XLENGTH(x) == 1)
            agmem_abort(AGMEM_E_ARGUMENT,
                        "`batch_size` must be a whole number from 1 to %d, not %s.", INT_MAX,
                        value);
        agmem_abort(AGMEM_E_ARGUMENT,
                    "`batch_size` must hold whole numbers from 1 to %d, but its element %lld "
                    "is %s.", INT_MAX, (long long) i + 1, value);
    }
    return v;
}

/* A single finite number >= 0 (a byte count), named `what` in the error. */
double agmem_arg_bytes(SEXP x, const char *what)
{
    numbers(x, what, 1);
    double v = agmem_number_at(x, 0);
    if (!(R_FINITE(v) && v >= 0.0)) {
        char value[64];
        agmem_format_number(v, value, sizeof value);
        agmem_abort(AGMEM_E_ARGUMENT, "`%s` must be a single finite number of bytes >= 0, not %s.",
                    what, value);
    }
    return v;
}

/* A single finite number of either sign (a fitted intercept or slope) from x, an unclassed
   integer or double vector of length 1; refuses anything else with an R error naming `what`. */
double agmem_arg_finite(SEXP x, const char *what)
{
    int type = TYPEOF(x);
    if ((type != INTSXP && type != REALSXP) || Rf_isObject(x) || XLENGTH(x) != 1)
        agmem_abort(AGMEM_E_ARGUMENT, "`%s` must be a single finite number.", what);
    double v = agmem_number_at(x, 0);
    if (!R_FINITE(v)) {
        char value[64];
        agmem_format_number(v, value, sizeof value);
        agmem_abort(AGMEM_E_ARGUMENT, "`%s` must be a single finite number, not %s.", what, value);
    }
    return v;
}

/* .Call entry of R's check of batch sizes (R/checks.R): batch_size as a double vector, after
   the checks of agmem_arg_batches() and agmem_arg_batch() (a non-empty unclassed numeric vector
   of whole numbers from 1 to INT_MAX), so that R and C refuse a batch size with one message.
   Checks for a user interrupt every AGMEM_INTERRUPT_EVERY elements. */
SEXP agmem_check_batches(SEXP batch_size)
{
    R_xlen_t n = agmem_arg_batches(batch_size, 0);
    SEXP out = PROTECT(Rf_allocVector(REALSXP, n));
    double *o = REAL(out);
    for (R_xlen_t i = 0; i < n; i++) {
        if (i > 0 && i % AGMEM_INTERRUPT_EVERY == 0)
            R_CheckUserInterrupt();
        o[i] = agmem_arg_batch(batch_size, i);
    }
    UNPROTECT(1);
    return out;
}

/* Writes into buf (of size n) the names as an English choice: "a", "b" or "c". */
static void choice_list(const char *const *names, int count, char *buf, size_t n)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < count && used < n; i++) {
        const char *sep = i == 0 ? "" : (i == count - 1 ? " or " : ", ");
        int w = snprintf(buf + used, n - used, "%s\"%s\"", sep, names[i]);
        if (w < 0)
            break;
        used += (size_t) w;
    }
}

/* The code of x among the count names (a name table of rules.c): x must be an unclassed
   character vector of length 1, not NA, equal to one of the names. R matches the user's
   argument (partial names, defaults) before it calls; this asserts what the C code relies on,
   and refuses anything else with an R error naming `what`. */
int agmem_arg_name(SEXP x, const char *what, const char *const *names, int count)
{
    char choices[200];
    choice_list(names, count, choices, sizeof choices);
    if (TYPEOF(x) != STRSXP || Rf_isObject(x) || XLENGTH(x) != 1 ||
        STRING_ELT(x, 0) == NA_STRING)
        agmem_abort(AGMEM_E_ARGUMENT, "`%s` must be one of %s.", what, choices);
    const char *s = CHAR(STRING_ELT(x, 0));
    for (int i = 0; i < count; i++)
        if (strcmp(s, names[i]) == 0)
            return i;
    agmem_abort(AGMEM_E_ARGUMENT, "`%s` must be one of %s, not \"%.60s\".", what, choices, s);
}
