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
   to the index of the first rule in agmem_unit_rules of the op whose rules it takes (its own, or
   those its entry in agmem_ops names) and *kind to its kind; refuses an NA or unknown op name. */
static double op_units(SEXP ops, SEXP units, R_xlen_t i, R_xlen_t *first, int *kind)
{
    SEXP name = STRING_ELT(ops, i);
    if (name == NA_STRING)
        agmem_abort(AGMEM_E_ARGUMENT, "`ops`: element %lld is NA, not an op name.",
                    (long long) i + 1);
    const agmem_op *op = agmem_op_named(CHAR(name));
    *first = op == NULL ? -1 : agmem_unit_op_index(op->rules != NULL ? op->rules : op->name);
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
    *kind = op->kind;
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

/* Adds params times every parameter rule of (optimizer, dtype) that applies to model m (its
   device, backward path and host device, agmem_param_rule_matches()) to c. Refuses a combination
   that no rule describes (a dtype other than f32 on the CPU) and a product or sum that is not
   finite, with an R error. */
static void add_param_rules(agmem_cells *c, double params, int optimizer, const agmem_model *m,
                            int dtype)
{
    int matched = 0, device = m->device;
    for (R_xlen_t i = 0; i < agmem_n_param_rules; i++) {
        const agmem_param_rule *r = &agmem_param_rules[i];
        if (!agmem_param_rule_matches(r, optimizer, device, m->host_device, dtype, m->backward,
                                      m->device_backward))
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

/* What op i of model m counts at batch size `batch`: its units times the batch to the op's
   power (m->power): once for a parameter table, per sample, or per pair of samples for an
   attention head. Not finite when the product overflows. Plain C. */
static double op_count(const agmem_model *m, R_xlen_t i, double batch)
{
    double n = m->units[i];
    for (int p = 0; p < m->power[i]; p++)
        n = agmem_keep(n * batch);
    return n;
}

static double data_trigger(const double *fig, double data);

/* The host peak of a few steps under R's garbage collector (AGMEM_GC_FEW_STEPS), for a run no
   longer than their `steps`, or on a device that has only that regime's figures: R collects
   garbage only when its vector heap reaches a trigger, which starts at a fixed size and grows
   with the heap that survives a collection. So the peak of a few steps is the bytes allocated
   while no collection has run (scaled and offset as measured), at most the larger of the first
   trigger's headroom and the heap once collections run (`collected`, the sum of the host cells):
       peak = min(allocated, max(headroom, collected)).
   The headroom is the measured one less the data the session holds (m->data), plus what the
   data's creation raised the first trigger by (data_trigger(); on a device with the whole run's
   figures, which that needs), never below 0. Writes peak, collected, allocated, headroom and
   the data's trigger (where its creation raised it) into out. Plain C. */
static void few_steps(const agmem_model *m, double collected, double allocated, double *out)
{
    const double *fig = m->gc;
    double headroom = fig[AGMEM_GC_HEADROOM];
    if (m->has_gc & AGMEM_HAS_WHOLE_RUN) {
        /* the data the session holds fills the first trigger, and its creation may have
           raised it (data_trigger()) */
        double made = data_trigger(fig, m->data);
        headroom = agmem_keep(agmem_keep(headroom + agmem_keep(made - fig[AGMEM_GC_VSIZE])) -
                              m->data);
        if (!(headroom > 0.0))
            headroom = 0.0;
        if (made > fig[AGMEM_GC_VSIZE])
            out[1 + AGMEM_REGIME_DATA] = made;
    }
    double ceiling = collected > headroom ? collected : headroom;
    out[0] = allocated < ceiling ? allocated : ceiling;
    out[1 + AGMEM_REGIME_HELD] = collected;
    out[1 + AGMEM_REGIME_ALLOCATED] = allocated;
    out[1 + AGMEM_REGIME_BOUND] = headroom;
    out[1 + AGMEM_REGIME_HIGH] = out[0];
}

/* R's vector-heap trigger `t` after one growth at a full collection, for gc figures fig: as
   AdjustHeapSize() in R's src/main/memory.c grows it, by R_VGrowIncrMin plus R_VGrowIncrFrac of
   itself. Returns bytes. Plain C. */
static double grown_trigger(const double *fig, double t)
{
    return agmem_keep(t + agmem_keep(fig[AGMEM_GC_GROW_INCR_MIN] +
                                     agmem_keep(fig[AGMEM_GC_GROW_INCR_FRAC] * t)));
}

/* R's vector-heap trigger when a loop starts in a session that holds `data` bytes in R's heap,
   as the data's creation leaves it, for gc figures fig. Made as users make it, the data is held
   twice for a moment (matrix(rnorm(n), p), t(), as.matrix() and scale() each allocate a copy of
   what they are given): the heap holds heap_start and twice the data at once. Where that passes
   R_VSIZE, the copy's allocation sets off collections up to a full one, whose AdjustHeapSize()
   (R's src/main/memory.c) sets the trigger to the heap needed (the heap in use, the allocation
   and R_MinFreeFrac of R_VSIZE) and grows it once (grown_trigger()); otherwise, and with no
   data, the trigger stays at R_VSIZE. Measured (measure-long.R --samples, 2026-12-08:
   measurements-data-held.csv and -gpu.csv, design/whole-run.md): 0.4% to 13% over R's trigger
   at the loop's start, 939.3 MB against 927.8 after 60 000 samples of 784 inputs; 13% where the
   target, an eighth of the data, was made after the input. Returns bytes. Plain C. */
static double data_trigger(const double *fig, double data)
{
    double v = fig[AGMEM_GC_VSIZE];
    double made = agmem_keep(fig[AGMEM_GC_HEAP_START] + agmem_keep(2.0 * data));
    if (!(data > 0.0 && made > v))
        return v;
    return grown_trigger(fig, agmem_keep(made + agmem_keep(fig[AGMEM_GC_MIN_FREE_FRAC] * v)));
}

/* Where R's vector-heap trigger climbs from R_VSIZE when full collections find `needed` bytes
   in use, R_MinFreeFrac of R_VSIZE counted already and `needed` at most R_VSIZE
   (settled_trigger()): while needed is more than R_VGrowFrac of the trigger, it grows by
   R_VGrowIncrMin plus R_VGrowIncrFrac of itself. Returns bytes. Plain C. */
static double climbed_trigger(const double *fig, double needed)
{
    double v = fig[AGMEM_GC_VSIZE];
    double frac = fig[AGMEM_GC_GROW_FRAC], step = fig[AGMEM_GC_GROW_INCR_MIN];
    if (!(fig[AGMEM_GC_GROW_INCR_FRAC] > 0.0)) {
        /* Growth by R_VGrowIncrMin alone (R_GC_MEM_GROW=0) is arithmetic: the k-th growth ends
           at v + k * step, and the trigger settles at the first that holds needed, so the loop's
           end is computed in one step (bounded however large needed is). */
        if (!(needed > agmem_keep(frac * v)))
            return v;
        double k = ceil(agmem_keep(agmem_keep(agmem_keep(needed / frac) - v) / step));
        if (!(k >= 1.0))
            k = 1.0;
        /* the quotient's rounding, corrected while k is a count a double holds exactly */
        for (int i = 0; i < 4 && k < 4503599627370496.0 &&
                        needed > agmem_keep(frac * agmem_keep(v + agmem_keep(k * step))); i++)
            k = k + 1.0;
        for (int i = 0; i < 4 && k > 1.0 && k < 4503599627370496.0 &&
                        !(needed > agmem_keep(frac * agmem_keep(v + agmem_keep((k - 1.0) * step))));
             i++)
            k = k - 1.0;
        return agmem_keep(v + agmem_keep(k * step));
    }
    while (R_FINITE(v) && needed > agmem_keep(frac * v))
        v = grown_trigger(fig, v);
    return v;
}

/* R's vector-heap trigger once a run has settled: the size R_VSize reaches when full
   collections find at most `needed` bytes in use (the live heap and the allocation that set the
   collection off). As AdjustHeapSize() in R's src/main/memory.c: the trigger starts at R_VSIZE;
   needed counts R_MinFreeFrac of R_VSIZE more; at a full collection, a trigger below the heap
   needed becomes it; while the heap needed is more than R_VGrowFrac of the trigger, the trigger
   grows by R_VGrowIncrMin plus R_VGrowIncrFrac of itself, one growth a full collection. A run
   whose heap needed stays within R_VSIZE climbs from R_VSIZE, and the trigger ends at the
   first growth that holds it (with R_VGrowIncrFrac 0, R_GC_MEM_GROW=0, the growths are
   R_VGrowIncrMin each, and their count is computed, not looped). A run whose heap needed passes
   R_VSIZE ends between needed / R_VGrowFrac and (1 + R_VGrowIncrFrac) times that plus
   R_VGrowIncrMin (trigger_top()), where the full collection that set the trigger to the heap
   it found (the heap in use at a full collection ranges over the step) puts it: at
   `trigger_place` of that range, the median place of the fit grid's runs (rules.c), and never
   below where a heap needed of R_VSIZE climbs to (so the trigger grows with needed). The
   figures are fig's (the table's, or R's collector settings, read_collector()). Returns the
   trigger in bytes (Inf when needed is not finite). Plain C. */
static double settled_trigger(const double *fig, double needed)
{
    double v = fig[AGMEM_GC_VSIZE];
    needed = agmem_keep(needed + agmem_keep(fig[AGMEM_GC_MIN_FREE_FRAC] * v));
    if (!R_FINITE(needed))
        return R_PosInf;
    if (needed > v) {
        double bottom = agmem_keep(needed / fig[AGMEM_GC_GROW_FRAC]);
        double range = agmem_keep(agmem_keep(fig[AGMEM_GC_GROW_INCR_FRAC] * bottom) +
                                  fig[AGMEM_GC_GROW_INCR_MIN]);
        double placed = agmem_keep(bottom + agmem_keep(fig[AGMEM_GC_TRIGGER_PLACE] * range));
        double climbed = climbed_trigger(fig, v);
        return placed > climbed ? placed : climbed;
    }
    return climbed_trigger(fig, needed);
}

/* The trigger settled_trigger() gives for `needed` bytes in use, expected over the error of
   agmem's estimate of them: the live bytes at full collections are fitted figures, off by
   live_sd (the standard deviation of the fit grid's residuals), and the trigger is a staircase
   in them, so near the edge of a stair either stair may be the run's. A normal error, by
   five-point Gauss-Hermite quadrature (the nodes in standard deviations, the weights over
   sqrt(pi)); with live_sd 0 it is settled_trigger(needed). Never below settled_trigger() of the
   lowest node, monotone in needed. Returns bytes (Inf when needed is not finite). Plain C. */
static double expected_trigger(const double *fig, double needed)
{
    static const double at[5] = {-2.8569700138728056, -1.3556261799742659, 0.0,
                                 1.3556261799742659, 2.8569700138728056};
    static const double weight[5] = {0.011257411327720689, 0.22207592200561269,
                                     0.53333333333333333, 0.22207592200561269,
                                     0.011257411327720689};
    double sd = fig[AGMEM_GC_LIVE_SD];
    if (!(sd > 0.0))
        return settled_trigger(fig, needed);
    double t = 0.0;
    for (int i = 0; i < 5; i++)
        t = agmem_keep(t + agmem_keep(weight[i] * settled_trigger(
                                          fig, agmem_keep(needed + agmem_keep(at[i] * sd)))));
    return t;
}

/* The top of the range R's vector-heap trigger settles in over a long run whose full
   collections find at most `needed` bytes in use (the live heap and the allocation that set the
   collection off). AdjustHeapSize() in R's src/main/memory.c grows the trigger by
   R_VGrowIncrMin plus R_VGrowIncrFrac of itself only while the heap needed (needed plus
   R_MinFreeFrac of R_VSIZE) is more than R_VGrowFrac of it, or sets it to the heap needed when
   that is more than the trigger, then grows it. So the last growth starts from below
   needed / R_VGrowFrac, and the trigger ends below (1 + R_VGrowIncrFrac) times that plus
   R_VGrowIncrMin, and never below R_VSIZE. Where in the range it ends depends on the trigger's
   history before the loop (the data's creation, the session's work), which agmem cannot see;
   settled_trigger() gives its place, fitted (trigger_place). Returns the top in bytes
   (Inf when needed is not finite). Plain C. */
static double trigger_top(const double *fig, double needed)
{
    double v = fig[AGMEM_GC_VSIZE];
    needed = agmem_keep(needed + agmem_keep(fig[AGMEM_GC_MIN_FREE_FRAC] * v));
    if (!R_FINITE(needed))
        return R_PosInf;
    double below = agmem_keep(needed / fig[AGMEM_GC_GROW_FRAC]);
    double top = agmem_keep(agmem_keep(below + agmem_keep(fig[AGMEM_GC_GROW_INCR_FRAC] * below)) +
                            fig[AGMEM_GC_GROW_INCR_MIN]);
    return top > v ? top : v;
}

/* The nodes a step of model m makes at a batch: m->nodes_fixed plus m->nodes_sample per
   sample (agmem_live_rules). Plain C. */
static double nodes_a_step(const agmem_model *m, double batch)
{
    return agmem_keep(m->nodes_fixed + agmem_keep(batch * m->nodes_sample));
}

/* The nodes a whole run of model m has in use at its most, when a step makes per_step of them:
   node_once plus the steps' nodes, capped at node_headroom (where R collects them; also when
   the sum is not a number). Plain C. */
static double run_nodes(const agmem_model *m, double per_step)
{
    const double *fig = m->gc;
    double made = agmem_keep(fig[AGMEM_GC_NODE_ONCE] + agmem_keep(m->steps * per_step));
    return made < fig[AGMEM_GC_NODE_HEADROOM] ? made : fig[AGMEM_GC_NODE_HEADROOM];
}

/* The pages `nodes` nodes in use add to the resident memory, for gc figures fig: node_bytes
   each, less the node_free bytes they fill in memory the process already holds; never below 0
   (also when the figure is not a number). Plain C. */
static double node_pages(const double *fig, double nodes)
{
    double pages = agmem_keep(agmem_keep(fig[AGMEM_GC_NODE_BYTES] * nodes) -
                              fig[AGMEM_GC_NODE_FREE]);
    return pages > 0.0 ? pages : 0.0;
}

/* What R's cons cells (nodes: environments, closures, promises, pairlists and every vector's
   header) add to the resident memory of a whole run of model m at a batch. A run allocates
   `node_once` of them once (building the model, compiling the loop's code) and then each step
   by op, not by unit (m->nodes_fixed, and m->nodes_sample per sample; agmem_live_rules); R
   collects them when their count reaches its node trigger (R_NSize), `node_headroom` nodes over
   those in use when the loop starts, so the pages they take grow until then. Each costs
   `node_bytes`, and the first `node_free` bytes fill memory the process already holds:
       growth = max(0, node_bytes * min(once + steps * nodes per step, headroom) - node_free).
   The collection the nodes set off also frees the vectors' young garbage, which the run's
   allocation does not subtract: in a run whose vector heap reaches its trigger anyway, what a
   collection leaves depends on the generations of the garbage, which agmem does not follow (the
   upper side). Returns bytes, finite: the count is capped at the headroom. Plain C. */
static double node_growth(const agmem_model *m, double batch)
{
    return node_pages(m->gc, run_nodes(m, nodes_a_step(m, batch)));
}

/* The host's vector bytes a step of model m allocates at a batch, where agmem counts them
   (m->host_counted; agmem_host_rules): m->host_step and, per op, its units and samples' bytes;
   writes the mini-batch's share of them (the rows marked `batch`) into *mini. Plain C. */
static double host_step_bytes(const agmem_model *m, double batch, double *mini)
{
    double step = m->host_step;
    *mini = 0.0;
    for (R_xlen_t i = 0; i < m->n_ops; i++) {
        double units = op_count(m, i, batch);
        step = agmem_keep(step + agmem_keep(units * m->host_unit[i]));
        *mini = agmem_keep(*mini + agmem_keep(units * m->host_batch[i]));
    }
    return step;
}

/* The race of R's two triggers over a whole run of model m at a batch, when agmem counts its
   host's allocation (m->host_counted: resident mode, whose steps' R objects are many nodes and
   few bytes). Every collection, whichever trigger set it off, frees the vectors' garbage and the
   nodes'. The nodes reach their trigger once the run has allocated `node_headroom` over those in
   use at its start (`node_once` of them once, then per step m's node figures); the vectors once
   the heap has `room` bytes over the start (R's trigger less the start). Until the first node
   collection the heap holds what the run allocated once and in its steps so far
   (agmem_host_rules); after it, the live heap, what a headroom of nodes' worth of steps
   allocates and the old garbage of the node collections before: each is a level-0 collection
   that promotes what it finds live of the step's mini-batch (`promoted` of its bytes, the
   host rules' batch rows), which dies with the step but stays until a level-1 collection,
   one in level0_freq. When that stays under `room`, the nodes set off every collection: the
   heap peaks at the larger of the two, and the nodes at the headroom (or at what a shorter run
   allocated).
   Otherwise the vectors do: the heap reaches `room`, and the nodes peak at what the steps
   before the first vector collection allocated with the run's once, or between two, never over
   the headroom. Writes the heap's peak over the start into *heap and the nodes' into *nodes,
   and into parts the race's terms, for fit-long.R: the heap at the first node collection, at
   the later ones without their old garbage (NA in a run that ends before the first), and the
   mini-batch bytes those promote before `promoted` is taken of them; returns 1. Returns 0,
   writing nothing, when m's host allocation is not counted or a step allocates no nodes.
   Plain C. */
static int node_race(const agmem_model *m, double batch, double live, double room, double *heap,
                     double *nodes, double *parts)
{
    const double *fig = m->gc;
    double per_step = nodes_a_step(m, batch);
    if (!m->host_counted || !(per_step > 0.0))
        return 0;
    double mini;
    double step = host_step_bytes(m, batch, &mini);
    double headroom = fig[AGMEM_GC_NODE_HEADROOM], once = fig[AGMEM_GC_NODE_ONCE];
    double most_nodes = run_nodes(m, per_step);
    double before = agmem_keep(agmem_keep(headroom - once) / per_step);
    if (!(before > 0.0))
        before = 0.0;
    double held = agmem_keep(m->host_once +
                             agmem_keep((before < m->steps ? before : m->steps) * step));
    parts[0] = held;
    parts[1] = NA_REAL;
    parts[2] = 0.0;
    if (m->steps > before) {
        double between = agmem_keep(headroom / per_step);
        /* the node collections before the run's last, at most level0_freq - 1 between two
           level-1 collections, each leaving its share of a mini-batch as old garbage */
        double old = floor(agmem_keep(agmem_keep(m->steps - before) / between));
        if (old > fig[AGMEM_GC_LEVEL0_FREQ] - 1.0)
            old = fig[AGMEM_GC_LEVEL0_FREQ] - 1.0;
        double base = agmem_keep(live +
                                 agmem_keep((between < m->steps ? between : m->steps) * step));
        parts[1] = base;
        parts[2] = agmem_keep(old * mini);
        double later = agmem_keep(base + agmem_keep(fig[AGMEM_GC_PROMOTED] * parts[2]));
        if (later > held)
            held = later;
    }
    if (held < room) {
        *heap = held;
        *nodes = most_nodes;
        return 1;
    }
    *heap = room;
    double n = most_nodes;
    if (step > 0.0) {
        double to_first = agmem_keep(room - m->host_once), to_next = agmem_keep(room - live);
        double first = agmem_keep(once + agmem_keep(per_step * agmem_keep(
                                                        (to_first > 0.0 ? to_first : 0.0) / step)));
        double next = agmem_keep(per_step * agmem_keep((to_next > 0.0 ? to_next : 0.0) / step));
        double seen = first > next ? first : next;
        if (seen < n)
            n = seen;
    }
    *nodes = n;
    return 1;
}

/* How many collections a whole run of model m makes when its vector heap has `room` bytes
   between what it holds at a collection and its trigger: one every so many steps, the fewer of
   `room` at `step` bytes a step (the host's, host_step_bytes()) and the nodes' headroom at
   `per_step` nodes a step (each collection frees both). Inf when no step passes between two.
   Plain C. */
static double run_collections(const agmem_model *m, double step, double per_step, double room)
{
    double every = R_PosInf;
    if (step > 0.0)
        every = agmem_keep(room / step);
    if (per_step > 0.0) {
        double nodes_every = agmem_keep(m->gc[AGMEM_GC_NODE_HEADROOM] / per_step);
        if (nodes_every < every)
            every = nodes_every;
    }
    return every > 0.0 ? agmem_keep(m->steps / every) : R_PosInf;
}

/* Where R's vector-heap trigger stops climbing from R_VSIZE over a run whose full collections
   are the ones R forces, for gc figures fig. After a collection that leaves less than the
   allocation and R_MinFreeFrac of the trigger free, R collects one generation more the next
   time (RunGenCollect() in R's src/main/memory.c), so full collections come while
   (1 - R_MinFreeFrac) of the trigger is below `held`: the heap a young collection leaves (the
   live heap and its old garbage) and the allocation. Each grows the trigger as
   AdjustHeapSize() does (to the heap needed, `needed` and R_MinFreeFrac of R_VSIZE, when that
   is more, then by R_VGrowIncrMin and R_VGrowIncrFrac of itself) while the heap needed is more
   than R_VGrowFrac of it. Returns the trigger where they stop, when they stop below `settled`
   (the trigger R's full collections settle at, expected_trigger()); `settled` when the trigger
   reaches it, or the heap needed stops growing it, first (where in its last growth's range R
   leaves it is then the session's, as settled_trigger() says, not this climb's), when
   R_VGrowIncrFrac is 0, or when the climb takes more than 10 000 growths (the upper side).
   Plain C. */
static double forced_trigger(const double *fig, double needed, double held, double settled)
{
    double t = fig[AGMEM_GC_VSIZE];
    double keep = agmem_keep(1.0 - fig[AGMEM_GC_MIN_FREE_FRAC]);
    double heap = agmem_keep(needed + agmem_keep(fig[AGMEM_GC_MIN_FREE_FRAC] * t));
    if (!(fig[AGMEM_GC_GROW_INCR_FRAC] > 0.0))
        return settled;
    for (int i = 0; t < settled && heap > agmem_keep(fig[AGMEM_GC_GROW_FRAC] * t); i++) {
        if (!(agmem_keep(keep * t) < held))
            return t;
        if (i == 10000)
            return settled;
        if (heap > t)
            t = heap;
        t = grown_trigger(fig, t);
    }
    return settled;
}

/* R's vector-heap trigger over a whole run of model m at a batch, where agmem counts the host's
   allocation (m->host_counted), for the heap needed at a collection (`needed`: the heap at the
   start, `start`, the live heap, `live`, and the step's widest vector) and the trigger R's full
   collections settle at (`settled`, expected_trigger()). R grows its trigger only at a full
   collection (AdjustHeapSize() in RunGenCollect(), R's src/main/memory.c), and collects in
   full only
     - when a collection leaves less than the allocation and R_MinFreeFrac of the trigger
       free: while the trigger is below the heap a young collection leaves, with the allocation,
       over 1 - R_MinFreeFrac: the live heap, the allocation and the old garbage of the level-0
       collections, `promoted` of a mini-batch each, at most level0_freq - 1 of them (or fewer
       than R_MinFreeFrac of the node trigger's nodes free, which agmem does not follow); the
       trigger stops where they stop (forced_trigger()); or
     - by its schedule: one level-1 collection in level0_freq + 1, one full collection in
       level1_freq + 1 of those, at a place in that cycle which the session's past sets.
   The run's collections come every so many steps (run_collections(): from the live heap to the
   trigger at the host's bytes a step, host_step_bytes(), or the nodes' headroom at the nodes a
   step). A run with fewer of them than half the cycle has, at the median, no full collection by
   the schedule, and its trigger stays where the forced ones leave it (R_VSIZE when there are
   none). Returns that trigger then, and `settled` otherwise (also when the host's allocation is
   not counted, or `settled` is R_VSIZE). Measured, in resident mode: 784-2048-1024-64, Adam,
   batch 2, collected in full twice in 100 steps and its trigger ended at 92.7 MiB, two growths
   from R_VSIZE, where agmem had it settle at 122.4; this puts it at 98.3
   (measurements-long-fit-gpu.csv, design/whole-run.md). Plain C. */
static double scheduled_trigger(const agmem_model *m, double batch, double needed, double start,
                                double live, double settled)
{
    const double *fig = m->gc;
    double v = fig[AGMEM_GC_VSIZE];
    if (!m->host_counted || !(settled > v))
        return settled;
    double mini, step = host_step_bytes(m, batch, &mini), per_step = nodes_a_step(m, batch);
    double runs = run_collections(m, step, per_step, agmem_keep(agmem_keep(v - start) - live));
    double old = floor(runs);
    if (!(old < fig[AGMEM_GC_LEVEL0_FREQ] - 1.0))
        old = fig[AGMEM_GC_LEVEL0_FREQ] - 1.0;
    double held = agmem_keep(needed +
                             agmem_keep(fig[AGMEM_GC_PROMOTED] * agmem_keep(old * mini)));
    double trigger = forced_trigger(fig, needed, held, settled);
    double cycle = agmem_keep((fig[AGMEM_GC_LEVEL0_FREQ] + 1.0) *
                              (fig[AGMEM_GC_LEVEL1_FREQ] + 1.0));
    if (!(run_collections(m, step, per_step, agmem_keep(agmem_keep(trigger - start) - live)) <
          agmem_keep(0.5 * cycle)))
        return settled;
    return trigger;
}

/* The host peak of a whole run, for a device with the gc figures of that regime
   (AGMEM_GC_WHOLE_RUN). The heap in use when the loop starts is R's and ggmlR's (heap_start)
   and the data the session holds (m->data); each step leaves garbage that R keeps until its heap
   reaches the trigger, so once collections run the heap climbs to the trigger between them, and
   the trigger settles where R's policy puts it for the bytes live at a collection
   (settled_trigger()): the live rules at this batch, plus the step's largest single vector (the
   model's largest tensor or its widest activation, 8 bytes per double); where the race runs, a
   run of few collections keeps the trigger where R's forced full collections leave it
   (scheduled_trigger()). A trigger the data's creation raised (data_trigger()) stays where it is
   when the run's heap needed is at most R_VGrowFrac of it, as R grows it only past that; the
   highest peak then counts on it too. The process's resident
   memory over the start is that heap and what the C allocator keeps of the blocks R frees
   (`kept`, per parameter and per unit and sample: glibc raises its mmap threshold to the largest
   block freed, so later blocks come from its heap, which it does not give back while it is
   fragmented), and on a device whose retained figures do not hold them (node_apart: "gpu",
   whose steps make far more nodes than vectors) the nodes' pages (node_growth(); or, where the
   host's allocation is counted, node_bytes times the nodes at their most less node_free, from
   node_race(), which also puts the heap under the trigger when R's node collections come
   first: `room`). A run too short to fill the heap peaks at what it allocated, with the nodes'
   pages:
       peak = min(allocated + nodes, min(trigger - heap_start - data, room) + kept [+ nodes]).
   The highest peak the run can reach (`high`, what the planners plan on) takes the step's
   largest live heap (the max rules, which count the allocation that sets a collection off),
   the top of the trigger's range for it (trigger_top()) and the most the C allocator was seen
   to keep over its fitted figures (kept_excess), never below the peak. It does not count on a
   run too short to fill the heap: the source's counts, fitted on three steps, and the nodes'
   growth, fitted on two runs, are the least sure part of the model:
       high = max(peak, top - heap_start - data + kept + kept_excess).
   Writes peak, live, allocated, the ceiling, the trigger, high, the heap R's node
   collections hold the run to (NA when its vectors reach their trigger first) and the data's
   trigger (NA where its creation leaves R_VSIZE) into out. Plain C. */
static void whole_run(const agmem_model *m, double batch, double allocated, double *out)
{
    const double *fig = m->gc;
    double live = m->live_fixed, kept = m->retained, widest = m->largest, most = m->max_fixed;
    for (R_xlen_t i = 0; i < m->n_ops; i++) {
        double units = op_count(m, i, batch);
        live = agmem_keep(live + agmem_keep(units * m->live_unit[i]));
        kept = agmem_keep(kept + agmem_keep(units * m->kept_unit[i]));
        most = agmem_keep(most + agmem_keep(units * m->max_unit[i]));
        if (units > widest)
            widest = units;
    }
    double start = agmem_keep(fig[AGMEM_GC_HEAP_START] + m->data);
    double needed = agmem_keep(agmem_keep(start + live) + agmem_keep(8.0 * widest));
    double trigger = scheduled_trigger(m, batch, needed, start, live,
                                       expected_trigger(fig, needed));
    /* a trigger the data's creation raised stays where the run's heap needed does not grow it
       (R grows it only while that is more than R_VGrowFrac of it) */
    double made = data_trigger(fig, m->data);
    if (made > fig[AGMEM_GC_VSIZE]) {
        out[1 + AGMEM_REGIME_DATA] = made;
        if (!(agmem_keep(needed + agmem_keep(fig[AGMEM_GC_MIN_FREE_FRAC] * fig[AGMEM_GC_VSIZE])) >
              agmem_keep(fig[AGMEM_GC_GROW_FRAC] * made)))
            trigger = made;
    }
    /* the heap over the start, up to the trigger, and the nodes' pages: from the race of the
       two triggers where the host's allocation is counted, else node_growth() */
    double room = agmem_keep(trigger - start), heap, in_use, nodes, held = NA_REAL;
    if (node_race(m, batch, live, room, &heap, &in_use, &out[1 + AGMEM_REGIME_FIRST])) {
        if (heap < room)
            held = heap;
        room = heap;
        nodes = node_pages(fig, in_use);
    } else {
        nodes = node_growth(m, batch);
    }
    allocated = agmem_keep(allocated + nodes);
    /* the nodes' pages, where the allocator's retained figures do not hold them */
    kept = agmem_keep(kept + agmem_keep(fig[AGMEM_GC_NODE_APART] * nodes));
    double ceiling = agmem_keep(room + kept);
    double top = trigger_top(fig, agmem_keep(start + most));
    if (made > top)
        top = made;
    double high = agmem_keep(agmem_keep(agmem_keep(top - start) + kept) +
                             fig[AGMEM_GC_KEPT_EXCESS]);
    out[0] = allocated < ceiling ? allocated : ceiling;
    out[1 + AGMEM_REGIME_HELD] = live;
    out[1 + AGMEM_REGIME_ALLOCATED] = allocated;
    out[1 + AGMEM_REGIME_BOUND] = ceiling;
    out[1 + AGMEM_REGIME_TRIGGER] = trigger;
    out[1 + AGMEM_REGIME_HIGH] = high > out[0] ? high : out[0];
    out[1 + AGMEM_REGIME_NODES] = held;
}

/* Whether model m's host peak is a whole run's (whole_run()) rather than a few steps'
   (few_steps()): its device has the whole run's figures, and the run is longer than the few
   steps' protocol or the device has no figures for that. */
static int run_is_whole(const agmem_model *m)
{
    if (!(m->has_gc & AGMEM_HAS_WHOLE_RUN))
        return 0;
    return !(m->has_gc & AGMEM_HAS_FEW_STEPS) || m->steps > m->gc[AGMEM_GC_STEPS];
}

/* The host peak under R's garbage collector for model m at a batch, from the cells c of that
   batch: the bytes allocated over the run's steps (from the source's counts, scaled and offset
   as measured; never below the weights, gradients and optimizer state, live at once at every
   peak), bounded by the regime of m's device (few_steps() or whole_run()). `collected` is the
   sum of the host cells. Writes the peak and the regime's parts (see agmem_model_eval()) into
   out; returns 0 when a figure is not finite, 1 otherwise. Plain C. */
static int host_regime(const agmem_model *m, const agmem_cells *c, double batch,
                       double collected, double *out)
{
    const double *fig = m->gc;
    int whole = run_is_whole(m);
    double steps = m->steps;
    double counted = agmem_keep(c->alloc_once + agmem_keep(steps * c->alloc_step));
    double allocated = agmem_keep(agmem_keep(fig[AGMEM_GC_ALLOC_SCALE] * counted) +
                                  fig[AGMEM_GC_ALLOC_OFFSET]);
    double persistent = agmem_keep(agmem_keep(c->bytes[AGMEM_WEIGHTS][AGMEM_HOST] +
                                              c->bytes[AGMEM_GRADIENTS][AGMEM_HOST]) +
                                   c->bytes[AGMEM_OPTIMIZER_STATE][AGMEM_HOST]);
    if (allocated < persistent)
        allocated = persistent;
    for (int i = 0; i <= AGMEM_N_REGIME; i++)
        out[i] = NA_REAL;
    if (whole)
        whole_run(m, batch, allocated, out);
    else
        few_steps(m, collected, allocated, out);
    /* out[0] is the peak, out[1 + AGMEM_REGIME_*] the parts; a few steps have no trigger, a
       run whose vectors reach their trigger no heap that R's node collections hold, and a run
       without the race no race terms */
    for (int i = 0; i <= AGMEM_N_REGIME; i++)
        if (!R_FINITE(out[i]) && i != 1 + AGMEM_REGIME_NODES && i < 1 + AGMEM_REGIME_FIRST &&
            (whole || i != 1 + AGMEM_REGIME_TRIGGER))
            return 0;
    return 1;
}

/* The host's allocation of model m in resident mode, from agmem_host_rules (the rows of m's
   device, for a model whose backward is the graph's; the model's optimizer `opt`): the bytes
   allocated once and a step, fixed and per parameter, and per op a step per unit and sample,
   and of that the mini-batch's (the rows marked `batch`). Sets m->host_counted only when m has
   ops and every one has a row there, and its device the race's gc figures (AGMEM_HAS_RACE);
   otherwise leaves the host's allocation uncounted (0). Reads m's device, backward path, gc
   figures, params and ops. */
static void read_host_rules(agmem_model *m, int opt)
{
    m->host_counted = 0;
    m->host_once = 0.0;
    m->host_step = 0.0;
    m->host_unit = NULL;
    m->host_batch = NULL;
    if (m->backward != AGMEM_BACKWARD_GRAPH || m->n_ops < 1 || !(m->has_gc & AGMEM_HAS_RACE))
        return;
    double once = 0.0, step = 0.0;
    for (R_xlen_t j = 0; j < agmem_n_host_rules; j++) {
        const agmem_host_rule *r = &agmem_host_rules[j];
        if (r->device != m->device || r->op != NULL)
            continue;
        if (r->optimizer == AGMEM_ANY) {
            once = agmem_keep(once + r->once);
            step = agmem_keep(step + r->step);
        } else if (r->optimizer == opt) {
            once = agmem_keep(once + agmem_keep(m->params * r->once));
            step = agmem_keep(step + agmem_keep(m->params * r->step));
        }
    }
    double *unit = (double *) R_alloc((size_t) m->n_ops, sizeof(double));
    double *batch = (double *) R_alloc((size_t) m->n_ops, sizeof(double));
    for (R_xlen_t i = 0; i < m->n_ops; i++) {
        if (i > 0 && i % AGMEM_INTERRUPT_EVERY == 0)
            R_CheckUserInterrupt();
        const char *op = agmem_unit_rules[m->first[i]].op;
        int found = 0;
        unit[i] = 0.0;
        batch[i] = 0.0;
        for (R_xlen_t j = 0; j < agmem_n_host_rules; j++) {
            const agmem_host_rule *r = &agmem_host_rules[j];
            if (r->device == m->device && r->op != NULL && strcmp(r->op, op) == 0) {
                unit[i] = agmem_keep(unit[i] + r->step);
                if (r->batch)
                    batch[i] = agmem_keep(batch[i] + r->step);
                found = 1;
            }
        }
        if (!found)
            return;
    }
    if (!R_FINITE(once) || !R_FINITE(step))
        return;
    m->host_counted = 1;
    m->host_once = once;
    m->host_step = step;
    m->host_unit = unit;
    m->host_batch = batch;
}

/* R's collector settings of run (elements 4 to 6: R_VSIZE in bytes, R_VGrowFrac and
   R_VGrowIncrFrac, as R/collector.R reads them from the environment; NA where R keeps its
   default) into m's gc figures, over the table's defaults, which m must hold already. A first
   trigger other than the default moves the few steps' headroom (the first trigger less the heap
   in use) by as much, never below 0. Refuses values R itself never takes: a first trigger below
   262144 bytes (R's Min_Vsize) or not finite, a growth fraction outside 0.35 to 0.75, a growth
   increment outside 0 to 0.8. */
static void read_collector(SEXP run, agmem_model *m)
{
    static const struct {
        int figure;
        double lo, hi;
        const char *what;
    } setting[3] = {
        {AGMEM_GC_VSIZE, 262144.0, 4503599627370496.0, "the first trigger (R_VSIZE) in bytes"},
        {AGMEM_GC_GROW_FRAC, 0.35, 0.75, "R_VGrowFrac, from 0.35 to 0.75"},
        {AGMEM_GC_GROW_INCR_FRAC, 0.0, 0.8, "R_VGrowIncrFrac, from 0 to 0.8"},
    };
    for (int i = 0; i < 3; i++) {
        double v = REAL(run)[3 + i];
        if (ISNA(v))
            continue;
        if (!(v >= setting[i].lo && v <= setting[i].hi)) {
            char value[64];
            agmem_format_number(v, value, sizeof value);
            agmem_abort(AGMEM_E_ARGUMENT, "`run`: element %d is %s, not NA or %s.", 4 + i,
                        value, setting[i].what);
        }
        if (setting[i].figure == AGMEM_GC_VSIZE) {
            double headroom = agmem_keep(m->gc[AGMEM_GC_HEADROOM] +
                                         agmem_keep(v - m->gc[AGMEM_GC_VSIZE]));
            m->gc[AGMEM_GC_HEADROOM] = headroom > 0.0 ? headroom : 0.0;
        }
        m->gc[setting[i].figure] = v;
    }
}

/* Reads the run into m, whose gc figures it must hold: `run` is an unclassed double vector
   c(steps, largest, data, vsize, grow_frac, grow_incr_frac): the training steps of the run (a
   whole number from 1 to 1e12), the scalars of the model's largest tensor (a whole number >= 0,
   below 2^53), the bytes of data the session holds in R's heap (finite, >= 0) and R's collector
   settings (read_collector()). Refuses anything else, naming `steps`, `shapes`, `data_size` and
   `run`. */
static void read_run(SEXP run, agmem_model *m)
{
    if (TYPEOF(run) != REALSXP || Rf_isObject(run) || XLENGTH(run) != 6)
        agmem_abort(AGMEM_E_ARGUMENT, "`run` must be a double vector c(steps, largest, data, "
                    "vsize, grow_frac, grow_incr_frac).");
    double steps = REAL(run)[0], largest = REAL(run)[1], data = REAL(run)[2];
    if (!(R_FINITE(steps) && steps >= 1.0 && steps <= 1e12 && steps == floor(steps))) {
        char value[64];
        agmem_format_number(steps, value, sizeof value);
        agmem_abort(AGMEM_E_ARGUMENT, "`steps` is %s, not a whole number from 1 to 1e12.",
                    value);
    }
    if (!(R_FINITE(largest) && largest >= 0.0 && largest < 9007199254740992.0 &&
          largest == floor(largest)))
        agmem_abort(AGMEM_E_ARGUMENT, "`shapes`: the largest tensor's size is not a count.");
    if (!(R_FINITE(data) && data >= 0.0))
        agmem_abort(AGMEM_E_ARGUMENT, "`data_size` must be a finite number of bytes >= 0.");
    m->steps = steps;
    m->largest = largest;
    m->data = data;
    read_collector(run, m);
}

/* Whether unit rule r is a rule of op `op` that applies to model m: its device's place, m's
   backward path (agmem_rule_place_matches()). m needs its device, backward and host_device. */
static int unit_rule_applies(const agmem_model *m, const agmem_unit_rule *r, const char *op)
{
    return agmem_rule_place_matches(r->device, r->where, r->backward, m->device, m->host_device,
                                    m->backward, m->device_backward) &&
        strcmp(r->op, op) == 0;
}

/* Whether a gc or live rule of (device, backward) is a model's own row (a path other than
   AGMEM_BACKWARD_ANY) for model m: m's device and backward path. m needs its device and
   backward. */
static int own_row(int device, int backward, const agmem_model *m)
{
    return backward != AGMEM_BACKWARD_ANY && device == m->device && backward == m->backward;
}

/* Whether the live rules have a row of model m's own (own_row()) for optimizer opt and the op
   named `op`, or, with op NULL, per parameter. Such a row replaces the host device's: per
   parameter, in full; for an op, its bytes (live, retained, the step's largest), while the host
   device's row for that op keeps its nodes. */
static int own_live_row(const agmem_model *m, const char *op, int opt)
{
    for (R_xlen_t j = 0; j < agmem_n_live_rules; j++) {
        const agmem_live_rule *r = &agmem_live_rules[j];
        if (own_row(r->device, r->backward, m) &&
            (op == NULL ? r->op == NULL : r->op != NULL && strcmp(r->op, op) == 0) &&
            (r->optimizer == AGMEM_ANY || r->optimizer == opt))
            return 1;
    }
    return 0;
}

/* The path ggmlR's backward() takes for a model of these ops (a character vector that
   check_ops() accepted): AGMEM_BACKWARD_HOST when one of them is recorded without an op
   (agmem_ops' host_backward), AGMEM_BACKWARD_GRAPH otherwise; and into *pools, the path the
   device's pools hold: the graph's, unless one of those ops leaves the pass pool the forward
   alone (host_backward without pools_graph). Names agmem does not know, and NA, are left for
   op_units() to refuse. */
static int backward_path(SEXP ops, int *pools)
{
    int path = AGMEM_BACKWARD_GRAPH;
    *pools = AGMEM_BACKWARD_GRAPH;
    R_xlen_t n = XLENGTH(ops);
    for (R_xlen_t i = 0; i < n; i++) {
        if (i > 0 && i % AGMEM_INTERRUPT_EVERY == 0)
            R_CheckUserInterrupt();
        SEXP name = STRING_ELT(ops, i);
        if (name == NA_STRING)
            continue;
        const agmem_op *op = agmem_op_named(CHAR(name));
        if (op != NULL && op->host_backward) {
            path = AGMEM_BACKWARD_HOST;
            if (!op->pools_graph)
                *pools = AGMEM_BACKWARD_HOST;
        }
    }
    return path;
}

/* Reads into m, once, everything a model's figures depend on but the batch size. Accepts the
   shapes as agmem_count_params() does; units, a numeric vector of positive whole numbers, one
   per op (the output width of the op's layer); ops, a character vector of op names from the unit
   table (possibly empty); optimizer, device and dtype, each one name of rules.c's name tables.
   Applies the parameter rules (m->fixed), checks every op's name, units and rule for the device,
   notes the power of the batch each op's units count for (op_count()) and where a unit rule of
   an op that counts per sample makes a peak grow with the batch (m->grows), reads the device's
   gc figures (m->has_gc: all four are in the table) and sums the live rules of the optimizer,
   per parameter and per op. The units and rule indices are copied with R_alloc(), so m lives until
   the .Call returns. Refuses malformed
   arguments, a dtype that does not apply to the device and a parameter figure that is not
   finite, with an R error naming the argument. */
void agmem_model_read(SEXP shapes, SEXP units, SEXP ops, SEXP optimizer, SEXP device,
                      SEXP dtype, SEXP run, agmem_model *m)
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
    /* A dtype the graph backward does not run in sends backward() to the host, whatever the
       ops (agmem_dtype_host_backward). */
    int pools;
    m->backward = backward_path(ops, &pools);
    m->device_backward = pools;
    if (agmem_dtype_host_backward[dt])
        m->backward = m->device_backward = AGMEM_BACKWARD_HOST;
    /* A backward on the host runs the whole step in R, as on device "cpu", whose host rules
       the host then takes, but for the rules of the model's own device and path (the host
       path in resident mode: agmem_gc_rules and agmem_live_rules). */
    m->host_device = m->backward == AGMEM_BACKWARD_HOST ? AGMEM_CPU : dev;
    add_param_rules(&m->fixed, params, opt, m, dt);
    m->n_ops = n_ops;
    double *u = (double *) R_alloc(n_ops > 0 ? (size_t) n_ops : 1, sizeof(double));
    R_xlen_t *first = (R_xlen_t *) R_alloc(n_ops > 0 ? (size_t) n_ops : 1, sizeof(R_xlen_t));
    int *power = (int *) R_alloc(n_ops > 0 ? (size_t) n_ops : 1, sizeof(int));
    for (R_xlen_t i = 0; i < n_ops; i++) {
        if (i > 0 && i % AGMEM_INTERRUPT_EVERY == 0)
            R_CheckUserInterrupt();
        int kind;
        u[i] = op_units(ops, units, i, &first[i], &kind);
        const char *op = agmem_unit_rules[first[i]].op;
        power[i] = kind == AGMEM_OP_TABLE ? 0 : kind == AGMEM_OP_PAIRS ? 2 : 1;
        int matched = 0;
        for (R_xlen_t j = first[i]; j < agmem_n_unit_rules; j++) {
            const agmem_unit_rule *r = &agmem_unit_rules[j];
            if (!unit_rule_applies(m, r, op))
                continue;
            matched = 1;
            if (power[i] > 0 &&
                (r->bytes > 0.0 || (r->where == AGMEM_HOST && r->alloc_step > 0.0)))
                m->grows[r->where] = 1;
        }
        if (!matched)
            agmem_abort(AGMEM_E_ARGUMENT, "`ops`: op \"%s\" has no rule for device \"%s\".",
                        CHAR(STRING_ELT(ops, i)), agmem_device_names[dev]);
    }
    m->units = u;
    m->first = first;
    m->power = power;
    int seen = 0;
    for (R_xlen_t i = 0; i < agmem_n_gc_rules; i++) {
        const agmem_gc_rule *r = &agmem_gc_rules[i];
        if (r->backward == AGMEM_BACKWARD_ANY &&
            (r->device == m->host_device || r->device == AGMEM_ANY)) {
            m->gc[r->figure] = r->value;
            seen |= 1 << r->figure;
        }
    }
    /* the model's own figures, for its device and backward path, replace its host device's */
    for (R_xlen_t i = 0; i < agmem_n_gc_rules; i++) {
        const agmem_gc_rule *r = &agmem_gc_rules[i];
        if (own_row(r->device, r->backward, m)) {
            m->gc[r->figure] = r->value;
            seen |= 1 << r->figure;
        }
    }
    m->has_gc = ((seen & AGMEM_GC_WHOLE_RUN) == AGMEM_GC_WHOLE_RUN ? AGMEM_HAS_WHOLE_RUN : 0) |
        ((seen & AGMEM_GC_FEW_STEPS) == AGMEM_GC_FEW_STEPS ? AGMEM_HAS_FEW_STEPS : 0) |
        ((seen & AGMEM_GC_RACE) == AGMEM_GC_RACE ? AGMEM_HAS_RACE : 0);
    read_run(run, m);
    /* a list of shapes is one tensor each; a single vector of dimensions is one tensor */
    double tensors = TYPEOF(shapes) == VECSXP ? (double) XLENGTH(shapes) : 1.0;
    m->nodes_fixed = m->gc[AGMEM_GC_NODE_STEP];
    double *live = (double *) R_alloc(n_ops > 0 ? (size_t) n_ops : 1, sizeof(double));
    double *kept = (double *) R_alloc(n_ops > 0 ? (size_t) n_ops : 1, sizeof(double));
    double *most = (double *) R_alloc(n_ops > 0 ? (size_t) n_ops : 1, sizeof(double));
    for (R_xlen_t i = 0; i < n_ops; i++) {
        live[i] = 0.0;
        kept[i] = 0.0;
        most[i] = 0.0;
    }
    /* The model's own per-parameter rows, for its device and backward path, where the table has
       them (agmem_live_rule): they replace the host device's. */
    int own = own_live_row(m, NULL, opt);
    for (R_xlen_t j = 0; j < agmem_n_live_rules; j++) {
        const agmem_live_rule *r = &agmem_live_rules[j];
        if (r->backward == AGMEM_BACKWARD_ANY ? r->device != m->host_device
                                              : !own_row(r->device, r->backward, m))
            continue;
        if (r->op == NULL) {
            if (own && r->backward == AGMEM_BACKWARD_ANY)
                continue;
            if (r->optimizer == AGMEM_ANY || r->optimizer == opt) {
                m->live_fixed = agmem_keep(m->live_fixed + agmem_keep(params * r->bytes));
                m->retained = agmem_keep(m->retained + agmem_keep(params * r->retained));
                m->max_fixed = agmem_keep(m->max_fixed + agmem_keep(params * r->step_max));
                /* the update of the largest tensor holds temporaries of its size */
                m->live_fixed = agmem_keep(m->live_fixed + agmem_keep(m->largest * r->largest));
                m->max_fixed = agmem_keep(m->max_fixed +
                                          agmem_keep(m->largest * r->largest_max));
                m->nodes_fixed = agmem_keep(m->nodes_fixed + agmem_keep(tensors * r->nodes));
            }
            continue;
        }
        if (r->optimizer != AGMEM_ANY && r->optimizer != opt)
            continue;
        /* the host device's rows count at the share the model's path holds of them, and not
           at all for an op with a row of the model's own, but for their nodes */
        double share = r->backward == AGMEM_BACKWARD_ANY ? m->gc[AGMEM_GC_UNIT_SHARE] : 1.0;
        if (r->backward == AGMEM_BACKWARD_ANY && own_live_row(m, r->op, opt))
            share = 0.0;
        for (R_xlen_t i = 0; i < n_ops; i++)
            if (strcmp(agmem_unit_rules[first[i]].op, r->op) == 0) {
                live[i] = agmem_keep(live[i] + agmem_keep(share * r->bytes));
                kept[i] = agmem_keep(kept[i] + agmem_keep(share * r->retained));
                most[i] = agmem_keep(most[i] + agmem_keep(share * r->step_max));
                m->nodes_fixed = agmem_keep(m->nodes_fixed + r->nodes);
                m->nodes_sample = agmem_keep(m->nodes_sample + r->nodes_sample);
            }
    }
    if (!R_FINITE(m->live_fixed) || !R_FINITE(m->retained) || !R_FINITE(m->max_fixed) ||
        !R_FINITE(m->nodes_fixed) || !R_FINITE(m->nodes_sample))
        agmem_abort(AGMEM_E_OVERFLOW,
                    "The model's %.6g parameters make its byte counts overflow a double.", params);
    m->live_unit = live;
    m->kept_unit = kept;
    m->max_unit = most;
    read_host_rules(m, opt);
}

/* The figures of model m (from agmem_model_read()) at batch size `batch` (a whole number >= 1):
   fills c with the cells (the parameter rules, then for every op in op order its count at the
   batch (op_count()) times each of its unit rules in table order) and peak with the sums, in
   component order, of the cells on the host and on the device; on a device with gc figures
   the host's peak is then host_regime()'s, and regime gets its peak's parts (AGMEM_REGIME_*;
   all NA without gc figures, but for the highest peak, which is then the host's peak).
   Returns AGMEM_MODEL_OK, or, when a figure is not finite, the code of the first such figure,
   with the op (0-based) or component in *fail.
   Plain C: no R API call, no allocation, no error. */
int agmem_model_eval(const agmem_model *m, double batch, agmem_cells *c,
                     double peak[AGMEM_N_WHERE], double regime[AGMEM_N_REGIME],
                     agmem_model_fail *fail)
{
    *c = m->fixed;
    for (R_xlen_t i = 0; i < m->n_ops; i++) {
        const char *op = agmem_unit_rules[m->first[i]].op;
        double per_rule = op_count(m, i, batch);
        for (R_xlen_t j = m->first[i]; j < agmem_n_unit_rules; j++) {
            const agmem_unit_rule *r = &agmem_unit_rules[j];
            if (!unit_rule_applies(m, r, op))
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
    for (int i = 0; i < AGMEM_N_REGIME; i++)
        regime[i] = NA_REAL;
    if (m->has_gc) {
        double parts[AGMEM_N_REGIME + 1];
        if (!host_regime(m, c, batch, peak[AGMEM_HOST], parts)) {
            fail->code = AGMEM_MODEL_ALLOC_OVERFLOW;
            return fail->code;
        }
        for (int i = 0; i < AGMEM_N_REGIME; i++)
            regime[i] = parts[i + 1];
        peak[AGMEM_HOST] = parts[0];
    } else {
        regime[AGMEM_REGIME_HIGH] = peak[AGMEM_HOST];
    }
    return AGMEM_MODEL_OK;
}

/* .Call entry of ag_training_memory(). Accepts one batch_size from 1 to INT_MAX and the other
   arguments as agmem_model_read() does. Returns a list: params; host_peak and device_peak (see
   agmem_model_eval()); one element per (component, where) cell some rule reached, in component
   then where order, the columns component, where, bytes and source_only; then the host regime's
   parts: host_held (the bytes live at a collection in a whole run, the sum of the host cells in
   a few steps), host_allocated, host_bound (the collector's ceiling, or the first trigger's
   headroom), host_trigger (R's settled trigger; NA in a few steps), host_high (the highest peak
   of the run, what the planners plan on; host_peak in a few steps or without gc figures),
   host_nodes (the vector heap over the start that R's node collections hold a whole run to,
   node_race(); NA where its vectors reach their trigger first, in a few steps, or where the
   host's allocation is not counted), host_race_first, host_race_later and host_race_old (the
   race's terms, node_race(); NA where it is not run), host_data_trigger (R's trigger as the
   creation of the data the session holds leaves it, data_trigger(); NA where it leaves R_VSIZE),
   the others NA on a device without gc figures, and host_run ("whole run", "few steps" or
   NA).
   Refuses what agmem_model_read() refuses and any figure that is not finite, with an R error
   naming the argument. */
SEXP agmem_training_memory(SEXP shapes, SEXP units, SEXP ops, SEXP batch_size, SEXP optimizer,
                           SEXP device, SEXP dtype, SEXP run)
{
    agmem_arg_batches(batch_size, 1);
    double batch = agmem_arg_batch(batch_size, 0);
    agmem_model m;
    agmem_model_read(shapes, units, ops, optimizer, device, dtype, run, &m);

    agmem_cells cells;
    double peak[AGMEM_N_WHERE], regime[AGMEM_N_REGIME];
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
                           "source_only", "host_held", "host_allocated", "host_bound",
                           "host_trigger", "host_high", "host_nodes", "host_race_first",
                           "host_race_later", "host_race_old", "host_data_trigger", "host_run",
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
    for (int i = 0; i < AGMEM_N_REGIME; i++)
        SET_VECTOR_ELT(out, 7 + i, Rf_ScalarReal(regime[i]));
    SET_VECTOR_ELT(out, 7 + AGMEM_N_REGIME, Rf_ScalarString(
        !m.has_gc ? NA_STRING : run_is_whole(&m) ? Rf_mkChar("whole run") :
        Rf_mkChar("few steps")));
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
