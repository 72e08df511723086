/* Tests for generator/expr.c: parsing, both renderers, evaluation, name visiting and
 * every parse error with its exact location, message, quoted line and caret. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "model/expr.h"
#include "opspec/limits.h"

/* Parses `text` as the whole of line 1 of "e.yaml"; returns NULL on error. */
static og_expr *parse_ok(const char *text, og_source **src) {
  og_diag d = {0};
  *src = og_source_from_string("e.yaml", text);
  og_expr *e = og_expr_parse(text, (og_loc){*src, 1, 1}, &d);
  if (!e) fprintf(stderr, "unexpected parse error:\n%s", og_buf_str(&d.out));
  og_diag_free(&d);
  return e;
}

/* Renders `text` in C (py = false) or Python; returns a malloc'd string. */
static char *render(const char *text, bool py, og_expr_spell_fn *spell) {
  og_source *src;
  og_expr *e = parse_ok(text, &src);
  og_buf out = {0};
  if (e) {
    if (py)
      og_expr_render_py(e, &out, spell, NULL);
    else
      og_expr_render_c(e, &out, spell, NULL);
  } else {
    og_buf_puts(&out, "(parse failed)");
  }
  og_expr_free(e);
  og_source_free(src);
  return og_buf_take(&out);
}

#define CHECK_C(text, want)                   \
  do {                                        \
    char *got_ = render((text), false, NULL); \
    OG_CHECK_STR(got_, (want));               \
    free(got_);                               \
  } while (0)

#define CHECK_PY(text, want)                 \
  do {                                       \
    char *got_ = render((text), true, NULL); \
    OG_CHECK_STR(got_, (want));              \
    free(got_);                              \
  } while (0)

/* Parsing the rendering again must give the same rendering: the renderer kept the
 * tree's meaning and structure. */
static void check_stable(const char *text) {
  char *once = render(text, false, NULL);
  char *twice = render(once, false, NULL);
  OG_CHECK_STR(twice, once);
  free(once);
  free(twice);
}

/* Parses `text` at `col` of a one-line source `line`; returns the diagnostics text
 * (malloc'd) and checks that parsing failed with exactly one error. */
static char *parse_err_at(const char *line, int col) {
  og_diag d = {0};
  og_source *src = og_source_from_string("e.yaml", line);
  og_expr *e = og_expr_parse(line + col - 1, (og_loc){src, 1, col}, &d);
  OG_CHECK(e == NULL);
  OG_CHECK(d.errors == 1);
  og_expr_free(e);
  og_source_free(src);
  return og_buf_take(&d.out);
}

#define CHECK_ERR_AT(line, col, want)         \
  do {                                        \
    char *got_ = parse_err_at((line), (col)); \
    OG_CHECK_STR(got_, (want));               \
    free(got_);                               \
  } while (0)

#define CHECK_ERR(text, want) CHECK_ERR_AT((text), 1, (want))

static void test_render_c(void) {
  CHECK_C("n", "n");
  CHECK_C("  42 ", "42");
  CHECK_C("0", "0");
  CHECK_C("9223372036854775807", "9223372036854775807");
  CHECK_C("n*c+1", "n * c + 1");
  CHECK_C("(n * c) + 1", "n * c + 1");
  CHECK_C("n * (c + 1)", "n * (c + 1)");
  CHECK_C("(a + b) * (c - d)", "(a + b) * (c - d)");
  /* Left associativity: parentheses on the left are redundant, on the right not. */
  CHECK_C("(a - b) - c", "a - b - c");
  CHECK_C("a - (b - c)", "a - (b - c)");
  CHECK_C("a - b - c", "a - b - c");
  CHECK_C("(a / b) * c", "a / b * c");
  CHECK_C("a / (b * c)", "a / (b * c)");
  CHECK_C("a / b * c", "a / b * c");
  CHECK_C("a % (b % c)", "a % (b % c)");
  CHECK_C("a + (b * c)", "a + b * c");
  CHECK_C("((((x))))", "x");
  /* Unary minus. */
  CHECK_C("-n", "-n");
  CHECK_C("-(a + b)", "-(a + b)");
  CHECK_C("-(a * b)", "-(a * b)");
  CHECK_C("(-a) * b", "-a * b");
  CHECK_C("-a * b", "-a * b");
  CHECK_C("a - -b", "a - -b");
  CHECK_C("--a", "-(-a)"); /* never C's decrement operator */
  CHECK_C("-min(a, b)", "-opspec_min(a, b)");
  /* Functions. */
  CHECK_C("min(a,b)", "opspec_min(a, b)");
  CHECK_C("max( a , b+1 )", "opspec_max(a, b + 1)");
  CHECK_C("cdiv(n, 256)", "opspec_cdiv(n, 256)");
  CHECK_C("cdiv(n * c, min(256, n)) * 4", "opspec_cdiv(n * c, opspec_min(256, n)) * 4");
  CHECK_C("x_size / 4 % 3", "x_size / 4 % 3");

  check_stable("a - (b - (c - d))");
  check_stable("-(-(a / (b / c)))");
  check_stable("(a - (b + c)) % -(d % e) * (f * g) / -(-h)");
}

static void test_render_py(void) {
  CHECK_PY("n / 4", "n // 4");
  CHECK_PY("n % 4", "n % 4");
  CHECK_PY("a / (b * c)", "a // (b * c)");
  CHECK_PY("a - (b - c)", "a - (b - c)");
  CHECK_PY("min(a, b)", "_min(a, b)");
  CHECK_PY("max(a, b) + 1", "_max(a, b) + 1");
  CHECK_PY("cdiv(n, 256)", "-(-(n) // (256))");
  CHECK_PY("cdiv(a + b, c * 2) * 3", "-(-(a + b) // (c * 2)) * 3");
  CHECK_PY("-(a + b)", "-(a + b)");
  CHECK_PY("--a", "-(-a)");
}

static void spell_py(og_buf *out, const char *name, void *ud) {
  (void)ud;
  og_buf_printf(out, "s[\"%s\"]", name);
}

static void spell_c(og_buf *out, const char *name, void *ud) { og_buf_printf(out, "%s->%s", (const char *)ud, name); }

static void test_spell(void) {
  char *py = render("cdiv(n, block) + x_size", true, spell_py);
  OG_CHECK_STR(py, "-(-(s[\"n\"]) // (s[\"block\"])) + s[\"x_size\"]");
  free(py);

  og_source *src;
  og_expr *e = parse_ok("max(n, 1) * c", &src);
  og_buf out = {0};
  og_expr_render_c(e, &out, spell_c, "shape");
  OG_CHECK_STR(og_buf_str(&out), "opspec_max(shape->n, 1) * shape->c");
  og_buf_free(&out);
  og_expr_free(e);
  og_source_free(src);
}

typedef struct {
  const char *name;
  int64_t value;
} binding;

static bool lookup(const char *name, int64_t *value, void *ud) {
  for (const binding *b = ud; b->name; ++b)
    if (strcmp(b->name, name) == 0) {
      *value = b->value;
      return true;
    }
  return false;
}

static const binding env[] = {{"n", 1000}, {"c", 3}, {"zero", 0}, {"big", INT64_MAX}, {NULL, 0}};

/* Evaluates `text`; returns whether evaluation succeeded and stores the value. */
static bool eval(const char *text, int64_t *v) {
  og_source *src;
  og_expr *e = parse_ok(text, &src);
  *v = -12345;
  bool ok = e && og_expr_eval(e, lookup, (void *)env, v);
  og_expr_free(e);
  og_source_free(src);
  return ok;
}

#define CHECK_EVAL(text, want)       \
  do {                               \
    int64_t v_;                      \
    OG_CHECK(eval((text), &v_));     \
    OG_CHECK(v_ == (int64_t)(want)); \
  } while (0)

#define CHECK_EVAL_FAILS(text)    \
  do {                            \
    int64_t v_;                   \
    OG_CHECK(!eval((text), &v_)); \
  } while (0)

static void test_eval(void) {
  CHECK_EVAL("7", 7);
  CHECK_EVAL("n * c + 1", 3001);
  CHECK_EVAL("n - 10 - 20", 970);
  CHECK_EVAL("n - (10 - 20)", 1010);
  CHECK_EVAL("n / 10 / 5", 20);
  CHECK_EVAL("n / (10 / 5)", 500);
  CHECK_EVAL("n % 7", 1000 % 7);
  CHECK_EVAL("2 + 3 * 4", 14);
  CHECK_EVAL("-c * 2", -6);
  CHECK_EVAL("-(c + 2)", -5);
  CHECK_EVAL("--c", 3);
  CHECK_EVAL("min(n, 256)", 256);
  CHECK_EVAL("max(n, 256)", 1000);
  CHECK_EVAL("cdiv(n, 256)", 4);
  CHECK_EVAL("cdiv(1024, 256)", 4);
  CHECK_EVAL("cdiv(0, 256)", 0);
  CHECK_EVAL("cdiv(-7, 2)", -3); /* the ceiling, as Python's -(-a // b) */
  CHECK_EVAL("cdiv(7, -2)", -3);
  CHECK_EVAL("cdiv(-7, -2)", 4);
  CHECK_EVAL("cdiv(n, 256) * 256 - n", 24);
  CHECK_EVAL("big", INT64_MAX);

  CHECK_EVAL_FAILS("unknown + 1");
  CHECK_EVAL_FAILS("n / zero");
  CHECK_EVAL_FAILS("n % zero");
  CHECK_EVAL_FAILS("n / (c - 3)");
  CHECK_EVAL_FAILS("cdiv(n, zero)");
  CHECK_EVAL_FAILS("max(1, nope)");
  CHECK_EVAL_FAILS("big + 1");
  CHECK_EVAL_FAILS("big * 2");
  CHECK_EVAL_FAILS("-big - 2");

  /* No lookup at all: only literals evaluate. */
  og_source *src;
  og_expr *e = parse_ok("2 * 21", &src);
  int64_t v = 0;
  OG_CHECK(og_expr_eval(e, NULL, NULL, &v) && v == 42);
  og_expr_free(e);
  og_source_free(src);
}

static void collect(const og_expr *name_node, void *ud) {
  og_buf *b = ud;
  og_buf_printf(b, "%s@%d ", name_node->name, name_node->loc.col);
}

static void test_names_and_locs(void) {
  og_source *src;
  og_expr *e = parse_ok("cdiv(n, block) + -x_size * n", &src);
  og_buf names = {0};
  og_expr_visit_names(e, collect, &names);
  /* In order of appearance, repeats included, function names excluded. */
  OG_CHECK_STR(og_buf_str(&names), "n@6 block@9 x_size@19 n@28 ");
  og_buf_free(&names);

  OG_CHECK(e->kind == OG_E_BIN && e->op == '+');
  OG_CHECK(e->loc.line == 1 && e->loc.col == 1);
  OG_CHECK(e->a->kind == OG_E_CALL && strcmp(e->a->name, "cdiv") == 0 && e->a->loc.col == 1);
  OG_CHECK(e->b->kind == OG_E_BIN && e->b->op == '*');
  OG_CHECK(e->b->a->kind == OG_E_NEG && e->b->a->loc.col == 18);
  OG_CHECK(e->loc.src == src);
  OG_CHECK(!og_expr_is_atom(e));
  OG_CHECK(og_expr_is_atom(e->a->a));
  OG_CHECK(og_expr_is_atom(e->a->b));
  og_expr_free(e);
  og_source_free(src);

  e = parse_ok("17", &src);
  OG_CHECK(og_expr_is_atom(e) && e->kind == OG_E_INT && e->ival == 17);
  og_expr_free(e);
  og_source_free(src);
  OG_CHECK(!og_expr_is_atom(NULL));
}

static void test_errors(void) {
  CHECK_ERR("n + # 2",
            "e.yaml:1:5: error: unexpected character '#'\n"
            " 1 | n + # 2\n"
            "   |     ^\n");
  CHECK_ERR("n * ",
            "e.yaml:1:5: error: unexpected end of expression\n"
            " 1 | n * \n"
            "   |     ^\n");
  CHECK_ERR("-",
            "e.yaml:1:2: error: unexpected end of expression\n"
            " 1 | -\n"
            "   |  ^\n");
  CHECK_ERR("(n + 1",
            "e.yaml:1:7: error: missing ')'\n"
            " 1 | (n + 1\n"
            "   |       ^\n"
            "e.yaml:1:1: note: to match this '('\n"
            " 1 | (n + 1\n"
            "   | ^\n");
  CHECK_ERR("(n + 1 c",
            "e.yaml:1:8: error: unexpected character 'c', expected ')'\n"
            " 1 | (n + 1 c\n"
            "   |        ^\n");
  CHECK_ERR("min(a, b",
            "e.yaml:1:9: error: missing ')'\n"
            " 1 | min(a, b\n"
            "   |         ^\n"
            "e.yaml:1:4: note: to match this '('\n"
            " 1 | min(a, b\n"
            "   |    ^\n");
  CHECK_ERR("min(a b)",
            "e.yaml:1:7: error: unexpected character 'b', expected ',' or ')'\n"
            " 1 | min(a b)\n"
            "   |       ^\n");
  CHECK_ERR("n)",
            "e.yaml:1:2: error: unmatched ')'\n"
            " 1 | n)\n"
            "   |  ^\n");
  CHECK_ERR("()",
            "e.yaml:1:2: error: unexpected character ')'\n"
            " 1 | ()\n"
            "   |  ^\n");
  CHECK_ERR("   ",
            "e.yaml:1:1: error: empty expression\n"
            " 1 |    \n"
            "   | ^\n");
  CHECK_ERR("",
            "e.yaml:1:1: error: empty expression\n"
            " 1 | \n"
            "   | ^\n");
  CHECK_ERR("n + foo(1, 2)",
            "e.yaml:1:5: error: unknown function 'foo' (expected min, max or cdiv)\n"
            " 1 | n + foo(1, 2)\n"
            "   |     ^\n");
  CHECK_ERR("cdiv(n)",
            "e.yaml:1:1: error: cdiv expects 2 arguments, got 1\n"
            " 1 | cdiv(n)\n"
            "   | ^\n");
  CHECK_ERR("2 * max(a, b, c)",
            "e.yaml:1:5: error: max expects 2 arguments, got 3\n"
            " 1 | 2 * max(a, b, c)\n"
            "   |     ^\n");
  CHECK_ERR("min()",
            "e.yaml:1:1: error: min expects 2 arguments, got 0\n"
            " 1 | min()\n"
            "   | ^\n");
  CHECK_ERR("min(a,)",
            "e.yaml:1:7: error: unexpected character ')'\n"
            " 1 | min(a,)\n"
            "   |       ^\n");
  CHECK_ERR("n * 99999999999999999999",
            "e.yaml:1:5: error: integer literal '99999999999999999999' is too large\n"
            " 1 | n * 99999999999999999999\n"
            "   |     ^\n");
  /* One past INT64_MAX is already too large. */
  CHECK_ERR("9223372036854775808",
            "e.yaml:1:1: error: integer literal '9223372036854775808' is too large\n"
            " 1 | 9223372036854775808\n"
            "   | ^\n");
  /* Trailing garbage after a complete expression. */
  CHECK_ERR("2n",
            "e.yaml:1:2: error: unexpected character 'n', expected an operator\n"
            " 1 | 2n\n"
            "   |  ^\n");
  CHECK_ERR("n m",
            "e.yaml:1:3: error: unexpected character 'm', expected an operator\n"
            " 1 | n m\n"
            "   |   ^\n");
  CHECK_ERR("n ^ 2",
            "e.yaml:1:3: error: unexpected character '^', expected an operator\n"
            " 1 | n ^ 2\n"
            "   |   ^\n");
  CHECK_ERR("n + \x01",
            "e.yaml:1:5: error: unexpected character '\\x01'\n"
            " 1 | n + \x01\n"
            "   |     ^\n");

  /* The expression starts mid-line (as inside a YAML flow sequence): columns are
   * counted from the source line, not from the expression text. */
  CHECK_ERR_AT("  shape: [cdiv(n), c]", 11,
               "e.yaml:1:11: error: cdiv expects 2 arguments, got 1\n"
               " 1 |   shape: [cdiv(n), c]\n"
               "   |           ^\n");
  CHECK_ERR_AT("grid: n + * 4", 7,
               "e.yaml:1:11: error: unexpected character '*'\n"
               " 1 | grid: n + * 4\n"
               "   |           ^\n");
}

static void test_depth(void) {
  /* Pathological nesting is an error, not a stack overflow. */
  og_buf text = {0};
  for (int i = 0; i < 10000; ++i) og_buf_putc(&text, '(');
  og_buf_putc(&text, 'n');
  for (int i = 0; i < 10000; ++i) og_buf_putc(&text, ')');
  og_diag d = {0};
  og_expr *e = og_expr_parse(og_buf_str(&text), (og_loc){NULL, 1, 1}, &d);
  OG_CHECK(e == NULL);
  OG_CHECK(d.errors == 1);
  OG_CHECK_CONTAINS(og_buf_str(&d.out), "expression nested too deeply");
  og_diag_free(&d);
  og_buf_free(&text);

  /* Nesting up to the limit is fine (the outermost level counts as one). */
  for (int i = 0; i < OPSPEC_MAX_EXPR_DEPTH - 1; ++i) og_buf_putc(&text, '(');
  og_buf_putc(&text, 'n');
  for (int i = 0; i < OPSPEC_MAX_EXPR_DEPTH - 1; ++i) og_buf_putc(&text, ')');
  char *r = render(og_buf_str(&text), false, NULL);
  OG_CHECK_STR(r, "n");
  free(r);
  og_buf_free(&text);
}

/* A flat chain nests no deeper but grows: 200,000 terms once overflowed the stack. */
static void test_size(void) {
  og_buf text = {0};
  og_buf_puts(&text, "n");
  for (int i = 1; i < 200000; ++i) og_buf_puts(&text, " + n");
  og_diag d = {0};
  og_expr *e = og_expr_parse(og_buf_str(&text), (og_loc){NULL, 1, 1}, &d);
  OG_CHECK(e == NULL);
  OG_CHECK(d.errors == 1);
  OG_CHECK_CONTAINS(og_buf_str(&d.out), "expression has more than 128 terms and operators");
  og_diag_free(&d);
  og_buf_free(&text);

  /* Exactly at the limit: 64 terms and 63 operators, plus one unary minus. */
  og_buf_puts(&text, "-n");
  for (int i = 1; i < 64; ++i) og_buf_puts(&text, " * n");
  d = (og_diag){0};
  e = og_expr_parse(og_buf_str(&text), (og_loc){NULL, 1, 1}, &d);
  OG_CHECK(e != NULL && d.errors == 0);
  og_expr_free(e);
  og_buf_puts(&text, " - 1");
  e = og_expr_parse(og_buf_str(&text), (og_loc){NULL, 1, 1}, &d);
  OG_CHECK(e == NULL && d.errors == 1);
  og_diag_free(&d);
  og_buf_free(&text);
}

static char *render_checked(const char *text) {
  og_diag d = {0};
  og_expr *e = og_expr_parse(text, (og_loc){NULL, 1, 1}, &d);
  OG_CHECK(e != NULL);
  og_buf out = {0};
  if (e) og_expr_render_c_checked(e, &out, NULL, NULL);
  og_expr_free(e);
  og_diag_free(&d);
  return og_buf_take(&out);
}

static void test_render_checked(void) {
  char *r = render_checked("n");
  OG_CHECK_STR(r, "n");
  free(r);
  r = render_checked("(rows_p1 - 1) * 2 / m % 3");
  OG_CHECK_STR(r, "opspec_safe_mod(opspec_safe_div(opspec_safe_mul(opspec_safe_sub(rows_p1, 1), 2), m), 3)");
  free(r);
  r = render_checked("-cdiv(n, 256) + max(a, min(b, 4))");
  OG_CHECK_STR(r,
               "opspec_safe_add(opspec_safe_neg(opspec_safe_cdiv(n, 256)), opspec_safe_max(a, opspec_safe_min(b, 4)))");
  free(r);
}

/* Constant parts that C would reject under -Werror are errors, located at the part. */
static void test_constants(void) {
  static const struct {
    const char *text, *message;
  } cases[] = {
      {"n / 0", "e.yaml:1:5: error: shape divides by zero\n"},
      {"n % (2 - 2)", "e.yaml:1:6: error: shape divides by zero\n"},
      {"cdiv(n, 0)", "e.yaml:1:9: error: shape divides by zero\n"},
      {"n * (9223372036854775807 + 1)",
       "e.yaml:1:6: error: shape has a constant part that divides by zero or overflows int64\n"},
      {"m * (4 / 0)", "e.yaml:1:6: error: shape has a constant part that divides by zero or overflows int64\n"},
  };
  og_source *src = og_source_from_string("e.yaml", "");
  for (size_t i = 0; i < sizeof cases / sizeof *cases; ++i) {
    og_diag d = {0};
    og_expr *e = og_expr_parse(cases[i].text, (og_loc){src, 1, 1}, &d);
    OG_CHECK(e != NULL);
    OG_CHECK(!og_expr_check_constants(e, "shape", &d));
    OG_CHECK(d.errors == 1);
    OG_CHECK(strncmp(og_buf_str(&d.out), cases[i].message, strlen(cases[i].message)) == 0);
    if (strncmp(og_buf_str(&d.out), cases[i].message, strlen(cases[i].message)) != 0)
      fprintf(stderr, "%s: got %s", cases[i].text, og_buf_str(&d.out));
    og_expr_free(e);
    og_diag_free(&d);
  }
  og_diag d = {0};
  og_expr *e = og_expr_parse("n / (m - 0) + 4 % 3 - 9223372036854775807", (og_loc){src, 1, 1}, &d);
  OG_CHECK(e && og_expr_check_constants(e, "shape", &d) && d.errors == 0);
  og_expr_free(e);
  og_diag_free(&d);
  og_source_free(src);
}

int main(void) {
  test_render_c();
  test_render_py();
  test_spell();
  test_eval();
  test_names_and_locs();
  test_errors();
  test_depth();
  test_size();
  test_render_checked();
  test_constants();
  return og_check_report("test_expr");
}
