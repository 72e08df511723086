/* Loading `attrs:`: the static attributes and their defaults (load/loaders.h). */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "load/loaders.h"
#include "model/dtype.h"

/* `v` as Python's repr writes a float: the fewest digits that read back as `v`, positional
 * for exponents from -4 to 15 and `1e-06` outside, always a float literal ("1.0"). So
 * `default: 1e-6` is shown as 1e-06 in help(), not 9.9999999999999995e-07. */
static char *og_float_repr(double v) {
  char digits[40];
  int p = 1;
  for (; p < 17; ++p) {
    snprintf(digits, sizeof digits, "%.*e", p - 1, v);
    if (strtod(digits, NULL) == v) break;
  }
  snprintf(digits, sizeof digits, "%.*e", p - 1, v);
  int exp = atoi(strchr(digits, 'e') + 1);
  og_buf b = {0};
  if (exp >= -4 && exp < 16)
    og_buf_printf(&b, "%.*f", p - 1 - exp > 0 ? p - 1 - exp : 0, v);
  else
    og_buf_puts(&b, digits);
  /* Keep it a float literal in Python ("1" would be an int). */
  if (!strpbrk(og_buf_str(&b), ".e")) og_buf_puts(&b, ".0");
  return og_buf_take(&b);
}

/* Renders an attribute default as a Python literal, checking it fits the type. */
static char *og_attr_default(const og_attr *a, const og_ynode *n, og_diag *d) {
  if (!og_want_kind(n, OG_Y_SCALAR, "attribute default", d)) return NULL;
  const char *t = n->text;
  const char *type = og_attr_types[a->type].name;
  if (a->type == OG_ATTR_BOOL) {
    if (strcmp(t, "true") == 0 || strcmp(t, "True") == 0) return og_xstrdup("True");
    if (strcmp(t, "false") == 0 || strcmp(t, "False") == 0) return og_xstrdup("False");
    og_diag_error(d, n->loc, "default of bool attribute '%s' must be true or false, got '%s'", a->name, t);
    return NULL;
  }
  char *end;
  if (og_attr_types[a->type].integer) {
    int64_t v = 0;
    bool parsed = og_parse_int64(t, &v);
    bool fits = parsed && (a->type == OG_ATTR_INT64 || (v >= INT32_MIN && v <= INT32_MAX));
    if (!fits) {
      og_diag_error(d, n->loc, "default of %s attribute '%s' must be an integer in range, got '%s'", type, a->name, t);
      return NULL;
    }
    og_buf b = {0};
    og_buf_printf(&b, "%lld", (long long)v);
    return og_buf_take(&b);
  }
  double v = strtod(t, &end);
  /* A float32 default must survive the conversion to float32 too. */
  bool finite = isfinite(v) && (a->type != OG_ATTR_FLOAT32 || fabs(v) <= FLT_MAX);
  if (!*t || *end || !finite) {
    og_diag_error(d, n->loc, "default of %s attribute '%s' must be a finite number, got '%s'", type, a->name, t);
    return NULL;
  }
  return og_float_repr(v);
}

void og_load_attrs(og_op *op, const og_ynode *n, og_keys_log *log, og_diag *d) {
  if (!og_want_kind(n, OG_Y_SEQ, "'attrs'", d)) return;
  size_t count = og_capped(n, OPSPEC_MAX_ATTRS, "attributes", d);
  op->attrs = og_xcalloc(count ? count : 1, sizeof *op->attrs);
  for (size_t i = 0; i < count; ++i) {
    og_attr *a = &op->attrs[op->nattrs++];
    og_keys k;
    a->loc = n->items[i]->loc;
    if (!og_keys_begin(&k, n->items[i], "attribute", log, d)) continue;
    const og_ynode *name = og_keys_need(&k, "name", d);
    const og_ynode *type = og_keys_need(&k, "type", d);
    const og_ynode *def = og_keys_take(&k, "default");
    const og_ynode *doc = og_keys_take(&k, "doc");
    og_keys_finish(&k, d);
    if (name && og_want_ident(name, "attribute name", d)) {
      a->name = og_xstrdup(name->text);
      a->loc = name->loc;
    }
    if (doc && og_want_kind(doc, OG_Y_SCALAR, "attribute doc", d)) a->doc = og_xstrdup(doc->text);
    if (!type || !og_want_kind(type, OG_Y_SCALAR, "attribute type", d)) continue;
    for (int t = 0; t < OG_ATTR_NTYPES && !a->has_type; ++t)
      if (strcmp(og_attr_types[t].name, type->text) == 0) {
        a->type = (og_attr_type)t;
        a->has_type = true;
      }
    if (!a->has_type) {
      const char *names[OG_ATTR_NTYPES];
      for (int t = 0; t < OG_ATTR_NTYPES; ++t) names[t] = og_attr_types[t].name;
      og_buf expected = {0};
      og_vocab_list(&expected, names, OG_ATTR_NTYPES, ", ");
      og_diag_error(d, type->loc, "unknown attribute type '%s' (expected one of %s)", type->text,
                    og_buf_str(&expected));
      og_buf_free(&expected);
      continue;
    }
    if (def && a->name) {
      a->default_py = og_attr_default(a, def, d);
      a->has_default = a->default_py != NULL;
    }
  }
}
