#include "util/c_lowp.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/c_tokens.h"

void og_lowp_names_add(og_lowp_names *names, const char *name, const char *typevar) {
  og_grow((void **)&names->items, &names->cap, names->n + 1, sizeof *names->items);
  names->items[names->n].name = og_xstrdup(name);
  names->items[names->n].typevar = typevar ? og_xstrdup(typevar) : NULL;
  names->n++;
}

void og_lowp_names_free(og_lowp_names *names) {
  for (size_t i = 0; i < names->n; ++i) {
    free(names->items[i].name);
    free(names->items[i].typevar);
  }
  free(names->items);
  *names = (og_lowp_names){0};
}

typedef struct og_rw {
  const char *code;
  og_tokens t;
  og_lowp_names *names;
  const og_idents *typevars;
  og_lowp_stop *stop;
} og_rw;

/* The entry of `names` that token i is (the latest of that name), or -1. */
static long og_rw_name(const og_rw *r, size_t i) {
  if (i >= r->t.n) return -1;
  for (size_t k = r->names->n; k-- > 0;)
    if (strcmp(r->names->items[k].name, r->t.items[i].text) == 0) return (long)k;
  return -1;
}

static const char *og_rw_text(const og_rw *r, size_t i) { return i < r->t.n ? r->t.items[i].text : ""; }

static bool og_rw_fail(og_rw *r, size_t i, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static bool og_rw_fail(og_rw *r, size_t i, const char *fmt, ...) {
  og_buf what = {0};
  va_list ap;
  va_start(ap, fmt);
  char text[512];
  vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  og_buf_puts(&what, text);
  const og_token *tok = &r->t.items[i < r->t.n ? i : r->t.n - 1];
  r->stop->line = tok->line;
  r->stop->col = tok->col;
  r->stop->what = og_buf_take(&what);
  return false;
}

/* The index of the bracket that closes the one at i, or t.n. */
static size_t og_rw_close(const og_rw *r, size_t i) {
  int depth = 0;
  for (; i < r->t.n; ++i) {
    const char *w = r->t.items[i].text;
    if (strchr("([{", w[0]) && !w[1]) depth++;
    if (strchr(")]}", w[0]) && !w[1] && --depth == 0) return i;
  }
  return r->t.n;
}

/* The end of an expression that starts at i: the first `;` or `,` outside brackets, or
 * the bracket that closes one opened before it. */
static size_t og_rw_expr_end(const og_rw *r, size_t i) {
  int depth = 0;
  for (; i < r->t.n; ++i) {
    const char *w = r->t.items[i].text;
    if (w[1]) continue;
    if (strchr("([{", w[0])) depth++;
    if (strchr(")]}", w[0]) && depth-- == 0) return i;
    if ((w[0] == ';' || w[0] == ',') && depth == 0) return i;
  }
  return r->t.n;
}

/* Whether token i starts a statement: what precedes it ends one, opens a block, or is a
 * directive (or, in a `for` head, ends a clause: the value is dropped there too). */
static bool og_rw_statement_start(const og_rw *r, size_t i) {
  if (i == 0) return true;
  const char *p = r->t.items[i - 1].text;
  return p[0] == '#' || !strcmp(p, ";") || !strcmp(p, "{") || !strcmp(p, "}") || !strcmp(p, ")") ||
         !strcmp(p, "else") || !strcmp(p, ":");
}

/* An assignment operator at i (after an element): 0 none, '=' a plain one, else the
 * first character of a compound one; *len its tokens. */
static char og_rw_assign(const og_rw *r, size_t i, size_t *len) {
  const char *w = og_rw_text(r, i);
  if (!strcmp(w, "=")) {
    *len = 1;
    return og_token_is_assign(&r->t, i) ? '=' : 0;
  }
  if (w[0] && !w[1] && strchr("+-*/%&|^", w[0]) && og_token_is(&r->t, i + 1, "=") && og_tokens_adjacent(&r->t, i)) {
    *len = 2;
    return w[0];
  }
  if ((!strcmp(w, "<") || !strcmp(w, ">")) && og_token_is(&r->t, i + 1, w) && og_tokens_adjacent(&r->t, i) &&
      og_token_is(&r->t, i + 2, "=") && og_tokens_adjacent(&r->t, i + 1)) {
    *len = 3;
    return w[0];
  }
  return 0;
}

/* Whether tokens i and i+1 are `++` or `--`. */
static bool og_rw_step(const og_rw *r, size_t i) {
  const char *w = og_rw_text(r, i);
  return (!strcmp(w, "+") || !strcmp(w, "-")) && og_token_is(&r->t, i + 1, w) && og_tokens_adjacent(&r->t, i);
}

/* Whether tokens [a, b) may have a side effect: ++, --, an assignment, a call. */
static bool og_rw_side_effects(const og_rw *r, size_t a, size_t b) {
  for (size_t i = a; i < b; ++i) {
    const char *w = r->t.items[i].text;
    if (og_rw_step(r, i)) return true;
    if (!strcmp(w, "=")) {
      bool compare = (i > a && og_tokens_adjacent(&r->t, i - 1) && strchr("=!<>", r->t.items[i - 1].text[0])) ||
                     (og_token_is(&r->t, i + 1, "=") && og_tokens_adjacent(&r->t, i));
      if (!compare) return true;
      if (og_token_is(&r->t, i + 1, "=")) ++i;
    }
    if ((w[0] == '_' || (w[0] >= 'a' && w[0] <= 'z') || (w[0] >= 'A' && w[0] <= 'Z')) && og_token_is(&r->t, i + 1, "("))
      return true;
  }
  return false;
}

static bool og_rw_emit(og_rw *r, size_t ti, size_t tend, size_t from, size_t to, og_buf *out);

/* Copies code[*cursor, upto) and moves the cursor. */
static void og_rw_copy(const og_rw *r, size_t *cursor, size_t upto, og_buf *out) {
  if (upto <= *cursor) return;
  og_buf_append(out, r->code + *cursor, upto - *cursor);
  *cursor = upto;
}

/* A pointer declaration at i (a type variable that may be 2-byte), `[const] V * quals
 * NAME = init`: where init is a known array, alone or plus or minus an offset, NAME
 * becomes one too and V its storage type. Returns the token after it, or i where it is
 * no such declaration (or, with *ok cleared, one that cannot be rewritten). */
static size_t og_rw_decl(og_rw *r, size_t i, size_t *cursor, og_buf *out, bool *ok) {
  size_t k = i + 1;
  while (og_token_is(&r->t, k, "const")) ++k;
  if (!og_token_is(&r->t, k, "*")) return i;
  ++k;
  while (og_token_is(&r->t, k, "const") || og_token_is(&r->t, k, "restrict") ||
         og_token_is(&r->t, k, "OPSPEC_RESTRICT") || og_token_is(&r->t, k, "__restrict") ||
         og_token_is(&r->t, k, "__restrict__"))
    ++k;
  const char *var = r->t.items[i].text;
  if (og_token_is(&r->t, k, ")") || og_token_is(&r->t, k, "*")) {
    *ok = og_rw_fail(
        r, i,
        "a cast to a pointer to '%s', or a pointer to such pointers (its elements are 2 bytes in memory, 4 in float)",
        var);
    return i;
  }
  size_t name = k, init = k + 2;
  if (name >= r->t.n || !og_token_is(&r->t, name + 1, "=") || og_rw_assign(r, name + 1, &(size_t){0}) != '=') return i;
  long a = og_rw_name(r, init);
  if (a < 0) return i; /* a pointer into other memory (scratch): float as it was */
  size_t end = og_rw_expr_end(r, init);
  const char *of = r->names->items[a].typevar;
  if (!(end == init + 1 || og_token_is(&r->t, init + 1, "+") || og_token_is(&r->t, init + 1, "-")) ||
      og_rw_step(r, init + 1)) {
    *ok = og_rw_fail(r, init, "'%s' starts an initializer that is not '%s' or '%s + offset'", r->t.items[init].text,
                     r->t.items[init].text, r->t.items[init].text);
    return i;
  }
  if (!of || strcmp(of, var) != 0) {
    *ok = og_rw_fail(r, init, "a pointer to '%s' points into '%s', %s", var, r->t.items[init].text,
                     of ? "an array of another type variable" : "a bfloat16 array of fixed dtype");
    return i;
  }
  if (og_token_is(&r->t, end, ",")) {
    *ok = og_rw_fail(r, end, "a declaration of '%s' declares more after it", r->t.items[name].text);
    return i;
  }
  og_rw_copy(r, cursor, r->t.items[i].start, out);
  og_buf_printf(out, "OPSPEC_STORAGE_%s", var);
  *cursor = r->t.items[i].end;
  og_rw_copy(r, cursor, r->t.items[init].end, out);
  if (end > init + 1 && !og_rw_emit(r, init + 1, end, *cursor, r->t.items[end - 1].end, out)) {
    *ok = false;
    return i;
  }
  if (end > init + 1) *cursor = r->t.items[end - 1].end;
  og_lowp_names_add(r->names, r->t.items[name].text, var);
  return end;
}

/* An element of array `a` at token i (`name [ ... ]`, its bracket closing at `close`):
 * a read, a store or a compound store. Returns the token after what it handled. */
static size_t og_rw_element(og_rw *r, size_t i, size_t close, long a, size_t *cursor, og_buf *out, bool *ok) {
  const char *name = r->t.items[i].text, *var = r->names->items[a].typevar;
  size_t len = 0;
  char assign = og_rw_assign(r, close + 1, &len);
  if (og_rw_step(r, close + 1) || (i >= 2 && og_rw_step(r, i - 2))) {
    *ok = og_rw_fail(r, i, "'%s[...]' is incremented or decremented in place", name);
    return i;
  }
  if (!assign) { /* a read */
    og_rw_copy(r, cursor, r->t.items[i].start, out);
    og_buf_printf(out, "OPSPEC_LOAD_%s(", var);
    if (!og_rw_emit(r, i + 2, close, *cursor, r->t.items[close].end, out)) return *ok = false, i;
    *cursor = r->t.items[close].end;
    og_buf_puts(out, ")");
    return close + 1;
  }
  if (!og_rw_statement_start(r, i)) {
    *ok =
        og_rw_fail(r, i, "a store to '%s[...]' inside an expression (only a statement 'x[i] = v;' is rewritten)", name);
    return i;
  }
  size_t rhs = close + 1 + len, end = og_rw_expr_end(r, rhs);
  if (end == rhs) return *ok = og_rw_fail(r, i, "a store to '%s[...]' without a value", name), i;
  if (assign != '=' && memchr(r->code + r->t.items[i].start, '\n', r->t.items[rhs].start - r->t.items[i].start)) {
    /* Written out again, its index would repeat its line breaks: the spec's lines would shift. */
    *ok = og_rw_fail(r, i, "a compound assignment to '%s[...]' broken over lines before its value", name);
    return i;
  }
  og_rw_copy(r, cursor, r->t.items[i].start, out);
  if (assign == '=') {
    if (!og_rw_emit(r, i + 2, close, *cursor, r->t.items[rhs].start, out)) return *ok = false, i;
    og_buf_printf(out, "OPSPEC_STORE_%s(", var);
  } else {
    if (og_rw_side_effects(r, i + 2, close)) {
      *ok = og_rw_fail(r, i, "a compound assignment to '%s[...]' whose index has side effects", name);
      return i;
    }
    og_buf index = {0};
    bool good = og_rw_emit(r, i + 2, close, r->t.items[i + 1].end, r->t.items[close].start, &index);
    char op[3] = {assign, len == 3 ? assign : 0, 0};
    og_buf_printf(out, "%s[%s] = OPSPEC_STORE_%s(OPSPEC_LOAD_%s(%s[%s]) %s (", name, og_buf_str(&index), var, var, name,
                  og_buf_str(&index), op);
    og_buf_free(&index);
    if (!good) return *ok = false, i;
  }
  *cursor = r->t.items[rhs].start;
  if (!og_rw_emit(r, rhs, end, *cursor, r->t.items[end - 1].end, out)) return *ok = false, i;
  *cursor = r->t.items[end - 1].end;
  og_buf_puts(out, assign == '=' ? ")" : "))");
  return end;
}

/* Whether `sizeof` at i measures a type variable that may be 2-byte or an element of a
 * known array. */
static bool og_rw_sizeof_lowp(const og_rw *r, size_t i) {
  size_t k = i + 1;
  while (og_token_is(&r->t, k, "(") || og_token_is(&r->t, k, "const") || og_token_is(&r->t, k, "*")) ++k;
  return k < r->t.n && (og_idents_has(r->typevars, r->t.items[k].text) || og_rw_name(r, k) >= 0);
}

/* Whether a directive (token i) names a known array or a type variable that may be
 * 2-byte. */
static bool og_rw_directive_lowp(const og_rw *r, size_t i) {
  og_idents used = {0};
  og_idents_scan(&used, r->t.items[i].text + 1);
  bool found = false;
  for (size_t k = 0; k < r->names->n && !found; ++k) found = og_idents_has(&used, r->names->items[k].name);
  for (size_t k = 0; k < r->typevars->n && !found; ++k) found = og_idents_has(&used, r->typevars->names[k]);
  og_idents_free(&used);
  return found;
}

/* Writes code[from, to) with the tokens [ti, tend) in it rewritten. */
static bool og_rw_emit(og_rw *r, size_t ti, size_t tend, size_t from, size_t to, og_buf *out) {
  size_t cursor = from;
  bool ok = true;
  for (size_t i = ti; i < tend && ok;) {
    const char *w = r->t.items[i].text;
    if (w[0] == '#') {
      if (og_rw_directive_lowp(r, i))
        return og_rw_fail(r, i, "a preprocessor directive names a 2-byte array or its type variable");
      ++i;
      continue;
    }
    if (!strcmp(w, "sizeof") && og_rw_sizeof_lowp(r, i))
      return og_rw_fail(r, i, "'sizeof' of a type variable or an element that is 4 bytes in float but 2 in memory");
    if (og_idents_has(r->typevars, w)) {
      size_t next = og_rw_decl(r, i, &cursor, out, &ok);
      i = next > i ? next : i + 1;
      continue;
    }
    long a = og_rw_name(r, i);
    if (a < 0) {
      ++i;
      continue;
    }
    if (!r->names->items[a].typevar)
      return og_rw_fail(r, i, "'%s' is a bfloat16 array of fixed dtype, which a body cannot read in float", w);
    if (!og_token_is(&r->t, i + 1, "[")) {
      const char *prev = i ? r->t.items[i - 1].text : "";
      return og_rw_fail(r, i, "'%s' is used %s", w,
                        !strcmp(prev, "*") ? "through '*' (only elements 'x[i]' are rewritten)"
                        : og_rw_step(r, i + 1) || (i >= 2 && og_rw_step(r, i - 2))
                            ? "as a pointer that moves (only elements 'x[i]' are rewritten)"
                            : "as a pointer, not as an element 'x[i]' (passed on, assigned or cast)");
    }
    if (i && !strcmp(r->t.items[i - 1].text, "&") &&
        !(i >= 2 && og_tokens_adjacent(&r->t, i - 2) && !strcmp(r->t.items[i - 2].text, "&")))
      return og_rw_fail(r, i, "'&%s[...]' takes an element's address", w);
    size_t close = og_rw_close(r, i + 1);
    if (close >= tend) return og_rw_fail(r, i, "'%s[' is not closed", w);
    size_t next = og_rw_element(r, i, close, a, &cursor, out, &ok);
    if (ok) i = next;
  }
  if (ok) og_rw_copy(r, &cursor, to, out);
  return ok;
}

bool og_lowp_rewrite(const char *code, og_lowp_names *names, const og_idents *typevars, og_buf *out,
                     og_lowp_stop *stop) {
  og_rw r = {code, {0}, names, typevars, stop};
  og_tokenize(code, true, &r.t);
  stop->what = NULL;
  bool ok = og_rw_emit(&r, 0, r.t.n, 0, strlen(code), out);
  og_tokens_free(&r.t);
  return ok;
}
