/* The handler file of an op: the tables that describe its call (opspec_op_desc), and
 * the few functions the runtime cannot write for it because they compute the spec's
 * expressions: the output and scratch shapes, the launch sizes, the content checks.
 * The handlers themselves are one call each into runtime/src/handler.c. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render/ctx_ffi.h"
#include "render/ctx_require.h"

#include "render/c_text.h"
#include "util/escape.h"

/* Table rows as og_wrap's lines, one after another: each row "{cells}," at `indent`
 * columns. Takes `rows` (lists of cells) over. */
static og_value *og_rows_record(og_value *rows, size_t indent) {
  og_value *lines = og_value_list();
  og_buf lead = {0};
  og_buf_printf(&lead, "%*s{", (int)indent, "");
  for (size_t r = 0; r < og_list_len(rows); ++r)
    og_wrap_list(lines, og_buf_str(&lead), og_list_at(rows, r), "},", false);
  og_buf_free(&lead);
  og_value_free(rows);
  return lines;
}

/* A table of the call's description as a record {type, field, comment, rows}. */
static og_value *og_table_record(const char *type, const char *field, const char *comment, og_value *rows) {
  og_value *table = og_value_map();
  og_map_set_str(table, "type", type);
  og_map_set_str(table, "field", field);
  og_map_set_str(table, "comment", comment);
  og_map_set(table, "rows", og_rows_record(rows, 4));
  return table;
}

/* The symbol an output dim names alone, or -1. The inputs bind every symbol before
 * the outputs are checked, so the runtime compares such a dim with the symbol's value
 * and `shapes` need not compute it. */
static int og_dim_symbol(const og_op *op, const og_dim *dim) {
  return dim->kind == OG_DIM_EXPR && dim->expr->kind == OG_E_NAME ? og_op_symbol(op, dim->expr->name) : -1;
}

/* A dim of an input or output as the runtime checks it: an output's expression (but a
 * bare symbol) against the extent `shapes` computes, numbered by `nextents`. */
static void og_dim_init(const og_op *op, const og_dim *dim, og_buf *out, size_t *nextents) {
  const og_expr *e = dim->expr;
  if (dim->kind == OG_DIM_ELLIPSIS)
    og_buf_puts(out, "OPSPEC_ELLIPSIS");
  else if (dim->kind == OG_DIM_INT)
    og_buf_printf(out, "OPSPEC_FIXED(%lld)", (long long)dim->value);
  else if (dim->kind == OG_DIM_SYM)
    og_buf_printf(out, "OPSPEC_SYM(%d)", og_op_symbol(op, dim->name));
  else if (e->kind == OG_E_INT)
    og_buf_printf(out, "OPSPEC_FIXED(%lld)", (long long)e->ival);
  else if (og_dim_symbol(op, dim) >= 0)
    og_buf_printf(out, "OPSPEC_SYM(%d)", og_dim_symbol(op, dim));
  else
    og_buf_printf(out, "OPSPEC_EXPR(%zu)", (*nextents)++);
}

static bool og_dim_is_extent(const og_op *op, const og_dim *dim) {
  return dim->kind == OG_DIM_EXPR && dim->expr->kind != OG_E_INT && og_dim_symbol(op, dim) < 0;
}

static void og_array_rows(const og_op *op, const og_array *arrays, size_t n, og_value *rows, size_t *nextents) {
  for (size_t i = 0; i < n; ++i) {
    const og_array *a = &arrays[i];
    og_value *row = og_lines();
    og_line(row, "\"%s\"", a->name);
    og_buf dt = {0}, dims = {0};
    if (a->typevar >= 0)
      og_buf_printf(&dt, "OPSPEC_TYPEVAR(%d)", a->typevar);
    else
      og_dtype_enum(&dt, a->dtype);
    og_line(row, "%s", og_buf_str(&dt));
    if (a->role == OG_SCRATCH) {
      og_line(row, "%zu", a->ndims);
      og_line(row, "NULL");
    } else {
      og_line(row, "%zu", a->ndims);
      if (a->ndims == 0)
        og_buf_puts(&dims, "NULL");
      else
        og_buf_puts(&dims, "(const opspec_dim[]){");
      for (size_t d = 0; d < a->ndims; ++d) {
        if (d) og_buf_puts(&dims, ", ");
        og_dim_init(op, &a->dims[d], &dims, nextents);
      }
      if (a->ndims) og_buf_putc(&dims, '}');
      og_line(row, "%s", og_buf_str(&dims));
    }
    og_line(row, "OPSPEC_AT(%s)", a->name);
    og_list_push(rows, row);
    og_buf_free(&dt);
    og_buf_free(&dims);
  }
}

/* One {what, text, value, min} row of a size check. Literals were checked by the
 * generator, and a bare name cannot divide or overflow: only an attribute could be
 * negative, which matters only where a positive count is needed. */
static void og_count_name(const og_expr *n, void *ud) {
  (void)n;
  ++*(size_t *)ud;
}

/* A constant expression ("256 * 8") was computed and checked by the generator. */
static bool og_is_constant(const og_expr *e) {
  size_t names = 0;
  og_expr_visit_names(e, og_count_name, &names);
  return names == 0;
}

static void og_size_row(og_value *rows, const char *what, const og_expr *e, const char *value, const char *min) {
  if (!e || og_is_constant(e) || (e->kind == OG_E_NAME && strcmp(min, "1") != 0)) return;
  og_value *row = og_lines(), *text = og_spec_text(e);
  og_buf w = {0};
  og_escape_c_string(&w, what);
  og_line(row, "\"%s\"", og_buf_str(&w));
  og_line(row, "\"%s\"", og_value_as_str(text));
  og_line(row, "%s", value);
  og_line(row, "%s", min);
  og_list_push(rows, row);
  og_buf_free(&w);
  og_value_free(text);
}

static void og_size_row_expr(const og_op *op, og_value *rows, const char *what, const og_expr *e, const char *min) {
  if (!e) return;
  og_value *value = og_c_expr_checked(op, e);
  og_size_row(rows, what, e, og_value_as_str(value), min);
  og_value_free(value);
}

static void og_size_rows_launch(const og_op *op, og_value *rows, const char *what, const og_launch *l,
                                const char *min) {
  for (size_t d = 0; d < l->n; ++d) {
    og_buf label = {0};
    og_buf_printf(&label, l->n > 1 ? "%s %zu" : "%s", what, d);
    og_size_row_expr(op, rows, og_buf_str(&label), l->extents[d], min);
    og_buf_free(&label);
  }
}

/* A function of the handler as a record: {name, comment, computes (it takes `extents`
 * and sets values: `assigns` {target, value}), konst ("const " where it only reads the
 * args struct), reads (it reads the args struct at all), unused_extents, sizes (rows
 * of opspec_size_check, og_rows_record's lines), checks (og_wrap's lines of their
 * initializers) and scans (og_check_scan's records): the content checks}. */
static og_value *og_ffi_function(const char *name, const char *comment) {
  og_value *fn = og_value_map();
  og_map_set_str(fn, "name", name);
  og_map_set_str(fn, "comment", comment);
  og_map_set_bool(fn, "computes", false);
  og_map_set_str(fn, "konst", "const ");
  og_map_set_bool(fn, "reads", true);
  og_map_set_bool(fn, "unused_extents", false);
  og_map_set(fn, "assigns", og_value_list());
  og_map_set(fn, "sizes", og_value_list());
  og_map_set(fn, "checks", og_value_list());
  og_map_set(fn, "scans", og_value_list());
  return fn;
}

static void og_assign(og_value *assigns, const char *target, og_value *value) {
  og_value *a = og_value_map();
  og_map_set_str(a, "target", target);
  og_map_set(a, "value", value);
  og_list_push(assigns, a);
}

/* A function's head as og_wrap's lines: "static XLA_FFI_Error *opspec_OP_NAME(" and
 * its parameters, the call frame, the args struct and, where it computes, `extents`. */
static og_value *og_ffi_head(const og_op *op, const og_value *fn) {
  og_buf lead = {0}, args = {0};
  og_buf_printf(&lead, "static XLA_FFI_Error *opspec_%s_%s(", op->name, og_value_as_str(og_map_get(fn, "name")));
  og_buf_printf(&args, "%svoid *argp", og_value_as_str(og_map_get(fn, "konst")));
  const char *params[] = {"XLA_FFI_CallFrame *cf", og_buf_str(&args), "int64_t *extents"};
  og_value *lines =
      og_wrap(og_buf_str(&lead), params, og_value_as_bool(og_map_get(fn, "computes")) ? 3 : 2, ") {", false);
  og_buf_free(&lead);
  og_buf_free(&args);
  return lines;
}

/* A function of the call that computes values (`assigns`, of `extents[...]` or scratch
 * shapes) and then checks `rows`: `shapes` and `launch_sizes`. */
static og_value *og_ffi_computing_function(const char *name, const char *comment, const char *konst, og_value *assigns,
                                           og_value *rows, bool sets_extents) {
  og_value *fn = og_ffi_function(name, comment);
  /* A shape of constants alone reads no argument. */
  bool reads = og_list_len(rows) > 0;
  for (size_t i = 0; i < og_list_len(assigns); ++i) {
    const og_value *a = og_list_at(assigns, i);
    reads |= strstr(og_value_as_str(og_map_get(a, "target")), "args->") != NULL ||
             strstr(og_value_as_str(og_map_get(a, "value")), "args->") != NULL;
  }
  og_map_set_bool(fn, "computes", true);
  og_map_set_str(fn, "konst", konst);
  og_map_set_bool(fn, "reads", reads);
  og_map_set_bool(fn, "unused_extents", !sets_extents);
  og_map_set(fn, "assigns", assigns);
  og_map_set(fn, "sizes", og_rows_record(rows, 6));
  return fn;
}

/* `shapes`: the outputs' computed extents and the scratch shapes, checked together with
 * the content checks' bounds (which the same inputs determine); NULL when there is
 * nothing to compute or check. */
static og_value *og_ffi_shapes(const og_op *op) {
  og_value *assigns = og_value_list(), *rows = og_value_list();
  og_buf what = {0}, at = {0};
  size_t nextents = 0;
  for (size_t i = 0; i < op->noutputs; ++i)
    for (size_t d = 0; d < op->outputs[i].ndims; ++d) {
      const og_dim *dim = &op->outputs[i].dims[d];
      if (!og_dim_is_extent(op, dim)) continue;
      og_buf_clear(&at);
      og_buf_printf(&at, "extents[%zu]", nextents++);
      og_assign(assigns, og_buf_str(&at), og_c_expr_checked(op, dim->expr));
      og_buf_clear(&what);
      og_buf_printf(&what, "output '%s' dim %zu", op->outputs[i].name, d);
      og_size_row(rows, og_buf_str(&what), dim->expr, og_buf_str(&at), "0");
    }
  for (size_t i = 0; i < op->nscratch; ++i)
    for (size_t d = 0; d < op->scratch[i].ndims; ++d) {
      const og_dim *dim = &op->scratch[i].dims[d];
      og_buf_clear(&at);
      og_buf_printf(&at, "args->%s.shape[%zu]", op->scratch[i].name, d);
      og_assign(assigns, og_buf_str(&at), og_c_expr_checked(op, dim->expr));
      og_buf_clear(&what);
      og_buf_printf(&what, "scratch '%s' dim %zu", op->scratch[i].name, d);
      og_size_row(rows, og_buf_str(&what), dim->expr, og_buf_str(&at), "0");
    }
  for (size_t i = 0; i < op->ninputs; ++i) {
    og_buf_clear(&what);
    og_buf_printf(&what, "check 'min' of input '%s'", op->inputs[i].name);
    og_size_row_expr(op, rows, og_buf_str(&what), op->inputs[i].check.min, "-INT64_MAX");
    og_buf_clear(&what);
    og_buf_printf(&what, "check 'max' of input '%s'", op->inputs[i].name);
    og_size_row_expr(op, rows, og_buf_str(&what), op->inputs[i].check.max, "-INT64_MAX");
  }
  og_buf_free(&what);
  og_buf_free(&at);
  if (!og_list_len(assigns) && !og_list_len(rows)) {
    og_value_free(assigns);
    og_value_free(rows);
    return NULL;
  }
  return og_ffi_computing_function("shapes",
                                   "This call's output extents and scratch shapes, from the spec's expressions.", "",
                                   assigns, rows, nextents > 0);
}

/* `launch`: the portable launch's extents, computed and checked, for the CPU handler
 * that runs the kernel's loop. */
static og_value *og_ffi_launch_sizes(const og_op *op) {
  if (!op->launch.n) return NULL;
  og_value *assigns = og_value_list(), *rows = og_value_list();
  for (size_t d = 0; d < op->launch.n; ++d) {
    char at[32];
    snprintf(at, sizeof at, "extents[%zu]", d);
    og_assign(assigns, at, og_c_expr_checked(op, op->launch.extents[d]));
    og_buf label = {0};
    og_buf_printf(&label, op->launch.n > 1 ? "launch extent %zu" : "launch extent", d);
    og_size_row(rows, og_buf_str(&label), op->launch.extents[d], at, "0");
    og_buf_free(&label);
  }
  return og_ffi_computing_function("launch_sizes",
                                   "The portable launch's extents (which may read any array's size), for the loop.",
                                   "const ", assigns, rows, true);
}

/* `cuda`: the CUDA launch configuration's sizes, checked; NULL when nothing needs a
 * check at run time. */
static og_value *og_ffi_cuda_sizes(const og_op *op) {
  og_value *rows = og_value_list();
  og_size_rows_launch(op, rows, "threads_per_block", &op->threads, "1");
  static const char *const parts[] = {"launch extent", "threads_per_block", "grid", "block"};
  static const char *const mins[] = {"0", "1", "0", "1"};
  og_buf what = {0};
  for (size_t k = 0; k < op->ncuda; ++k) {
    const og_cuda_kernel *kern = &op->cuda[k];
    const og_launch *launches[] = {&kern->launch, &kern->threads, &kern->grid, &kern->block};
    for (size_t p = 0; p < 4; ++p) {
      og_buf_clear(&what);
      og_buf_printf(&what, "cuda kernel '%s' %s", kern->name, parts[p]);
      og_size_rows_launch(op, rows, og_buf_str(&what), launches[p], mins[p]);
    }
    og_buf_clear(&what);
    og_buf_printf(&what, "cuda kernel '%s' shared_mem", kern->name);
    og_size_row_expr(op, rows, og_buf_str(&what), kern->shared_mem, "0");
  }
  og_buf_free(&what);
  if (!og_list_len(rows)) {
    og_value_free(rows);
    return NULL;
  }
  og_value *fn =
      og_ffi_function("cuda_config", "The CUDA launch configuration: grids, blocks, threads, shared memory.");
  og_map_set(fn, "sizes", og_rows_record(rows, 6));
  return fn;
}

/* The scans of the inputs' `check:`s, the first failure reported: those the handler
 * runs before the kernel (`contents`), or those marked `in_kernel` (`kernel_checked`),
 * which it runs only after the kernel called opspec_reject(), for the message. */
static bool og_checked_by(const og_array *a, bool in_kernel) {
  return a->check.present && a->check.in_kernel == in_kernel;
}

/* One input's check as a designated initializer's fields (".has_min = true", ...), one
 * string each. */
static og_value *og_check_fields(const og_op *op, const og_array *a) {
  const og_expr *bounds[] = {a->check.min, a->check.max};
  og_value *fields = og_value_list();
  for (size_t b = 0; b < 2; ++b) {
    const char *key = b ? "max" : "min";
    if (!bounds[b]) continue;
    og_value *value = og_c_expr_checked(op, bounds[b]), *text = og_spec_text(bounds[b]);
    og_line(fields, ".has_%s = true", key);
    og_line(fields, ".%s = %s", key, og_value_as_str(value));
    og_line(fields, ".%s_text = \"%s\"", key, og_value_as_str(text));
    og_value_free(value);
    og_value_free(text);
  }
  if (a->check.sorted) og_line(fields, ".sorted = true");
  return fields;
}

/* A content check's scan: "if (!err) err = opspec_check_values(...);" as a record
 * {inline, call}: on one line where it fits, else the assignment on the next line,
 * `call` og_wrap's lines. */
static og_value *og_check_scan(const og_op *op, const og_array *a, size_t input, size_t check) {
  og_buf name = {0}, array = {0}, data = {0}, dtype = {0}, size = {0}, at = {0};
  og_buf_printf(&name, "\"%s\"", op->name);
  og_buf_printf(&array, "\"%s\"", a->name);
  og_buf_printf(&data, "args->%s.data", a->name);
  og_buf_printf(&dtype, "opspec_arg_dtype(cf, %zu)", input);
  og_buf_printf(&size, "args->%s.size", a->name);
  og_buf_printf(&at, "&checks[%zu]", check);
  const char *const items[] = {
      "cf",           og_buf_str(&name), og_buf_str(&array), og_buf_str(&data), og_buf_str(&dtype), og_buf_str(&size),
      og_buf_str(&at)};
  og_value *scan = og_value_map();
  bool fits = og_wrap_width("  if (!err) err = opspec_check_values(", items, 7, ");") <= OG_C_COLUMNS;
  og_map_set_bool(scan, "inline", fits);
  og_map_set(scan, "call",
             og_wrap(fits ? "  if (!err) err = opspec_check_values(" : "    err = opspec_check_values(", items, 7, ");",
                     false));
  og_buf_free(&name);
  og_buf_free(&array);
  og_buf_free(&data);
  og_buf_free(&dtype);
  og_buf_free(&size);
  og_buf_free(&at);
  return scan;
}

static og_value *og_ffi_check_fn(const og_op *op, bool in_kernel) {
  size_t nchecks = 0;
  for (size_t i = 0; i < op->ninputs; ++i) nchecks += og_checked_by(&op->inputs[i], in_kernel);
  if (!nchecks) return NULL;
  og_value *fn = in_kernel ? og_ffi_function("kernel_checked",
                                             "The inputs the kernel checks itself (in_kernel), scanned once it has "
                                             "called opspec_reject().")
                           : og_ffi_function("contents",
                                             "The inputs' `check:`s, while opspec.set_checks() is on (on GPU, scanned "
                                             "there).");
  og_value *checks = og_value_list(), *scans = og_value_list();
  for (size_t i = 0; i < op->ninputs; ++i) {
    const og_array *a = &op->inputs[i];
    if (!og_checked_by(a, in_kernel)) continue;
    og_value *fields = og_check_fields(op, a);
    og_buf close = {0};
    og_buf_printf(&close, "}, /* %s */", a->name);
    og_list_push(scans, og_check_scan(op, a, i, og_list_len(scans)));
    og_wrap_list(checks, "      {", fields, og_buf_str(&close), true);
    og_value_free(fields);
    og_buf_free(&close);
  }
  og_map_set(fn, "checks", checks);
  og_map_set(fn, "scans", scans);
  return fn;
}

/* A table the descriptor points at: {field, count} (".nFIELD = count, .FIELD = ..."). */
static og_value *og_desc_table(const char *field, size_t count) {
  og_value *t = og_value_map();
  og_map_set_str(t, "field", field);
  og_map_set_int(t, "count", (int64_t)count);
  return t;
}

/* The type variables' table: name, number of choices, the choices' dtypes. */
static void og_ffi_types(const og_op *op, og_value *tables, og_value *desc_tables) {
  if (!op->ntypes) return;
  og_value *rows = og_value_list();
  for (size_t t = 0; t < op->ntypes; ++t) {
    og_value *row = og_lines();
    og_buf choices = {0};
    for (size_t c = 0; c < op->types[t].nchoices; ++c) {
      og_buf_puts(&choices, c ? ", " : "(const int32_t[]){");
      og_dtype_enum(&choices, op->types[t].choices[c]);
    }
    og_buf_putc(&choices, '}');
    og_line(row, "\"%s\"", op->types[t].name);
    og_line(row, "%zu", op->types[t].nchoices);
    og_line(row, "%s", og_buf_str(&choices));
    og_list_push(rows, row);
    og_buf_free(&choices);
  }
  og_list_push(tables, og_table_record("opspec_typevar_desc", "types", "", rows));
  og_list_push(desc_tables, og_desc_table("types", op->ntypes));
}

/* The shape symbols' table: where each lives in the args struct. */
static void og_ffi_symbols(const og_op *op, og_value *tables, og_value *desc_tables) {
  if (!op->nsymbols) return;
  og_value *rows = og_value_list();
  for (size_t s = 0; s < op->nsymbols; ++s) {
    og_value *row = og_lines();
    og_line(row, "\"%s\"", op->symbols[s]);
    og_line(row, "OPSPEC_AT(%s)", op->symbols[s]);
    og_list_push(rows, row);
  }
  og_list_push(tables, og_table_record("opspec_symbol_desc", "symbols", "", rows));
  og_list_push(desc_tables, og_desc_table("symbols", op->nsymbols));
}

static void og_ffi_attrs(const og_op *op, og_value *tables, og_value *desc_tables) {
  if (!op->nattrs) return;
  /* XLA passes attributes sorted by name; the table is in that order. */
  const og_attr **sorted = og_xcalloc(op->nattrs, sizeof *sorted);
  for (size_t i = 0; i < op->nattrs; ++i) {
    size_t at = i;
    while (at > 0 && strcmp(sorted[at - 1]->name, op->attrs[i].name) > 0) {
      sorted[at] = sorted[at - 1];
      --at;
    }
    sorted[at] = &op->attrs[i];
  }
  og_value *rows = og_value_list();
  for (size_t i = 0; i < op->nattrs; ++i) {
    og_value *row = og_lines();
    og_buf dt = {0};
    og_dtype_enum(&dt, og_attr_types[sorted[i]->type].name);
    og_line(row, "\"%s\"", sorted[i]->name);
    og_line(row, "%s", og_buf_str(&dt));
    og_line(row, "OPSPEC_AT(%s)", sorted[i]->name);
    og_list_push(rows, row);
    og_buf_free(&dt);
  }
  free(sorted);
  og_list_push(tables, og_table_record("opspec_attr_desc", "attrs", "Sorted by name, as XLA passes attributes.", rows));
  og_list_push(desc_tables, og_desc_table("attrs", op->nattrs));
}

/* The spec's aliases as the descriptor's initializer, or "": the handler refuses a call
 * whose output shares memory with any other input (a raw ffi_call can alias what the
 * spec does not declare). */
static og_value *og_ffi_aliases(const og_op *op) {
  bool aliased = false;
  for (size_t i = 0; i < op->noutputs; ++i) aliased |= op->outputs[i].alias_of >= 0;
  og_buf aliases = {0};
  if (aliased) {
    og_buf_puts(&aliases, "(const int32_t[]){");
    for (size_t i = 0; i < op->noutputs; ++i) og_buf_printf(&aliases, "%s%d", i ? ", " : "", op->outputs[i].alias_of);
    og_buf_putc(&aliases, '}');
  }
  return og_value_str_take(og_buf_take(&aliases));
}

/* One statement `cost[c] = value;` as og_wrap's lines, formatted as clang-format does
 * for the shapes these take: on one line; else the value on the next line, 4 columns in;
 * else the value's outer call with its two arguments wrapped after the parenthesis.
 * `call` and `args` spell that call (args NULL where the value is no call). */
static void og_cost_statement(og_value *lines, int c, const char *value, const char *call, const char *const *args) {
  og_buf lead = {0};
  og_buf_printf(&lead, "  cost[%d] = ", c);
  if (strlen(og_buf_str(&lead)) + strlen(value) + 1 <= OG_C_COLUMNS || !args) {
    og_wrap_into(lines, og_buf_str(&lead), &value, 1, ";", false);
  } else if (strlen("      ") + strlen(value) + 1 <= OG_C_COLUMNS) {
    og_buf first = {0}; /* "  cost[c] =" alone, then the value */
    og_buf_printf(&first, "  cost[%d] =", c);
    og_wrap_into(lines, og_buf_str(&first), NULL, 0, "", false);
    og_wrap_into(lines, "      ", &value, 1, ";", false);
    og_buf_free(&first);
  } else {
    og_buf_printf(&lead, "%s(", call);
    og_wrap_into(lines, og_buf_str(&lead), args, 2, ");", false);
  }
  og_buf_free(&lead);
}

/* The checked C of `e`, and where it is a two-operand call (an operator or min, max,
 * cdiv), that call's name and its operands' C. */
static char *og_cost_c(const og_op *op, const og_expr *e, char **call, char *args[2]) {
  og_value *whole = og_c_expr_checked(op, e);
  char *text = og_xstrdup(og_value_as_str(whole));
  og_value_free(whole);
  *call = NULL;
  args[0] = args[1] = NULL;
  const char *paren = strchr(text, '(');
  if ((e->kind == OG_E_BIN || e->kind == OG_E_CALL) && paren && text[strlen(text) - 1] == ')') {
    *call = og_xstrndup(text, (size_t)(paren - text));
    const og_expr *operands[2] = {e->a, e->b};
    for (int k = 0; k < 2; ++k) {
      og_value *v = og_c_expr_checked(op, operands[k]);
      args[k] = og_xstrdup(og_value_as_str(v));
      og_value_free(v);
    }
  }
  return text;
}

/* Formula `e` into cost[c] as og_wrap's lines, appended to `lines`: one statement where
 * it fits the columns, else its top-level sum a term a statement (the first assigned,
 * the rest added with opspec_safe_add), as a reader would split it: a nest of checked
 * calls does not wrap readably. */
static void og_ffi_cost_lines(const og_op *op, int c, const og_expr *e, og_value *lines) {
  char *call, *args[2];
  char *text = og_cost_c(op, e, &call, args);
  size_t n = 0;
  const og_expr *terms[64];
  if (strlen(text) + strlen("  cost[0] = ;") > OG_C_COLUMNS) {
    /* ((a + b) + c) + d: the right operands from the last, then the leftmost. */
    const og_expr *at = e;
    while (at->kind == OG_E_BIN && at->op == '+' && n < 63) {
      terms[n++] = at->b;
      at = at->a;
    }
    terms[n++] = at;
  }
  if (n < 2) {
    og_cost_statement(lines, c, text, call, (const char *const *)args);
  } else {
    for (size_t k = n; k-- > 0;) {
      char *tcall, *targs[2];
      char *term = og_cost_c(op, terms[k], &tcall, targs);
      if (k + 1 == n) {
        og_cost_statement(lines, c, term, tcall, (const char *const *)targs);
      } else {
        og_buf sum = {0}, acc = {0};
        og_buf_printf(&acc, "cost[%d]", c);
        og_buf_printf(&sum, "opspec_safe_add(%s, %s)", og_buf_str(&acc), term);
        const char *sum_args[2] = {og_buf_str(&acc), term};
        og_cost_statement(lines, c, og_buf_str(&sum), "opspec_safe_add", sum_args);
        og_buf_free(&sum);
        og_buf_free(&acc);
      }
      free(term);
      free(tcall);
      free(targs[0]);
      free(targs[1]);
    }
  }
  free(text);
  free(call);
  free(args[0]);
  free(args[1]);
}

/* The spec's `bytes:` and `flops:` as C over a call's args (templates/op_ffi.c.tmpl,
 * `cost`): og_wrap's lines of the statements per formula given, and the type variables they name
 * ({name, index}), each an element size there. NULL lists where the spec gives neither. */
static void og_ffi_cost(const og_op *op, og_value *v) {
  const og_expr *exprs[] = {op->bytes, op->flops};
  og_value *costs = og_value_list(), *types = og_value_list();
  for (int c = 0; c < 2; ++c)
    if (exprs[c]) og_ffi_cost_lines(op, c, exprs[c], costs);
  for (size_t t = 0; t < op->ntypes; ++t) {
    if (!og_expr_names(exprs[0], op->types[t].name) && !og_expr_names(exprs[1], op->types[t].name)) continue;
    og_value *type = og_value_map();
    og_map_set_str(type, "name", op->types[t].name);
    og_map_set_int(type, "index", (int64_t)t);
    og_list_push(types, type);
  }
  og_map_set_bool(v, "cost_types_used", og_list_len(types) > 0);
  og_map_set(v, "cost", costs);
  og_map_set(v, "cost_types", types);
}

void og_ctx_ffi(const og_op *op, const og_op_plan *plan, og_value *v) {
  og_value *tables = og_value_list();
  size_t nextents = 0;
  const og_array *lists[] = {op->inputs, op->outputs, op->scratch};
  size_t counts[] = {op->ninputs, op->noutputs, op->nscratch};
  static const char *const names[] = {"inputs", "outputs", "scratch"};
  og_value *desc_arrays = og_value_list(), *desc_tables = og_value_list();
  for (size_t l = 0; l < 3; ++l) {
    if (!counts[l]) continue;
    og_value *rows = og_value_list();
    og_array_rows(op, lists[l], counts[l], rows, &nextents);
    og_list_push(tables, og_table_record("opspec_array_desc", names[l], "", rows));
    og_list_push(desc_arrays, og_desc_table(names[l], counts[l]));
  }
  og_map_set(v, "aliases", og_ffi_aliases(op));
  og_ffi_types(op, tables, desc_tables);
  og_ffi_symbols(op, tables, desc_tables);
  og_ffi_attrs(op, tables, desc_tables);
  og_map_set(v, "ffi_tables", tables);
  og_map_set(v, "desc_arrays", desc_arrays);
  og_map_set(v, "desc_tables", desc_tables);

  static const char *const fields[] = {"shapes", "launch", "cuda", "contents", "kernel_checked"};
  og_value *made[] = {og_ffi_shapes(op), og_ffi_launch_sizes(op), og_ffi_cuda_sizes(op), og_ffi_check_fn(op, false),
                      og_ffi_check_fn(op, true)};
  og_value *functions = og_value_list(), *desc_functions = og_value_list();
  for (size_t f = 0; f < 5; ++f) {
    if (!made[f]) continue;
    og_value *fn = og_value_map();
    og_map_set_str(fn, "field", fields[f]);
    og_map_set_str(fn, "function", og_value_as_str(og_map_get(made[f], "name")));
    og_list_push(desc_functions, fn);
    og_map_set(made[f], "head", og_ffi_head(op, made[f]));
    og_list_push(functions, made[f]);
  }
  og_map_set(v, "ffi_functions", functions);
  og_map_set(v, "desc_functions", desc_functions);
  og_map_set_bool(v, "kernel_checked", made[4] != NULL);
  og_map_set_bool(v, "has_launch", op->launch.n > 0);
  og_map_set_int(v, "launch_ndims", (int64_t)op->launch.n);
  og_map_set_bool(v, "cuda_batch_grid", plan->cuda_batch_grid);
  og_map_set_bool(v, "widens_bfloat16", plan->widens_bfloat16);
  /* `require:`: a function of its own (templates/op_ffi.c.tmpl) */
  og_map_set(v, "require", og_ctx_require_c(op));
  og_ffi_cost(op, v);
  og_value *require = og_ffi_function("require", "");
  og_map_set(v, "require_head", og_ffi_head(op, require));
  og_value_free(require);
}
