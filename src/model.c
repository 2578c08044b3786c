/* model.c: the peak memory of a training step on ggmlR's autograd path, from the parameter count,
   the ops of the layers and the rules of rules.c. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "agmem.h"

/* Checks that ops is an unclassed character vector (possibly empty) and units an unclassed
   integer or double vector of the same length; returns that length. Refuses anything else. The
   elements are checked one by one as they are used (see op_units()). */
static R_xlen_t check_ops(SEXP ops, SEXP units)
{
    if (TYPEOF(ops) != STRSXP || Rf_isObject(ops))
        agmem_abort(AGMEM_E_ARGUMENT, "`ops` must be a character vector of op names.");
    if ((TYPEOF(units) != INTSXP && TYPEOF(units) != REALSXP) || Rf_isObject(units))
        agmem_abort(AGMEM_E_ARGUMENT,
                    "`units` must be a numeric vector: one positive whole number per op.");
    if (XLENGTH(units) != XLENGTH(ops))
        agmem_abort(AGMEM_E_ARGUMENT, "`units` has %lld elements for %lld ops: give one per op.",
                    (long long) XLENGTH(units), (long long) XLENGTH(ops));
    return XLENGTH(ops);
}

/* The units of op i (0-based): a finite whole number >= 1; refuses any other value. Sets *first
   to the index of the op's first rule in agmem_unit_rules; refuses an NA or unknown op name. */
static double op_units(SEXP ops, SEXP units, R_xlen_t i, R_xlen_t *first)
{
    SEXP name = STRING_ELT(ops, i);
    if (name == NA_STRING)
        agmem_abort(AGMEM_E_ARGUMENT, "`ops`: element %lld is NA, not an op name.",
                    (long long) i + 1);
    *first = agmem_unit_op_index(CHAR(name));
    if (*first < 0)
        agmem_abort(AGMEM_E_ARGUMENT, "`ops`: element %lld, \"%.60s\", is not an op agmem models.",
                    (long long) i + 1, CHAR(name));
    double u = agmem_number_at(units, i);
    if (!(R_FINITE(u) && u >= 1.0 && u == floor(u))) {
        char value[64];
        agmem_format_number(u, value, sizeof value);
        agmem_abort(AGMEM_E_ARGUMENT, "`units`: element %lld is %s, not a positive whole number.",
                    (long long) i + 1, value);
    }
    return u;
}

/* Adds b, from a rule of basis `basis`, to the (component, where) cell of c; returns 0 when the
   sum is not finite (the cell is then left as it was), 1 otherwise. */
static int add_to_cell(agmem_cells *c, int component, int where, double b, int basis)
{
    double sum = agmem_keep(c->bytes[component][where] + b);
    if (!R_FINITE(sum))
        return 0;
    c->bytes[component][where] = sum;
    c->used[component][where] = 1;
    if (basis == AGMEM_SOURCE_ONLY)
        c->source_only[component][where] = 1;
    return 1;
}

/* Adds params times every parameter rule of (optimizer, device, dtype) to c. Refuses a
   combination that no rule describes (a dtype other than f32 on the CPU) and a product or sum
   that is not finite, with an R error. */
static void add_param_rules(agmem_cells *c, double params, int optimizer, int device, int dtype)
{
    int matched = 0;
    for (R_xlen_t i = 0; i < agmem_n_param_rules; i++) {
        const agmem_param_rule *r = &agmem_param_rules[i];
        if (!agmem_param_rule_matches(r, optimizer, device, dtype))
            continue;
        double b = agmem_keep(params * r->bytes);
        if (!R_FINITE(b))
            agmem_abort(AGMEM_E_OVERFLOW,
                        "The model's %.6g parameters make its byte counts overflow a double.",
                        params);
        if (!add_to_cell(c, r->component, r->where, b, r->basis))
            agmem_abort(AGMEM_E_OVERFLOW, "The model's %s overflow a double.",
                        agmem_component_names[r->component]);
        if (r->where == AGMEM_HOST) {
            c->alloc_step = agmem_keep(c->alloc_step + agmem_keep(params * r->alloc_step));
            c->alloc_once = agmem_keep(c->alloc_once + agmem_keep(params * r->alloc_once));
        }
        matched = 1;
    }
    if (matched) {
        if (!R_FINITE(c->alloc_step) || !R_FINITE(c->alloc_once))
            agmem_abort(AGMEM_E_OVERFLOW, "The model's host allocations overflow a double.");
        return;
    }
    if (device == AGMEM_CPU)
        agmem_abort(AGMEM_E_ARGUMENT,
                    "`dtype` \"%s\" does not apply with device \"cpu\": on the host path ggmlR "
                    "keeps R doubles and ag_dtype() affects only ggml buffers; use "
                    "dtype = \"f32\", or device = \"gpu\".", agmem_dtype_names[dtype]);
    agmem_abort(AGMEM_E_ARGUMENT,
                "No rule describes optimizer \"%s\" on device \"%s\" in dtype \"%s\".",
                agmem_optimizer_names[optimizer], agmem_device_names[device],
                agmem_dtype_names[dtype]);
}

/* The host peak under R's garbage collector, for a device with all four gc rules in rules.c:
   R collects garbage only when its vector heap reaches a trigger, which starts at a fixed size
   and grows with the heap that survives a collection. So the peak of a few steps is the bytes
   allocated while no collection has run (scaled and offset as measured), at most the larger of
   the first trigger's headroom and the heap once collections run (`collected`, the sum of the
   host cells), where `persistent` is the host's weights, gradients and optimizer state, live
   at once at every peak:
       allocated = max(persistent, scale * (once + steps * step) + offset),
       peak = min(allocated, max(headroom, collected)).
   The gc figures of model m (m->has_gc) are read by agmem_model_read(). Writes peak, allocated
   and headroom into out and returns 1; returns 0 when allocated is not finite. Plain C. */
static int host_regime(const agmem_model *m, const agmem_cells *c, double collected, double *out)
{
    const double *fig = m->gc;
    double steps_bytes = agmem_keep(fig[AGMEM_GC_STEPS] * c->alloc_step);
    double counted = agmem_keep(c->alloc_once + steps_bytes);
    double allocated = agmem_keep(agmem_keep(fig[AGMEM_GC_ALLOC_SCALE] * counted) +
                                  fig[AGMEM_GC_ALLOC_OFFSET]);
    if (!R_FINITE(allocated))
        return 0;
    /* The weights, gradients and optimizer state are live at once at every step's peak: a
       peak below them (the fit's offset makes a tiny model's allocation negative) is theirs. */
    double persistent = agmem_keep(agmem_keep(c->bytes[AGMEM_WEIGHTS][AGMEM_HOST] +
                                              c->bytes[AGMEM_GRADIENTS][AGMEM_HOST]) +
                                   c->bytes[AGMEM_OPTIMIZER_STATE][AGMEM_HOST]);
    if (allocated < persistent)
        allocated = persistent;
    double ceiling = collected > fig[AGMEM_GC_HEADROOM] ? collected : fig[AGMEM_GC_HEADROOM];
    out[0] = allocated < ceiling ? allocated : ceiling;
    out[1] = allocated;
    out[2] = fig[AGMEM_GC_HEADROOM];
    return 1;
}

/* Reads into m, once, everything a model's figures depend on but the batch size. Accepts the
   shapes as agmem_count_params() does; units, a numeric vector of positive whole numbers, one
   per op (the output width of the op's layer); ops, a character vector of op names from the unit
   table (possibly empty); optimizer, device and dtype, each one name of rules.c's name tables.
   Applies the parameter rules (m->fixed), checks every op's name, units and rule for the device,
   notes where a unit rule makes a peak grow with the batch (m->grows), and reads the device's gc
   figures (m->has_gc: all four are in the table). The units and rule
   indices are copied with R_alloc(), so m lives until the .Call returns. Refuses malformed
   arguments, a dtype that does not apply to the device and a parameter figure that is not
   finite, with an R error naming the argument. */
void agmem_model_read(SEXP shapes, SEXP units, SEXP ops, SEXP optimizer, SEXP device,
                      SEXP dtype, agmem_model *m)
{
    int opt = agmem_arg_name(optimizer, "optimizer", agmem_optimizer_names, AGMEM_N_OPTIMIZERS);
    int dev = agmem_arg_name(device, "device", agmem_device_names, AGMEM_N_DEVICES);
    int dt = agmem_arg_name(dtype, "dtype", agmem_dtype_names, AGMEM_N_DTYPES);
    R_xlen_t n_ops = check_ops(ops, units);
    double params = agmem_count_params(shapes);
    if (!R_FINITE(params))
        agmem_abort(AGMEM_E_OVERFLOW, "`shapes` describe more scalars than a double can count.");

    memset(m, 0, sizeof *m);
    m->params = params;
    m->device = dev;
    add_param_rules(&m->fixed, params, opt, dev, dt);
    m->n_ops = n_ops;
    double *u = (double *) R_alloc(n_ops > 0 ? (size_t) n_ops : 1, sizeof(double));
    R_xlen_t *first = (R_xlen_t *) R_alloc(n_ops > 0 ? (size_t) n_ops : 1, sizeof(R_xlen_t));
    for (R_xlen_t i = 0; i < n_ops; i++) {
        if (i > 0 && i % AGMEM_INTERRUPT_EVERY == 0)
            R_CheckUserInterrupt();
        u[i] = op_units(ops, units, i, &first[i]);
        const char *op = agmem_unit_rules[first[i]].op;
        int matched = 0;
        for (R_xlen_t j = first[i]; j < agmem_n_unit_rules; j++) {
            const agmem_unit_rule *r = &agmem_unit_rules[j];
            if (r->device != dev || strcmp(r->op, op) != 0)
                continue;
            matched = 1;
            if (r->bytes > 0.0 || (r->where == AGMEM_HOST && r->alloc_step > 0.0))
                m->grows[r->where] = 1;
        }
        if (!matched)
            agmem_abort(AGMEM_E_ARGUMENT, "`ops`: op \"%s\" has no rule for device \"%s\".", op,
                        agmem_device_names[dev]);
    }
    m->units = u;
    m->first = first;
    int seen = 0;
    for (R_xlen_t i = 0; i < agmem_n_gc_rules; i++)
        if (agmem_gc_rules[i].device == dev) {
            m->gc[agmem_gc_rules[i].figure] = agmem_gc_rules[i].value;
            seen |= 1 << agmem_gc_rules[i].figure;
        }
    m->has_gc = seen == (1 << AGMEM_N_GC) - 1;
}

/* The figures of model m (from agmem_model_read()) at batch size `batch` (a whole number >= 1):
   fills c with the cells (the parameter rules, then for every op in op order units times batch
   times each of its unit rules in table order) and peak with the sums, in component order, of
   the cells on the host and on the device; on a device with gc figures the host's peak is then
   host_regime()'s, and regime gets its peak's parts: collected (the sum), allocated and
   headroom (all NA without gc figures). Returns AGMEM_MODEL_OK, or, when a figure is not
   finite, the code of the first such figure, with the op (0-based) or component in *fail.
   Plain C: no R API call, no allocation, no error. */
int agmem_model_eval(const agmem_model *m, double batch, agmem_cells *c,
                     double peak[AGMEM_N_WHERE], double regime[3], agmem_model_fail *fail)
{
    *c = m->fixed;
    for (R_xlen_t i = 0; i < m->n_ops; i++) {
        const char *op = agmem_unit_rules[m->first[i]].op;
        double per_rule = agmem_keep(m->units[i] * batch);
        for (R_xlen_t j = m->first[i]; j < agmem_n_unit_rules; j++) {
            const agmem_unit_rule *r = &agmem_unit_rules[j];
            if (r->device != m->device || strcmp(r->op, op) != 0)
                continue;
            double b = agmem_keep(per_rule * r->bytes);
            if (!R_FINITE(b)) {
                fail->code = AGMEM_MODEL_UNITS_OVERFLOW;
                fail->op = i;
                return fail->code;
            }
            if (!add_to_cell(c, r->component, r->where, b, r->basis)) {
                fail->code = AGMEM_MODEL_CELL_OVERFLOW;
                fail->component = r->component;
                return fail->code;
            }
            if (r->where == AGMEM_HOST) {
                c->alloc_step = agmem_keep(c->alloc_step + agmem_keep(per_rule * r->alloc_step));
                if (!R_FINITE(c->alloc_step)) {
                    fail->code = AGMEM_MODEL_ALLOC_OVERFLOW;
                    return fail->code;
                }
            }
        }
    }
    peak[AGMEM_HOST] = 0.0;
    peak[AGMEM_DEVICE] = 0.0;
    for (int k = 0; k < AGMEM_N_COMPONENTS; k++)
        for (int w = 0; w < AGMEM_N_WHERE; w++)
            if (c->used[k][w])
                peak[w] = agmem_keep(peak[w] + c->bytes[k][w]);
    if (!R_FINITE(peak[AGMEM_HOST]) || !R_FINITE(peak[AGMEM_DEVICE])) {
        fail->code = AGMEM_MODEL_PEAK_OVERFLOW;
        return fail->code;
    }
    regime[0] = NA_REAL;
    regime[1] = NA_REAL;
    regime[2] = NA_REAL;
    if (m->has_gc) {
        double parts[3];
        if (!host_regime(m, c, peak[AGMEM_HOST], parts)) {
            fail->code = AGMEM_MODEL_ALLOC_OVERFLOW;
            return fail->code;
        }
        regime[0] = peak[AGMEM_HOST];
        regime[1] = parts[1];
        regime[2] = parts[2];
        peak[AGMEM_HOST] = parts[0];
    }
    return AGMEM_MODEL_OK;
}

/* .Call entry of ag_training_memory(). Accepts one batch_size from 1 to INT_MAX and the other
   arguments as agmem_model_read() does. Returns a list: params; host_peak and device_peak (see
   agmem_model_eval()); one element per (component, where) cell some rule reached, in component
   then where order, the columns component, where, bytes and source_only; then host_collected
   (the sum of the host cells), host_allocated and host_headroom, NA on a device without gc
   figures. Refuses what agmem_model_read() refuses
   and any figure that is not finite, with an R error naming the argument. */
SEXP agmem_training_memory(SEXP shapes, SEXP units, SEXP ops, SEXP batch_size, SEXP optimizer,
                           SEXP device, SEXP dtype)
{
    agmem_arg_batches(batch_size, 1);
    double batch = agmem_arg_batch(batch_size, 0);
    agmem_model m;
    agmem_model_read(shapes, units, ops, optimizer, device, dtype, &m);

    agmem_cells cells;
    double peak[AGMEM_N_WHERE], regime[3];
    agmem_model_fail fail = {AGMEM_MODEL_OK, 0, 0};
    switch (agmem_model_eval(&m, batch, &cells, peak, regime, &fail)) {
    case AGMEM_MODEL_UNITS_OVERFLOW:
        agmem_abort(AGMEM_E_OVERFLOW,
                    "`units` (element %lld, %.6g) times `batch_size` (%.0f) make the "
                    "activation bytes overflow a double.", (long long) fail.op + 1,
                    m.units[fail.op], batch);
    case AGMEM_MODEL_CELL_OVERFLOW:
        agmem_abort(AGMEM_E_OVERFLOW, "The model's %s overflow a double.",
                    agmem_component_names[fail.component]);
    case AGMEM_MODEL_PEAK_OVERFLOW:
        agmem_abort(AGMEM_E_OVERFLOW, "The model's peak overflows a double.");
    case AGMEM_MODEL_ALLOC_OVERFLOW:
        agmem_abort(AGMEM_E_OVERFLOW, "The model's host allocations overflow a double.");
    default:
        break;
    }

    int rows = 0;
    for (int k = 0; k < AGMEM_N_COMPONENTS; k++)
        for (int w = 0; w < AGMEM_N_WHERE; w++)
            rows += cells.used[k][w];

    const char *names[] = {"params", "host_peak", "device_peak", "component", "where", "bytes",
                           "source_only", "host_collected", "host_allocated", "host_headroom",
                           ""};
    SEXP out = PROTECT(Rf_mkNamed(VECSXP, names));
    SET_VECTOR_ELT(out, 0, Rf_ScalarReal(m.params));
    SET_VECTOR_ELT(out, 1, Rf_ScalarReal(peak[AGMEM_HOST]));
    SET_VECTOR_ELT(out, 2, Rf_ScalarReal(peak[AGMEM_DEVICE]));
    SEXP comp = Rf_allocVector(STRSXP, rows);
    SET_VECTOR_ELT(out, 3, comp);
    SEXP where = Rf_allocVector(STRSXP, rows);
    SET_VECTOR_ELT(out, 4, where);
    SEXP bytes = Rf_allocVector(REALSXP, rows);
    SET_VECTOR_ELT(out, 5, bytes);
    SEXP source = Rf_allocVector(LGLSXP, rows);
    SET_VECTOR_ELT(out, 6, source);
    for (int i = 0; i < 3; i++)
        SET_VECTOR_ELT(out, 7 + i, Rf_ScalarReal(regime[i]));
    int r = 0;
    for (int k = 0; k < AGMEM_N_COMPONENTS; k++)
        for (int w = 0; w < AGMEM_N_WHERE; w++)
            if (cells.used[k][w]) {
                SET_STRING_ELT(comp, r, Rf_mkChar(agmem_component_names[k]));
                SET_STRING_ELT(where, r, Rf_mkChar(agmem_where_names[w]));
                REAL(bytes)[r] = cells.bytes[k][w];
                LOGICAL(source)[r] = cells.source_only[k][w];
                r++;
            }
    UNPROTECT(1);
    return out;
}
