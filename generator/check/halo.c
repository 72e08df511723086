/* Checking `halo:`: a halo symbol is a whole dim, once, of every output and of the inputs
 * that have it, and nothing else splits it. A shard then computes its block of every
 * output from its block of the inputs extended by the radius (runtime/python/opspec/
 * _halo.py). Whether the body reads within the radius only the author knows;
 * opspec.testing.check_op tests it on one device. */
#include "check/halo.h"

#include <string.h>

typedef struct og_halo_search {
  const char *name;
  bool found;
} og_halo_search;

static void og_halo_find(const og_expr *n, void *ud) {
  og_halo_search *s = ud;
  s->found |= strcmp(n->name, s->name) == 0;
}

/* How often `symbol` is a whole dim of `a`; *reads: the first dim computed from it. */
static int og_halo_dims(const og_array *a, const char *symbol, const og_dim **reads) {
  int n = 0;
  for (size_t j = 0; j < a->ndims; ++j) {
    const og_dim *dim = &a->dims[j];
    if (dim->kind == OG_DIM_SYM) {
      n += strcmp(dim->name, symbol) == 0;
    } else if (dim->expr) {
      og_halo_search s = {symbol, false};
      og_expr_visit_names(dim->expr, og_halo_find, &s);
      if (s.found && dim->expr->kind == OG_E_NAME)
        ++n;
      else if (s.found && !*reads)
        *reads = dim;
    }
  }
  return n;
}

/* Declared also as independent (no radius) or reduced (in no output): one claim each. */
static bool og_halo_declared_elsewhere(const og_op *op, const og_halo *h, og_diag *d) {
  for (size_t k = 0; k < op->nindependent; ++k)
    if (strcmp(op->independent[k].symbol, h->symbol) == 0) {
      og_diag_error(d, h->loc,
                    "'%s' has a halo and is declared independent (independent: each output reads only its own "
                    "position, a radius of 0; declare it in one of them)",
                    h->symbol);
      og_diag_note(d, op->independent[k].loc, "'%s' is declared independent here", h->symbol);
      return true;
    }
  for (size_t r = 0; r < op->nreduce; ++r)
    if (strcmp(op->reduce[r].symbol, h->symbol) == 0 || strcmp(op->reduce[r].symbol, "...") == 0) {
      og_diag_error(d, h->loc, "'%s' has a halo and is reduced (reduce: no output has it; halo: every output has it)",
                    h->symbol);
      og_diag_note(d, op->reduce[r].loc, "'%s' is reduced here", op->reduce[r].symbol);
      return true;
    }
  return false;
}

/* Each array has the symbol as one whole dim or not at all; each output has it. False
 * after the first error: what else is wrong follows from it. */
static bool og_halo_check_arrays(const og_op *op, const og_halo *h, bool outputs, og_diag *d) {
  const og_array *arrays = outputs ? op->outputs : op->inputs;
  size_t n = outputs ? op->noutputs : op->ninputs;
  const char *role = outputs ? "output" : "input";
  for (size_t i = 0; i < n; ++i) {
    const og_dim *reads = NULL;
    int times = og_halo_dims(&arrays[i], h->symbol, &reads);
    if (reads) {
      og_diag_error(d, h->loc,
                    "'%s' cannot have a halo: the extent of %s '%s' is computed from it ('%s'), so a block's "
                    "extent is not its part of the whole",
                    h->symbol, role, arrays[i].name, reads->text);
      og_diag_note(d, reads->loc, "%s '%s' dim '%s' is here", role, arrays[i].name, reads->text);
      return false;
    }
    if (times > 1) {
      og_diag_error(d, h->loc,
                    "'%s' cannot have a halo: it is %d dims of %s '%s' (splitting both would keep only the "
                    "diagonal blocks)",
                    h->symbol, times, role, arrays[i].name);
      return false;
    }
    if (outputs && times == 0) {
      og_diag_error(d, h->loc,
                    "'%s' cannot have a halo: output '%s' does not have it in its shape, so a shard along it "
                    "has no block of that output to compute",
                    h->symbol, arrays[i].name);
      return false;
    }
  }
  return true;
}

static void og_check_halo_derivatives(const og_op *op, og_diag *d);

void og_check_halo(const og_op *op, og_diag *d) {
  og_check_halo_derivatives(op, d);
  for (size_t k = 0; k < op->nhalo; ++k) {
    const og_halo *h = &op->halo[k];
    if (og_op_symbol(op, h->symbol) < 0) {
      og_diag_error(d, h->loc, "halo symbol '%s' is not in any input's shape", h->symbol);
      continue;
    }
    if (og_halo_declared_elsewhere(op, h, d)) continue;
    if (og_halo_check_arrays(op, h, false, d)) og_halo_check_arrays(op, h, true, d);
  }
}

static bool og_halo_named(const og_op *op, const char *symbol) {
  for (size_t k = 0; k < op->nhalo; ++k)
    if (strcmp(op->halo[k].symbol, symbol) == 0) return true;
  return false;
}

static bool og_independent_named(const og_op *op, const char *symbol) {
  for (size_t k = 0; k < op->nindependent; ++k)
    if (strcmp(op->independent[k].symbol, symbol) == 0) return true;
  return false;
}

static bool og_same_dims(const og_array *a, const og_array *b) {
  if (a->ndims != b->ndims) return false;
  for (size_t j = 0; j < a->ndims; ++j)
    if (strcmp(a->dims[j].text, b->dims[j].text) != 0) return false; /* an output's dims are expressions */
  return true;
}

/* `linear: halo`: the runtime derives the transpose by calling the op on inputs that are
 * one at every (before + after + 1)-th position along each halo symbol, which recovers
 * every weight only where each dim of the input is a halo symbol (a band) or independent
 * (a diagonal) and each output has the input's shape. */
static void og_check_linear(const og_op *op, const og_derivative *dv, og_diag *d) {
  const og_array *in = &op->inputs[dv->input];
  if (op->nhalo == 0) {
    og_diag_error(d, dv->loc, "'linear: halo' derives input '%s''s transpose from the op's halo:, and it declares none",
                  in->name);
    return;
  }
  for (size_t j = 0; j < in->ndims; ++j) {
    const og_dim *dim = &in->dims[j];
    if (dim->kind == OG_DIM_SYM && (og_halo_named(op, dim->name) || og_independent_named(op, dim->name))) continue;
    og_diag_error(d, dv->loc,
                  "'linear: halo' needs every dim of input '%s' to be a halo: or independent: symbol, and '%s' is "
                  "neither (write its transpose as a formula instead)",
                  in->name, dim->text);
    return;
  }
  for (size_t i = 0; i < op->noutputs; ++i)
    if (!og_same_dims(in, &op->outputs[i])) {
      og_diag_error(d, dv->loc,
                    "'linear: halo' needs output '%s' to have input '%s''s shape (write its transpose as a formula "
                    "instead)",
                    op->outputs[i].name, in->name);
      return;
    }
}

static void og_check_halo_derivatives(const og_op *op, og_diag *d) {
  for (size_t k = 0; k < op->nderivs; ++k)
    if (op->derivs[k].kind == OG_DERIV_LINEAR) og_check_linear(op, &op->derivs[k], d);
}
