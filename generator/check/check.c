/* Spec checking: the cross-references a single key cannot validate on its own.
 *
 * Names (unique, not reserved), type variables (each bound by an input), shape symbols
 * (collected from input shapes; every expression refers only to what is defined),
 * aliases (same dtype and shape), which bodies an op has (and that a portable one stays
 * in its loop), which symbols `reduce:` and `independent:` may name, and the names
 * `require:` reads. vmap methods are validated where they are loaded (load/transforms.c).
 */
#include <stdlib.h>
#include <string.h>

#include "check/check.h"

#include "load/load.h"
#include "model/dtype.h"
#include "util/c_idents.h"
#include "util/c_jumps.h"
#include "check/names.h"
#include "check/derivs.h"
#include "check/halo.h"

typedef struct og_name {
  const char *name;
  og_loc loc;
  const char *what;
} og_name;

typedef struct og_names {
  og_name *items;
  size_t n, cap;
  char **owned; /* derived names (x_size, x_shape) */
  size_t nowned, capowned;
} og_names;

/* Adds a name; reports and returns false if it is reserved or taken. */
static bool og_names_add(og_names *ns, const char *name, og_loc loc, const char *what, og_diag *d) {
  if (!name) return false;
  const char *why = og_reserved_why(name);
  if (why) {
    og_diag_error(d, loc, "%s name '%s' is reserved: %s", what, name, why);
    return false;
  }
  for (size_t i = 0; i < ns->n; ++i) {
    if (strcmp(ns->items[i].name, name) != 0) continue;
    og_diag_error(d, loc, "%s '%s' has the same name as %s '%s'", what, name, ns->items[i].what, name);
    og_diag_note(d, ns->items[i].loc, "%s '%s' is defined here", ns->items[i].what, name);
    return false;
  }
  og_grow((void **)&ns->items, &ns->cap, ns->n + 1, sizeof *ns->items);
  ns->items[ns->n++] = (og_name){name, loc, what};
  return true;
}

/* Every array also defines NAME_size and NAME_shape inside kernel bodies. */
static void og_names_add_array(og_names *ns, const og_array *a, const char *what, og_diag *d) {
  /* A name already reported needs no second report for its derived names. */
  if (!og_names_add(ns, a->name, a->loc, what, d)) return;
  static const char *const suffixes[] = {"_size", "_shape"};
  for (size_t s = 0; s < 2; ++s) {
    og_buf b = {0};
    og_buf_printf(&b, "%s%s", a->name, suffixes[s]);
    og_grow((void **)&ns->owned, &ns->capowned, ns->nowned + 1, sizeof *ns->owned);
    ns->owned[ns->nowned] = og_buf_take(&b);
    og_names_add(ns, ns->owned[ns->nowned++], a->loc, "derived name", d);
  }
}

static void og_names_free(og_names *ns) {
  for (size_t i = 0; i < ns->nowned; ++i) free(ns->owned[i]);
  free(ns->owned);
  free(ns->items);
}

/* Where a symbol first appears in the input shapes. */
static og_loc og_symbol_loc(const og_op *op, const char *name) {
  for (size_t a = 0; a < op->ninputs; ++a)
    for (size_t j = 0; j < op->inputs[a].ndims; ++j)
      if (op->inputs[a].dims[j].name && strcmp(op->inputs[a].dims[j].name, name) == 0) return op->inputs[a].dims[j].loc;
  return op->loc;
}

/* What names an expression may use, by context. */
typedef enum og_scope {
  OG_SCOPE_SHAPE,
  OG_SCOPE_LAUNCH,
  OG_SCOPE_COST, /* `bytes:` and `flops:`: as shapes, and a type variable is its element size */
} og_scope;

typedef struct og_expr_ctx {
  const og_op *op;
  og_scope scope;
  const char *what;
  og_diag *d;
} og_expr_ctx;

static bool og_is_size_name(const og_op *op, const char *name, og_scope scope) {
  size_t len = strlen(name);
  if (len <= 5 || strcmp(name + len - 5, "_size") != 0) return false;
  char *base = og_xstrndup(name, len - 5);
  const og_array *a = og_op_array(op, base);
  free(base);
  return a && (a->role == OG_INPUT || scope == OG_SCOPE_LAUNCH);
}

static void og_check_expr_name(const og_expr *n, void *ud) {
  og_expr_ctx *c = ud;
  if (og_op_symbol(c->op, n->name) >= 0) return;
  const og_attr *attr = og_op_attr(c->op, n->name);
  if (attr && attr->has_type && og_attr_types[attr->type].integer) return;
  if (og_is_size_name(c->op, n->name, c->scope)) return;
  if (c->scope == OG_SCOPE_COST)
    for (size_t t = 0; t < c->op->ntypes; ++t)
      if (c->op->types[t].name && strcmp(c->op->types[t].name, n->name) == 0) return;
  if (c->scope == OG_SCOPE_COST && !attr) {
    og_diag_error(c->d, n->loc,
                  "%s uses '%s', which is not a shape symbol, an integer attribute, an input's NAME_size or a type "
                  "variable (its element size in bytes)",
                  c->what, n->name);
    return;
  }
  if (attr)
    og_diag_error(c->d, n->loc, "%s uses attribute '%s' of type %s; only integer attributes may appear in %s", c->what,
                  n->name, attr->has_type ? og_attr_types[attr->type].name : "?",
                  c->scope == OG_SCOPE_LAUNCH ? "launch configurations"
                  : c->scope == OG_SCOPE_COST ? "'bytes' and 'flops'"
                                              : "shapes");
  else
    og_diag_error(c->d, n->loc, "%s uses '%s', which is not a shape symbol, an integer attribute or %s", c->what,
                  n->name, c->scope == OG_SCOPE_LAUNCH ? "an array's NAME_size" : "an input's NAME_size");
}

static void og_check_expr(const og_op *op, const og_expr *e, og_scope scope, const char *what, og_diag *d) {
  if (!e) return;
  og_expr_ctx c = {op, scope, what, d};
  og_expr_visit_names(e, og_check_expr_name, &c);
  og_expr_check_constants(e, what, d);
}

/* Launch extents may be zero (an empty launch is skipped); thread and block counts may
 * not, which `positive` asks for. */
static void og_check_launch(const og_op *op, const og_launch *l, const char *what, bool positive, og_diag *d) {
  for (size_t i = 0; i < l->n; ++i) {
    og_check_expr(op, l->extents[i], OG_SCOPE_LAUNCH, what, d);
    const og_expr *e = l->extents[i];
    if (positive && e && e->kind == OG_E_INT && e->ival <= 0)
      og_diag_error(d, e->loc, "%s must be positive, got %lld", what, (long long)e->ival);
  }
}

static void og_check_arrays(const og_op *op, const og_array *arrays, size_t n, og_diag *d) {
  bool input_ellipsis = false;
  for (size_t i = 0; i < op->ninputs; ++i) input_ellipsis |= op->inputs[i].has_ellipsis;
  for (size_t i = 0; i < n; ++i) {
    const og_array *a = &arrays[i];
    /* One error per mistake: a scratch buffer never takes '...', whatever the inputs. */
    if (a->role == OG_SCRATCH && a->has_ellipsis)
      og_diag_error(d, a->loc, "scratch buffer '%s' may not have a '...' dim", a->name);
    else if (a->role != OG_INPUT && a->has_ellipsis && !input_ellipsis)
      og_diag_error(d, a->loc, "'%s' has a '...' dim but no input does, so its size is unknown", a->name);
    for (size_t j = 0; j < a->ndims; ++j) og_check_expr(op, a->dims[j].expr, OG_SCOPE_SHAPE, "shape", d);
  }
}

/* `check:` bounds are compared with integer contents, so the input must be integer
 * typed: a concrete integer dtype, or a type variable whose every choice is one. */
static void og_check_contents(const og_op *op, const og_array *a, og_diag *d) {
  if (!a->check.present || !a->dtype) return;
  if (!og_array_dtypes_all(op, a, og_dtype_is_integer))
    og_diag_error(d, a->check.loc, "input '%s' has a check, but checks apply only to integer inputs (its dtype is %s)",
                  a->name, a->dtype);
  og_check_expr(op, a->check.min, OG_SCOPE_SHAPE, "check 'min'", d);
  og_check_expr(op, a->check.max, OG_SCOPE_SHAPE, "check 'max'", d);
}

/* `in_kernel: true` hands an input's check to the CPU body, which must call
 * opspec_reject() on a bad value (docs/spec.md): so the body must call it, the input
 * must stay as it was until the handler scans it after the kernel (no output aliases
 * it), and a body that calls it needs an input to report on. */
static bool og_body_calls_reject(const og_body *b) {
  if (!b->present) return false;
  og_idents used = {0};
  og_idents_scan(&used, b->text);
  bool calls = og_idents_has(&used, "opspec_reject");
  og_idents_free(&used);
  return calls;
}

static void og_check_in_kernel(const og_op *op, og_diag *d) {
  const og_body *cpu = op->cpu.present ? &op->cpu : &op->kernel;
  const char *cpu_what = op->cpu.present ? "'cpu'" : "'kernel'";
  bool any = false;
  for (size_t i = 0; i < op->ninputs; ++i) {
    const og_array *a = &op->inputs[i];
    if (!a->check.in_kernel) continue;
    any = true;
    if (a->aliased)
      og_diag_error(d, a->check.in_kernel_loc,
                    "input '%s' cannot be checked in_kernel: an output aliases it, so the kernel may overwrite it "
                    "before the handler scans it for the error message",
                    a->name);
    if (cpu->present && !og_body_calls_reject(cpu))
      og_diag_error(d, a->check.in_kernel_loc,
                    "input '%s' is checked in_kernel, but the %s body never calls opspec_reject(): the handler would "
                    "no longer scan it, and nothing would",
                    a->name, cpu_what);
  }
  if (any) return;
  const og_body *bodies[] = {&op->prologue, &op->kernel, &op->cpu};
  const char *names[] = {"'prologue'", "'kernel'", "'cpu'"};
  const char *why = "calls opspec_reject(), but no input's check says 'in_kernel: true': there is nothing to reject";
  for (size_t b = 0; b < 3; ++b)
    if (og_body_calls_reject(bodies[b])) og_diag_error(d, bodies[b]->loc, "%s %s", names[b], why);
  for (size_t k = 0; k < op->ncuda; ++k) /* the macro is defined only where an input is in_kernel */
    if (og_body_calls_reject(&op->cuda[k].body))
      og_diag_error(d, op->cuda[k].body.loc, "cuda kernel '%s' %s", op->cuda[k].name ? op->cuda[k].name : "?", why);
}

static void og_check_bodies(const og_op *op, og_diag *d) {
  if (op->kernel.present && op->launch.n == 0)
    og_diag_error(d, op->kernel.loc, "'kernel' needs 'launch': the extents of the index space it runs over");
  if (op->launch.n && !op->kernel.present)
    og_diag_error(d, op->launch.loc, "'launch' is given but there is no 'kernel' body to run");
  if (!op->kernel.present && !op->cpu.present)
    og_diag_error(d, op->loc, "op '%s' has no CPU implementation: give 'launch' + 'kernel' or a 'cpu' body", op->name);
  if (op->threads.n && !op->kernel.present)
    og_diag_error(d, op->threads.loc,
                  "'threads_per_block' applies to the portable 'kernel'; put it on each 'cuda' kernel instead");
  if (op->threads.n && op->launch.n && op->threads.n != op->launch.n)
    og_diag_error(d, op->threads.loc, "'threads_per_block' has %zu extents but 'launch' has %zu", op->threads.n,
                  op->launch.n);
  if (op->prologue.present && !op->kernel.present)
    og_diag_error(d, op->prologue.loc,
                  "'prologue' goes with a portable 'kernel' (it runs once before its loop), and there is none");
  og_check_launch(op, &op->launch, "'launch'", false, d);
  og_check_launch(op, &op->threads, "'threads_per_block'", true, d);

  for (size_t i = 0; i < op->ncuda; ++i) {
    og_cuda_kernel *k = &op->cuda[i];
    for (size_t p = 0; p < i; ++p)
      if (k->name && op->cuda[p].name && strcmp(k->name, op->cuda[p].name) == 0)
        og_diag_error(d, k->loc, "cuda kernel '%s' is defined twice", k->name);
    bool grid = k->grid.n > 0, block = k->block.n > 0, launch = k->launch.n > 0;
    if (grid != block)
      og_diag_error(d, k->loc, "cuda kernel '%s' gives '%s' without '%s'", k->name ? k->name : "?",
                    grid ? "grid" : "block", grid ? "block" : "grid");
    if (grid && launch)
      og_diag_error(d, k->grid.loc, "cuda kernel '%s' gives both 'grid' and 'launch'; use one",
                    k->name ? k->name : "?");
    if (!grid && !block && !launch)
      og_diag_error(d, k->loc, "cuda kernel '%s' needs 'grid' + 'block' or 'launch'", k->name ? k->name : "?");
    if (k->threads.n && !launch)
      og_diag_error(d, k->threads.loc, "'threads_per_block' goes with 'launch', not with 'grid' + 'block'");
    if (k->threads.n && launch && k->threads.n != k->launch.n)
      og_diag_error(d, k->threads.loc, "'threads_per_block' has %zu extents but 'launch' has %zu", k->threads.n,
                    k->launch.n);
    if (grid && block && k->grid.n != k->block.n)
      og_diag_error(d, k->block.loc, "'grid' has %zu extents but 'block' has %zu", k->grid.n, k->block.n);
    og_check_launch(op, &k->launch, "'launch'", false, d);
    og_check_launch(op, &k->grid, "'grid'", true, d);
    og_check_launch(op, &k->block, "'block'", true, d);
    og_check_launch(op, &k->threads, "'threads_per_block'", true, d);
    og_check_expr(op, k->shared_mem, OG_SCOPE_LAUNCH, "'shared_mem'", d);
  }
  if (op->nscratch && !op->cpu.present && !op->ncuda)
    og_diag_error(d, op->scratch[0].loc,
                  "scratch buffers are only visible to raw 'cpu' and 'cuda' bodies, and this op has neither");
}

/* A body may not declare a local named like a name the generated code declares around
 * it (an array, NAME_size, NAME_shape, a symbol, an attribute, a type variable, and in
 * a portable kernel the launch indices): the two would collide in one scope. */
typedef struct og_decl_ctx {
  const og_op *op;
  const og_body *body;
  const char *what;
  size_t indices; /* launch indices in scope: i, j, k of a portable kernel */
  og_diag *d;
} og_decl_ctx;

static const char *og_generated_name(const og_op *op, const char *name, size_t indices, og_buf *why) {
  static const char *const index_names[] = {"i", "j", "k"};
  for (size_t i = 0; i < indices && i < 3; ++i)
    if (!strcmp(name, index_names[i])) return "a launch index";
  if (og_op_symbol(op, name) >= 0) return "a shape symbol";
  if (og_op_attr(op, name)) return "an attribute";
  for (size_t t = 0; t < op->ntypes; ++t)
    if (!strcmp(op->types[t].name, name)) return "a type variable";
  const og_array *a = og_op_array(op, name);
  if (a) return "an array";
  size_t len = strlen(name);
  static const char *const suffixes[] = {"_size", "_shape"};
  for (size_t s = 0; s < 2; ++s) {
    size_t sl = strlen(suffixes[s]);
    if (len <= sl || strcmp(name + len - sl, suffixes[s]) != 0) continue;
    char *base = og_xstrndup(name, len - sl);
    a = og_op_array(op, base);
    if (a)
      og_buf_printf(why, "the %s of %s '%s'", s ? "shape" : "size",
                    a->role == OG_INPUT    ? "input"
                    : a->role == OG_OUTPUT ? "output"
                                           : "scratch buffer",
                    base);
    free(base);
    if (a) return og_buf_str(why);
  }
  return NULL;
}

static void og_check_decl(const char *name, int line, int col, void *ud) {
  og_decl_ctx *c = ud;
  og_buf why = {0};
  const char *what = og_generated_name(c->op, name, c->indices, &why);
  if (what) {
    og_loc loc = og_body_loc(c->body, line, col);
    og_diag_error(c->d, loc, "%s declares '%s', which is %s of the op and already in scope: rename the local", c->what,
                  name, what);
  }
  og_buf_free(&why);
}

static void og_check_body_decls(const og_op *op, const og_body *b, const char *what, size_t indices, og_diag *d) {
  if (!b->present) return;
  og_decl_ctx c = {op, b, what, indices, d};
  og_idents types = {0};
  for (size_t t = 0; t < op->ntypes; ++t) og_idents_add(&types, op->types[t].name);
  og_idents_scan_decls(b->text, &types, og_check_decl, &c);
  og_idents_free(&types);
}

/* The kernel runs in the prologue's scope (in a 1-D CUDA kernel, the same block), so it
 * may not declare a local the prologue declares. */
typedef struct og_prologue_ctx {
  const og_op *op;
  og_idents names; /* what the prologue declares */
  og_diag *d;
} og_prologue_ctx;

static void og_prologue_decl(const char *name, int line, int col, void *ud) {
  (void)line;
  (void)col;
  og_idents_add(&((og_prologue_ctx *)ud)->names, name);
}

static void og_kernel_decl(const char *name, int line, int col, void *ud) {
  og_prologue_ctx *c = ud;
  if (!og_idents_has(&c->names, name)) return;
  og_diag_error(c->d, og_body_loc(&c->op->kernel, line, col),
                "'kernel' declares '%s', which the 'prologue' declares and is already in scope: rename one", name);
}

static void og_check_prologue_kernel(const og_op *op, og_diag *d) {
  if (!op->prologue.present || !op->kernel.present) return;
  og_prologue_ctx c = {op, {0}, d};
  og_idents types = {0};
  for (size_t t = 0; t < op->ntypes; ++t) og_idents_add(&types, op->types[t].name);
  og_idents_scan_decls(op->prologue.text, &types, og_prologue_decl, &c);
  og_idents_scan_decls(op->kernel.text, &types, og_kernel_decl, &c);
  og_idents_free(&types);
  og_idents_free(&c.names);
}

/* A portable body (and its prologue) runs inside loops of the generated code: on CPU
 * over a range of indices, on GPU over batch elements and grid strides. A jump out of
 * the body would skip or end those loops instead of finishing one index, so it is
 * refused where the spec says it, with the way to write it. */
typedef struct og_jump_ctx {
  const og_body *body;
  const char *what;
  og_diag *d;
} og_jump_ctx;

static void og_check_jump(const char *word, int line, int col, void *ud) {
  og_jump_ctx *c = ud;
  const char *where = word[0] == 'b'   ? " outside a loop or switch of its own"
                      : word[0] == 'c' ? " outside a loop of its own"
                                       : "";
  og_diag_error(c->d, og_body_loc(c->body, line, col),
                "%s uses '%s'%s: a portable body runs inside the generated loops (on CPU over a range of indices, "
                "on GPU over batch elements), and a jump would leave them, not just this index; write the early "
                "exit as if/else: 'if (cond) { y[i] = 0; } else { ...the rest... }'",
                c->what, word, where);
}

static void og_check_portable_jumps(const og_body *b, const char *what, og_diag *d) {
  if (!b->present) return;
  og_jump_ctx c = {b, what, d};
  og_body_jumps(b->text, og_check_jump, &c);
}

/* ---- require: ------------------------------------------------------------------------- */

/* A condition reads shape symbols, integer attributes and inputs' NAME_size anywhere,
 * and a float attribute as a whole side (`theta > 0`): the handler and the binder
 * compare it as the double it is, but shape arithmetic is integer. */
typedef struct og_require_ctx {
  const og_op *op;
  bool bare; /* the side is the name alone */
  og_diag *d;
} og_require_ctx;

static void og_check_require_name(const og_expr *n, void *ud) {
  og_require_ctx *c = ud;
  if (og_op_symbol(c->op, n->name) >= 0 || og_is_size_name(c->op, n->name, OG_SCOPE_SHAPE)) return;
  const og_attr *attr = og_op_attr(c->op, n->name);
  if (attr && attr->has_type && (og_attr_types[attr->type].integer || (c->bare && attr->type != OG_ATTR_BOOL))) return;
  if (attr && attr->has_type && attr->type != OG_ATTR_BOOL)
    og_diag_error(c->d, n->loc,
                  "'require' uses %s attribute '%s' inside arithmetic, which is integer: compare it as a whole "
                  "side ('%s > 0.5')",
                  og_attr_types[attr->type].name, n->name, n->name);
  else if (attr)
    og_diag_error(c->d, n->loc, "'require' uses bool attribute '%s': a condition compares numbers", n->name);
  else
    og_diag_error(c->d, n->loc,
                  "'require' uses '%s', which is not a shape symbol, an attribute or an input's NAME_size", n->name);
}

static void og_check_require(const og_op *op, og_diag *d) {
  for (size_t i = 0; i < op->nrequire; ++i) {
    const og_require_side *sides[] = {&op->require[i].lhs, &op->require[i].rhs};
    for (size_t s = 0; s < 2; ++s) {
      if (!sides[s]->expr) continue;
      og_require_ctx c = {op, sides[s]->expr->kind == OG_E_NAME, d};
      og_expr_visit_names(sides[s]->expr, og_check_require_name, &c);
      og_expr_check_constants(sides[s]->expr, "'require'", d);
    }
  }
}

/* ---- reduce: ------------------------------------------------------------------------ */

/* The output dim that mentions `symbol` ("..." for the group), or NULL. */
static const og_dim *og_output_dim_with(const og_op *op, const char *symbol, const og_array **output) {
  bool group = strcmp(symbol, "...") == 0;
  for (size_t i = 0; i < op->noutputs; ++i)
    for (size_t j = 0; j < op->outputs[i].ndims; ++j) {
      const og_dim *dim = &op->outputs[i].dims[j];
      if (group ? dim->kind == OG_DIM_ELLIPSIS : og_expr_names(dim->expr, symbol)) {
        *output = &op->outputs[i];
        return dim;
      }
    }
  return NULL;
}

/* How often `symbol` ("..." for the group) is a whole dim of `a`; sets *reads to the first
 * dim whose expression reads it as part of a larger expression. */
static int og_dims_carrying(const og_array *a, const char *symbol, const og_dim **reads) {
  bool group = strcmp(symbol, "...") == 0;
  int n = 0;
  for (size_t j = 0; j < a->ndims; ++j) {
    const og_dim *dim = &a->dims[j];
    if (group) {
      n += dim->kind == OG_DIM_ELLIPSIS;
    } else if (dim->kind == OG_DIM_SYM) {
      n += strcmp(dim->name, symbol) == 0;
    } else if (dim->expr) {
      bool found = og_expr_names(dim->expr, symbol);
      if (found && dim->expr->kind == OG_E_NAME)
        ++n;
      else if (found && !*reads)
        *reads = dim;
    }
  }
  return n;
}

/* A reduced symbol is contracted: in an input's shape and in no output's, so that every
 * device's outputs have the whole shape and only their values combine. */
static void og_check_reduce(const og_op *op, og_diag *d) {
  for (size_t r = 0; r < op->nreduce; ++r) {
    const og_reduction *red = &op->reduce[r];
    bool group = strcmp(red->symbol, "...") == 0;
    bool in_inputs = false;
    for (size_t i = 0; i < op->ninputs && group; ++i) in_inputs |= op->inputs[i].has_ellipsis;
    if (group ? !in_inputs : og_op_symbol(op, red->symbol) < 0) {
      og_diag_error(d, red->loc, "reduced %s'%s' is not in any input's shape", group ? "" : "symbol ", red->symbol);
      continue;
    }
    const og_array *output = NULL;
    const og_dim *dim = og_output_dim_with(op, red->symbol, &output);
    if (dim) {
      og_diag_error(d, red->loc,
                    "'%s' cannot be reduced: output '%s' has it in its shape (only what no output's shape mentions "
                    "combines by value)",
                    red->symbol, output->name);
      og_diag_note(d, dim->loc, "output '%s' dim '%s' is here", output->name, dim->text);
      continue;
    }
    /* Sharding along a symbol splits every dim it is: of an input that has it twice, a
     * device would hold one block of the diagonal, and the blocks off it would be lost. */
    for (size_t i = 0; i < op->ninputs; ++i) {
      const og_dim *reads = NULL;
      int times = og_dims_carrying(&op->inputs[i], red->symbol, &reads);
      if (times < 2) continue;
      og_diag_error(d, red->loc,
                    "'%s' cannot be reduced: it is %d dims of input '%s' (splitting both would keep only the "
                    "diagonal blocks)",
                    red->symbol, times, op->inputs[i].name);
      break;
    }
  }
}

/* ---- independent: --------------------------------------------------------------------- */

/* What the checker can see of an independence claim: the symbol is an input dim that
 * some output has as a whole dim, and no output's extent is computed from it (a shard's
 * extent could not give the shard's part of that output). Whether the body reads across
 * positions only the author knows; opspec.testing.check_op tests it by splitting. */
static void og_check_independent(const og_op *op, og_diag *d) {
  for (size_t k = 0; k < op->nindependent; ++k) {
    const og_independent *ind = &op->independent[k];
    const char *sym = ind->symbol;
    bool group = strcmp(sym, "...") == 0;
    bool in_inputs = false;
    for (size_t i = 0; i < op->ninputs && group; ++i) in_inputs |= op->inputs[i].has_ellipsis;
    if (group ? !in_inputs : og_op_symbol(op, sym) < 0) {
      og_diag_error(d, ind->loc, "independent %s'%s' is not in any input's shape", group ? "" : "symbol ", sym);
      continue;
    }
    bool reduced = false;
    for (size_t r = 0; r < op->nreduce; ++r)
      if (strcmp(op->reduce[r].symbol, sym) == 0) {
        og_diag_error(d, ind->loc,
                      "'%s' is declared both independent and reduced (independent: outputs keep it and split "
                      "along it; reduce: no output has it and shards combine by value)",
                      sym);
        og_diag_note(d, op->reduce[r].loc, "'%s' is reduced here", sym);
        reduced = true;
      }
    if (reduced) continue; /* what else is wrong with it follows from that */
    bool carried = false, reported = false;
    for (size_t io = 0; io < 2 && !reported; ++io) {
      const og_array *arrays = io ? op->outputs : op->inputs;
      size_t n = io ? op->noutputs : op->ninputs;
      for (size_t i = 0; i < n && !reported; ++i) {
        const og_dim *reads = NULL;
        int times = og_dims_carrying(&arrays[i], sym, &reads);
        if (reads) {
          og_diag_error(d, ind->loc,
                        "'%s' cannot be independent: the extent of output '%s' is computed from it ('%s'), so a "
                        "shard's output is not its part of the whole",
                        sym, arrays[i].name, reads->text);
          og_diag_note(d, reads->loc, "output '%s' dim '%s' is here", arrays[i].name, reads->text);
          reported = true;
        } else if (times > 1) {
          og_diag_error(d, ind->loc,
                        "'%s' cannot be independent: it is %d dims of %s '%s' (splitting both would keep only "
                        "the diagonal blocks)",
                        sym, times, io ? "output" : "input", arrays[i].name);
          reported = true;
        }
        carried |= io && times > 0;
      }
    }
    if (!reported && !carried)
      og_diag_error(d, ind->loc,
                    "independent '%s' is in no output's shape: there is nothing to split along it (a symbol "
                    "the outputs contract away can be declared in 'reduce' instead)",
                    sym);
  }
}

void og_spec_check(const og_op *op, og_diag *d) {
  /* The file name is the op's name, so the build knows every generated file from the
   * list of specs alone, as Redis derives its command table from one JSON file per command. */
  const char *base = strrchr(op->src->path, '/');
  base = base ? base + 1 : op->src->path;
  size_t stem = strcspn(base, ".");
  if (op->name && (strlen(op->name) != stem || strncmp(base, op->name, stem) != 0))
    og_diag_error(d, op->loc, "op '%s' must be defined in a file named '%s.yaml'", op->name, op->name);
  if (op->noutputs == 0) og_diag_error(d, op->loc, "op '%s' has no outputs", op->name);
  const char *why = op->name ? og_reserved_why(op->name) : NULL;
  if (why) og_diag_error(d, op->loc, "op name '%s' is reserved: %s", op->name, why);

  og_names ns = {0};
  for (size_t i = 0; i < op->ntypes; ++i) og_names_add(&ns, op->types[i].name, op->types[i].loc, "type variable", d);
  for (size_t i = 0; i < op->ninputs; ++i) og_names_add_array(&ns, &op->inputs[i], "input", d);
  for (size_t i = 0; i < op->noutputs; ++i) og_names_add_array(&ns, &op->outputs[i], "output", d);
  for (size_t i = 0; i < op->nscratch; ++i) og_names_add_array(&ns, &op->scratch[i], "scratch buffer", d);
  for (size_t i = 0; i < op->nattrs; ++i) og_names_add(&ns, op->attrs[i].name, op->attrs[i].loc, "attribute", d);
  for (size_t i = 0; i < op->nsymbols; ++i)
    og_names_add(&ns, op->symbols[i], og_symbol_loc(op, op->symbols[i]), "shape symbol", d);
  og_names_free(&ns);
  og_check_derivatives(op, d);

  /* The handler runtime binds into fixed tables (opspec/limits.h); the loader already
   * capped type variables and attributes. */
  if (op->nsymbols > OPSPEC_MAX_SYMBOLS)
    og_diag_error(d, og_symbol_loc(op, op->symbols[OPSPEC_MAX_SYMBOLS]),
                  "at most %d shape symbols are supported, got %zu", OPSPEC_MAX_SYMBOLS, op->nsymbols);

  for (size_t t = 0; t < op->ntypes; ++t) {
    if (op->types[t].bound_by < 0)
      og_diag_error(d, op->types[t].loc, "type variable '%s' is not the dtype of any input, so it cannot be inferred",
                    op->types[t].name);
  }

  og_check_arrays(op, op->inputs, op->ninputs, d);
  for (size_t i = 0; i < op->ninputs; ++i) og_check_contents(op, &op->inputs[i], d);
  og_check_arrays(op, op->outputs, op->noutputs, d);
  og_check_arrays(op, op->scratch, op->nscratch, d);
  og_check_bodies(op, d);
  og_check_expr(op, op->bytes, OG_SCOPE_COST, "'bytes'", d);
  og_check_expr(op, op->flops, OG_SCOPE_COST, "'flops'", d);
  og_check_body_decls(op, &op->prologue, "'prologue'", op->launch.n, d);
  og_check_body_decls(op, &op->kernel, "'kernel'", op->launch.n, d);
  og_check_prologue_kernel(op, d);
  og_check_portable_jumps(&op->prologue, "'prologue'", d);
  og_check_portable_jumps(&op->kernel, "'kernel'", d);
  og_check_body_decls(op, &op->cpu, "'cpu'", 0, d);
  for (size_t k = 0; k < op->ncuda; ++k) og_check_body_decls(op, &op->cuda[k].body, "cuda kernel body", 0, d);
  og_check_require(op, d);
  og_check_reduce(op, d);
  og_check_independent(op, d);
  og_check_halo(op, d);
  og_check_in_kernel(op, d);
}

og_op *og_spec_load(const char *path, og_diag *d) {
  og_source *src = og_source_read(path, d);
  return src ? og_spec_load_source(src, d) : NULL;
}

og_op *og_spec_load_source(og_source *src, og_diag *d) {
  int before = d->errors;
  og_op *op = og_load_spec(src, NULL, d);
  if (op) og_spec_check(op, d);
  if (op && d->errors != before) {
    og_op_free(op);
    return NULL;
  }
  return op;
}
