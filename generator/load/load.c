/* Spec loading: YAML tree -> op model, one key at a time.
 *
 * Each og_load_* function takes what it knows from a mapping and reports the rest as
 * unknown (load/keys.h); each key group has its loader in a file of its own
 * (load/loaders.h), which og_load_op runs. Errors never stop loading early: a spec with three mistakes
 * gets three messages. Loading ends by completing the model (og_complete): symbols
 * collected, type variables bound, aliases resolved. Rules that span keys (unique
 * names, what expressions may use, bodies) are the checker's.
 */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "load/load.h"

#include "load/derivs.h"
#include "load/loaders.h"

/* Shape symbols in order of first appearance in the inputs; each type variable's
 * binding input (the first with that dtype). */
static void og_complete(og_op *op) {
  size_t cap = 0;
  for (size_t i = 0; i < op->ninputs; ++i) {
    const og_array *a = &op->inputs[i];
    for (size_t j = 0; j < a->ndims; ++j) {
      if (a->dims[j].kind != OG_DIM_SYM || og_op_symbol(op, a->dims[j].name) >= 0) continue;
      og_grow((void **)&op->symbols, &cap, op->nsymbols + 1, sizeof *op->symbols);
      op->symbols[op->nsymbols++] = og_xstrdup(a->dims[j].name);
    }
  }
  for (size_t t = 0; t < op->ntypes; ++t)
    for (size_t i = 0; i < op->ninputs && op->types[t].bound_by < 0; ++i)
      if (op->inputs[i].typevar == (int)t) op->types[t].bound_by = (int)i;
}

static void og_load_op(og_op *op, og_keys_log *log, og_diag *d) {
  og_keys k;
  if (!og_keys_begin(&k, op->tree, "spec", log, d)) return;
  const og_ynode *name = og_keys_need(&k, "op", d);
  const og_ynode *doc = og_keys_take(&k, "doc");
  const og_ynode *types = og_keys_take(&k, "types");
  const og_ynode *inputs = og_keys_take(&k, "inputs");
  const og_ynode *outputs = og_keys_need(&k, "outputs", d);
  const og_ynode *attrs = og_keys_take(&k, "attrs");
  const og_ynode *require = og_keys_take(&k, "require");
  const og_ynode *vmap = og_keys_take(&k, "vmap");
  const og_ynode *aliases = og_keys_take(&k, "aliases");
  const og_ynode *launch = og_keys_take(&k, "launch");
  const og_ynode *threads = og_keys_take(&k, "threads_per_block");
  const og_ynode *prologue = og_keys_take(&k, "prologue");
  const og_ynode *kernel = og_keys_take(&k, "kernel");
  const og_ynode *cpu = og_keys_take(&k, "cpu");
  const og_ynode *cuda = og_keys_take(&k, "cuda");
  const og_ynode *scratch = og_keys_take(&k, "scratch");
  const og_ynode *derivs = og_keys_take(&k, "derivatives");
  const og_ynode *bytes = og_keys_take(&k, "bytes");
  const og_ynode *flops = og_keys_take(&k, "flops");
  const og_ynode *reduce = og_keys_take(&k, "reduce");
  const og_ynode *independent = og_keys_take(&k, "independent");
  const og_ynode *fastmath = og_keys_take(&k, "fastmath");
  const og_ynode *halo = og_keys_take(&k, "halo");
  og_keys_finish(&k, d);

  if (name && og_want_ident(name, "op name", d)) {
    op->name = og_xstrdup(name->text);
    op->loc = name->loc;
  }
  op->doc = og_xstrdup(doc && og_want_kind(doc, OG_Y_SCALAR, "'doc'", d) ? doc->text : "");
  if (types) og_load_types(op, types, d);
  if (inputs) op->inputs = og_load_arrays(op, inputs, OG_INPUT, &op->ninputs, log, d);
  if (outputs) op->outputs = og_load_arrays(op, outputs, OG_OUTPUT, &op->noutputs, log, d);
  if (scratch) op->scratch = og_load_arrays(op, scratch, OG_SCRATCH, &op->nscratch, log, d);
  if (attrs) og_load_attrs(op, attrs, log, d);
  op->vmap = OG_VMAP_NATIVE;
  if (vmap && og_want_kind(vmap, OG_Y_SCALAR, "'vmap'", d)) og_load_vmap(op, vmap, d);
  if (aliases && og_want_kind(aliases, OG_Y_MAP, "'aliases'", d)) og_load_aliases(op, aliases, d);
  if (launch) og_load_launch(&op->launch, launch, "'launch'", d);
  if (threads) og_load_launch(&op->threads, threads, "'threads_per_block'", d);
  if (prologue) og_load_body(&op->prologue, prologue, "'prologue'", d);
  if (kernel) og_load_body(&op->kernel, kernel, "'kernel'", d);
  if (cpu) og_load_body(&op->cpu, cpu, "'cpu'", d);
  if (cuda) og_load_cuda(op, cuda, log, d);
  if (derivs) og_load_derivatives(op, derivs, d);
  if (bytes) op->bytes = og_load_expr(bytes, "'bytes'", d);
  if (flops) op->flops = og_load_expr(flops, "'flops'", d);
  if (reduce && og_want_kind(reduce, OG_Y_MAP, "'reduce'", d)) og_load_reduce(op, reduce, d);
  if (independent && og_want_kind(independent, OG_Y_SEQ, "'independent'", d)) og_load_independent(op, independent, d);
  op->fastmath = og_load_check_flag(fastmath, "'fastmath'", d);
  if (require) og_load_require(op, require, d);
  if (halo && og_want_kind(halo, OG_Y_MAP, "'halo'", d)) og_load_halo(op, halo, d);
}

/* libyaml keeps a "\0" escape as a NUL inside the scalar; every later use of the text
 * as a C string would silently cut it there. */
static void og_reject_nuls(const og_ynode *n, og_diag *d) {
  if (!n) return;
  if (n->kind == OG_Y_SCALAR && strlen(n->text) != n->len)
    og_diag_error(d, n->loc, "text contains a NUL character (\\0), which C and Python strings cannot carry");
  for (size_t i = 0; i < n->n; ++i) {
    if (n->kind == OG_Y_MAP) og_reject_nuls(n->keys[i], d);
    og_reject_nuls(n->items[i], d);
  }
}

og_op *og_load_spec(og_source *src, og_keys_log *log, og_diag *d) {
  int before = d->errors;
  og_op *op = og_xcalloc(1, sizeof *op);
  op->src = src;
  op->loc = (og_loc){src, 1, 1};
  op->tree = og_yaml_load(src, d);
  og_reject_nuls(op->tree, d);
  if (op->tree && d->errors == before) og_load_op(op, log, d);
  if (op->tree && d->errors == before) og_complete(op);
  if (d->errors != before) {
    og_op_free(op);
    return NULL;
  }
  return op;
}
