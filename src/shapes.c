/* shapes.c: validates a list of parameter shapes and counts its scalars, in one pass, in place. */
#include <stdio.h>
#include <float.h>
#include "agmem.h"

/* How many elements of an ALTREP vector are read at a time, through its get_region method. */
#define AGMEM_CHUNK 512

/* Keeps the compiler from inlining a function that is rarely called (the error paths, the ALTREP
   reader): their stack buffers then stay out of the frame of shape_product(), which is called
   once for every shape. */
#ifdef __GNUC__
#define AGMEM_NOINLINE __attribute__((noinline))
#else
#define AGMEM_NOINLINE
#endif

/* Writes into buf (of size n) what x is, for an error message: "a character vector",
   "an object of class \"factor\"", "NULL", ... Accepts any SEXP that is not an unclassed
   integer or double vector (those are never refused for what they are); never allocates. */
static void describe(SEXP x, char *buf, size_t n)
{
    if (Rf_isObject(x)) {
        SEXP cls = Rf_getAttrib(x, R_ClassSymbol);
        if (TYPEOF(cls) == STRSXP && XLENGTH(cls) > 0) {
            snprintf(buf, n, "an object of class \"%s\"", CHAR(STRING_ELT(cls, 0)));
            return;
        }
    }
    const char *what;
    switch (TYPEOF(x)) {
    case NILSXP:  what = "NULL"; break;
    case LGLSXP:  what = "a logical vector"; break;
    case CPLXSXP: what = "a complex vector"; break;
    case STRSXP:  what = "a character vector"; break;
    case RAWSXP:  what = "a raw vector"; break;
    case VECSXP:  what = XLENGTH(x) == 0 ? "an empty list" : "a list"; break;
    case ENVSXP:  what = "an environment"; break;
    case CLOSXP:
    case BUILTINSXP:
    case SPECIALSXP: what = "a function"; break;
    default:
        snprintf(buf, n, "an object of type %s", Rf_type2char(TYPEOF(x)));
        return;
    }
    snprintf(buf, n, "%s", what);
}

/* Refuses shape number pos (1-based) because of what it is; never returns. */
static AGMEM_NOINLINE void NORET bad_shape_object(SEXP x, R_xlen_t pos)
{
    char what[200];
    describe(x, what, sizeof what);
    Rf_errorcall(R_NilValue,
                 "`shapes`: shape %lld must be a non-empty numeric vector of positive whole "
                 "numbers, not %s.", (long long) pos, what);
}

/* Refuses element idx (0-based) of shape pos (1-based), whose value is v; never returns. */
static AGMEM_NOINLINE void NORET bad_dimension(double v, R_xlen_t pos, R_xlen_t idx)
{
    char value[64];
    agmem_format_number(v, value, sizeof value);
    Rf_errorcall(R_NilValue,
                 "`shapes`: shape %lld must hold positive whole numbers, but its element %lld is %s.",
                 (long long) pos, (long long) idx + 1, value);
}

/* One dimension: a double that is finite, at least 1 and whole (NaN fails every comparison).
   Every double from 2^52 up is whole; below, v is whole when it survives a round trip through a
   64-bit integer, which is cheaper than floor() where the CPU has no rounding instruction. */
static inline int good_real(double v)
{
    if (v >= 1.0 && v < 0x1p52)
        return v == (double) (long long) v;
    return v >= 0x1p52 && v <= DBL_MAX;
}

/* Product, left to right in double, of the len dimensions at p (shape pos, elements from offset). */
static inline double product_real(const double *p, R_xlen_t len, double prod,
                                  R_xlen_t pos, R_xlen_t offset)
{
    for (R_xlen_t i = 0; i < len; i++) {
        if (!good_real(p[i]))
            bad_dimension(p[i], pos, offset + i);
        prod *= p[i];
    }
    return prod;
}

/* The same for integer dimensions; NA_integer_ is negative and so refused with the rest. */
static inline double product_int(const int *p, R_xlen_t len, double prod,
                                 R_xlen_t pos, R_xlen_t offset)
{
    for (R_xlen_t i = 0; i < len; i++) {
        if (p[i] <= 0)
            bad_dimension(p[i] == NA_INTEGER ? NA_REAL : (double) p[i], pos, offset + i);
        prod *= (double) p[i];
    }
    return prod;
}

/* Product, left to right in double, of the len dimensions of shape pos, an integer or double
   (type) ALTREP vector whose data are not in memory, such as a compact sequence: read
   AGMEM_CHUNK elements at a time through its get_region method, so that it is never expanded.
   Refuses a bad dimension as product_real() and product_int() do. */
static AGMEM_NOINLINE double region_product(SEXP x, int type, R_xlen_t len, R_xlen_t pos)
{
    double prod = 1.0;
    if (type == REALSXP) {
        double buf[AGMEM_CHUNK];
        for (R_xlen_t start = 0; start < len; start += AGMEM_CHUNK) {
            R_xlen_t got = REAL_GET_REGION(x, start, AGMEM_CHUNK, buf);
            prod = product_real(buf, got, prod, pos, start);
        }
    } else {
        int buf[AGMEM_CHUNK];
        for (R_xlen_t start = 0; start < len; start += AGMEM_CHUNK) {
            R_xlen_t got = INTEGER_GET_REGION(x, start, AGMEM_CHUNK, buf);
            prod = product_int(buf, got, prod, pos, start);
        }
    }
    return prod;
}

/* Product of the dimensions of shape pos (1-based). Accepts an unclassed integer or double vector
   (attributes such as dim or names are fine) of one or more positive whole numbers; refuses any
   other object, an empty vector, NA, NaN, +-Inf, zero, negatives and fractions with an R error
   naming the shape. Reads the data in place, or region by region for an ALTREP vector whose
   data are not in memory. The product may overflow to Inf: the caller checks.
   The product is multiplications only, and the callers only add it: rounding it through memory
   once, at the end, is what keeps the compiler from fusing its last multiplication into their
   addition. */
static double shape_product(SEXP x, R_xlen_t pos)
{
    int type = TYPEOF(x);
    if ((type != INTSXP && type != REALSXP) || Rf_isObject(x))
        bad_shape_object(x, pos);
    R_xlen_t len = XLENGTH(x);
    if (len == 0)
        Rf_errorcall(R_NilValue,
                     "`shapes`: shape %lld must be a non-empty numeric vector of positive whole "
                     "numbers, not an empty vector.", (long long) pos);
    const void *data = DATAPTR_OR_NULL(x);   /* NULL only for an ALTREP vector not in memory */
    double prod;
    if (data == NULL)
        prod = region_product(x, type, len, pos);
    else if (type == REALSXP)
        prod = product_real((const double *) data, len, 1.0, pos, 0);
    else
        prod = product_int((const int *) data, len, 1.0, pos, 0);
    return agmem_keep(prod);
}

/* The number of scalars the shapes describe: the sum, in list order and left to right in double,
   of each shape's product. Accepts an unclassed list of one or more shapes (names ignored), or a
   single numeric vector, taken as a list of one. Refuses anything else with an R error naming
   `shapes`. The sum may overflow to Inf: the caller checks (agmem_check_finite). */
double agmem_count_params(SEXP shapes)
{
    int type = TYPEOF(shapes);
    if ((type == INTSXP || type == REALSXP) && !Rf_isObject(shapes))
        return shape_product(shapes, 1);
    if (type != VECSXP || Rf_isObject(shapes) || XLENGTH(shapes) == 0) {
        char what[200];
        describe(shapes, what, sizeof what);
        Rf_errorcall(R_NilValue,
                     "`shapes` must be a non-empty list of numeric vectors, or one numeric "
                     "vector, not %s.", what);
    }
    R_xlen_t len = XLENGTH(shapes);
    double n = 0.0;
    for (R_xlen_t i = 0; i < len; i++)
        n += shape_product(VECTOR_ELT(shapes, i), i + 1);
    return n;
}
