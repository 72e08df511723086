#include "emit_ctx.h"

#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "opspec/dtypes.h"

typedef struct og_dtype_row {
  const char *name, *ctype, *np;
  int xla;
} og_dtype_row;

static const og_dtype_row og_dtype_rows[] = {
#define OG_DTYPE_ROW(name, ctype, cutype, xla, np) {#name, #ctype, np, xla},
    OPSPEC_DTYPES(OG_DTYPE_ROW)
#undef OG_DTYPE_ROW
};

static const og_dtype_row *og_dtype_find(const char *name) {
  for (size_t i = 0; i < sizeof og_dtype_rows / sizeof *og_dtype_rows; ++i)
    if (strcmp(og_dtype_rows[i].name, name) == 0) return &og_dtype_rows[i];
  return NULL;
}

const char *og_dtype_ctype(const char *dtype) {
  const og_dtype_row *row = og_dtype_find(dtype);
  return row ? row->ctype : NULL;
}

/* ---- expression spelling ------------------------------------------------------- */

/* In handlers, symbols, attributes and sizes live in the args struct. */
static void og_spell_args(og_buf *out, const char *name, void *ud) {
  (void)ud;
  og_buf_printf(out, "args->%s", name);
}

/* In Python stubs, they live in the dict `s` the runtime builds at trace time. */
static void og_spell_py(og_buf *out, const char *name, void *ud) {
  (void)ud;
  og_buf_printf(out, "s[\"%s\"]", name);
}

static og_value *og_c_expr(const og_expr *e, og_expr_spell_fn *spell) {
  og_buf b = {0};
  og_expr_render_c(e, &b, spell, NULL);
  return og_value_str_take(og_buf_take(&b));
}

/* For handlers: every operation checked (opspec_safe_*), names read from args. */
static og_value *og_c_expr_checked(const og_expr *e) {
  og_buf b = {0};
  og_expr_render_c_checked(e, &b, og_spell_args, NULL);
  return og_value_str_take(og_buf_take(&b));
}

typedef void og_escape_fn(og_buf *out, const char *text);

static og_value *og_escaped(og_escape_fn *escape, const char *text) {
  og_buf b = {0};
  escape(&b, text);
  return og_value_str_take(og_buf_take(&b));
}

/* The doc as the body of a Python triple-quoted docstring, trailing blanks dropped. */
static og_value *og_doc_py(const char *doc) {
  size_t len = strlen(doc);
  while (len && (doc[len - 1] == '\n' || doc[len - 1] == ' ')) --len;
  char *trimmed = og_xstrndup(doc, len);
  og_value *v = og_escaped(og_escape_py_string, trimmed);
  free(trimmed);
  return v;
}

static og_value *og_py_expr(const og_expr *e) {
  og_buf b = {0};
  og_expr_render_py(e, &b, og_spell_py, NULL);
  return og_value_str_take(og_buf_take(&b));
}

/* ---- pieces -------------------------------------------------------------------- */

static og_value *og_ctx_body(const og_op *op, const og_body *body) {
  if (!body->present) return og_value_null();
  og_value *v = og_value_map();
  size_t len = strlen(body->text);
  while (len && (body->text[len - 1] == '\n' || body->text[len - 1] == ' ')) --len;
  og_map_set(v, "text", og_value_str_take(og_xstrndup(body->text, len)));
  og_map_set_int(v, "line", body->line);
  og_map_set_int(v, "indent", body->indent);
  og_buf pad = {0};
  for (int i = 0; i < body->indent; ++i) og_buf_putc(&pad, ' ');
  og_map_set(v, "pad", og_value_str_take(og_buf_take(&pad)));
  og_map_set_str(v, "spec", op->src->path);
  return v;
}

static og_value *og_ctx_launch(const og_launch *l, const og_launch *threads) {
  static const char *const index[] = {"i", "j", "k"};
  if (l->n == 0) return og_value_null();
  og_value *v = og_value_map();
  og_value *dims = og_value_list();
  for (size_t d = 0; d < l->n; ++d) {
    og_value *dim = og_value_map();
    og_map_set_str(dim, "index", index[d]);
    /* On GPU the last launch dim runs along x, so neighbouring threads touch
     * neighbouring elements of a row-major array. */
    og_map_set_str(dim, "axis", (const char *[]){"x", "y", "z"}[l->n - 1 - d]);
    og_map_set(dim, "extent", og_c_expr(l->extents[d], NULL));
    og_map_set(dim, "threads", threads && threads->n ? og_c_expr(threads->extents[d], NULL) : og_value_null());
    og_list_push(dims, dim);
  }
  og_map_set(v, "dims", dims);
  og_map_set_int(v, "n", (int64_t)l->n);
  og_map_set_bool(v, "has_threads", threads && threads->n);
  return v;
}

/* A dim description as a C initialiser for opspec_dim, plus its Python form. */
static void og_ctx_dim(const og_op *op, const og_dim *dim, og_buf *c, og_buf *py, og_value *extents) {
  switch (dim->kind) {
    case OG_DIM_ELLIPSIS:
      og_buf_puts(c, "{OPSPEC_DIM_ELLIPSIS, 0}");
      og_buf_puts(py, "...");
      return;
    case OG_DIM_INT:
      og_buf_printf(c, "{OPSPEC_DIM_FIXED, %lld}", (long long)dim->value);
      og_buf_printf(py, "%lld", (long long)dim->value);
      return;
    case OG_DIM_SYM:
      og_buf_printf(c, "{OPSPEC_DIM_SYM, %d}", og_op_symbol(op, dim->name));
      og_buf_printf(py, "\"%s\"", dim->name);
      return;
    case OG_DIM_EXPR:
      if (dim->expr->kind == OG_E_INT) {
        og_buf_printf(c, "{OPSPEC_DIM_FIXED, %lld}", (long long)dim->expr->ival);
        og_buf_printf(py, "%lld", (long long)dim->expr->ival);
        return;
      }
      og_buf_printf(c, "{OPSPEC_DIM_EXPR, %zu}", extents ? og_list_len(extents) : 0);
      if (extents) og_list_push(extents, og_c_expr_checked(dim->expr));
      og_value *pyexpr = og_py_expr(dim->expr);
      og_buf_printf(py, "lambda s: %s", og_value_as_str(pyexpr));
      og_value_free(pyexpr);
      return;
  }
}

/* An input's `check:` for the CPU handler's opspec_check_values, or none. */
static og_value *og_ctx_check(const og_content_check *c) {
  if (!c->present) return og_value_null();
  og_value *v = og_value_map();
  const og_expr *bounds[] = {c->min, c->max};
  static const char *const keys[] = {"min", "max"};
  for (size_t b = 0; b < 2; ++b) {
    og_buf key = {0}, text = {0};
    og_buf_printf(&key, "has_%s", keys[b]);
    og_map_set_bool(v, og_buf_str(&key), bounds[b] != NULL);
    og_map_set(v, keys[b], bounds[b] ? og_c_expr_checked(bounds[b]) : og_value_str("0"));
    if (bounds[b]) og_expr_render_spec(bounds[b], &text);
    og_buf_clear(&key);
    og_buf_printf(&key, "%s_text", keys[b]);
    og_map_set(v, og_buf_str(&key), og_escaped(og_escape_c_string, og_buf_str(&text)));
    og_buf_free(&key);
    og_buf_free(&text);
  }
  og_map_set_bool(v, "sorted", c->sorted);
  return v;
}

static og_value *og_ctx_array(const og_op *op, const og_array *a, og_value *extents) {
  static const char *const roles[] = {"input", "output", "scratch"};
  og_value *v = og_value_map();
  og_map_set_str(v, "name", a->name);
  og_map_set_str(v, "role", roles[a->role]);
  og_map_set_int(v, "index", (int64_t)a->index);
  og_map_set_str(v, "dtype", a->dtype);
  og_map_set_bool(v, "is_typevar", a->typevar >= 0);
  og_map_set_str(v, "ctype", a->typevar >= 0 ? a->dtype : og_dtype_ctype(a->dtype));
  og_map_set_str(v, "const", a->role == OG_INPUT ? "const " : "");
  /* An aliased pair shares memory, so neither pointer may be restrict. */
  bool shared = a->role == OG_INPUT ? a->aliased : a->role == OG_OUTPUT && a->alias_of >= 0;
  og_map_set_str(v, "restrict", shared ? "" : "OPSPEC_RESTRICT ");
  og_map_set_int(v, "alias_of", a->alias_of);

  og_buf xla = {0};
  if (a->typevar >= 0)
    og_buf_printf(&xla, "OPSPEC_TYPEVAR(%d)", a->typevar);
  else
    og_buf_printf(&xla, "%d", og_dtype_find(a->dtype)->xla);
  og_map_set(v, "xla", og_value_str_take(og_buf_take(&xla)));
  /* For scratch sizing: the element size at run time. */
  og_buf esize = {0};
  if (a->typevar >= 0)
    og_buf_printf(&esize, "opspec_dtype_size(bound.dtypes[%d])", a->typevar);
  else
    og_buf_printf(&esize, "sizeof(%s)", og_dtype_ctype(a->dtype));
  og_map_set(v, "elem_size", og_value_str_take(og_buf_take(&esize)));

  og_buf py = {0}, shape = {0};
  og_value *dims_c = og_value_list();
  og_value *scratch_dims = og_value_list();
  for (size_t d = 0; d < a->ndims; ++d) {
    og_buf one = {0};
    og_ctx_dim(op, &a->dims[d], &one, &py, a->role == OG_OUTPUT ? extents : NULL);
    og_list_push(dims_c, og_value_str(og_buf_str(&one)));
    og_buf_free(&one);
    if (d + 1 < a->ndims) og_buf_puts(&py, ", ");
    og_buf_printf(&shape, "%s%s", d ? ", " : "", a->dims[d].text);
    if (a->role == OG_SCRATCH) og_list_push(scratch_dims, og_c_expr_checked(a->dims[d].expr));
  }
  if (a->ndims == 1) og_buf_puts(&py, ",");
  og_map_set(v, "dims_c", dims_c);
  og_map_set(v, "scratch_dims", scratch_dims);
  og_map_set_int(v, "ndims", (int64_t)a->ndims);
  og_map_set(v, "py_dims", og_value_str_take(og_buf_take(&py)));
  og_map_set(v, "check", og_ctx_check(&a->check));
  og_map_set(v, "shape", og_value_str_take(og_buf_take(&shape)));
  return v;
}

static og_value *og_ctx_arrays(const og_op *op, const og_array *arrays, size_t n, og_value *extents, og_value *all) {
  og_value *list = og_value_list();
  for (size_t i = 0; i < n; ++i) {
    og_list_push(list, og_ctx_array(op, &arrays[i], extents));
    og_list_push(all, og_ctx_array(op, &arrays[i], NULL));
  }
  return list;
}

static int og_attr_cmp(const void *x, const void *y) {
  return strcmp((*(const og_attr *const *)x)->name, (*(const og_attr *const *)y)->name);
}

static og_value *og_ctx_attr(const og_attr *a, int sorted_index) {
  og_value *v = og_value_map();
  const og_attr_type_info *type = &og_attr_types[a->type];
  const og_dtype_row *row = og_dtype_find(type->name);
  og_map_set_str(v, "name", a->name);
  og_map_set_str(v, "type", type->name);
  og_map_set_str(v, "ctype", row->ctype);
  og_map_set_int(v, "xla", row->xla);
  og_map_set_bool(v, "has_default", a->has_default);
  og_map_set_str(v, "default", a->has_default ? a->default_py : "");
  og_map_set_str(v, "py_type", type->py_type);
  og_map_set_str(v, "doc", a->doc ? a->doc : "");
  og_map_set(v, "doc_py", og_doc_py(a->doc ? a->doc : ""));
  og_map_set_int(v, "sorted_index", sorted_index);
  return v;
}

static void og_ctx_attrs(const og_op *op, og_value *v) {
  const og_attr **sorted = og_xcalloc(op->nattrs, sizeof *sorted);
  for (size_t i = 0; i < op->nattrs; ++i) sorted[i] = &op->attrs[i];
  /* XLA hands attributes to handlers sorted by name; the table matches that order. */
  qsort(sorted, op->nattrs, sizeof *sorted, og_attr_cmp);
  og_value *attrs = og_value_list(), *by_name = og_value_list();
  for (size_t i = 0; i < op->nattrs; ++i) {
    int rank = 0;
    while (sorted[rank] != &op->attrs[i]) ++rank;
    og_list_push(attrs, og_ctx_attr(&op->attrs[i], rank));
    og_list_push(by_name, og_ctx_attr(sorted[i], (int)i));
  }
  free(sorted);
  og_map_set(v, "attrs", attrs);
  og_map_set(v, "attrs_sorted", by_name);
}

static og_value *og_ctx_types(const og_op *op) {
  og_value *types = og_value_list();
  for (size_t t = 0; t < op->ntypes; ++t) {
    og_value *tv = og_value_map(), *choices = og_value_list(), *xlas = og_value_list();
    og_map_set_str(tv, "name", op->types[t].name);
    for (size_t c = 0; c < op->types[t].nchoices; ++c) {
      og_list_push(choices, og_value_str(op->types[t].choices[c]));
      og_list_push(xlas, og_value_int(og_dtype_find(op->types[t].choices[c])->xla));
    }
    og_map_set(tv, "choices", choices);
    og_map_set(tv, "xla_choices", xlas);
    og_map_set_str(tv, "bound_by", op->inputs[op->types[t].bound_by].name);
    og_list_push(types, tv);
  }
  return types;
}

/* One specialization per combination of type-variable choices, first variable slowest
 * (the order opspec_bind_inputs computes `variant` in). */
static og_value *og_ctx_variants(const og_op *op) {
  og_value *variants = og_value_list();
  size_t n = og_op_nvariants(op);
  for (size_t v = 0; v < n; ++v) {
    og_value *var = og_value_map(), *typedefs = og_value_list();
    og_buf suffix = {0}, label = {0};
    size_t rest = v;
    size_t *pick = og_xcalloc(op->ntypes ? op->ntypes : 1, sizeof *pick);
    for (size_t t = op->ntypes; t-- > 0;) {
      pick[t] = rest % op->types[t].nchoices;
      rest /= op->types[t].nchoices;
    }
    for (size_t t = 0; t < op->ntypes; ++t) {
      const char *dtype = op->types[t].choices[pick[t]];
      og_value *td = og_value_map();
      og_map_set_str(td, "name", op->types[t].name);
      og_map_set_str(td, "ctype", og_dtype_ctype(dtype));
      og_list_push(typedefs, td);
      og_buf_printf(&suffix, "%s%s", t ? "_" : "", dtype);
      og_buf_printf(&label, "%s%s = %s", t ? ", " : "", op->types[t].name, dtype);
    }
    free(pick);
    if (op->ntypes == 0) og_buf_puts(&suffix, "default");
    og_map_set_int(var, "index", (int64_t)v);
    og_map_set(var, "suffix", og_value_str_take(og_buf_take(&suffix)));
    og_map_set(var, "label", og_value_str_take(og_buf_take(&label)));
    og_map_set(var, "typedefs", typedefs);
    og_list_push(variants, var);
  }
  return variants;
}

static og_value *og_ctx_cuda_kernels(const og_op *op) {
  og_value *list = og_value_list();
  for (size_t i = 0; i < op->ncuda; ++i) {
    const og_cuda_kernel *k = &op->cuda[i];
    og_value *v = og_value_map();
    og_map_set_str(v, "name", k->name);
    og_map_set(v, "body", og_ctx_body(op, &k->body));
    og_map_set(v, "launch", og_ctx_launch(&k->launch, &k->threads));
    og_map_set(v, "grid", og_ctx_launch(&k->grid, NULL));
    og_map_set(v, "block", og_ctx_launch(&k->block, NULL));
    og_map_set(v, "shared_mem", k->shared_mem ? og_c_expr(k->shared_mem, NULL) : og_value_str("0"));
    og_list_push(list, v);
  }
  return list;
}


/* One entry of a handler's size checks (opspec_check_sizes): what is computed, the
 * expression as the spec writes it, the checked C expression, the least valid value. */
static void og_size_push(og_value *list, const char *what, const og_expr *e, int64_t min) {
  /* A literal was checked by the generator, and a bare name (a symbol, an attribute,
   * NAME_size) cannot divide or overflow; only a negative attribute could fail, and
   * only where a positive count is needed. */
  if (!e || e->kind == OG_E_INT || (e->kind == OG_E_NAME && min <= 0)) return;
  og_buf text = {0};
  og_expr_render_spec(e, &text);
  og_value *v = og_value_map();
  og_map_set(v, "what", og_escaped(og_escape_c_string, what));
  og_map_set(v, "text", og_escaped(og_escape_c_string, og_buf_str(&text)));
  og_map_set(v, "value", og_c_expr_checked(e));
  og_map_set_int(v, "min", min);
  og_list_push(list, v);
  og_buf_free(&text);
}

static void og_size_push_launch(og_value *list, const char *what, const og_launch *l, int64_t min) {
  for (size_t i = 0; i < l->n; ++i) {
    og_buf label = {0};
    og_buf_printf(&label, l->n > 1 ? "%s %zu" : "%s", what, i);
    og_size_push(list, og_buf_str(&label), l->extents[i], min);
    og_buf_free(&label);
  }
}

/* Every size a handler must validate before anything computes with it, in three lists
 * by when the handler can compute them:
 *   sizes         output dims, scratch dims, check bounds: from inputs and attributes
 *   launch_sizes  the portable launch's extents, which may read any array's NAME_size
 *   cuda_sizes    the CUDA-only configuration: threads per block, grids, blocks, shared
 *                 memory of every kernel
 * Extents, grids and sizes may be zero (an empty launch runs nothing); thread and block
 * counts must be positive. */
static void og_ctx_sizes(const og_op *op, og_value *v) {
  og_value *sizes = og_value_list(), *launch = og_value_list(), *cuda = og_value_list();
  og_buf what = {0};
  for (size_t i = 0; i < op->noutputs; ++i)
    for (size_t d = 0; d < op->outputs[i].ndims; ++d) {
      const og_dim *dim = &op->outputs[i].dims[d];
      if (dim->kind != OG_DIM_EXPR || dim->expr->kind == OG_E_INT) continue;
      og_buf_clear(&what);
      og_buf_printf(&what, "output '%s' dim %zu", op->outputs[i].name, d);
      og_size_push(sizes, og_buf_str(&what), dim->expr, 0);
    }
  for (size_t i = 0; i < op->nscratch; ++i)
    for (size_t d = 0; d < op->scratch[i].ndims; ++d) {
      og_buf_clear(&what);
      og_buf_printf(&what, "scratch '%s' dim %zu", op->scratch[i].name, d);
      og_size_push(sizes, og_buf_str(&what), op->scratch[i].dims[d].expr, 0);
    }
  for (size_t i = 0; i < op->ninputs; ++i) {
    og_buf_clear(&what);
    og_buf_printf(&what, "check 'min' of input '%s'", op->inputs[i].name);
    og_size_push(sizes, og_buf_str(&what), op->inputs[i].check.min, INT64_MIN + 1);
    og_buf_clear(&what);
    og_buf_printf(&what, "check 'max' of input '%s'", op->inputs[i].name);
    og_size_push(sizes, og_buf_str(&what), op->inputs[i].check.max, INT64_MIN + 1);
  }
  og_size_push_launch(launch, "launch extent", &op->launch, 0);
  og_size_push_launch(cuda, "threads_per_block", &op->threads, 1);
  for (size_t k = 0; k < op->ncuda; ++k) {
    const og_cuda_kernel *kern = &op->cuda[k];
    static const char *const parts[] = {"launch extent", "threads_per_block", "grid", "block"};
    const og_launch *launches[] = {&kern->launch, &kern->threads, &kern->grid, &kern->block};
    static const int64_t mins[] = {0, 1, 0, 1};
    for (size_t p = 0; p < 4; ++p) {
      og_buf_clear(&what);
      og_buf_printf(&what, "cuda kernel '%s' %s", kern->name, parts[p]);
      og_size_push_launch(cuda, og_buf_str(&what), launches[p], mins[p]);
    }
    og_buf_clear(&what);
    og_buf_printf(&what, "cuda kernel '%s' shared_mem", kern->name);
    og_size_push(cuda, og_buf_str(&what), kern->shared_mem, 0);
  }
  og_buf_free(&what);
  bool has_checks = false;
  for (size_t i = 0; i < op->ninputs; ++i) has_checks |= op->inputs[i].check.present;
  og_map_set_bool(v, "has_checks", has_checks);
  og_map_set(v, "sizes", sizes);
  og_map_set(v, "launch_sizes", launch);
  og_map_set(v, "cuda_sizes", cuda);
}

static og_value *og_ctx_op_map(const og_op *op) {
  og_value *v = og_value_map();
  og_map_set_str(v, "name", op->name);
  og_map_set_str(v, "doc", op->doc);
  og_map_set(v, "doc_py", og_doc_py(op->doc));
  og_map_set_str(v, "spec", op->src->path);
  og_map_set(v, "spec_cstr", og_escaped(og_escape_c_string, op->src->path));
  og_map_set(v, "spec_comment", og_escaped(og_escape_c_comment, op->src->path));
  og_map_set_str(v, "vmap", og_vmap_names[op->vmap]);

  og_value *extents = og_value_list(), *all = og_value_list();
  og_map_set(v, "inputs", og_ctx_arrays(op, op->inputs, op->ninputs, NULL, all));
  og_map_set(v, "outputs", og_ctx_arrays(op, op->outputs, op->noutputs, extents, all));
  og_map_set(v, "scratch", og_ctx_arrays(op, op->scratch, op->nscratch, NULL, all));
  og_map_set(v, "arrays", all);
  og_map_set(v, "extents", extents);

  og_value *symbols = og_value_list();
  for (size_t i = 0; i < op->nsymbols; ++i) og_list_push(symbols, og_value_str(op->symbols[i]));
  og_map_set(v, "symbols", symbols);
  og_ctx_attrs(op, v);
  og_map_set(v, "types", og_ctx_types(op));
  og_map_set(v, "variants", og_ctx_variants(op));

  og_value *aliases = og_value_list();
  for (size_t i = 0; i < op->noutputs; ++i) {
    if (op->outputs[i].alias_of < 0) continue;
    og_value *al = og_value_map();
    og_map_set_int(al, "input", op->outputs[i].alias_of);
    og_map_set_int(al, "output", (int64_t)i);
    og_list_push(aliases, al);
  }
  og_map_set(v, "aliases", aliases);

  og_ctx_sizes(op, v);
  og_map_set(v, "launch", og_ctx_launch(&op->launch, &op->threads));
  og_map_set(v, "kernel", og_ctx_body(op, &op->kernel));
  og_map_set(v, "cpu", og_ctx_body(op, &op->cpu));
  og_map_set(v, "cuda_kernels", og_ctx_cuda_kernels(op));
  og_map_set_bool(v, "has_cuda", op->ncuda > 0 || op->kernel.present);
  og_map_set_bool(v, "multi_output", op->noutputs > 1);
  return v;
}

og_value *og_ctx_op(const og_op *op) {
  og_value *ctx = og_value_map();
  og_map_set(ctx, "op", og_ctx_op_map(op));
  return ctx;
}

static int og_op_cmp(const void *x, const void *y) {
  return strcmp((*(og_op *const *)x)->name, (*(og_op *const *)y)->name);
}

og_value *og_ctx_library(og_op *const *ops, size_t nops) {
  og_op **sorted = og_xcalloc(nops, sizeof *sorted);
  memcpy(sorted, ops, nops * sizeof *sorted);
  qsort(sorted, nops, sizeof *sorted, og_op_cmp);
  og_value *list = og_value_list();
  for (size_t i = 0; i < nops; ++i) og_list_push(list, og_ctx_op_map(sorted[i]));
  free(sorted);
  og_value *ctx = og_value_map();
  og_map_set(ctx, "ops", list);
  return ctx;
}
