/* shapes.c: validates a list of parameter shapes and counts its scalars, in one pass, in place. */
#include <stdio.h>
#include <float.h>
#include "agmem.h"

/* How many elements of an ALTREP vector are read at a time, through its get_region method. */
#define AGMEM_CHUNK 512

/* Keeps the compiler from inlining a function that is rarely called (the error paths, the ALTREP
   reader, the probe): their stack buffers then stay out of the frame of shape_product(), which is
   called once for every shape. */
#ifdef __GNUC__
#define AGMEM_NOINLINE __attribute__((noinline))
#else
#define AGMEM_NOINLINE
#endif

/* Whether the running R accumulates prod() in long double: 1 or 0 once probed, -1 before. */
static int prod_in_long_double = -1;

/* Asks the running R whether it was built with long double (capabilities("long.double")), which
   decides the accumulator of its prod() (rprod() in R's src/main/summary.c). Returns 1 or 0. */
static AGMEM_NOINLINE int probe_long_double(void)
{
    SEXP call = PROTECT(Rf_lang2(Rf_install("capabilities"), Rf_mkString("long.double")));
    SEXP v = PROTECT(Rf_eval(call, R_BaseEnv));
    int yes = TYPEOF(v) == LGLSXP && XLENGTH(v) == 1 && LOGICAL(v)[0] == TRUE;
    UNPROTECT(2);
    return yes;
}

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
    agmem_abort(AGMEM_E_ARGUMENT,
                "`shapes`: shape %lld must be a non-empty numeric vector of positive whole "
                "numbers, not %s.", (long long) pos, what);
}

/* Refuses element idx (0-based) of shape pos (1-based), whose value is v; never returns. */
static AGMEM_NOINLINE void NORET bad_dimension(double v, R_xlen_t pos, R_xlen_t idx)
{
    char value[64];
    agmem_format_number(v, value, sizeof value);
    agmem_abort(AGMEM_E_ARGUMENT,
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

/* Defines `static inline ACC name(const ELT *p, R_xlen_t len, ACC s, R_xlen_t pos, R_xlen_t
   offset)`: the running product s times the len dimensions at p (shape pos, elements from
   offset), multiplied left to right as R's prod() does, each converted to double first. The
   accumulator type ACC is long double (the _ld functions) where R accumulates in long double,
   double (the _d functions) where it does not. Refuses, with an R error naming it, a dimension
   for which BAD(v) holds, quoting VALUE(v). One macro, so that the four variants cannot drift
   apart. */
#define AGMEM_PRODUCT(name, ELT, ACC, BAD, VALUE)                                              \
    static inline ACC name(const ELT *p, R_xlen_t len, ACC s, R_xlen_t pos, R_xlen_t offset) \
    {                                                                                          \
        for (R_xlen_t i = 0; i < len; i++) {                                                   \
            if (BAD(p[i]))                                                                     \
                bad_dimension(VALUE(p[i]), pos, offset + i);                                   \
            s *= (double) p[i];                                                                \
        }                                                                                      \
        return s;                                                                              \
    }

/* A double dimension is refused unless good_real(); an integer one unless positive (NA_integer_
   is negative, and quoted as NA). */
#define BAD_REAL(v) (!good_real(v))
#define REAL_VALUE(v) (v)
#define BAD_INT(v) ((v) <= 0)
#define INT_VALUE(v) ((v) == NA_INTEGER ? NA_REAL : (double) (v))

AGMEM_PRODUCT(product_real_ld, double, long double, BAD_REAL, REAL_VALUE)
AGMEM_PRODUCT(product_real_d, double, double, BAD_REAL, REAL_VALUE)
AGMEM_PRODUCT(product_int_ld, int, long double, BAD_INT, INT_VALUE)
AGMEM_PRODUCT(product_int_d, int, double, BAD_INT, INT_VALUE)

/* The running product of a shape, as R's prod() keeps it: in long double when ld, in double
   otherwise (the other member is unused). */
typedef struct {
    int ld;
    long double l;
    double d;
} agmem_product;

/* Multiplies the running product p by the count dimensions at data (integers or doubles, type),
   elements offset to offset + count - 1 of shape pos, refusing a bad one. Returns whether the
   product is now above DBL_MAX, which no later factor (each >= 1) can undo. */
static inline int multiply(agmem_product *p, const void *data, int type, R_xlen_t count,
                           R_xlen_t pos, R_xlen_t offset)
{
    if (p->ld) {
        p->l = type == REALSXP ? product_real_ld(data, count, p->l, pos, offset)
                               : product_int_ld(data, count, p->l, pos, offset);
        return p->l > DBL_MAX;
    }
    p->d = type == REALSXP ? product_real_d(data, count, p->d, pos, offset)
                           : product_int_d(data, count, p->d, pos, offset);
    return p->d > DBL_MAX;
}

/* The product as R's prod() returns it: Inf above DBL_MAX, else rounded to double. */
static inline double product_value(const agmem_product *p)
{
    if (p->ld)
        return p->l > DBL_MAX ? R_PosInf : (double) p->l;
    return p->d > DBL_MAX ? R_PosInf : p->d;
}

/* Adds count elements to the work done since the last interrupt check (*work); checks, and
   starts counting anew, once that reaches AGMEM_INTERRUPT_EVERY. */
static inline void count_work(R_xlen_t *work, R_xlen_t count)
{
    *work += count;
    if (*work >= AGMEM_INTERRUPT_EVERY) {
        *work = 0;
        R_CheckUserInterrupt();
    }
}

/* Reads elements start to start + want - 1 (want >= 1) of x, an integer or double (type) ALTREP
   vector whose data are not in memory, into buf through its get_region method, so that it is
   never expanded. Returns how many elements the method gave, from 1 to want; refuses a count
   outside that range (a broken ALTREP class) with an R error naming shape pos. */
static R_xlen_t read_region(SEXP x, int type, R_xlen_t start, R_xlen_t want, void *buf,
                            R_xlen_t pos)
{
    R_xlen_t got = type == REALSXP ? REAL_GET_REGION(x, start, want, (double *) buf)
                                   : INTEGER_GET_REGION(x, start, want, (int *) buf);
    if (got <= 0 || got > want)
        agmem_abort(AGMEM_E_ARGUMENT,
                    "`shapes`: shape %lld could not be read: its ALTREP class gave %lld elements "
                    "from element %lld on, where 1 to %lld were asked for.", (long long) pos,
                    (long long) got, (long long) start + 1, (long long) want);
    return got;
}

/* The product of the len dimensions of shape pos, an integer or double (type) ALTREP vector
   whose data are not in memory, such as a compact sequence: read AGMEM_CHUNK elements at a
   time, advancing by the count each read returns. Otherwise as shape_product(). */
static AGMEM_NOINLINE double region_product(SEXP x, int type, R_xlen_t len, R_xlen_t pos,
                                            int ld, R_xlen_t *work)
{
    double buf[AGMEM_CHUNK];                  /* large enough for AGMEM_CHUNK ints too */
    agmem_product p = {ld, 1.0L, 1.0};
    for (R_xlen_t start = 0, got; start < len; start += got) {
        got = read_region(x, type, start, len - start < AGMEM_CHUNK ? len - start : AGMEM_CHUNK,
                          buf, pos);
        if (multiply(&p, buf, type, got, pos, start))
            break;
        count_work(work, got);
    }
    return product_value(&p);
}

/* Product of the dimensions of shape pos (1-based) as R's prod(as.double(shape)) gives it: the
   running product in long double where the running R uses long double (ld), converted back to
   double at the end, Inf when above DBL_MAX. Accepts an unclassed integer or double vector
   (attributes such as dim or names are fine) of one or more positive whole numbers; refuses any
   other object, an empty vector, NA, NaN, +-Inf, zero, negatives and fractions with an R error
   naming the shape. Reads the data in place, or region by region for an ALTREP vector whose
   data are not in memory. Stops reading, at the latest AGMEM_INTERRUPT_EVERY elements later, once
   the product is above DBL_MAX (the answer is then Inf: later dimensions are not checked).
   *work counts the elements read since the last interrupt check (see count_work()).
   The product is rounded through memory once, at the end, which keeps the compiler from fusing
   its last multiplication into the callers' addition. */
static double shape_product(SEXP x, R_xlen_t pos, int ld, R_xlen_t *work)
{
    int type = TYPEOF(x);
    if ((type != INTSXP && type != REALSXP) || Rf_isObject(x))
        bad_shape_object(x, pos);
    R_xlen_t len = XLENGTH(x);
    if (len == 0)
        agmem_abort(AGMEM_E_ARGUMENT,
                    "`shapes`: shape %lld must be a non-empty numeric vector of positive whole "
                    "numbers, not an empty vector.", (long long) pos);
    const char *data = DATAPTR_OR_NULL(x);   /* NULL only for an ALTREP vector not in memory */
    if (data == NULL)
        return agmem_keep(region_product(x, type, len, pos, ld, work));
    size_t size = type == REALSXP ? sizeof(double) : sizeof(int);
    agmem_product p = {ld, 1.0L, 1.0};
    for (R_xlen_t start = 0, count; start < len; start += count) {
        count = len - start < AGMEM_INTERRUPT_EVERY ? len - start : AGMEM_INTERRUPT_EVERY;
        if (multiply(&p, data + (size_t) start * size, type, count, pos, start))
            break;
        count_work(work, count);
    }
    return agmem_keep(product_value(&p));
}

/* Refuses, as `shapes`, a single numeric vector that is a matrix or an array with more than one
   row and more than one column (such as as.matrix() of a data frame): a table of numbers, not
   the dimensions of one tensor. A vector, or a matrix of one row or one column, passes. */
static void refuse_table(SEXP x)
{
    SEXP dim = Rf_getAttrib(x, R_DimSymbol);
    if (TYPEOF(dim) != INTSXP || XLENGTH(dim) < 2)
        return;
    int wide = 0;
    for (R_xlen_t i = 0; i < XLENGTH(dim); i++)
        wide += INTEGER_ELT(dim, i) > 1;
    if (wide > 1)
        agmem_abort(AGMEM_E_ARGUMENT,
                    "`shapes` is a matrix or array of %d x %d%s numbers, not the dimensions of "
                    "a tensor: give a list of shapes, such as list(c(256, 128), 128), or one "
                    "vector of dimensions.", INTEGER_ELT(dim, 0), INTEGER_ELT(dim, 1),
                    XLENGTH(dim) > 2 ? " x ..." : "");
}

/* The number of scalars the shapes describe: the sum, in list order and left to right in double,
   of each shape's product as R's prod() computes it. Accepts an unclassed list of one or more
   shapes (names ignored), or a single numeric vector, taken as a list of one (but not a matrix
   of numbers: refuse_table()). Refuses anything else with an R error naming `shapes`. Returns
   Inf, without reading further, as soon as the count is above DBL_MAX (the callers refuse it:
   see agmem_check_finite()); checks for a user interrupt at least every AGMEM_INTERRUPT_EVERY
   elements or shapes. */
double agmem_count_params(SEXP shapes)
{
    if (prod_in_long_double < 0)
        prod_in_long_double = probe_long_double();
    int ld = prod_in_long_double;
    R_xlen_t work = 0;
    int type = TYPEOF(shapes);
    if ((type == INTSXP || type == REALSXP) && !Rf_isObject(shapes)) {
        refuse_table(shapes);
        return shape_product(shapes, 1, ld, &work);
    }
    if (type != VECSXP || Rf_isObject(shapes) || XLENGTH(shapes) == 0) {
        char what[200];
        describe(shapes, what, sizeof what);
        agmem_abort(AGMEM_E_ARGUMENT,
                    "`shapes` must be a non-empty list of numeric vectors, or one numeric "
                    "vector, not %s.", what);
    }
    R_xlen_t len = XLENGTH(shapes);
    double n = 0.0;
    for (R_xlen_t i = 0; i < len && n <= DBL_MAX; i++) {
        n += shape_product(VECTOR_ELT(shapes, i), i + 1, ld, &work);
        work++;
    }
    return n;
}
