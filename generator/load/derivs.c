/* The `derivatives:` section; its checking half is check/derivs.c; docs/gradients.md. */
#include "load/derivs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "load/py_formula.h"
#include "load/keys.h"

static bool og_blank(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

/* Where `offset` bytes into a formula's text lies in the YAML. A `|` or `>` block keeps
 * every character but blanks as written (folding and indentation change only blanks),
 * so the character `offset` is at is the one with as many non-blanks before it in the
 * block's lines. */
static og_loc og_formula_at(const og_ynode *n, size_t offset) {
  if (n->style == OG_YS_PLAIN) return og_loc_advance(n->loc, offset);
  if (n->style == OG_YS_SINGLE || n->style == OG_YS_DOUBLE) return og_loc_advance(n->loc, offset + 1);
  if (!n->loc.src || n->content_line <= 0) return n->loc;
  size_t before = 0, after = 0;
  for (size_t i = 0; n->text[i]; ++i) *(i < offset ? &before : &after) += !og_blank(n->text[i]);
  bool past_end = after == 0 && before > 0; /* "unexpected end": just past the last character */
  before -= past_end;
  /* Lines as libyaml counts them (og_source_line), so any line end gives the same caret. */
  size_t len;
  const char *text;
  for (int line = n->content_line; (text = og_source_line(n->loc.src, line, &len)) != NULL; ++line) {
    for (size_t col = 0; col < len; ++col)
      if (!og_blank(text[col]) && before-- == 0) return (og_loc){n->loc.src, line, (int)col + 1 + past_end};
  }
  return n->loc;
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

/* `let:`: names for sub-expressions the formulas share, each a formula itself. */
static void og_load_lets(og_op *op, const og_ynode *n, og_diag *d) {
  if (!og_want_kind(n, OG_Y_MAP, "'let' (a mapping of name to formula)", d)) return;
  op->lets = og_xcalloc(n->n ? n->n : 1, sizeof *op->lets);
  for (size_t i = 0; i < n->n; ++i) {
    og_let *let = &op->lets[op->nlets++];
    let->name = og_xstrdup(n->keys[i]->text);
    let->loc = n->keys[i]->loc;
    og_load_formula(&let->formula, n->items[i], -1, d);
  }
}

void og_load_derivatives(og_op *op, const og_ynode *n, og_diag *d) {
  if (!og_want_kind(n, OG_Y_MAP, "'derivatives'", d)) return;
  op->derivs = og_xcalloc(n->n ? n->n : 1, sizeof *op->derivs);
  for (size_t i = 0; i < n->n; ++i) {
    const og_ynode *key = n->keys[i], *entry = n->items[i];
    if (strcmp(key->text, "let") == 0) {
      if (og_input_index(op, "let") >= 0)
        og_diag_error(d, key->loc,
                      "'let' under 'derivatives' names sub-expressions, so input 'let' cannot have a "
                      "derivative: rename the input");
      og_load_lets(op, entry, d);
      continue;
    }
    int input = og_input_index(op, key->text);
    if (input < 0) {
      og_diag_error(d, key->loc, "'%s' is not an input of op '%s'", key->text, op->name ? op->name : "?");
      continue;
    }
    if (!og_want_kind(entry, OG_Y_MAP, "a derivative entry (elementwise:, jvp:, transpose: or linear:)", d)) continue;
    if (entry->n != 1) {
      og_diag_error(d, entry->loc,
                    "input '%s' needs exactly one of elementwise:, jvp:, transpose:, linear:", key->text);
      continue;
    }
    og_derivative *dv = &op->derivs[op->nderivs];
    dv->loc = key->loc;
    dv->input = input;
    dv->kind = OG_DERIV_NKINDS;
    for (int k = 0; k < OG_DERIV_NKINDS; ++k)
      if (strcmp(entry->keys[0]->text, og_deriv_kind_names[k]) == 0) dv->kind = (og_deriv_kind)k;
    if (dv->kind == OG_DERIV_NKINDS) {
      og_buf expected = {0};
      og_vocab_list(&expected, og_deriv_kind_names, OG_DERIV_NKINDS, " or ");
      og_diag_error(d, entry->keys[0]->loc, "unknown derivative kind '%s' (expected %s)", entry->keys[0]->text,
                    og_buf_str(&expected));
      og_buf_free(&expected);
      continue;
    }
    ++op->nderivs;
    if (dv->kind == OG_DERIV_LINEAR) {
      const og_ynode *v = entry->items[0];
      if (v->kind != OG_Y_SCALAR || strcmp(v->text, "halo") != 0)
        og_diag_error(d, v->loc, "'linear' takes 'halo' (the transpose is derived along the op's halo: symbols)");
    } else if (dv->kind == OG_DERIV_TRANSPOSE) {
      dv->formulas = og_xcalloc(1, sizeof *dv->formulas);
      og_load_formula(&dv->formulas[dv->nformulas++], entry->items[0], -1, d);
    } else {
      og_load_per_output(op, dv, entry->items[0], d);
    }
  }
}
