/* registry.c: the name tables and rule tables of rules.c, as R objects, for R to read. */
#include "agmem.h"

/* A CHARSXP for name code i of names, or "any" for AGMEM_ANY. */
static SEXP code_name(int i, const char *const *names)
{
    return Rf_mkChar(i == AGMEM_ANY ? "any" : names[i]);
}

/* Allocates, as element `col` of list, a vector of type and length n; returns it (protected by
   the list, which the caller protects). */
static SEXP column(SEXP list, int col, SEXPTYPE type, R_xlen_t n)
{
    SEXP v = Rf_allocVector(type, n);
    SET_VECTOR_ELT(list, col, v);
    return v;
}

/* .Call entry of the internal training_rules(): the five tables of rules.c as a list of five
   lists of columns. `param`: optimizer, device, dtype ("any" for a wildcard), component,
   where, bytes (per parameter), basis ("measured" or "source only"), cite, alloc_step,
   alloc_once and backward (the path of backward() the row holds on: "graph", "host" or "any").
   `unit`: op, device, component, where, bytes (per unit and sample), basis, cite, alloc_step and
   backward. `gc`: device, figure, value, cite and backward. `live`: device, optimizer ("any"),
   op (NA for a per-parameter row), bytes, cite, retained, step_max, nodes (per op, or per
   parameter tensor), nodes_sample, backward, and largest and largest_max (per scalar of the
   model's largest tensor, in a per-parameter row). A gc or live row of backward "any" is a
   device's host figure; one of "host" or "graph" is a model's own on that device and path.
   `host`: device, optimizer ("any"), op (NA for a per-parameter or fixed row), once and step
   (the host's bytes allocated in resident mode, agmem_host_rules), cite and batch (whether the
   row's bytes are the mini-batch's). Takes no argument. */
SEXP agmem_training_rules(void)
{
    const char *outer[] = {"param", "unit", "gc", "live", "host", ""};
    const char *pcols[] = {"optimizer", "device", "dtype", "component", "where", "bytes",
                           "basis", "cite", "alloc_step", "alloc_once", "backward", ""};
    const char *ucols[] = {"op", "device", "component", "where", "bytes", "basis", "cite",
                           "alloc_step", "backward", ""};
    const char *gcols[] = {"device", "figure", "value", "cite", "backward", ""};
    const char *lcols[] = {"device", "optimizer", "op", "bytes", "cite", "retained", "step_max",
                           "nodes", "nodes_sample", "backward", "largest",
                           "largest_max", ""};
    const char *hcols[] = {"device", "optimizer", "op", "once", "step", "cite", "batch", ""};
    SEXP out = PROTECT(Rf_mkNamed(VECSXP, outer));

    R_xlen_t np = agmem_n_param_rules;
    SEXP p = Rf_mkNamed(VECSXP, pcols);
    SET_VECTOR_ELT(out, 0, p);
    SEXP p_str[11];
    for (int c = 0; c < 11; c++)
        p_str[c] = column(p, c, (c == 5 || c == 8 || c == 9) ? REALSXP : STRSXP, np);
    for (R_xlen_t i = 0; i < np; i++) {
        const agmem_param_rule *r = &agmem_param_rules[i];
        SET_STRING_ELT(p_str[0], i, code_name(r->optimizer, agmem_optimizer_names));
        SET_STRING_ELT(p_str[1], i, code_name(r->device, agmem_device_names));
        SET_STRING_ELT(p_str[2], i, code_name(r->dtype, agmem_dtype_names));
        SET_STRING_ELT(p_str[3], i, Rf_mkChar(agmem_component_names[r->component]));
        SET_STRING_ELT(p_str[4], i, Rf_mkChar(agmem_where_names[r->where]));
        REAL(p_str[5])[i] = r->bytes;
        SET_STRING_ELT(p_str[6], i, Rf_mkChar(agmem_basis_names[r->basis]));
        SET_STRING_ELT(p_str[7], i, Rf_mkChar(r->cite));
        REAL(p_str[8])[i] = r->alloc_step;
        REAL(p_str[9])[i] = r->alloc_once;
        SET_STRING_ELT(p_str[10], i, Rf_mkChar(agmem_backward_names[r->backward]));
    }

    R_xlen_t nu = agmem_n_unit_rules;
    SEXP u = Rf_mkNamed(VECSXP, ucols);
    SET_VECTOR_ELT(out, 1, u);
    SEXP u_col[9];
    for (int c = 0; c < 9; c++)
        u_col[c] = column(u, c, (c == 4 || c == 7) ? REALSXP : STRSXP, nu);
    for (R_xlen_t i = 0; i < nu; i++) {
        const agmem_unit_rule *r = &agmem_unit_rules[i];
        SET_STRING_ELT(u_col[0], i, Rf_mkChar(r->op));
        SET_STRING_ELT(u_col[1], i, code_name(r->device, agmem_device_names));
        SET_STRING_ELT(u_col[2], i, Rf_mkChar(agmem_component_names[r->component]));
        SET_STRING_ELT(u_col[3], i, Rf_mkChar(agmem_where_names[r->where]));
        REAL(u_col[4])[i] = r->bytes;
        SET_STRING_ELT(u_col[5], i, Rf_mkChar(agmem_basis_names[r->basis]));
        SET_STRING_ELT(u_col[6], i, Rf_mkChar(r->cite));
        REAL(u_col[7])[i] = r->alloc_step;
        SET_STRING_ELT(u_col[8], i, Rf_mkChar(agmem_backward_names[r->backward]));
    }

    R_xlen_t ng = agmem_n_gc_rules;
    SEXP g = Rf_mkNamed(VECSXP, gcols);
    SET_VECTOR_ELT(out, 2, g);
    SEXP g_col[5];
    for (int c = 0; c < 5; c++)
        g_col[c] = column(g, c, c == 2 ? REALSXP : STRSXP, ng);
    for (R_xlen_t i = 0; i < ng; i++) {
        const agmem_gc_rule *r = &agmem_gc_rules[i];
        SET_STRING_ELT(g_col[0], i, code_name(r->device, agmem_device_names));
        SET_STRING_ELT(g_col[1], i, Rf_mkChar(agmem_gc_names[r->figure]));
        REAL(g_col[2])[i] = r->value;
        SET_STRING_ELT(g_col[3], i, Rf_mkChar(r->cite));
        SET_STRING_ELT(g_col[4], i, Rf_mkChar(agmem_backward_names[r->backward]));
    }

    R_xlen_t nl = agmem_n_live_rules;
    SEXP l = Rf_mkNamed(VECSXP, lcols);
    SET_VECTOR_ELT(out, 3, l);
    SEXP l_col[12];
    for (int c = 0; c < 12; c++)
        l_col[c] = column(l, c, (c == 3 || (c >= 5 && c <= 8) || c >= 10) ? REALSXP : STRSXP, nl);
    for (R_xlen_t i = 0; i < nl; i++) {
        const agmem_live_rule *r = &agmem_live_rules[i];
        SET_STRING_ELT(l_col[0], i, code_name(r->device, agmem_device_names));
        SET_STRING_ELT(l_col[1], i, code_name(r->optimizer, agmem_optimizer_names));
        SET_STRING_ELT(l_col[2], i, r->op == NULL ? NA_STRING : Rf_mkChar(r->op));
        REAL(l_col[3])[i] = r->bytes;
        SET_STRING_ELT(l_col[4], i, Rf_mkChar(r->cite));
        REAL(l_col[5])[i] = r->retained;
        REAL(l_col[6])[i] = r->step_max;
        REAL(l_col[7])[i] = r->nodes;
        REAL(l_col[8])[i] = r->nodes_sample;
        SET_STRING_ELT(l_col[9], i, Rf_mkChar(agmem_backward_names[r->backward]));
        REAL(l_col[10])[i] = r->largest;
        REAL(l_col[11])[i] = r->largest_max;
    }

    R_xlen_t nh = agmem_n_host_rules;
    SEXP h = Rf_mkNamed(VECSXP, hcols);
    SET_VECTOR_ELT(out, 4, h);
    SEXP h_col[7];
    for (int c = 0; c < 7; c++)
        h_col[c] = column(h, c, (c == 3 || c == 4) ? REALSXP : c == 6 ? LGLSXP : STRSXP, nh);
    for (R_xlen_t i = 0; i < nh; i++) {
        const agmem_host_rule *r = &agmem_host_rules[i];
        SET_STRING_ELT(h_col[0], i, code_name(r->device, agmem_device_names));
        SET_STRING_ELT(h_col[1], i, code_name(r->optimizer, agmem_optimizer_names));
        SET_STRING_ELT(h_col[2], i, r->op == NULL ? NA_STRING : Rf_mkChar(r->op));
        REAL(h_col[3])[i] = r->once;
        REAL(h_col[4])[i] = r->step;
        SET_STRING_ELT(h_col[5], i, Rf_mkChar(r->cite));
        LOGICAL(h_col[6])[i] = r->batch != 0;
    }
    UNPROTECT(1);
    return out;
}

/* A character vector of the count names. */
static SEXP names_vector(const char *const *names, R_xlen_t count)
{
    SEXP v = PROTECT(Rf_allocVector(STRSXP, count));
    for (R_xlen_t i = 0; i < count; i++)
        SET_STRING_ELT(v, i, Rf_mkChar(names[i]));
    UNPROTECT(1);
    return v;
}

/* .Call entry of the registry (R/registry.R reads it once, when the package loads): a list of
   `optimizers` (a list of `name` and `copies`, the optimizer-state copies of ggmlR's formula),
   `devices`, `dtypes`, `components`, `places` (character vectors, in the order of the code's
   enums), `ops` (a list of `name`, `kind` ("data", "linear", "activation", "loss", "layer",
   "table" or "pairs"), `rules`, the op whose rules it takes, NA for its own, and
   `host_backward`, TRUE for an op that sends backward() to the host; `pools_graph`, TRUE for
   such an op that leaves the device's pools the graph backward's) and
   `dtype_host_backward` (for each dtype, TRUE when it sends backward() to the host) and
   `layers` (the layer types agmem models) and `device_places` (for each device, the place whose
   peak the planners plan on) and `validated` (the largest validated batch size, width and
   parameter count, named) and `ggmlr_version` (the ggmlR release the rules describe). Takes no
   argument. */
SEXP agmem_registry(void)
{
    const char *outer[] = {"optimizers", "devices", "dtypes", "components", "places", "ops",
                           "layers", "device_places", "validated", "ggmlr_version",
                           "dtype_host_backward", ""};
    const char *opt_cols[] = {"name", "copies", ""};
    const char *op_cols[] = {"name", "kind", "rules", "host_backward", "pools_graph", ""};
    SEXP out = PROTECT(Rf_mkNamed(VECSXP, outer));

    SEXP opt = Rf_mkNamed(VECSXP, opt_cols);
    SET_VECTOR_ELT(out, 0, opt);
    SET_VECTOR_ELT(opt, 0, names_vector(agmem_optimizer_names, AGMEM_N_OPTIMIZERS));
    SEXP copies = column(opt, 1, INTSXP, AGMEM_N_OPTIMIZERS);
    for (int i = 0; i < AGMEM_N_OPTIMIZERS; i++)
        INTEGER(copies)[i] = agmem_optimizer_copies[i];

    SET_VECTOR_ELT(out, 1, names_vector(agmem_device_names, AGMEM_N_DEVICES));
    SET_VECTOR_ELT(out, 2, names_vector(agmem_dtype_names, AGMEM_N_DTYPES));
    SET_VECTOR_ELT(out, 3, names_vector(agmem_component_names, AGMEM_N_COMPONENTS));
    SET_VECTOR_ELT(out, 4, names_vector(agmem_where_names, AGMEM_N_WHERE));

    SEXP ops = Rf_mkNamed(VECSXP, op_cols);
    SET_VECTOR_ELT(out, 5, ops);
    SEXP op_name = column(ops, 0, STRSXP, agmem_n_ops);
    SEXP op_kind = column(ops, 1, STRSXP, agmem_n_ops);
    SEXP op_rules = column(ops, 2, STRSXP, agmem_n_ops);
    SEXP op_host = column(ops, 3, LGLSXP, agmem_n_ops);
    SEXP op_pools = column(ops, 4, LGLSXP, agmem_n_ops);
    for (R_xlen_t i = 0; i < agmem_n_ops; i++) {
        LOGICAL(op_host)[i] = agmem_ops[i].host_backward == AGMEM_BACKWARD_HOST;
        LOGICAL(op_pools)[i] = agmem_ops[i].pools_graph != 0;
        SET_STRING_ELT(op_name, i, Rf_mkChar(agmem_ops[i].name));
        SET_STRING_ELT(op_kind, i, Rf_mkChar(agmem_op_kind_names[agmem_ops[i].kind]));
        SET_STRING_ELT(op_rules, i, agmem_ops[i].rules == NULL ? NA_STRING
                                                             : Rf_mkChar(agmem_ops[i].rules));
    }
    SET_VECTOR_ELT(out, 6, names_vector(agmem_layer_names, agmem_n_layers));
    SEXP places = Rf_allocVector(STRSXP, AGMEM_N_DEVICES);
    SET_VECTOR_ELT(out, 7, places);
    for (int i = 0; i < AGMEM_N_DEVICES; i++)
        SET_STRING_ELT(places, i, Rf_mkChar(agmem_where_names[agmem_device_place[i]]));
    SEXP limits = Rf_allocVector(REALSXP, agmem_n_validated);
    SET_VECTOR_ELT(out, 8, limits);
    SEXP limit_names = PROTECT(Rf_allocVector(STRSXP, agmem_n_validated));
    for (R_xlen_t i = 0; i < agmem_n_validated; i++) {
        REAL(limits)[i] = agmem_validated[i].max;
        SET_STRING_ELT(limit_names, i, Rf_mkChar(agmem_validated[i].name));
    }
    Rf_setAttrib(limits, R_NamesSymbol, limit_names);
    UNPROTECT(1);
    SET_VECTOR_ELT(out, 9, Rf_mkString(agmem_ggmlr_version));
    SEXP dtype_host = Rf_allocVector(LGLSXP, AGMEM_N_DTYPES);
    SET_VECTOR_ELT(out, 10, dtype_host);
    for (int i = 0; i < AGMEM_N_DTYPES; i++)
        LOGICAL(dtype_host)[i] = agmem_dtype_host_backward[i];
    UNPROTECT(1);
    return out;
}
