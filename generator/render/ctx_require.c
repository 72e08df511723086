#include "render/ctx_require.h"

#include <stdlib.h>
#include <string.h>

#include "render/c_text.h"
#include "util/escape.h"

/* The names a condition reads, once each, in order of appearance. */
typedef struct og_names_seen {
  const char *names[64];
  size_t n;
} og_names_seen;

static void og_note_name(const og_expr *n, void *ud) {
  og_names_seen *seen = ud;
  for (size_t i = 0; i < seen->n; ++i)
    if (strcmp(seen->names[i], n->name) == 0) return;
  if (seen->n < sizeof seen->names / sizeof *seen->names) seen->names[seen->n++] = n->name;
}

static og_names_seen og_require_names(const og_require *r) {
  og_names_seen seen = {0};
  og_expr_visit_names(r->lhs.expr, og_note_name, &seen);
  og_expr_visit_names(r->rhs.expr, og_note_name, &seen);
  return seen;
}

/* A side in C; an integer expression's checked value is OPSPEC_SIZE_INVALID where it
 * divides by zero or overflows, which `valid` then refuses, so such a call never meets
 * the condition. */
static void og_side_c(og_buf *out, og_buf *valid, const og_op *op, const og_require_side *side) {
  if (!side->expr) {
    og_buf_puts(out, side->number);
    return;
  }
  og_value *c = og_c_expr_checked(op, side->expr);
  og_buf_printf(out, "(%s)", og_value_as_str(c));
  if (!og_expr_is_atom(side->expr)) og_buf_printf(valid, "(%s) != OPSPEC_SIZE_INVALID && ", og_value_as_str(c));
  og_value_free(c);
}

/* The condition as written, inside the message's format: a C string's body, with
 * each '%' doubled. */
static void og_require_text_format(og_buf *out, const char *text) {
  og_buf escaped = {0};
  og_escape_c_string(&escaped, text);
  for (const char *c = og_buf_str(&escaped); *c; ++c) {
    if (*c == '%') og_buf_putc(out, '%');
    og_buf_putc(out, *c);
  }
  og_buf_free(&escaped);
}

/* The error a failed condition returns, as og_wrap's lines of the call: the message
 * names the condition as written and the values of the names it reads. */
static og_value *og_require_call(const og_op *op, const og_require *r) {
  og_names_seen seen = og_require_names(r);
  og_buf format = {0}, op_name = {0}, values[64] = {{0}};
  const char *items[3 + 64 + 1];
  size_t n = 0;
  og_buf_printf(&op_name, "\"%s\"", op->name);
  og_buf_puts(&format, "\"require '");
  og_require_text_format(&format, r->text);
  og_buf_puts(&format, "' does not hold: ");
  for (size_t k = 0; k < seen.n; ++k) {
    const og_attr *attr = og_op_attr(op, seen.names[k]);
    bool real = attr && attr->has_type && !og_attr_types[attr->type].integer;
    og_expr name = {.kind = OG_E_NAME, .name = (char *)seen.names[k]};
    og_value *spelt = og_c_expr_checked(op, &name);
    og_buf_printf(&format, "%s%s = %s", k ? ", " : "", seen.names[k], real ? "%g" : "%lld");
    og_buf_printf(&values[k], "(%s)%s", real ? "double" : "long long", og_value_as_str(spelt));
    og_value_free(spelt);
  }
  og_buf_putc(&format, '"');
  items[n++] = "cf";
  items[n++] = "XLA_FFI_Error_Code_INVALID_ARGUMENT";
  items[n++] = og_buf_str(&op_name);
  items[n++] = og_buf_str(&format);
  for (size_t k = 0; k < seen.n; ++k) items[n++] = og_buf_str(&values[k]);
  og_value *lines = og_wrap("    return opspec_error(", items, n, ");", false);
  og_buf_free(&format);
  og_buf_free(&op_name);
  for (size_t k = 0; k < seen.n; ++k) og_buf_free(&values[k]);
  return lines;
}

og_value *og_ctx_require_c(const og_op *op) {
  og_value *list = og_value_list();
  for (size_t i = 0; i < op->nrequire; ++i) {
    const og_require *r = &op->require[i];
    og_value *item = og_value_map();
    og_buf test = {0}, compare = {0};
    og_side_c(&compare, &test, op, &r->lhs);
    og_buf_printf(&compare, " %s ", r->cmp);
    og_side_c(&compare, &test, op, &r->rhs);
    og_buf_puts(&test, og_buf_str(&compare));
    og_buf_free(&compare);
    og_map_set(item, "test", og_value_str_take(og_buf_take(&test)));
    og_map_set(item, "call", og_require_call(op, r));
    og_list_push(list, item);
  }
  return list;
}

static void og_spell_scope(og_buf *out, const char *name, void *ud) {
  (void)ud;
  og_buf_printf(out, "s[\"%s\"]", name);
}

static void og_side_py(og_buf *out, const og_require_side *side) {
  if (!side->expr) {
    og_buf_puts(out, side->number);
    return;
  }
  og_buf_putc(out, '(');
  og_expr_render_py(side->expr, out, og_spell_scope, NULL);
  og_buf_putc(out, ')');
}

og_value *og_ctx_require_py(const og_op *op) {
  og_value *list = og_value_list();
  for (size_t i = 0; i < op->nrequire; ++i) {
    const og_require *r = &op->require[i];
    og_value *item = og_value_map();
    og_buf test = {0}, text = {0}, names = {0};
    og_side_py(&test, &r->lhs);
    og_buf_printf(&test, " %s ", r->cmp);
    og_side_py(&test, &r->rhs);
    og_escape_py_string(&text, r->text);
    og_names_seen seen = og_require_names(r);
    og_buf_putc(&names, '(');
    for (size_t k = 0; k < seen.n; ++k) og_buf_printf(&names, "%s\"%s\"", k ? ", " : "", seen.names[k]);
    og_buf_puts(&names, seen.n == 1 ? ",)" : ")");
    og_map_set(item, "test", og_value_str_take(og_buf_take(&test)));
    og_map_set(item, "text", og_value_str_take(og_buf_take(&text)));
    og_map_set(item, "names", og_value_str_take(og_buf_take(&names)));
    og_list_push(list, item);
  }
  return list;
}
