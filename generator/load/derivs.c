/* The `derivatives:` section; see spec_derivs.h and docs/gradients.md. */
#include "load/derivs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "load/py_formula.h"
#include "load/keys.h"

const char *const og_deriv_kind_names[OG_DERIV_NKINDS] = {
    [OG_DERIV_ELEMENTWISE] = "elementwise",
    [OG_DERIV_JVP] = "jvp",
    [OG_DERIV_TRANSPOSE] = "transpose",
};

/* What a formula may read besides the op's arrays, attributes and symbols, and the
 * tangents and cotangents of its kind: the modules the runtime passes in, and the
 * Python builtins a shape computation needs. */
static const char *const og_formula_modules[] = {"jnp", "lax", "jax", "np", "ops"};
static const char *const og_formula_builtins[] = {"abs", "float", "int", "len", "max", "min", "range", "sum", "tuple"};

static bool og_listed(const char *name, const char *const *list, size_t n) {
  for (size_t i = 0; i < n; ++i)
    if (strcmp(list[i], name) == 0) return true;
  return false;
}

/* Where `offset` bytes into a formula's text lies in the YAML. */
static og_loc og_formula_at(const og_ynode *n, size_t offset) {
  if (n->style == OG_YS_PLAIN) return og_loc_advance(n->loc, offset);
  if (n->style == OG_YS_SINGLE || n->style == OG_YS_DOUBLE) return og_loc_advance(n->loc, offset + 1);
  return n->loc; /* a block: its indicator */
}

static int og_name_cmp(const void *a, const void *b) {
  return strcmp(((const og_py_name *)a)->name, ((const og_py_name *)b)->name);
}

static void og_load_formula(og_formula *f, const og_ynode *n, int output, og_diag *d) {
  f->loc = n->loc;
  f->output = output;
  f->text = og_xstrdup(n->kind == OG_Y_SCALAR ? n->text : "");
  if (!og_want_kind(n, OG_Y_SCALAR, "a derivative formula", d)) return;
  og_py_scan scan;
  og_py_scan_formula(n->text, &scan);
  if (scan.error) {
    og_diag_error(d, og_formula_at(n, scan.error_offset), "%s", scan.error);
    og_py_scan_free(&scan);
    return;
  }
  /* Each name once, sorted, keeping where it first appears for the checker. */
  og_py_name *unique = og_xcalloc(scan.nnames ? scan.nnames : 1, sizeof *unique);
  for (size_t i = 0; i < scan.nnames; ++i) {
    bool seen = false;
    for (size_t j = 0; j < f->nnames && !seen; ++j) seen = strcmp(unique[j].name, scan.names[i].name) == 0;
    if (!seen) unique[f->nnames++] = scan.names[i];
  }
  qsort(unique, f->nnames, sizeof *unique, og_name_cmp);
  f->names = og_xcalloc(f->nnames ? f->nnames : 1, sizeof *f->names);
  f->name_locs = og_xcalloc(f->nnames ? f->nnames : 1, sizeof *f->name_locs);
  for (size_t j = 0; j < f->nnames; ++j) {
    f->names[j] = og_xstrdup(unique[j].name);
    f->name_locs[j] = og_formula_at(n, unique[j].offset);
  }
  free(unique);
  og_py_scan_free(&scan);
}

static int og_output_index(const og_op *op, const char *name) {
  for (size_t i = 0; i < op->noutputs; ++i)
    if (op->outputs[i].name && strcmp(op->outputs[i].name, name) == 0) return (int)i;
  return -1;
}

static int og_input_index(const og_op *op, const char *name) {
  for (size_t i = 0; i < op->ninputs; ++i)
    if (op->inputs[i].name && strcmp(op->inputs[i].name, name) == 0) return (int)i;
  return -1;
}

/* The formulas of an elementwise or jvp entry: one per output, as a mapping, or one
 * formula for an op's only output. */
static void og_load_per_output(og_op *op, og_derivative *dv, const og_ynode *v, og_diag *d) {
  if (v->kind == OG_Y_SCALAR) {
    if (op->noutputs != 1) {
      og_diag_error(d, v->loc, "op '%s' has %zu outputs: give this %s a mapping of output name to formula",
                    op->name ? op->name : "?", op->noutputs, og_deriv_kind_names[dv->kind]);
      return;
    }
    dv->formulas = og_xcalloc(1, sizeof *dv->formulas);
    og_load_formula(&dv->formulas[dv->nformulas++], v, 0, d);
    return;
  }
  if (!og_want_kind(v, OG_Y_MAP, "a derivative (a formula, or a mapping of output name to formula)", d)) return;
  dv->formulas = og_xcalloc(v->n ? v->n : 1, sizeof *dv->formulas);
  for (size_t i = 0; i < v->n; ++i) {
    int out = og_output_index(op, v->keys[i]->text);
    if (out < 0) {
      og_diag_error(d, v->keys[i]->loc, "'%s' is not an output of op '%s'", v->keys[i]->text,
                    op->name ? op->name : "?");
      continue;
    }
    og_load_formula(&dv->formulas[dv->nformulas++], v->items[i], out, d);
  }
}

void og_load_derivatives(og_op *op, const og_ynode *n, og_diag *d) {
  if (!og_want_kind(n, OG_Y_MAP, "'derivatives'", d)) return;
  op->derivs = og_xcalloc(n->n ? n->n : 1, sizeof *op->derivs);
  for (size_t i = 0; i < n->n; ++i) {
    const og_ynode *key = n->keys[i], *entry = n->items[i];
    int input = og_input_index(op, key->text);
    if (input < 0) {
      og_diag_error(d, key->loc, "'%s' is not an input of op '%s'", key->text, op->name ? op->name : "?");
      continue;
    }
    if (!og_want_kind(entry, OG_Y_MAP, "a derivative entry (elementwise:, jvp: or transpose:)", d)) continue;
    if (entry->n != 1) {
      og_diag_error(d, entry->loc, "input '%s' needs exactly one of elementwise:, jvp:, transpose:", key->text);
      continue;
    }
    og_derivative *dv = &op->derivs[op->nderivs];
    dv->loc = key->loc;
    dv->input = input;
    dv->kind = OG_DERIV_NKINDS;
    for (int k = 0; k < OG_DERIV_NKINDS; ++k)
      if (strcmp(entry->keys[0]->text, og_deriv_kind_names[k]) == 0) dv->kind = (og_deriv_kind)k;
    if (dv->kind == OG_DERIV_NKINDS) {
      og_diag_error(d, entry->keys[0]->loc, "unknown derivative kind '%s' (expected elementwise, jvp or transpose)",
                    entry->keys[0]->text);
      continue;
    }
    ++op->nderivs;
    if (dv->kind == OG_DERIV_TRANSPOSE) {
      dv->formulas = og_xcalloc(1, sizeof *dv->formulas);
      og_load_formula(&dv->formulas[dv->nformulas++], entry->items[0], -1, d);
    } else {
      og_load_per_output(op, dv, entry->items[0], d);
    }
  }
}

static bool og_is_array(const og_array *arrays, size_t n, const char *name) {
  for (size_t i = 0; i < n; ++i)
    if (arrays[i].name && strcmp(arrays[i].name, name) == 0) return true;
  return false;
}

/* "<array>_<suffix>" for an array of `arrays`. */
static bool og_is_suffixed(const og_array *arrays, size_t n, const char *name, const char *suffix) {
  size_t len = strlen(name), slen = strlen(suffix);
  if (len <= slen || strcmp(name + len - slen, suffix) != 0) return false;
  for (size_t i = 0; i < n; ++i)
    if (arrays[i].name && strlen(arrays[i].name) == len - slen && strncmp(arrays[i].name, name, len - slen) == 0)
      return true;
  return false;
}

static bool og_is_float_dtype(const og_op *op, const og_array *a) {
  if (a->typevar >= 0) {
    const og_typevar *t = &op->types[a->typevar];
    for (size_t c = 0; c < t->nchoices; ++c)
      if (strncmp(t->choices[c], "float", 5) != 0 && strcmp(t->choices[c], "bfloat16") != 0) return false;
    return true;
  }
  return a->dtype && (strncmp(a->dtype, "float", 5) == 0 || strcmp(a->dtype, "bfloat16") == 0);
}

void og_check_derivatives(const og_op *op, og_diag *d) {
  if (!op->nderivs) return;
  /* A formula reads arrays by name beside jnp, lax, ...: no array may hide one. */
  for (size_t r = 0; r < 2; ++r) {
    const og_array *arrays = r ? op->outputs : op->inputs;
    size_t n = r ? op->noutputs : op->ninputs;
    for (size_t i = 0; i < n; ++i)
      if (arrays[i].name && og_listed(arrays[i].name, og_formula_modules, 5))
        og_diag_error(d, arrays[i].loc, "'%s' is the module %s in derivative formulas: rename the %s", arrays[i].name,
                      arrays[i].name, r ? "output" : "input");
  }
  for (size_t i = 0; i < op->nderivs; ++i) {
    const og_derivative *dv = &op->derivs[i];
    const og_array *in = &op->inputs[dv->input];
    if (!og_is_float_dtype(op, in))
      og_diag_error(d, dv->loc, "input '%s' is not floating point: integer and bool inputs have no derivative",
                    in->name);
    for (size_t j = 0; j < i; ++j)
      if (op->derivs[j].input == dv->input) og_diag_error(d, dv->loc, "input '%s' has two derivatives", in->name);
    for (size_t f = 0; f < dv->nformulas; ++f) {
      const og_formula *fm = &dv->formulas[f];
      if (fm->output >= 0 && !og_is_float_dtype(op, &op->outputs[fm->output]))
        og_diag_error(d, fm->loc, "output '%s' is not floating point: it has no tangent", op->outputs[fm->output].name);
      for (size_t k = 0; k < fm->nnames; ++k) {
        const char *name = fm->names[k];
        bool known = og_is_array(op->inputs, op->ninputs, name) || og_is_array(op->outputs, op->noutputs, name) ||
                     og_op_attr(op, name) || og_op_symbol(op, name) >= 0 || og_listed(name, og_formula_modules, 5) ||
                     og_listed(name, og_formula_builtins, sizeof og_formula_builtins / sizeof *og_formula_builtins);
        char want[OPSPEC_MAX_NAME + 8];
        snprintf(want, sizeof want, "%s_dot", in->name);
        if (dv->kind == OG_DERIV_JVP && strcmp(name, want) == 0) known = true;
        if (dv->kind == OG_DERIV_TRANSPOSE && og_is_suffixed(op->outputs, op->noutputs, name, "_bar")) known = true;
        if (!known)
          og_diag_error(d, fm->name_locs[k],
                        "unknown name '%s' in the %s derivative of input '%s' (a formula reads the op's inputs, "
                        "outputs, attributes and shape symbols%s, and jnp, lax, jax, np, ops)",
                        name, og_deriv_kind_names[dv->kind], in->name,
                        dv->kind == OG_DERIV_JVP         ? ", the tangent <input>_dot"
                        : dv->kind == OG_DERIV_TRANSPOSE ? ", the outputs' cotangents <output>_bar"
                                                         : "");
      }
    }
  }
}

void og_derivatives_free(og_op *op) {
  for (size_t i = 0; i < op->nderivs; ++i) {
    for (size_t f = 0; f < op->derivs[i].nformulas; ++f) {
      og_formula *fm = &op->derivs[i].formulas[f];
      free(fm->text);
      for (size_t k = 0; k < fm->nnames; ++k) free(fm->names[k]);
      free(fm->names);
      free(fm->name_locs);
    }
    free(op->derivs[i].formulas);
  }
  free(op->derivs);
}
