/* conditions.c: the one way agmem's C code signals an error, as a classed R condition. */
#include <stdarg.h>
#include <stdio.h>
#include "agmem.h"

/* Signals an R error of class c("agmem_error_<subclass>", "agmem_error", "error",
   "condition") with the message made from fmt and its arguments (as printf formats them, cut
   at 4095 bytes) and no call, through base::stop(), so that R code can catch it by class and
   prints it as "Error: <message>". subclass is one of the AGMEM_E_* names of agmem.h, which
   R/conditions.R lists and documents. Never returns; allocates only R objects, which the
   longjmp leaves to the garbage collector. */
void NORET agmem_abort(const char *subclass, const char *fmt, ...)
{
    char msg[4096], cls[64];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(cls, sizeof cls, "agmem_error_%s", subclass);

    const char *fields[] = {"message", "call", ""};
    SEXP cond = PROTECT(Rf_mkNamed(VECSXP, fields));
    SET_VECTOR_ELT(cond, 0, Rf_mkString(msg));
    SEXP classes = PROTECT(Rf_allocVector(STRSXP, 4));
    SET_STRING_ELT(classes, 0, Rf_mkChar(cls));
    SET_STRING_ELT(classes, 1, Rf_mkChar("agmem_error"));
    SET_STRING_ELT(classes, 2, Rf_mkChar("error"));
    SET_STRING_ELT(classes, 3, Rf_mkChar("condition"));
    Rf_setAttrib(cond, R_ClassSymbol, classes);
    SEXP call = PROTECT(Rf_lang2(Rf_install("stop"), cond));
    Rf_eval(call, R_BaseEnv);
    UNPROTECT(3);
    /* stop() does not return; should it ever, the error is still an error. */
    Rf_error("%s", msg);
}
