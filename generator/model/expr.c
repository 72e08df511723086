/* Shape expressions: a recursive-descent parser over the grammar in expr.h, two
 * renderers (C and Python) and an evaluator.
 *
 * The parser stops at the first error: expressions are one line long, and a second
 * message about the same line would mostly restate the first.
 */
#include "model/expr.h"

#include <stdlib.h>
#include <string.h>

#include "opspec/limits.h"

/* Limits (docs/spec.md, "Limits"): far beyond any real shape formula, and small
 * enough that no expression can exhaust the generator's stack, Python's parser (which
 * recurses once per operator of a flat "n + n + ..." chain) or a C compiler. */
#define OG_EXPR_MAX_DEPTH OPSPEC_MAX_EXPR_DEPTH
#define OG_EXPR_MAX_NODES OPSPEC_MAX_EXPR_NODES

typedef struct og_eparser {
  const char *text;
  size_t pos;
  og_loc loc; /* location of text[0] */
  og_diag *d;
  int depth;
  int nodes;   /* nodes made so far: a flat chain nests no deeper, but grows */
  bool failed; /* an error has been reported; unwind without reporting more */
} og_eparser;

static og_loc og_ep_loc(const og_eparser *p, size_t pos) { return og_loc_advance(p->loc, pos); }

/* Only blanks: the text is a single line, and a newline inside would make every
 * column after it wrong. */
static void og_ep_skip_ws(og_eparser *p) {
  while (p->text[p->pos] == ' ' || p->text[p->pos] == '\t') p->pos++;
}

static bool og_is_name_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
static bool og_is_digit(char c) { return c >= '0' && c <= '9'; }
static bool og_is_name_char(char c) { return og_is_name_start(c) || og_is_digit(c); }

static og_expr *og_expr_new(og_expr_kind kind, og_loc loc) {
  og_expr *e = og_xcalloc(1, sizeof *e);
  e->kind = kind;
  e->loc = loc;
  return e;
}

/* Counts a node about to be made at `pos`; reports and returns false past the limit. */
static bool og_ep_count(og_eparser *p, size_t pos) {
  if (++p->nodes <= OG_EXPR_MAX_NODES) return true;
  if (!p->failed) {
    p->failed = true;
    og_diag_error(p->d, og_loc_advance(p->loc, pos), "expression has more than %d terms and operators",
                  OG_EXPR_MAX_NODES);
  }
  return false;
}

void og_expr_free(og_expr *e) {
  if (!e) return;
  og_expr_free(e->a);
  og_expr_free(e->b);
  free(e->name);
  free(e);
}

/* Reports the character at p->pos as unexpected (or the end of the text), with
 * `expected` appended when the parser knows what it wanted. */
static void og_ep_unexpected(og_eparser *p, const char *expected) {
  if (p->failed) return;
  p->failed = true;
  unsigned char c = (unsigned char)p->text[p->pos];
  og_loc at = og_ep_loc(p, p->pos);
  og_buf what = {0};
  if (c == '\0')
    og_buf_puts(&what, "unexpected end of expression");
  else if (c >= 0x20 && c < 0x7f)
    og_buf_printf(&what, "unexpected character '%c'", c);
  else
    og_buf_printf(&what, "unexpected character '\\x%02x'", c);
  if (expected) og_buf_printf(&what, ", expected %s", expected);
  og_diag_error(p->d, at, "%s", og_buf_str(&what));
  og_buf_free(&what);
}

static og_expr *og_ep_expr(og_eparser *p);

/* After '(' at `open`: expects ')' and reports "missing ')'" with a note at the '('
 * when the text ends first. */
static bool og_ep_close_paren(og_eparser *p, size_t open, const char *expected) {
  og_ep_skip_ws(p);
  if (p->text[p->pos] == ')') {
    p->pos++;
    return true;
  }
  if (p->failed) return false;
  if (p->text[p->pos] == '\0') {
    p->failed = true;
    og_diag_error(p->d, og_ep_loc(p, p->pos), "missing ')'");
    og_diag_note(p->d, og_ep_loc(p, open), "to match this '('");
  } else {
    og_ep_unexpected(p, expected);
  }
  return false;
}

static og_expr *og_ep_int(og_eparser *p) {
  size_t start = p->pos;
  if (!og_ep_count(p, start)) return NULL;
  int64_t v = 0;
  bool overflow = false;
  while (og_is_digit(p->text[p->pos])) {
    int digit = p->text[p->pos] - '0';
    if (v > (INT64_MAX - digit) / 10)
      overflow = true;
    else
      v = v * 10 + digit;
    p->pos++;
  }
  if (overflow) {
    p->failed = true;
    og_diag_error(p->d, og_ep_loc(p, start), "integer literal '%.*s' is too large", (int)(p->pos - start),
                  p->text + start);
    return NULL;
  }
  og_expr *e = og_expr_new(OG_E_INT, og_ep_loc(p, start));
  e->ival = v;
  return e;
}

/* NAME '(' args ')': only min, max and cdiv exist, each with exactly two arguments. */
static og_expr *og_ep_call(og_eparser *p, size_t name_pos, size_t name_len) {
  const char *name = p->text + name_pos;
  og_loc at = og_ep_loc(p, name_pos);
  bool known = false;
  static const char *const fns[] = {"min", "max", "cdiv"};
  for (size_t i = 0; i < sizeof fns / sizeof fns[0]; ++i)
    if (strlen(fns[i]) == name_len && memcmp(fns[i], name, name_len) == 0) known = true;
  if (!known) {
    p->failed = true;
    og_diag_error(p->d, at, "unknown function '%.*s' (expected min, max or cdiv)", (int)name_len, name);
    return NULL;
  }
  size_t open = p->pos;
  p->pos++; /* '(' */
  og_expr *args[2] = {NULL, NULL};
  int nargs = 0;
  og_ep_skip_ws(p);
  /* Parse every argument, even past the second, so the count in the message is the
   * real one. An empty list "min()" counts as zero arguments. */
  if (p->text[p->pos] != ')') {
    for (;;) {
      og_expr *arg = og_ep_expr(p);
      if (!arg) goto fail;
      if (nargs < 2)
        args[nargs] = arg;
      else
        og_expr_free(arg);
      nargs++;
      og_ep_skip_ws(p);
      if (p->text[p->pos] != ',') break;
      p->pos++;
    }
  }
  if (!og_ep_close_paren(p, open, "',' or ')'")) goto fail;
  if (!og_ep_count(p, name_pos)) goto fail;
  if (nargs != 2) {
    p->failed = true;
    og_diag_error(p->d, at, "%.*s expects 2 arguments, got %d", (int)name_len, name, nargs);
    goto fail;
  }
  og_expr *e = og_expr_new(OG_E_CALL, at);
  e->name = og_xstrndup(name, name_len);
  e->a = args[0];
  e->b = args[1];
  return e;
fail:
  og_expr_free(args[0]);
  og_expr_free(args[1]);
  return NULL;
}

static og_expr *og_ep_atom(og_eparser *p) {
  og_ep_skip_ws(p);
  char c = p->text[p->pos];
  if (og_is_digit(c)) return og_ep_int(p);
  if (og_is_name_start(c)) {
    size_t start = p->pos;
    while (og_is_name_char(p->text[p->pos])) p->pos++;
    size_t len = p->pos - start;
    og_ep_skip_ws(p);
    if (p->text[p->pos] == '(') return og_ep_call(p, start, len);
    if (!og_ep_count(p, start)) return NULL;
    og_expr *e = og_expr_new(OG_E_NAME, og_ep_loc(p, start));
    e->name = og_xstrndup(p->text + start, len);
    return e;
  }
  if (c == '(') {
    size_t open = p->pos;
    p->pos++;
    og_expr *e = og_ep_expr(p);
    if (!e) return NULL;
    if (!og_ep_close_paren(p, open, "')'")) {
      og_expr_free(e);
      return NULL;
    }
    return e;
  }
  og_ep_unexpected(p, NULL);
  return NULL;
}

static og_expr *og_ep_unary(og_eparser *p) {
  og_ep_skip_ws(p);
  if (p->text[p->pos] != '-') return og_ep_atom(p);
  size_t at = p->pos;
  p->pos++;
  if (++p->depth > OG_EXPR_MAX_DEPTH) {
    p->failed = true;
    og_diag_error(p->d, og_ep_loc(p, at), "expression nested too deeply");
    return NULL;
  }
  og_expr *a = og_ep_unary(p);
  p->depth--;
  if (!a) return NULL;
  if (!og_ep_count(p, at)) {
    og_expr_free(a);
    return NULL;
  }
  og_expr *e = og_expr_new(OG_E_NEG, og_ep_loc(p, at));
  e->a = a;
  return e;
}

/* One left-associative precedence level: `ops` are its operator characters and `next`
 * parses the level above. */
static og_expr *og_ep_binary(og_eparser *p, const char *ops, og_expr *(*next)(og_eparser *)) {
  og_expr *lhs = next(p);
  if (!lhs) return NULL;
  for (;;) {
    og_ep_skip_ws(p);
    char c = p->text[p->pos];
    if (c == '\0' || !strchr(ops, c)) return lhs;
    p->pos++;
    size_t at = p->pos - 1;
    og_expr *rhs = next(p);
    if (!rhs || !og_ep_count(p, at)) {
      og_expr_free(lhs);
      og_expr_free(rhs);
      return NULL;
    }
    /* The node is located at its left operand: that is where the subexpression
     * the user would point at begins. */
    og_expr *e = og_expr_new(OG_E_BIN, lhs->loc);
    e->op = c;
    e->a = lhs;
    e->b = rhs;
    lhs = e;
  }
}

static og_expr *og_ep_term(og_eparser *p) { return og_ep_binary(p, "*/%", og_ep_unary); }

static og_expr *og_ep_expr(og_eparser *p) {
  /* Parentheses and call arguments recurse through here. */
  if (++p->depth > OG_EXPR_MAX_DEPTH) {
    if (!p->failed) {
      p->failed = true;
      og_ep_skip_ws(p);
      og_diag_error(p->d, og_ep_loc(p, p->pos), "expression nested too deeply");
    }
    return NULL;
  }
  og_expr *e = og_ep_binary(p, "+-", og_ep_term);
  p->depth--;
  return e;
}

og_expr *og_expr_parse(const char *text, og_loc loc, og_diag *d) {
  og_eparser p = {.text = text, .loc = loc, .d = d};
  og_ep_skip_ws(&p);
  if (text[p.pos] == '\0') {
    og_diag_error(d, loc, "empty expression");
    return NULL;
  }
  og_expr *e = og_ep_expr(&p);
  if (!e) return NULL;
  og_ep_skip_ws(&p);
  if (text[p.pos] != '\0') {
    /* Something follows a complete expression: "n m", "2n", "a)". */
    if (text[p.pos] == ')') {
      og_diag_error(d, og_ep_loc(&p, p.pos), "unmatched ')'");
    } else {
      og_ep_unexpected(&p, "an operator");
    }
    og_expr_free(e);
    return NULL;
  }
  return e;
}

void og_expr_visit_names(const og_expr *e, og_expr_name_fn *fn, void *ud) {
  if (!e) return;
  if (e->kind == OG_E_NAME) {
    fn(e, ud);
    return;
  }
  og_expr_visit_names(e->a, fn, ud);
  og_expr_visit_names(e->b, fn, ud);
}

bool og_expr_names(const og_expr *e, const char *name) {
  if (!e) return false;
  if (e->kind == OG_E_NAME) return strcmp(e->name, name) == 0;
  return og_expr_names(e->a, name) || og_expr_names(e->b, name);
}

bool og_expr_is_atom(const og_expr *e) { return e && (e->kind == OG_E_INT || e->kind == OG_E_NAME); }

/* ---- rendering ---------------------------------------------------------------- */

/* Binding strength, the same in C and Python for the operators used here (both bind
 * unary minus tighter than '*', '/', '%', and those tighter than '+', '-'). */
enum { OG_PREC_ADD = 1, OG_PREC_MUL = 2, OG_PREC_UNARY = 3, OG_PREC_ATOM = 4 };

static int og_expr_prec(const og_expr *e) {
  switch (e->kind) {
    case OG_E_BIN:
      return (e->op == '+' || e->op == '-') ? OG_PREC_ADD : OG_PREC_MUL;
    case OG_E_NEG:
      return OG_PREC_UNARY;
    default:
      return OG_PREC_ATOM;
  }
}

typedef struct og_erender {
  og_buf *out;
  og_expr_spell_fn *spell;
  void *ud;
  bool py;
  bool spec; /* as a spec writes it: calls without the runtime's opspec_ prefix */
} og_erender;

static void og_render(const og_erender *r, const og_expr *e);

static void og_render_paren(const og_erender *r, const og_expr *e, bool paren) {
  if (paren) og_buf_putc(r->out, '(');
  og_render(r, e);
  if (paren) og_buf_putc(r->out, ')');
}

static void og_render(const og_erender *r, const og_expr *e) {
  switch (e->kind) {
    case OG_E_INT:
      og_buf_printf(r->out, "%lld", (long long)e->ival);
      break;
    case OG_E_NAME:
      if (r->spell)
        r->spell(r->out, e->name, r->ud);
      else
        og_buf_puts(r->out, e->name);
      break;
    case OG_E_NEG:
      og_buf_putc(r->out, '-');
      /* A compound operand needs parentheses; so does a nested negation, since "--a"
     * is C's decrement operator. */
      og_render_paren(r, e->a, og_expr_prec(e->a) <= OG_PREC_UNARY);
      break;
    case OG_E_BIN: {
      int prec = og_expr_prec(e);
      /* Left-associative: a left operand of the same level needs no parentheses, a
     * right one does. The tree is rendered as parsed, so "a + (b + c)" keeps its
     * parentheses too: render(parse(s)) reparses to the same tree (within the depth
     * limit: each parenthesised negation "-(-a)" nests one level deeper than "--a"). */
      og_render_paren(r, e->a, og_expr_prec(e->a) < prec);
      if (r->py && e->op == '/')
        og_buf_puts(r->out, " // ");
      else
        og_buf_printf(r->out, " %c ", e->op);
      og_render_paren(r, e->b, og_expr_prec(e->b) <= prec);
      break;
    }
    case OG_E_CALL:
      if (r->py && strcmp(e->name, "cdiv") == 0) {
        /* Ceiling division through floor division, exact for every sign. */
        og_buf_puts(r->out, "-(-(");
        og_render(r, e->a);
        og_buf_puts(r->out, ") // (");
        og_render(r, e->b);
        og_buf_puts(r->out, "))");
        break;
      }
      og_buf_printf(r->out, "%s%s(", r->py ? "_" : r->spec ? "" : "opspec_", e->name);
      og_render(r, e->a);
      og_buf_puts(r->out, ", ");
      og_render(r, e->b);
      og_buf_putc(r->out, ')');
      break;
  }
}

/* Every operation becomes a call of its opspec_safe_* helper (opspec/ffi.h), which
 * yields OPSPEC_SIZE_INVALID on division by zero or int64 overflow and passes an
 * invalid operand on: one comparison after the whole expression catches any failure. */
static void og_render_checked(const og_erender *r, const og_expr *e) {
  static const struct {
    char op;
    const char *fn;
  } og_safe_ops[] = {{'+', "add"}, {'-', "sub"}, {'*', "mul"}, {'/', "div"}, {'%', "mod"}};
  switch (e->kind) {
    case OG_E_INT:
    case OG_E_NAME:
      og_render(r, e);
      return;
    case OG_E_NEG:
      og_buf_puts(r->out, "opspec_safe_neg(");
      og_render_checked(r, e->a);
      og_buf_putc(r->out, ')');
      return;
    case OG_E_BIN:
    case OG_E_CALL: {
      const char *fn = e->name;
      for (size_t i = 0; e->kind == OG_E_BIN && i < sizeof og_safe_ops / sizeof *og_safe_ops; ++i)
        if (og_safe_ops[i].op == e->op) fn = og_safe_ops[i].fn;
      og_buf_printf(r->out, "opspec_safe_%s(", fn);
      og_render_checked(r, e->a);
      og_buf_puts(r->out, ", ");
      og_render_checked(r, e->b);
      og_buf_putc(r->out, ')');
      return;
    }
  }
}

void og_expr_render_c_checked(const og_expr *e, og_buf *out, og_expr_spell_fn *spell, void *ud) {
  og_erender r = {out, spell, ud, false, false};
  og_render_checked(&r, e);
}

void og_expr_render_c(const og_expr *e, og_buf *out, og_expr_spell_fn *spell, void *ud) {
  og_erender r = {out, spell, ud, false, false};
  og_render(&r, e);
}

void og_expr_render_spec(const og_expr *e, og_buf *out) {
  og_erender r = {out, NULL, NULL, false, true};
  og_render(&r, e);
}

void og_expr_render_py(const og_expr *e, og_buf *out, og_expr_spell_fn *spell, void *ud) {
  og_erender r = {out, spell, ud, true, false};
  og_render(&r, e);
}

/* ---- evaluation --------------------------------------------------------------- */

/* Fails (returns false) on an unknown name, division or modulo by zero, and on int64
 * overflow (including INT64_MIN / -1), so that the generator never computes with a
 * value the generated C code could not. */
bool og_expr_eval(const og_expr *e, og_expr_lookup_fn *lookup, void *ud, int64_t *out) {
  int64_t a = 0, b = 0;
  switch (e->kind) {
    case OG_E_INT:
      *out = e->ival;
      return true;
    case OG_E_NAME:
      return lookup && lookup(e->name, out, ud);
    case OG_E_NEG:
      if (!og_expr_eval(e->a, lookup, ud, &a) || a == INT64_MIN) return false;
      *out = -a;
      return true;
    case OG_E_BIN:
    case OG_E_CALL:
      break;
  }
  if (!og_expr_eval(e->a, lookup, ud, &a) || !og_expr_eval(e->b, lookup, ud, &b)) return false;
  if (e->kind == OG_E_CALL) {
    if (strcmp(e->name, "min") == 0) {
      *out = a < b ? a : b;
      return true;
    }
    if (strcmp(e->name, "max") == 0) {
      *out = a > b ? a : b;
      return true;
    }
    /* cdiv: the ceiling of a / b. C truncates toward zero, which is the ceiling
     * exactly when the true quotient is negative or exact. */
    if (b == 0 || (a == INT64_MIN && b == -1)) return false;
    int64_t q = a / b;
    if (a % b != 0 && ((a < 0) == (b < 0))) q++;
    *out = q;
    return true;
  }
  switch (e->op) {
    case '+':
      return !__builtin_add_overflow(a, b, out);
    case '-':
      return !__builtin_sub_overflow(a, b, out);
    case '*':
      return !__builtin_mul_overflow(a, b, out);
    case '/':
    case '%':
      if (b == 0 || (a == INT64_MIN && b == -1)) return false;
      *out = e->op == '/' ? a / b : a % b;
      return true;
  }
  return false;
}

static bool og_expr_has_names(const og_expr *e) {
  return e && (e->kind == OG_E_NAME || og_expr_has_names(e->a) || og_expr_has_names(e->b));
}

/* A constant part that cannot be computed ("n / 0", "n % (2 - 2)", "9223372036854775807
 * + 1") would not compile under -Werror, so it is an error in the spec. Only the
 * outermost failing constant part is reported. */
bool og_expr_check_constants(const og_expr *e, const char *what, og_diag *d) {
  if (!e) return true;
  if (!og_expr_has_names(e)) {
    int64_t v;
    if (og_expr_eval(e, NULL, NULL, &v)) return true;
    og_diag_error(d, e->loc, "%s has a constant part that divides by zero or overflows int64", what);
    return false;
  }
  bool ok = og_expr_check_constants(e->a, what, d) && og_expr_check_constants(e->b, what, d);
  /* "n / 0": the divisor alone is a constant that computes fine, but is zero. */
  bool divides =
      (e->kind == OG_E_BIN && (e->op == '/' || e->op == '%')) || (e->kind == OG_E_CALL && strcmp(e->name, "cdiv") == 0);
  int64_t divisor;
  if (ok && divides && !og_expr_has_names(e->b) && og_expr_eval(e->b, NULL, NULL, &divisor) && divisor == 0) {
    og_diag_error(d, e->b->loc, "%s divides by zero", what);
    return false;
  }
  return ok;
}
