/* Pieces of generated text that every renderer needs: lists of lines, dtypes and
 * expressions spelt in C. */
#include "render/c_text.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "util/escape.h"

og_value *og_lines(void) { return og_value_list(); }

void og_line(og_value *lines, const char *fmt, ...) {
  og_buf b = {0};
  va_list ap;
  va_start(ap, fmt);
  og_buf_vprintf(&b, fmt, ap);
  va_end(ap);
  og_list_push(lines, og_value_str_take(og_buf_take(&b)));
}

size_t og_wrap_width(const char *lead, const char *const *items, size_t n, const char *close) {
  size_t width = strlen(lead) + strlen(close);
  for (size_t i = 0; i < n; ++i) width += strlen(items[i]) + (i ? 2 : 0);
  return width;
}

/* og_wrap_into with the items separated by `sep` (',' or ';') and a space. */
static void og_wrap_sep_into(og_value *lines, const char *lead, const char *const *items, size_t n, const char *close,
                             bool one_per_line, char sep) {
  const char mid[] = {sep, ' ', '\0'}, end_sep[] = {sep, '\0'};
  size_t indent = strlen(lead);
  bool wrapped = og_wrap_width(lead, items, n, close) > OG_C_COLUMNS;
  og_value *line = NULL, *line_items = NULL, *prev = NULL;
  og_buf spaces = {0};
  og_buf_printf(&spaces, "%*s", (int)indent, "");
  size_t col = indent;
  for (size_t i = 0; i < n; ++i) {
    /* The item's end: its "," or, last, the closing text. */
    size_t end = strlen(items[i]) + (i + 1 < n ? 1 : strlen(close));
    bool fresh = !line || (wrapped && (one_per_line || col + 2 + end > OG_C_COLUMNS));
    if (fresh) {
      if (prev) og_map_set_str(prev, "sep", end_sep);
      line = og_value_map();
      line_items = og_value_list();
      og_map_set_str(line, "lead", i ? og_buf_str(&spaces) : lead);
      og_map_set(line, "items", line_items);
      og_map_set_str(line, "close", "");
      og_list_push(lines, line);
      col = indent + strlen(items[i]);
    } else {
      col += 2 + strlen(items[i]);
    }
    og_value *item = og_value_map();
    og_map_set_str(item, "text", items[i]);
    og_map_set_str(item, "sep", i + 1 < n ? mid : "");
    og_list_push(line_items, item);
    prev = item;
  }
  if (!line) {
    line = og_value_map();
    og_map_set_str(line, "lead", lead);
    og_map_set(line, "items", og_value_list());
    og_list_push(lines, line);
  }
  og_map_set_str(line, "close", close);
  og_buf_free(&spaces);
}

void og_wrap_into(og_value *lines, const char *lead, const char *const *items, size_t n, const char *close,
                  bool one_per_line) {
  og_wrap_sep_into(lines, lead, items, n, close, one_per_line, ',');
}

/* Whether each item, with its "," or, last, `close`, fits on a line from column `at`. */
static bool og_items_fit(size_t at, const char *const *items, size_t n, const char *close) {
  for (size_t i = 0; i < n; ++i)
    if (at + strlen(items[i]) + (i + 1 < n ? 1 : strlen(close)) > OG_C_COLUMNS) return false;
  return true;
}

og_value *og_wrap_broken(const char *indent, const char *head, const char *const *items, size_t n, const char *close,
                         size_t slack) {
  og_buf lead = {0}, inner = {0};
  og_buf_printf(&lead, "%s%s", indent, head);
  og_buf_printf(&inner, "%s    ", indent);
  /* Both layouts, as og_wrap packs them; the broken one's first line is `head` alone. */
  og_value *aligned = og_wrap(og_buf_str(&lead), items, n, close, false);
  og_value *broken = og_wrap(og_buf_str(&lead), NULL, 0, "", false);
  og_wrap_into(broken, og_buf_str(&inner), items, n, close, false);
  bool keep_aligned = og_wrap_width(og_buf_str(&lead), items, n, close) <= OG_C_COLUMNS ||
                      (og_items_fit(lead.len, items, n, close) && og_list_len(aligned) < og_list_len(broken) + slack);
  og_value_free(keep_aligned ? broken : aligned);
  og_buf_free(&lead);
  og_buf_free(&inner);
  return keep_aligned ? aligned : broken;
}

og_value *og_for_head(const char *indent, const char *index, const char *begin, const char *end, const char *step,
                      bool opens_block) {
  og_buf lead = {0}, init = {0}, test = {0};
  og_buf_printf(&lead, "%sfor (", indent);
  og_buf_printf(&init, "int64_t %s = %s", index, begin);
  og_buf_printf(&test, "%s < %s", index, end);
  const char *items[] = {og_buf_str(&init), og_buf_str(&test), step};
  og_value *lines = og_value_list();
  og_wrap_sep_into(lines, og_buf_str(&lead), items, 3, opens_block ? ") {" : ")", false, ';');
  og_buf_free(&lead);
  og_buf_free(&init);
  og_buf_free(&test);
  return lines;
}

og_value *og_wrap(const char *lead, const char *const *items, size_t n, const char *close, bool one_per_line) {
  og_value *lines = og_value_list();
  og_wrap_into(lines, lead, items, n, close, one_per_line);
  return lines;
}

void og_wrap_list(og_value *lines, const char *lead, const og_value *items, const char *close, bool one_per_line) {
  size_t n = og_list_len(items);
  const char **texts = og_xcalloc(n ? n : 1, sizeof *texts);
  for (size_t i = 0; i < n; ++i) texts[i] = og_value_as_str(og_list_at(items, i));
  og_wrap_into(lines, lead, texts, n, close, one_per_line);
  free(texts);
}

const char *og_dtype_ctype(const char *dtype) {
  og_dtype dt = og_dtype_find(dtype);
  return dt == OG_DT_NONE ? NULL : og_dtypes[dt].ctype;
}

void og_dtype_enum(og_buf *out, const char *dtype) { og_buf_printf(out, "OPSPEC_DT_%s", dtype); }

const char *og_array_ctype(const og_array *a) { return a->typevar >= 0 ? a->dtype : og_dtype_ctype(a->dtype); }

og_value *og_c_expr(const og_expr *e) {
  og_buf b = {0};
  og_expr_render_c(e, &b, NULL, NULL);
  return og_value_str_take(og_buf_take(&b));
}

/* In handlers, symbols, attributes and sizes live in the args struct; a type variable
 * (only `bytes:` and `flops:` name one: its element size) is a local of the same name. */
static void og_spell_args(og_buf *out, const char *name, void *ud) {
  const og_op *op = ud;
  size_t len = strlen(name);
  for (size_t t = 0; op && t < op->ntypes; ++t)
    if (strcmp(op->types[t].name, name) == 0) {
      og_buf_puts(out, name);
      return;
    }
  /* NAME_size is the size of array NAME: args->NAME.size. */
  if (len > 5 && strcmp(name + len - 5, "_size") == 0) {
    char *base = og_xstrndup(name, len - 5);
    bool array = op && og_op_array(op, base);
    if (array) og_buf_printf(out, "args->%s.size", base);
    free(base);
    if (array) return;
  }
  og_buf_printf(out, "args->%s", name);
}

og_value *og_c_expr_checked(const og_op *op, const og_expr *e) {
  og_buf b = {0};
  og_expr_render_c_checked(e, &b, og_spell_args, (void *)op);
  return og_value_str_take(og_buf_take(&b));
}

og_value *og_spec_text(const og_expr *e) {
  og_buf text = {0}, out = {0};
  og_expr_render_spec(e, &text);
  og_escape_c_string(&out, og_buf_str(&text));
  og_buf_free(&text);
  return og_value_str_take(og_buf_take(&out));
}

og_value *og_escaped(void (*escape)(og_buf *, const char *), const char *text) {
  og_buf b = {0};
  escape(&b, text);
  return og_value_str_take(og_buf_take(&b));
}
