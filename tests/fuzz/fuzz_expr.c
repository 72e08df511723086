/* libFuzzer target: the bytes (up to the first newline or NUL) are one shape
 * expression, as a spec's shape dim, launch extent or shared_mem size would hold.
 *
 * Besides the sanitizers' findings (crash, leak, UB) it aborts when one of these
 * promises of generator/expr.h breaks:
 *   - a rejected expression always comes with an error message;
 *   - the C rendering reparses to the same tree (expr.c: "render(parse(s)) reparses
 *     to the same tree"), so no operator lost its parentheses;
 *   - og_expr_eval fails exactly when a wide (128-bit) evaluation divides by zero or
 *     leaves int64, and otherwise agrees with it.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/expr.h"

/* Every name is bound, to its length mod 4: the fuzzer picks a name's value (0 too,
 * for division by zero) by its length. */
static int64_t opspec_fuzz_value(const char *name) { return (int64_t)(strlen(name) % 4); }

static bool opspec_fuzz_lookup(const char *name, int64_t *value, void *ud) {
  (void)ud;
  *value = opspec_fuzz_value(name);
  return true;
}

static void opspec_fuzz_spell(og_buf *out, const char *name, void *ud) {
  (void)ud;
  og_buf_printf(out, "v_%s", name);
}

static void opspec_fuzz_count_name(const og_expr *name_node, void *ud) {
  (void)name_node;
  ++*(size_t *)ud;
}

static void opspec_fuzz_fail(const char *what, const char *text) {
  fprintf(stderr, "fuzz_expr: %s\n  expression: %s\n", what, text);
  abort();
}

/* ---- the round trip ----------------------------------------------------------- */

static bool opspec_fuzz_same_tree(const og_expr *x, const og_expr *y) {
  if (!x || !y) return x == y;
  if (x->kind != y->kind) return false;
  switch (x->kind) {
    case OG_E_INT:
      return x->ival == y->ival;
    case OG_E_NAME:
      return strcmp(x->name, y->name) == 0;
    case OG_E_NEG:
      return opspec_fuzz_same_tree(x->a, y->a);
    case OG_E_BIN:
    case OG_E_CALL:
      if (x->kind == OG_E_BIN ? x->op != y->op : strcmp(x->name, y->name) != 0) return false;
      return opspec_fuzz_same_tree(x->a, y->a) && opspec_fuzz_same_tree(x->b, y->b);
  }
  return false;
}

/* "--a" renders as "-(-a)" (C would read "--" as a decrement), which nests one level
 * deeper than the input did; near the depth limit such a rendering may not reparse. */
static bool opspec_fuzz_has_double_negation(const og_expr *e) {
  if (!e) return false;
  if (e->kind == OG_E_NEG && e->a->kind == OG_E_NEG) return true;
  return opspec_fuzz_has_double_negation(e->a) || opspec_fuzz_has_double_negation(e->b);
}

/* The C rendering spells calls opspec_min( / opspec_max( / opspec_cdiv(; drop the
 * prefix to get back the expression language. A rendered name is never followed by
 * '(', so only calls match. */
static char *opspec_fuzz_unprefix_calls(const char *c_text) {
  static const char *const calls[] = {"min(", "max(", "cdiv("};
  og_buf out = {0};
  for (const char *p = c_text; *p;) {
    bool call = false;
    for (size_t i = 0; i < sizeof calls / sizeof *calls && strncmp(p, "opspec_", 7) == 0; ++i)
      call |= strncmp(p + 7, calls[i], strlen(calls[i])) == 0;
    if (call)
      p += 7;
    else
      og_buf_putc(&out, *p++);
  }
  return og_buf_take(&out);
}

static void opspec_fuzz_round_trip(const og_expr *e, const char *c_text, const char *text) {
  char *again_text = opspec_fuzz_unprefix_calls(c_text);
  og_source *src = og_source_from_string("<rendered>", again_text);
  og_diag d = {0};
  og_expr *again = og_expr_parse(src->text, (og_loc){src, 1, 1}, &d);
  if (!again && !opspec_fuzz_has_double_negation(e)) {
    fprintf(stderr, "%s  rendered: %s\n", og_buf_str(&d.out), c_text);
    opspec_fuzz_fail("the C rendering does not reparse", text);
  }
  if (again && !opspec_fuzz_same_tree(e, again)) {
    fprintf(stderr, "  rendered: %s\n", c_text);
    opspec_fuzz_fail("the C rendering reparses to a different tree", text);
  }
  og_expr_free(again);
  og_diag_free(&d);
  og_source_free(src);
  free(again_text);
}

/* ---- the reference evaluator ------------------------------------------------- */

/* 128 bits hold every intermediate of one operator on int64 operands, so leaving the
 * int64 range is a plain comparison here. (__int128 is a clang/gcc extension.) */
__extension__ typedef __int128 opspec_fuzz_wide;

static opspec_fuzz_wide opspec_fuzz_floor_div(opspec_fuzz_wide a, opspec_fuzz_wide b) {
  opspec_fuzz_wide q = a / b;
  return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

static bool opspec_fuzz_ref_eval(const og_expr *e, int64_t *out) {
  int64_t a = 0, b = 0;
  opspec_fuzz_wide r = 0;
  switch (e->kind) {
    case OG_E_INT:
      *out = e->ival;
      return true;
    case OG_E_NAME:
      *out = opspec_fuzz_value(e->name);
      return true;
    case OG_E_NEG:
      if (!opspec_fuzz_ref_eval(e->a, &a)) return false;
      r = -(opspec_fuzz_wide)a;
      break;
    case OG_E_BIN:
    case OG_E_CALL:
      if (!opspec_fuzz_ref_eval(e->a, &a) || !opspec_fuzz_ref_eval(e->b, &b)) return false;
      if (e->kind == OG_E_CALL && strcmp(e->name, "min") == 0)
        r = a < b ? a : b;
      else if (e->kind == OG_E_CALL && strcmp(e->name, "max") == 0)
        r = a > b ? a : b;
      else if (e->kind == OG_E_CALL) /* cdiv: minus the floor of -a / b */
        r = b == 0 ? 0 : -opspec_fuzz_floor_div(-(opspec_fuzz_wide)a, b);
      else if (e->op == '+')
        r = (opspec_fuzz_wide)a + b;
      else if (e->op == '-')
        r = (opspec_fuzz_wide)a - b;
      else if (e->op == '*')
        r = (opspec_fuzz_wide)a * b;
      else if (e->op == '/')
        r = b == 0 ? 0 : (opspec_fuzz_wide)a / b;
      else
        r = b == 0 ? 0 : (opspec_fuzz_wide)a % b;
      if (b == 0 && (e->kind == OG_E_CALL ? strcmp(e->name, "cdiv") == 0 : (e->op == '/' || e->op == '%')))
        return false;
      /* C leaves a % b undefined when a / b overflows (C11 6.5.5p6): INT64_MIN % -1. */
      if (e->kind == OG_E_BIN && e->op == '%' && a == INT64_MIN && b == -1) return false;
      break;
  }
  if (r < INT64_MIN || r > INT64_MAX) return false;
  *out = (int64_t)r;
  return true;
}

static void opspec_fuzz_check_eval(const og_expr *e, const char *text) {
  int64_t got = 0, want = 0;
  bool got_ok = og_expr_eval(e, opspec_fuzz_lookup, NULL, &got);
  bool want_ok = opspec_fuzz_ref_eval(e, &want);
  if (got_ok != want_ok)
    opspec_fuzz_fail(got_ok ? "og_expr_eval accepted an overflow or a division by zero"
                            : "og_expr_eval failed on a computable expression",
                     text);
  if (got_ok && got != want) {
    fprintf(stderr, "  og_expr_eval: %lld, reference: %lld\n", (long long)got, (long long)want);
    opspec_fuzz_fail("og_expr_eval computed a wrong value", text);
  }
}

/* ---- the target --------------------------------------------------------------- */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = og_xstrndup((const char *)data, size); /* stops at a NUL */
  text[strcspn(text, "\n")] = '\0';                   /* expressions are one line */
  og_source *src = og_source_from_string("<fuzz>", text);
  og_diag d = {0};
  og_expr *e = og_expr_parse(src->text, (og_loc){src, 1, 1}, &d);
  if (!e && d.errors == 0) opspec_fuzz_fail("rejected without an error message", text);

  if (e) {
    og_buf c = {0}, py = {0}, c_spelled = {0};
    og_expr_render_c(e, &c, NULL, NULL);
    og_expr_render_c(e, &c_spelled, opspec_fuzz_spell, NULL);
    og_expr_render_py(e, &py, opspec_fuzz_spell, NULL);
    size_t names = 0;
    og_expr_visit_names(e, opspec_fuzz_count_name, &names);
    (void)og_expr_is_atom(e);
    int64_t unbound = 0;
    /* With no lookup, any name makes evaluation fail. */
    if (names > 0 && og_expr_eval(e, NULL, NULL, &unbound)) opspec_fuzz_fail("evaluated an unbound name", text);
    opspec_fuzz_check_eval(e, text);
    opspec_fuzz_round_trip(e, og_buf_str(&c), text);
    og_buf_free(&c);
    og_buf_free(&c_spelled);
    og_buf_free(&py);
    og_expr_free(e);
  }
  og_diag_free(&d);
  og_source_free(src);
  free(text);
  return 0;
}
