/* Loading the scalars every loader reads: integers, expressions, flags, and where a
 * scalar's text starts (load/loaders.h). */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "load/loaders.h"
#include "model/dtype.h"

/* The location of a scalar's first character of content (past an opening quote). */
og_loc og_scalar_text_loc(const og_ynode *n) {
  og_loc loc = n->loc;
  if (n->style == OG_YS_SINGLE || n->style == OG_YS_DOUBLE) loc.col += 1;
  return loc;
}

/* How many of a sequence's (or mapping's) items to load: all of them up to `max`; past
 * it, one error at the first item too many. Loading stops there, so a spec with 200,000
 * inputs costs no more than one with `max`. */
size_t og_capped(const og_ynode *n, size_t max, const char *what, og_diag *d) {
  if (n->n <= max) return n->n;
  const og_ynode *first_extra = n->kind == OG_Y_MAP ? n->keys[max] : n->items[max];
  og_diag_error(d, first_extra->loc, "at most %zu %s are supported, got %zu", max, what, n->n);
  return max;
}

/* Parses a decimal int64, rejecting anything else, and values past INT64_MAX rather
 * than clamping them. */
bool og_parse_int64(const char *text, int64_t *out) {
  char *end;
  errno = 0;
  long long v = strtoll(text, &end, 10);
  if (text[0] == '\0' || *end != '\0' || errno == ERANGE) return false;
  *out = (int64_t)v;
  return true;
}

/* `shape: [max(n, m)]` is, to YAML, the two items "max(n" and "m)": a comma ends an item
 * of a flow sequence. Says so once, at the first piece, with the expression to quote, and
 * returns true for every piece. */
bool og_cut_at_comma(const og_ynode *n, const char *what, og_diag *d) {
  /* Any node may come here (a launch list's items are not yet known to be scalars). */
  if (n->kind != OG_Y_SCALAR || n->style != OG_YS_PLAIN || !n->text || !n->loc.src) return false;
  int depth = 0;
  for (const char *c = n->text; *c; ++c) depth += (*c == '(') - (*c == ')');
  if (depth == 0) return false;
  size_t len;
  const char *line = og_source_line(n->loc.src, n->loc.line, &len);
  /* Every read below stays on the scalar's own source line, [line, eol). */
  if (!line || n->loc.col < 1 || (size_t)n->loc.col - 1 + n->len > len) return false;
  const char *eol = line + len;
  const char *start = line + n->loc.col - 1, *end = start + n->len;
  if (depth < 0) { /* a later piece: silent when an earlier one on the line opened a '(' */
    const char *p = start;
    while (p > line && p[-1] == ' ') --p;
    if (p == line || p[-1] != ',') return false;
    int open = 0;
    for (--p; p > line && p[-1] != '['; --p) open += (p[-1] == '(') - (p[-1] == ')');
    if (open > 0) return true;
    og_diag_error(d, n->loc,
                  "%s has an unmatched ')': YAML ends an item of a flow sequence [...] at a comma, so this one is "
                  "'%s'; quote an expression that has commas",
                  what, n->text);
    return true;
  }
  const char *after = end;
  while (after < eol && *after == ' ') ++after;
  if (after == eol || *after != ',') return false;
  const char *close = NULL; /* the ')' that closes the piece's first '(' */
  int level = 0;
  for (const char *p = start; p < eol && !close; ++p) {
    level += (*p == '(') - (*p == ')');
    if (*p == ')' && level == 0) close = p;
  }
  og_buf quoted = {0};
  if (close) og_buf_printf(&quoted, ": \"%.*s\"", (int)(close + 1 - start), start);
  og_diag_error(d, n->loc,
                "%s is cut at a comma: YAML ends an item of a flow sequence [...] at a comma, so this one is '%s'; "
                "quote the expression%s",
                what, n->text, og_buf_str(&quoted));
  og_buf_free(&quoted);
  return true;
}

og_expr *og_load_expr(const og_ynode *n, const char *what, og_diag *d) {
  if (!og_want_kind(n, OG_Y_SCALAR, what, d)) return NULL;
  if (n->style == OG_YS_LITERAL || n->style == OG_YS_FOLDED || strchr(n->text, '\n')) {
    og_diag_error(d, n->loc, "%s must be a one-line expression", what);
    return NULL;
  }
  if (og_cut_at_comma(n, what, d)) return NULL;
  return og_expr_parse(n->text, og_scalar_text_loc(n), d);
}

/* A `true` / `false` key of a check, or an error; false when absent. */
bool og_load_check_flag(const og_ynode *n, const char *what, og_diag *d) {
  if (!n || !og_want_kind(n, OG_Y_SCALAR, what, d)) return false;
  if (strcmp(n->text, "true") == 0) return true;
  if (strcmp(n->text, "false") != 0) og_diag_error(d, n->loc, "%s must be true or false, got '%s'", what, n->text);
  return false;
}
