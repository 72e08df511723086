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

/* In handlers, symbols, attributes and sizes live in the args struct. */
static void og_spell_args(og_buf *out, const char *name, void *ud) {
  const og_op *op = ud;
  size_t len = strlen(name);
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
