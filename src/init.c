/* init.c: registers agmem's .Call routines and nothing else. */
#include <R_ext/Rdynload.h>
#include "agmem.h"

static const R_CallMethodDef call_methods[] = {
    {"agmem_estimate", (DL_FUNC) &agmem_estimate, 4},
    {"agmem_max_batch", (DL_FUNC) &agmem_max_batch, 4},
    {"agmem_activation_frac", (DL_FUNC) &agmem_activation_frac, 3},
    {"agmem_sweep", (DL_FUNC) &agmem_sweep, 4},
    {"agmem_training_memory", (DL_FUNC) &agmem_training_memory, 7},
    {"agmem_training_rules", (DL_FUNC) &agmem_training_rules, 0},
    {NULL, NULL, 0}
};

void R_init_agmem(DllInfo *dll)
{
    R_registerRoutines(dll, NULL, call_methods, NULL, NULL);
    R_useDynamicSymbols(dll, FALSE);
    R_forceSymbols(dll, TRUE);
}
