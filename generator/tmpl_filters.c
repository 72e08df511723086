/* Template filters: `{{ x | name(args) }}`.
 *
 * Each filter gets its evaluated input and arguments and returns a new value; type
 * errors are reported at the filter's name. The parser checks argument counts against
 * the table, so a filter function can index args up to max_args - 1 once it has checked
 * nargs against its optional ones.
 */
#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opspec/dtypes.h"
#include "tmpl_internal.h"

const char *og_tmpl_kind_name(og_value_kind k) {
  switch (k) {
    case OG_V_NULL: return "null";
    case OG_V_BOOL: return "bool";
    case OG_V_INT: return "int";
    case OG_V_STR: return "string";
    case OG_V_LIST: return "list";
    case OG_V_MAP: return "map";
  }
  return "value";
}

bool og_tmpl_scalar_str(const og_value *v, og_buf *out) {
  switch (og_value_kind_of(v)) {
    case OG_V_NULL: return true;
    case OG_V_BOOL: og_buf_puts(out, og_value_as_bool(v) ? "true" : "false"); return true;
    case OG_V_INT: og_buf_printf(out, "%" PRId64, og_value_as_int(v)); return true;
    case OG_V_STR: og_buf_puts(out, og_value_as_str(v)); return true;
    case OG_V_LIST:
    case OG_V_MAP: return false;
  }
  return false;
}

/* The text of `v` (input or argument) for filters that work on strings; scalars are
 * converted as {{ }} would print them. Returns false after reporting. */
static bool og_tmpl_text_of(const og_tmpl_fcall *c, const og_value *v, const char *what,
                            og_buf *out) {
  if (og_tmpl_scalar_str(v, out)) return true;
  og_diag_error(c->d, c->loc, "filter '%s': %s must be a string, got %s", c->filter->name,
                what, og_tmpl_kind_name(og_value_kind_of(v)));
  return false;
}

/* Runs a string -> string transformation on the input. */
static og_value *og_tmpl_map_text(const og_tmpl_fcall *c, void (*fn)(const char *s, og_buf *out)) {
  og_buf in = {0}, out = {0};
  if (!og_tmpl_text_of(c, c->in, "input", &in)) return NULL;
  fn(og_buf_str(&in), &out);
  og_buf_free(&in);
  return og_value_str_take(og_buf_take(&out));
}

static void og_tmpl_upper_fn(const char *s, og_buf *out) {
  for (; *s; ++s) og_buf_putc(out, (char)toupper((unsigned char)*s));
}
static og_value *og_tmpl_f_upper(const og_tmpl_fcall *c) { return og_tmpl_map_text(c, og_tmpl_upper_fn); }

static void og_tmpl_lower_fn(const char *s, og_buf *out) {
  for (; *s; ++s) og_buf_putc(out, (char)tolower((unsigned char)*s));
}
static og_value *og_tmpl_f_lower(const og_tmpl_fcall *c) { return og_tmpl_map_text(c, og_tmpl_lower_fn); }

/* C string literal body. Octal escapes are always three digits so a following digit
 * cannot extend them; "??" is broken up because -std=c11 enables trigraphs. */
static void og_tmpl_cstring_fn(const char *s, og_buf *out) {
  for (const char *p = s; *p; ++p) {
    unsigned char ch = (unsigned char)*p;
    if (ch == '\\') og_buf_puts(out, "\\\\");
    else if (ch == '"') og_buf_puts(out, "\\\"");
    else if (ch == '\n') og_buf_puts(out, "\\n");
    else if (ch == '?' && p > s && p[-1] == '?') og_buf_puts(out, "\\?");
    else if (ch < 0x20 || ch >= 0x7f) og_buf_printf(out, "\\%03o", ch);
    else og_buf_putc(out, (char)ch);
  }
}
static og_value *og_tmpl_f_cstring(const og_tmpl_fcall *c) { return og_tmpl_map_text(c, og_tmpl_cstring_fn); }

/* Python str literal body, valid inside '...' or "...". Bytes >= 0x80 pass through:
 * Python sources are UTF-8, and an escape would name a code point, not a byte. */
static void og_tmpl_pystring_fn(const char *s, og_buf *out) {
  for (; *s; ++s) {
    unsigned char ch = (unsigned char)*s;
    if (ch == '\\') og_buf_puts(out, "\\\\");
    else if (ch == '"') og_buf_puts(out, "\\\"");
    else if (ch == '\'') og_buf_puts(out, "\\'");
    else if (ch == '\n') og_buf_puts(out, "\\n");
    else if (ch < 0x20 || ch == 0x7f) og_buf_printf(out, "\\x%02x", ch);
    else og_buf_putc(out, (char)ch);
  }
}
static og_value *og_tmpl_f_pystring(const og_tmpl_fcall *c) { return og_tmpl_map_text(c, og_tmpl_pystring_fn); }

static og_value *og_tmpl_f_join(const og_tmpl_fcall *c) {
  if (og_value_kind_of(c->in) != OG_V_LIST) {
    og_diag_error(c->d, c->loc, "filter 'join': input must be a list, got %s",
                  og_tmpl_kind_name(og_value_kind_of(c->in)));
    return NULL;
  }
  og_buf sep = {0}, out = {0};
  if (c->nargs > 0 && !og_tmpl_text_of(c, c->args[0], "separator", &sep)) return NULL;
  for (size_t i = 0; i < og_list_len(c->in); ++i) {
    if (i) og_buf_puts(&out, og_buf_str(&sep));
    if (!og_tmpl_text_of(c, og_list_at(c->in, i), "each item", &out)) {
      og_buf_free(&sep);
      og_buf_free(&out);
      return NULL;
    }
  }
  og_buf_free(&sep);
  return og_value_str_take(og_buf_take(&out));
}

static og_value *og_tmpl_f_length(const og_tmpl_fcall *c) {
  switch (og_value_kind_of(c->in)) {
    case OG_V_LIST: return og_value_int((int64_t)og_list_len(c->in));
    case OG_V_MAP: return og_value_int((int64_t)og_map_len(c->in));
    case OG_V_STR: return og_value_int((int64_t)strlen(og_value_as_str(c->in)));
    default:
      og_diag_error(c->d, c->loc, "filter 'length': input must be a list, map or string, got %s",
                    og_tmpl_kind_name(og_value_kind_of(c->in)));
      return NULL;
  }
}

/* Only undefined is replaced (as in Jinja): a null or empty value is kept. */
static og_value *og_tmpl_f_default(const og_tmpl_fcall *c) {
  if (c->in) return og_value_copy(c->in);
  return c->nargs ? og_value_copy(c->args[0]) : og_value_str("");
}

/* Jinja's indent(width): every line but the first gets `width` spaces, except empty
 * lines (a trailing newline therefore adds no indentation). */
static og_value *og_tmpl_f_indent(const og_tmpl_fcall *c) {
  int64_t width = 4;
  if (c->nargs > 0) {
    if (og_value_kind_of(c->args[0]) != OG_V_INT || og_value_as_int(c->args[0]) < 0) {
      og_diag_error(c->d, c->loc, "filter 'indent': width must be a non-negative int");
      return NULL;
    }
    width = og_value_as_int(c->args[0]);
  }
  og_buf in = {0}, out = {0};
  if (!og_tmpl_text_of(c, c->in, "input", &in)) return NULL;
  for (const char *p = og_buf_str(&in); *p; ++p) {
    og_buf_putc(&out, *p);
    if (*p == '\n' && p[1] && p[1] != '\n')
      for (int64_t i = 0; i < width; ++i) og_buf_putc(&out, ' ');
  }
  og_buf_free(&in);
  return og_value_str_take(og_buf_take(&out));
}

static og_value *og_tmpl_f_replace(const og_tmpl_fcall *c) {
  og_buf in = {0}, from = {0}, to = {0}, out = {0};
  og_value *res = NULL;
  if (!og_tmpl_text_of(c, c->in, "input", &in) ||
      !og_tmpl_text_of(c, c->args[0], "first argument", &from) ||
      !og_tmpl_text_of(c, c->args[1], "second argument", &to))
    goto done;
  if (from.len == 0) {
    og_diag_error(c->d, c->loc, "filter 'replace': the string to replace is empty");
    goto done;
  }
  const char *p = og_buf_str(&in), *hit;
  while ((hit = strstr(p, from.data))) {
    og_buf_append(&out, p, (size_t)(hit - p));
    og_buf_puts(&out, og_buf_str(&to));
    p = hit + from.len;
  }
  og_buf_puts(&out, p);
  res = og_value_str_take(og_buf_take(&out));
done:
  og_buf_free(&in);
  og_buf_free(&from);
  og_buf_free(&to);
  og_buf_free(&out);
  return res;
}

/* ---- dtypes: one row per OPSPEC_DTYPES entry ------------------------------------- */

typedef struct og_tmpl_dtype {
  const char *name, *ctype, *cutype;
  int xla;
  const char *np;
} og_tmpl_dtype;

static const og_tmpl_dtype og_tmpl_dtypes[] = {
#define OG_TMPL_DTYPE_ROW(name, ctype, cutype, xla, np) {#name, #ctype, #cutype, xla, np},
    OPSPEC_DTYPES(OG_TMPL_DTYPE_ROW)
#undef OG_TMPL_DTYPE_ROW
};

static const og_tmpl_dtype *og_tmpl_dtype_of(const og_tmpl_fcall *c) {
  const char *name = og_value_as_str(c->in);
  if (!name) {
    og_diag_error(c->d, c->loc, "filter '%s': input must be a dtype name, got %s",
                  c->filter->name, og_tmpl_kind_name(og_value_kind_of(c->in)));
    return NULL;
  }
  for (size_t i = 0; i < sizeof og_tmpl_dtypes / sizeof *og_tmpl_dtypes; ++i)
    if (strcmp(og_tmpl_dtypes[i].name, name) == 0) return &og_tmpl_dtypes[i];
  og_diag_error(c->d, c->loc, "filter '%s': unknown dtype '%s'", c->filter->name, name);
  return NULL;
}

static og_value *og_tmpl_f_ctype(const og_tmpl_fcall *c) {
  const og_tmpl_dtype *t = og_tmpl_dtype_of(c);
  return t ? og_value_str(t->ctype) : NULL;
}
static og_value *og_tmpl_f_cutype(const og_tmpl_fcall *c) {
  const og_tmpl_dtype *t = og_tmpl_dtype_of(c);
  return t ? og_value_str(t->cutype) : NULL;
}
static og_value *og_tmpl_f_xla_dtype(const og_tmpl_fcall *c) {
  const og_tmpl_dtype *t = og_tmpl_dtype_of(c);
  return t ? og_value_int(t->xla) : NULL;
}
static og_value *og_tmpl_f_np_dtype(const og_tmpl_fcall *c) {
  const og_tmpl_dtype *t = og_tmpl_dtype_of(c);
  return t ? og_value_str(t->np) : NULL;
}

static const og_tmpl_filter og_tmpl_filters[] = {
    {"upper", 0, 0, false, og_tmpl_f_upper},
    {"lower", 0, 0, false, og_tmpl_f_lower},
    {"join", 0, 1, false, og_tmpl_f_join},
    {"length", 0, 0, false, og_tmpl_f_length},
    {"default", 0, 1, true, og_tmpl_f_default},
    {"indent", 0, 1, false, og_tmpl_f_indent},
    {"ctype", 0, 0, false, og_tmpl_f_ctype},
    {"cutype", 0, 0, false, og_tmpl_f_cutype},
    {"xla_dtype", 0, 0, false, og_tmpl_f_xla_dtype},
    {"np_dtype", 0, 0, false, og_tmpl_f_np_dtype},
    {"cstring", 0, 0, false, og_tmpl_f_cstring},
    {"pystring", 0, 0, false, og_tmpl_f_pystring},
    {"replace", 2, 2, false, og_tmpl_f_replace},
};

const og_tmpl_filter *og_tmpl_filter_find(const char *name) {
  for (size_t i = 0; i < sizeof og_tmpl_filters / sizeof *og_tmpl_filters; ++i)
    if (strcmp(og_tmpl_filters[i].name, name) == 0) return &og_tmpl_filters[i];
  return NULL;
}
