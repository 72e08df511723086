/* Loading `require:`: the conditions every call must meet (load/loaders.h). Each is
 * `lhs cmp rhs`, the sides shape expressions (model/expr.h) or floating-point literals;
 * the checker says which names they may read. */
#include <stdlib.h>
#include <string.h>

#include "load/loaders.h"

static const char *const og_comparisons[] = {"==", "!=", "<=", ">=", "<", ">"};

/* The comparison at paren depth 0: its offset and operator, or -1 when there is none. */
static long og_find_comparison(const char *text, const char **cmp) {
  int depth = 0;
  for (const char *p = text; *p; ++p) {
    depth += (*p == '(') - (*p == ')');
    if (depth != 0) continue;
    for (size_t c = 0; c < sizeof og_comparisons / sizeof *og_comparisons; ++c)
      if (strncmp(p, og_comparisons[c], strlen(og_comparisons[c])) == 0) {
        *cmp = og_comparisons[c];
        return p - text;
      }
  }
  return -1;
}

/* A literal with a '.' or an exponent that strtod reads whole: "0.5", "1e-3". */
static bool og_float_literal(const char *text) {
  char *end;
  if (!strpbrk(text, ".eE") || !((*text >= '0' && *text <= '9') || *text == '.' || *text == '-')) return false;
  (void)strtod(text, &end);
  return *end == '\0';
}

/* One side, `text[begin, end)` of the condition that starts at `loc`. */
static bool og_load_side(og_require_side *side, const char *text, size_t begin, size_t end, og_loc loc, og_diag *d) {
  while (begin < end && text[begin] == ' ') ++begin;
  while (end > begin && text[end - 1] == ' ') --end;
  char *part = og_xstrndup(text + begin, end - begin);
  og_loc at = og_loc_advance(loc, begin);
  if (!*part) {
    og_diag_error(d, at, "'require' condition has an empty side");
    free(part);
    return false;
  }
  if (og_float_literal(part)) {
    side->number = part;
    return true;
  }
  side->expr = og_expr_parse(part, at, d);
  free(part);
  return side->expr != NULL;
}

void og_load_require(og_op *op, const og_ynode *n, og_diag *d) {
  if (n->kind == OG_Y_SCALAR) {
    og_diag_error(d, n->loc, "'require' is a list of conditions: require: [\"n %% 2 == 0\"]");
    return;
  }
  if (!og_want_kind(n, OG_Y_SEQ, "'require'", d)) return;
  op->require = og_xcalloc(n->n ? n->n : 1, sizeof *op->require);
  for (size_t i = 0; i < n->n; ++i) {
    const og_ynode *item = n->items[i];
    if (!og_want_kind(item, OG_Y_SCALAR, "a 'require' condition", d)) continue;
    if (item->style == OG_YS_LITERAL || item->style == OG_YS_FOLDED || strchr(item->text, '\n')) {
      og_diag_error(d, item->loc, "a 'require' condition must be one line");
      continue;
    }
    if (og_cut_at_comma(item, "a 'require' condition", d)) continue;
    const char *cmp = NULL;
    long at = og_find_comparison(item->text, &cmp);
    og_loc loc = og_scalar_text_loc(item);
    if (at < 0) {
      og_diag_error(d, loc,
                    "'require' condition '%s' compares nothing: write 'a OP b' with OP one of ==, !=, <, <=, "
                    ">, >=",
                    item->text);
      continue;
    }
    og_require r = {.loc = loc};
    size_t after = (size_t)at + strlen(cmp);
    const char *second = NULL;
    if (og_find_comparison(item->text + after, &second) >= 0) {
      og_diag_error(d, og_loc_advance(loc, after + (size_t)og_find_comparison(item->text + after, &second)),
                    "'require' condition has a second comparison: give each its own item");
      continue;
    }
    bool ok = og_load_side(&r.lhs, item->text, 0, (size_t)at, loc, d);
    ok &= og_load_side(&r.rhs, item->text, after, strlen(item->text), loc, d);
    if (!ok) {
      og_expr_free(r.lhs.expr);
      og_expr_free(r.rhs.expr);
      free(r.lhs.number);
      free(r.rhs.number);
      continue;
    }
    memcpy(r.cmp, cmp, strlen(cmp) + 1);
    r.text = og_xstrdup(item->text);
    op->require[op->nrequire++] = r;
  }
}
