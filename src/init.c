/* init.c: registers agmem's .Call routines and nothing else. R_init_agmem is the one symbol the
   shared object exports (src/Makevars hides the rest with $(C_VISIBILITY)). */
#include <R_ext/Rdynload.h>
#include <R_ext/Visibility.h>
#include "agmem.h"

static const R_CallMethodDef call_methods[] = {
    {"agmem_estimate", (DL_FUNC) &agmem_estimate, 4},
    {"agmem_max_batch", (DL_FUNC) &agmem_max_batch, 4},
    {"agmem_activation_frac", (DL_FUNC) &agmem_activation_frac, 3},
    {"agmem_sweep", (DL_FUNC) &agmem_sweep, 4},
    {"agmem_training_memory", (DL_FUNC) &agmem_training_memory, 8},
    {"agmem_training_rules", (DL_FUNC) &agmem_training_rules, 0},
    {"agmem_max_batch_model", (DL_FUNC) &agmem_max_batch_model, 8},
    {"agmem_max_batch_line", (DL_FUNC) &agmem_max_batch_line, 3},
    {"agmem_line_fit", (DL_FUNC) &agmem_line_fit, 2},
    {"agmem_registry", (DL_FUNC) &agmem_registry, 0},
    {"agmem_check_batches", (DL_FUNC) &agmem_check_batches, 1},
    {"agmem_die_with_parent", (DL_FUNC) &agmem_die_with_parent, 1},
    {NULL, NULL, 0}
};

void attribute_visible R_init_agmem(DllInfo *dll)
{
    R_registerRoutines(dll, NULL, call_methods, NULL, NULL);
    R_useDynamicSymbols(dll, FALSE);
    R_forceSymbols(dll, TRUE);
}
