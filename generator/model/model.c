/* The queries every stage asks of the op model, and freeing it. */
#include "model/model.h"

#include "model/dtype.h"

#include <stdlib.h>
#include <string.h>

const og_attr *og_op_attr(const og_op *op, const char *name) {
  for (size_t i = 0; i < op->nattrs; ++i)
    if (op->attrs[i].name && strcmp(op->attrs[i].name, name) == 0) return &op->attrs[i];
  return NULL;
}

bool og_op_rejects(const og_op *op) {
  for (size_t i = 0; i < op->ninputs; ++i)
    if (op->inputs[i].check.present && op->inputs[i].check.in_kernel) return true;
  return false;
}

const og_array *og_op_array(const og_op *op, const char *name) {
  const og_array *lists[] = {op->inputs, op->outputs, op->scratch};
  size_t counts[] = {op->ninputs, op->noutputs, op->nscratch};
  for (size_t l = 0; l < 3; ++l)
    for (size_t i = 0; i < counts[l]; ++i)
      if (lists[l][i].name && strcmp(lists[l][i].name, name) == 0) return &lists[l][i];
  return NULL;
}

int og_op_symbol(const og_op *op, const char *name) {
  for (size_t i = 0; i < op->nsymbols; ++i)
    if (strcmp(op->symbols[i], name) == 0) return (int)i;
  return -1;
}

size_t og_op_nvariants(const og_op *op) {
  size_t n = 1;
  for (size_t i = 0; i < op->ntypes; ++i) n *= op->types[i].nchoices ? op->types[i].nchoices : 1;
  return n;
}

bool og_array_dtypes_all(const og_op *op, const og_array *a, bool (*holds)(og_dtype)) {
  if (a->typevar < 0) return holds(og_dtype_find(a->dtype));
  const og_typevar *t = &op->types[a->typevar];
  for (size_t c = 0; c < t->nchoices; ++c)
    if (!holds(og_dtype_find(t->choices[c]))) return false;
  return true;
}

/* Freeing. */
static void og_formula_free(og_formula *fm) {
  free(fm->text);
  for (size_t k = 0; k < fm->nnames; ++k) free(fm->names[k]);
  free(fm->names);
  free(fm->name_locs);
}

static void og_derivatives_free(og_op *op) {
  for (size_t i = 0; i < op->nderivs; ++i) {
    for (size_t f = 0; f < op->derivs[i].nformulas; ++f) og_formula_free(&op->derivs[i].formulas[f]);
    free(op->derivs[i].formulas);
  }
  free(op->derivs);
  for (size_t i = 0; i < op->nlets; ++i) {
    free(op->lets[i].name);
    og_formula_free(&op->lets[i].formula);
  }
  free(op->lets);
}

static void og_arrays_free(og_array *arrays, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = 0; j < arrays[i].ndims; ++j) {
      free(arrays[i].dims[j].name);
      free(arrays[i].dims[j].text);
      og_expr_free(arrays[i].dims[j].expr);
    }
    free(arrays[i].dims);
    og_expr_free(arrays[i].check.min);
    og_expr_free(arrays[i].check.max);
    free(arrays[i].name);
    free(arrays[i].dtype);
  }
  free(arrays);
}

static void og_launch_free(og_launch *l) {
  for (size_t i = 0; i < 3; ++i) og_expr_free(l->extents[i]);
}

void og_op_free(og_op *op) {
  if (!op) return;
  for (size_t i = 0; i < op->ntypes; ++i) {
    for (size_t c = 0; c < op->types[i].nchoices; ++c) free(op->types[i].choices[c]);
    free(op->types[i].choices);
    free(op->types[i].choice_locs);
    free(op->types[i].name);
  }
  free(op->types);
  og_arrays_free(op->inputs, op->ninputs);
  og_arrays_free(op->outputs, op->noutputs);
  og_arrays_free(op->scratch, op->nscratch);
  for (size_t i = 0; i < op->nattrs; ++i) {
    free(op->attrs[i].name);
    free(op->attrs[i].default_py);
    free(op->attrs[i].doc);
  }
  free(op->attrs);
  for (size_t i = 0; i < op->nsymbols; ++i) free(op->symbols[i]);
  free(op->symbols);
  og_derivatives_free(op);
  for (size_t i = 0; i < op->nreduce; ++i) free(op->reduce[i].symbol);
  free(op->reduce);
  for (size_t i = 0; i < op->nindependent; ++i) free(op->independent[i].symbol);
  free(op->independent);
  for (size_t i = 0; i < op->nrequire; ++i) {
    og_require *r = &op->require[i];
    free(r->text);
    og_expr_free(r->lhs.expr);
    og_expr_free(r->rhs.expr);
    free(r->lhs.number);
    free(r->rhs.number);
  }
  free(op->require);
  for (size_t i = 0; i < op->nhalo; ++i) free(op->halo[i].symbol);
  free(op->halo);
  og_launch_free(&op->launch);
  og_launch_free(&op->threads);
  og_expr_free(op->bytes);
  og_expr_free(op->flops);
  free(op->prologue.text);
  free(op->kernel.text);
  free(op->cpu.text);
  for (size_t i = 0; i < op->ncuda; ++i) {
    og_cuda_kernel *kern = &op->cuda[i];
    free(kern->name);
    free(kern->body.text);
    og_launch_free(&kern->launch);
    og_launch_free(&kern->grid);
    og_launch_free(&kern->block);
    og_launch_free(&kern->threads);
    og_expr_free(kern->shared_mem);
  }
  free(op->cuda);
  free(op->name);
  free(op->doc);
  og_ynode_free(op->tree);
  og_source_free(op->src);
  free(op);
}

og_loc og_body_loc(const og_body *b, int line, int col) {
  bool block = b->line > b->loc.line; /* a | or > block: columns start at its indent */
  return (og_loc){b->loc.src, b->line + line, block ? b->indent + col : b->loc.col + col - 1 + b->quoted};
}
