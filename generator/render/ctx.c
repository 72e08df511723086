/* The context of each template: the op's own values (names, the header's fields), the
 * pieces ctx_kernels.c, ctx_ffi.c and ctx_python.c compute, and the library's. */
#include "render/ctx.h"

#include <stdlib.h>
#include <string.h>

#include "render/c_text.h"
#include "render/ctx_ffi.h"
#include "render/ctx_kernels.h"
#include "render/ctx_python.h"
#include "util/escape.h"

/* ---- the header -------------------------------------------------------------------- */

/* One field of the args struct: {type, name, pad, note}, printed as "type name;pad" and
 * the note in a comment, `pad` aligning the notes. */
static og_value *og_field(const char *type, const char *name, og_value *note) {
  og_value *f = og_value_map();
  og_map_set_str(f, "type", type);
  og_map_set_str(f, "name", name);
  og_map_set(f, "note", note);
  return f;
}

typedef struct og_fields {
  og_value **items; /* the records, owned until handed to the list */
  size_t n, cap;
} og_fields;

static void og_fields_add(og_fields *fs, const char *type, const char *name, og_value *note) {
  og_grow((void **)&fs->items, &fs->cap, fs->n + 1, sizeof *fs->items);
  fs->items[fs->n++] = og_field(type, name, note);
}

static size_t og_field_width(const og_value *f) {
  return strlen(og_value_as_str(og_map_get(f, "type"))) + strlen(og_value_as_str(og_map_get(f, "name")));
}

/* The args struct's fields, as records, their notes aligned. */
static og_value *og_ctx_fields(const og_op *op) {
  og_fields fs = {0};
  const og_array *lists[] = {op->inputs, op->outputs, op->scratch};
  size_t counts[] = {op->ninputs, op->noutputs, op->nscratch};
  static const char *const roles[] = {"input", "output", "scratch"};
  og_buf b = {0};
  for (size_t l = 0; l < 3; ++l)
    for (size_t i = 0; i < counts[l]; ++i) {
      const og_array *a = &lists[l][i];
      og_buf_clear(&b);
      og_buf_printf(&b, "%s %s[", roles[l], a->dtype);
      for (size_t d = 0; d < a->ndims; ++d) og_buf_printf(&b, "%s%s", d ? ", " : "", a->dims[d].text);
      og_buf_puts(&b, "]");
      og_fields_add(&fs, "opspec_array", a->name, og_escaped(og_escape_c_comment, og_buf_str(&b)));
    }
  og_buf_free(&b);
  for (size_t s = 0; s < op->nsymbols; ++s) og_fields_add(&fs, "int64_t", op->symbols[s], og_value_str("shape symbol"));
  for (size_t t = 0; t < op->nattrs; ++t)
    og_fields_add(&fs, og_dtype_ctype(og_attr_types[op->attrs[t].type].name), op->attrs[t].name,
                  og_value_str("attribute"));
  if (og_op_rejects(op))
    og_fields_add(&fs, "int", "*opspec_rejected", og_value_str("where opspec_reject() reports (in_kernel checks)"));
  size_t width = 0;
  for (size_t i = 0; i < fs.n; ++i)
    if (og_field_width(fs.items[i]) > width) width = og_field_width(fs.items[i]);
  og_value *fields = og_value_list();
  for (size_t i = 0; i < fs.n; ++i) {
    og_buf pad = {0};
    og_buf_printf(&pad, "%*s", (int)(width - og_field_width(fs.items[i])), "");
    og_map_set(fs.items[i], "pad", og_value_str_take(og_buf_take(&pad)));
    og_list_push(fields, fs.items[i]);
  }
  free(fs.items);
  return fields;
}

/* ---- the op ------------------------------------------------------------------------ */

og_value *og_ctx_op(const og_op *op, const og_op_plan *plan) {
  og_value *v = og_value_map();
  og_map_set_str(v, "name", op->name);
  og_buf guard = {0};
  og_buf_puts(&guard, "OPSPEC_OP_");
  for (const char *p = op->name; *p; ++p) og_buf_putc(&guard, (char)(*p >= 'a' && *p <= 'z' ? *p - 'a' + 'A' : *p));
  og_buf_puts(&guard, "_H");
  og_map_set(v, "guard", og_value_str_take(og_buf_take(&guard)));
  og_map_set(v, "spec_comment", og_escaped(og_escape_c_comment, op->src->path));
  og_map_set(v, "fields", og_ctx_fields(op));
  og_ctx_kernels(op, plan, v);
  og_ctx_ffi(op, plan, v);
  return v;
}

void og_ctx_op_python(og_value *v, const og_op *op, const char *fingerprint) {
  og_map_set_str(v, "fingerprint", fingerprint);
  og_map_set(v, "py", og_ctx_python(op, fingerprint));
}

/* The registry's rows, one per op ({name, CPU handler, CUDA handler, simulator's}), as
 * og_wrap's lines. */
static og_value *og_registry_rows(const og_value *ops) {
  og_value *lines = og_value_list();
  og_buf name = {0}, cpu = {0}, cuda = {0}, sim = {0};
  for (size_t i = 0; i < og_list_len(ops); ++i) {
    const og_value *op = og_list_at(ops, i);
    const char *op_name = og_value_as_str(og_map_get(op, "name"));
    bool has_cuda = og_value_as_bool(og_map_get(op, "has_cuda"));
    og_buf_clear(&name);
    og_buf_clear(&cpu);
    og_buf_clear(&cuda);
    og_buf_clear(&sim);
    og_buf_printf(&name, "\"%s\"", op_name);
    og_buf_printf(&cpu, "opspec_%s_cpu", op_name);
    if (has_cuda) {
      og_buf_printf(&cuda, "OPSPEC_CUDA_HANDLER(opspec_%s_cuda)", op_name);
      og_buf_printf(&sim, "OPSPEC_CUDA_SIM_HANDLER(opspec_%s_cuda_sim)", op_name);
    }
    const char *const items[] = {og_buf_str(&name), og_buf_str(&cpu), has_cuda ? og_buf_str(&cuda) : "NULL",
                                 has_cuda ? og_buf_str(&sim) : "NULL"};
    og_wrap_into(lines, "    {", items, 4, "},", false);
  }
  og_buf_free(&name);
  og_buf_free(&cpu);
  og_buf_free(&cuda);
  og_buf_free(&sim);
  return lines;
}

og_value *og_ctx_library(og_value *ops) {
  og_value *ctx = og_value_map();
  og_map_set(ctx, "registry_rows", og_registry_rows(ops));
  og_map_set(ctx, "ops", ops);
  og_value *limits = og_value_list(), *dtypes = og_value_list(), *attrs = og_value_list();
  static const struct {
    const char *name;
    int value;
  } og_limits[] = {
      {"MAX_RANK", OPSPEC_MAX_RANK},
      {"MAX_TYPEVARS", OPSPEC_MAX_TYPEVARS},
      {"MAX_SYMBOLS", OPSPEC_MAX_SYMBOLS},
      {"MAX_ATTRS", OPSPEC_MAX_ATTRS},
      {"MAX_INPUTS", OPSPEC_MAX_INPUTS},
      {"MAX_OUTPUTS", OPSPEC_MAX_OUTPUTS},
      {"MAX_SCRATCH", OPSPEC_MAX_SCRATCH},
      {"MAX_BATCH_RANK", OPSPEC_MAX_BATCH_RANK},
      {"MAX_CUDA_KERNELS", OPSPEC_MAX_CUDA_KERNELS},
      {"MAX_NAME", OPSPEC_MAX_NAME},
      {"MAX_EXPR_NODES", OPSPEC_MAX_EXPR_NODES},
      {"MAX_EXPR_DEPTH", OPSPEC_MAX_EXPR_DEPTH},
  };
  for (size_t i = 0; i < sizeof og_limits / sizeof *og_limits; ++i) {
    og_value *limit = og_value_map();
    og_map_set_str(limit, "name", og_limits[i].name);
    og_map_set_int(limit, "value", og_limits[i].value);
    og_list_push(limits, limit);
  }
  for (int i = 0; i < OG_NDTYPES; ++i) og_list_push(dtypes, og_value_str(og_dtypes[i].name));
  for (int t = 0; t < OG_ATTR_NTYPES; ++t) {
    og_value *attr = og_value_map();
    og_map_set_str(attr, "name", og_attr_types[t].name);
    og_map_set_str(attr, "py_type", og_attr_types[t].py_type);
    og_list_push(attrs, attr);
  }
  og_map_set(ctx, "limits", limits);
  og_map_set(ctx, "dtypes", dtypes);
  og_map_set(ctx, "attr_types", attrs);
  return ctx;
}
