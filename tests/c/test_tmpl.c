/* Unit tests for the template engine: exact output for every construct and whitespace
 * rule, the exact "name:LINE:COL: error:" of every error, the clear errors for the
 * Jinja syntax the engine dropped, and the depth limits.
 *
 * Templates are written to a temporary directory and rendered through
 * og_tmpl_env_new(dir), the way opspec-gen loads them. Messages name a template
 * "DIR/t.tmpl"; the tests strip "DIR/" so the expectations read "t.tmpl:1:4: ...".
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "render/tmpl.h"

/* ---- fixtures -------------------------------------------------------------------- */

static char og_test_dir[] = "/tmp/og_test_tmpl_XXXXXX";

/* Writes template `name` into the test directory. */
static void og_test_write(const char *name, const char *text) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", og_test_dir, name);
  FILE *f = fopen(path, "wb");
  size_t n = strlen(text);
  if (!f || fwrite(text, 1, n, f) != n || fclose(f) != 0) {
    fprintf(stderr, "test_tmpl: cannot write %s\n", path);
    exit(2);
  }
}

static void og_test_cleanup(void) {
  DIR *dir = opendir(og_test_dir);
  if (!dir) return;
  struct dirent *ent;
  char path[512];
  while ((ent = readdir(dir))) {
    if (strcmp(ent->d_name, ".") == 0 || strcmp(ent->d_name, "..") == 0) continue;
    snprintf(path, sizeof path, "%s/%s", og_test_dir, ent->d_name);
    unlink(path);
  }
  closedir(dir);
  rmdir(og_test_dir);
}

/* Removes every "DIR/" from `s`, in place. */
static void og_test_strip_dir(char *s) {
  size_t n = strlen(og_test_dir);
  char *w = s;
  for (const char *r = s; *r;) {
    if (strncmp(r, og_test_dir, n) == 0 && r[n] == '/') {
      r += n + 1;
      continue;
    }
    *w++ = *r++;
  }
  *w = '\0';
}

static og_value *og_test_arg(const char *name, const char *dtype, const char *ctype, const char *sep) {
  og_value *a = og_value_map();
  og_map_set_str(a, "name", name);
  og_map_set_str(a, "dtype", dtype);
  og_map_set_str(a, "ctype", ctype);
  og_map_set_str(a, "sep", sep);
  return a;
}

static og_value *og_test_str_list(const char *const *items, size_t n) {
  og_value *l = og_value_list();
  for (size_t i = 0; i < n; ++i) og_list_push(l, og_value_str(items[i]));
  return l;
}

/* The context most tests render against. */
static og_value *og_test_ctx(void) {
  static const char *const names[] = {"a", "b", "c"};
  static const char *const xy[] = {"x", "y"};
  static const char *const z[] = {"z"};
  og_value *ctx = og_value_map();
  og_map_set_str(ctx, "name", "add");
  og_map_set_int(ctx, "n", 3);
  og_map_set_int(ctx, "zero", 0);
  og_map_set_int(ctx, "neg", -7);
  og_map_set_int(ctx, "big", INT64_MAX);
  og_map_set_int(ctx, "small", INT64_MIN);
  og_map_set_bool(ctx, "t", true);
  og_map_set_bool(ctx, "f", false);
  og_map_set(ctx, "nul", og_value_null());
  og_map_set_str(ctx, "empty", "");
  og_map_set_str(ctx, "text", "line1\n  {{ not a tag }}\n");
  og_map_set(ctx, "names", og_test_str_list(names, 3));
  og_value *nums = og_value_list();
  og_list_push(nums, og_value_int(1));
  og_list_push(nums, og_value_int(20));
  og_map_set(ctx, "nums", nums);
  og_value *once = og_value_list(); /* a for over it is an "if" that always holds */
  og_list_push(once, og_value_int(1));
  og_map_set(ctx, "once", once);
  og_map_set(ctx, "empty_list", og_value_list());
  og_value *mixed = og_value_list();
  og_list_push(mixed, og_value_str("x"));
  og_list_push(mixed, og_value_int(2));
  og_list_push(mixed, og_value_bool(true));
  og_list_push(mixed, og_value_null());
  og_map_set(ctx, "mixed", mixed);
  og_value *nested = og_value_list();
  og_list_push(nested, og_test_str_list(xy, 2));
  og_list_push(nested, og_test_str_list(z, 1));
  og_map_set(ctx, "nested", nested);

  og_value *op = og_value_map();
  og_map_set_str(op, "name", "matmul");
  og_map_set_str(op, "dtype", "float32");
  og_map_set_str(op, "in", "keyword key");
  og_map_set_str(op, "a_1", "underscore and digit");
  og_value *args = og_value_list();
  og_list_push(args, og_test_arg("x", "float32", "float", ", "));
  og_list_push(args, og_test_arg("y", "int64", "int64_t", ", "));
  og_list_push(args, og_test_arg("out", "float64", "double", ""));
  og_map_set(op, "args", args);
  og_value *kind = og_value_map();
  og_map_set_str(kind, "deep", "bottom");
  og_value *meta = og_value_map();
  og_map_set(meta, "kind", kind);
  og_map_set(op, "meta", meta);
  og_map_set(ctx, "op", op);
  return ctx;
}

/* ---- helpers --------------------------------------------------------------------- */

/* Renders `text`, written as "t.tmpl", in a fresh env (so nothing is cached between
 * tests). Returns the output or NULL on failure; *diag gets the diagnostics with the
 * directory stripped. The caller frees both. */
static char *og_test_render(const char *text, const og_value *ctx, char **diag) {
  og_buf out = {0};
  og_diag d = {0};
  og_test_write("t.tmpl", text);
  og_tmpl_env *env = og_tmpl_env_new(og_test_dir);
  bool ok = og_tmpl_render(env, "t.tmpl", ctx, &out, &d);
  og_tmpl_env_free(env);
  /* Success and a clean og_diag must agree, or a caller could miss an error. */
  OG_CHECK(ok == (d.errors == 0));
  *diag = og_buf_take(&d.out);
  og_test_strip_dir(*diag);
  og_diag_free(&d);
  if (!ok) {
    og_buf_free(&out);
    return NULL;
  }
  return og_buf_take(&out);
}

static void og_test_out(int line, const char *text, const og_value *ctx, const char *want) {
  int failed = og_check_failed;
  char *diag;
  char *got = og_test_render(text, ctx, &diag);
  OG_CHECK_STR(got, want);
  if (og_check_failed != failed)
    fprintf(stderr, "  (test at line %d; template:\n%s\n  diagnostics:\n%s)\n", line, text, diag);
  free(got);
  free(diag);
}

/* Checks that rendering fails and the diagnostics start with `want`. */
static void og_test_err(int line, const char *text, const og_value *ctx, const char *want) {
  int failed = og_check_failed;
  char *diag;
  char *got = og_test_render(text, ctx, &diag);
  OG_CHECK(got == NULL);
  if (strncmp(diag, want, strlen(want)) == 0)
    OG_CHECK(1);
  else
    OG_CHECK_STR(diag, want);
  if (og_check_failed != failed) fprintf(stderr, "  (test at line %d; template:\n%s)\n", line, text);
  free(got);
  free(diag);
}

#define EXPECT_OUT(text, want) og_test_out(__LINE__, text, ctx, want)
#define EXPECT_ERR(text, want) og_test_err(__LINE__, text, ctx, want)

/* ---- tests ----------------------------------------------------------------------- */

static void test_text(const og_value *ctx) {
  EXPECT_OUT("", "");
  EXPECT_OUT("plain text\n", "plain text\n");
  EXPECT_OUT("{ not a tag } { % x % } { # y # }", "{ not a tag } { % x % } { # y # }");
  EXPECT_OUT("closers alone: }} %} #}", "closers alone: }} %} #}");
  EXPECT_OUT("ends in a brace {", "ends in a brace {");
  EXPECT_OUT("\xc3\xa9\t\r\n", "\xc3\xa9\t\r\n"); /* bytes pass through */
}

static void test_paths(const og_value *ctx) {
  /* Every scalar kind: strings as is, ints in decimal, bools as words, null as nothing. */
  EXPECT_OUT("{{ name }} {{ n }} {{ zero }} {{ neg }} {{ t }} {{ f }} [{{ nul }}] [{{ empty }}]",
             "add 3 0 -7 true false [] []");
  EXPECT_OUT("{{ big }}|{{ small }}", "9223372036854775807|-9223372036854775808");
  /* A string's text is not rendered again. */
  EXPECT_OUT("{{ text }}", "line1\n  {{ not a tag }}\n");
  /* Spacing inside the tag. */
  EXPECT_OUT("{{name}}{{   name   }}{{\nname\n}}{{\tname\t}}", "addaddaddadd");
  /* Dotted paths. */
  EXPECT_OUT("{{ op.name }}/{{ op.dtype }}", "matmul/float32");
  EXPECT_OUT("{{ op.meta.kind.deep }}", "bottom");
  EXPECT_OUT("{{ op . meta\n.kind. deep }}", "bottom");
  EXPECT_OUT("{{ op.a_1 }}", "underscore and digit");
  /* Only the first name is checked against Jinja's keywords: a key may be any name. */
  EXPECT_OUT("{{ op.in }}", "keyword key");
}

/* A path is an array, not a tree: its length is not bounded by the stack. */
static void test_long_paths(const og_value *ctx) {
  enum { N = 1000, HUGE = 50000 };
  og_value *deep = og_value_str("leaf");
  for (int i = 0; i < N; ++i) {
    og_value *m = og_value_map();
    og_map_set(m, "k", deep);
    deep = m;
  }
  og_buf text = {0};
  og_buf_puts(&text, "{{ k");
  for (int i = 1; i < N; ++i) og_buf_puts(&text, ".k");
  og_buf_puts(&text, " }}");
  og_test_out(__LINE__, og_buf_str(&text), deep, "leaf");
  og_value_free(deep);

  og_buf_clear(&text);
  og_buf_puts(&text, "{{ name");
  for (int i = 1; i < HUGE; ++i) og_buf_puts(&text, ".x");
  og_buf_puts(&text, " }}");
  EXPECT_ERR(og_buf_str(&text), "t.tmpl:1:9: error: cannot look up 'x' in a string (not a map)\n");
  og_buf_clear(&text);
  og_buf_puts(&text, "{% for v in nope");
  for (int i = 1; i < HUGE; ++i) og_buf_puts(&text, ".x");
  og_buf_puts(&text, " %}{% endfor %}");
  EXPECT_ERR(og_buf_str(&text), "t.tmpl:1:13: error: 'nope' is undefined\n");
  og_buf_free(&text);
}

static void test_for(const og_value *ctx) {
  EXPECT_OUT("{% for x in names %}{{ x }};{% endfor %}", "a;b;c;");
  EXPECT_OUT("{% for x in nums %}{{ x }},{% endfor %}", "1,20,");
  EXPECT_OUT("[{% for x in empty_list %}never{% endfor %}]", "[]");
  EXPECT_OUT("{% for v in mixed %}[{{ v }}]{% endfor %}", "[x][2][true][]");
  /* Nested, with the outer variable visible inside. */
  EXPECT_OUT("{% for a in names %}{% for b in nums %}{{ a }}{{ b }} {% endfor %}|{% endfor %}",
             "a1 a20 |b1 b20 |c1 c20 |");
  /* Items that are lists and maps. */
  EXPECT_OUT("{% for l in nested %}{% for x in l %}{{ x }}{% endfor %}|{% endfor %}", "xy|z|");
  EXPECT_OUT("{% for a in op.args %}{{ a.ctype }} {{ a.name }}{{ a.sep }}{% endfor %}",
             "float x, int64_t y, double out");
  /* The loop variable shadows a context name, and its scope ends at endfor. */
  EXPECT_OUT("{% for name in names %}{{ name }}{% endfor %}{{ name }}", "abcadd");
  /* An inner loop may rebind the outer name; its list is looked up before binding. */
  EXPECT_OUT("{% for x in nested %}{% for x in x %}{{ x }}{% endfor %}.{% endfor %}", "xy.z.");
  /* Spacing and a dotted list. */
  EXPECT_OUT("{%for a in op.args%}{{a.name}}{%endfor%}", "xyout");
  EXPECT_OUT("{%\n  for\ta\nin op . args\n%}{{ a.name }}{%   endfor   %}", "xyout");
}

static void test_if(const og_value *ctx) {
  /* A bool, a list or a string: true when true or non-empty. */
  EXPECT_OUT("{% if t %}yes{% endif %}", "yes");
  EXPECT_OUT("[{% if f %}yes{% endif %}]", "[]");
  EXPECT_OUT("{% if names %}some{% endif %}|{% if empty_list %}none{% endif %}", "some|");
  EXPECT_OUT("{% if name %}named{% endif %}|{% if empty %}blank{% endif %}", "named|");
  EXPECT_OUT("{% if op.name %}{{ op.name }}{% endif %}", "matmul");
  /* else, elif: the first true branch, or else. */
  EXPECT_OUT("{% if f %}a{% else %}b{% endif %}", "b");
  EXPECT_OUT("{% if t %}a{% else %}b{% endif %}", "a");
  EXPECT_OUT("{% if f %}a{% elif t %}b{% else %}c{% endif %}", "b");
  EXPECT_OUT("{% if f %}a{% elif empty_list %}b{% elif names %}c{% else %}d{% endif %}", "c");
  EXPECT_OUT("{% if f %}a{% elif f %}b{% else %}c{% endif %}", "c");
  EXPECT_OUT("{% if t %}a{% elif t %}b{% endif %}", "a");
  EXPECT_OUT("[{% if f %}a{% elif f %}b{% endif %}]", "[]");
  /* Nested in a for and around one, with the loop variable tested. */
  EXPECT_OUT("{% for l in nested %}{% for x in l %}{% if x %}{{ x }}{% endif %}{% endfor %}{% endfor %}", "xyz");
  EXPECT_OUT("{% if names %}{% for x in names %}{{ x }}{% endfor %}{% endif %}", "abc");
  EXPECT_OUT("{% if t %}{% if f %}x{% else %}{% if names %}y{% endif %}{% endif %}{% endif %}", "y");
  /* Block tags alone on their lines leave no trace. */
  EXPECT_OUT("a\n{% if f %}\nno\n{% else %}\nyes\n{% endif %}\nb\n", "a\nyes\nb\n");
  EXPECT_OUT("a\n  {% if t %}\n  in\n  {% endif %}\nb\n", "a\n  in\nb\n");
}

static void test_include(const og_value *ctx) {
  og_test_write("inner.tmpl", "{{ name }}");
  og_test_write("outer.tmpl", "<{% include \"inner.tmpl\" %}>");
  og_test_write("arg.tmpl", "{{ a.ctype }} {{ a.name }}");
  EXPECT_OUT("{% include \"inner.tmpl\" %}!", "add!");
  EXPECT_OUT("{% include 'inner.tmpl' %}|{%include\"inner.tmpl\"%}", "add|add");
  EXPECT_OUT("{% include \"outer.tmpl\" %}", "<add>");
  /* Loop variables in scope are visible to the included template. */
  EXPECT_OUT("{% for a in op.args %}{% include \"arg.tmpl\" %};{% endfor %}", "float x;int64_t y;double out;");
  /* An included template's own whitespace rules apply inside it. */
  og_test_write("block.tmpl", "{% for x in names %}\n  {{ x }}\n{% endfor %}\n");
  EXPECT_OUT("{\n{% include \"block.tmpl\" %}\n}\n", "{\n  a\n  b\n  c\n}\n");
  /* Includes are resolved when rendered: a missing one in an empty loop is no error. */
  EXPECT_OUT("{% for x in empty_list %}{% include \"absent.tmpl\" %}{% endfor %}ok", "ok");
}

/* Templates loaded from a directory, lazily, and cached for the env's lifetime. */
static void test_env(const og_value *ctx) {
  og_test_write("main.c.tmpl", "int {{ name }};\n{% include \"inc.tmpl\" %}");
  og_test_write("inc.tmpl", "/* {{ n }} */\n");
  og_tmpl_env *env = og_tmpl_env_new(og_test_dir);
  og_buf out = {0};
  og_diag d = {0};
  OG_CHECK(og_tmpl_render(env, "main.c.tmpl", ctx, &out, &d));
  OG_CHECK_STR(og_buf_str(&out), "int add;\n/* 3 */\n");
  /* Cached: changing the file does not change the next render. */
  og_test_write("inc.tmpl", "changed\n");
  og_buf_clear(&out);
  OG_CHECK(og_tmpl_render(env, "main.c.tmpl", ctx, &out, &d));
  OG_CHECK_STR(og_buf_str(&out), "int add;\n/* 3 */\n");
  /* Output is appended. */
  OG_CHECK(og_tmpl_render(env, "inc.tmpl", ctx, &out, &d));
  OG_CHECK_STR(og_buf_str(&out), "int add;\n/* 3 */\n/* 3 */\n");
  OG_CHECK(d.errors == 0);

  /* Errors name the file by its path under dir; the output so far stays. */
  og_test_write("bad.tmpl", "ok\n{{ bad }}\n");
  og_buf_clear(&out);
  OG_CHECK(!og_tmpl_render(env, "bad.tmpl", ctx, &out, &d));
  OG_CHECK_STR(og_buf_str(&out), "ok\n");
  char want[512];
  snprintf(want, sizeof want,
           "%s/bad.tmpl:2:4: error: 'bad' is undefined\n"
           " 2 | {{ bad }}\n"
           "   |    ^\n",
           og_test_dir);
  OG_CHECK_STR(og_buf_str(&d.out), want);
  og_diag_free(&d);
  d = (og_diag){0};

  /* A missing file; a failure is not cached, so once the file exists it renders. */
  og_buf_clear(&out);
  OG_CHECK(!og_tmpl_render(env, "late.tmpl", ctx, &out, &d));
  snprintf(want, sizeof want, "%s/late.tmpl: error: cannot read: ", og_test_dir);
  OG_CHECK(strncmp(og_buf_str(&d.out), want, strlen(want)) == 0);
  og_test_write("late.tmpl", "late {{ n }}");
  OG_CHECK(og_tmpl_render(env, "late.tmpl", ctx, &out, &d));
  OG_CHECK_STR(og_buf_str(&out), "late 3");
  OG_CHECK(d.errors == 1);
  og_diag_free(&d);
  d = (og_diag){0};

  /* A parse error is reported again on every render. */
  og_test_write("broken.tmpl", "{{ }}");
  OG_CHECK(!og_tmpl_render(env, "broken.tmpl", ctx, &out, &d));
  OG_CHECK(!og_tmpl_render(env, "broken.tmpl", ctx, &out, &d));
  OG_CHECK(d.errors == 2);
  og_diag_free(&d);
  d = (og_diag){0};

  /* A NULL context is an empty one. */
  og_test_write("null_ctx.tmpl", "text {# no lookups #}");
  og_buf_clear(&out);
  OG_CHECK(og_tmpl_render(env, "null_ctx.tmpl", NULL, &out, &d));
  OG_CHECK_STR(og_buf_str(&out), "text ");
  OG_CHECK(!og_tmpl_render(env, "inc.tmpl", NULL, &out, &d));
  OG_CHECK_CONTAINS(og_buf_str(&d.out), "inc.tmpl:1:7: error: 'n' is undefined\n");
  og_diag_free(&d);

  og_buf_free(&out);
  og_tmpl_env_free(env);
}

static void test_comments(const og_value *ctx) {
  EXPECT_OUT("a{# comment #}b", "ab");
  EXPECT_OUT("a{# {{ not rendered }} {% if %} {{ x | upper }} #}b", "ab");
  EXPECT_OUT("a{# multi\nline\ncomment #}b", "ab");
  EXPECT_OUT("{##}x", "x");
  EXPECT_OUT("a{# {# not nested #}b", "ab");
  EXPECT_OUT("a\n  {# own line #}\nb\n", "a\nb\n");
  EXPECT_OUT("a {# trailing #}\nb\n", "a b\n");
}

static void test_whitespace(const og_value *ctx) {
  /* Explicit stripping, including newlines, on each side of each tag kind. */
  EXPECT_OUT("a  \n  {%- for i in once %}x{% endfor %}", "ax");
  EXPECT_OUT("{% for i in once -%}\n\n  x{% endfor %}", "x");
  EXPECT_OUT("a \n {{- n -}} \n b", "a3b");
  EXPECT_OUT("a \n {{- n }} \n b", "a3 \n b");
  EXPECT_OUT("a \n {{ n -}} \n b", "a \n 3b");
  EXPECT_OUT("a \n {#- c -#} \n b", "ab");
  EXPECT_OUT("a \n {#- c #} \n b", "a \n b"); /* the newline is not right after #} */
  EXPECT_OUT("{% for x in names -%}\n  {{ x }}\n{%- endfor %}", "abc");
  EXPECT_OUT("a {{-n}}", "a3"); /* `{{-` is the strip marker even with no space after */
  /* lstrip_blocks: indentation before a block tag alone at the start of its line. */
  EXPECT_OUT("  {% for i in once %}x{% endfor %}", "x");
  EXPECT_OUT("a\n\t \t{% for i in once %}\nx\n{% endfor %}\n", "a\nx\n");
  EXPECT_OUT("a {% for i in once %}x{% endfor %}", "a x");           /* text before it */
  EXPECT_OUT("{{ n }}  {% for i in once %}x{% endfor %}\n", "3  x"); /* an output tag before it */
  EXPECT_OUT("{% for i in once %}  {% endfor %}|\n", "  |\n");       /* a block tag before it */
  EXPECT_OUT("a\n \v{% for i in once %}x{% endfor %}", "a\n \vx");   /* only spaces and tabs */
  /* trim_blocks: exactly one newline after a block tag goes. */
  EXPECT_OUT("{% for i in once %}\nx\n{% endfor %}\n", "x\n");
  EXPECT_OUT("{% for i in once %}\n\nx{% endfor %}", "\nx");
  EXPECT_OUT("{% for i in once %}x{% endfor %}\ny", "xy");   /* even after content */
  EXPECT_OUT("{% for i in once %} \nx{% endfor %}", " \nx"); /* only right after the tag */
  EXPECT_OUT("{% for i in once %}\rx{% endfor %}", "\rx");   /* a lone \r is no newline */
  EXPECT_OUT("{# c #}\r\nx", "x");
  EXPECT_OUT("a\r\n  {% for i in once %}\r\nx\r\n  {% endfor %}\r\nb", "a\r\nx\r\nb");
  og_test_write("inner.tmpl", "{{ name }}");
  EXPECT_OUT("{% include \"inner.tmpl\" %}\n!", "add!");
  /* {{ }} is never trimmed implicitly. */
  EXPECT_OUT("  {{ n }}\n", "  3\n");
  EXPECT_OUT("{{ n }}\n{{ n }}\n", "3\n3\n");
  /* `+` opts out of lstrip ({%+, {#+) and trim (+%}, +#}). */
  EXPECT_OUT("a\n  {%+ for i in once %}\n  x\n  {% endfor +%}\nb", "a\n    x\n\nb");
  EXPECT_OUT("  {#+ c +#}\nx", "  \nx");
  EXPECT_OUT("  {#+ c #}\nx", "  x");
  EXPECT_OUT("  {# c +#}\nx", "\nx");
  /* The final newline is kept. */
  EXPECT_OUT("x\n", "x\n");
  EXPECT_OUT("x\n\n", "x\n\n");

  /* Block tags on their own lines leave no blank lines; nested, indented. */
  EXPECT_OUT(
      "{% for a in names %}\n"
      "  {% for b in nums %}\n"
      "{{ a }}.{{ b }}\n"
      "  {% endfor %}\n"
      "{{ a }}:\n"
      "{% endfor %}\n",
      "a.1\na.20\na:\nb.1\nb.20\nb:\nc.1\nc.20\nc:\n");

  /* Realistic C: a parameter list, one per line, the separators computed by the
   * context; an indented loop of comments. */
  EXPECT_OUT(
      "static void {{ op.name }}_kernel(\n"
      "{% for a in op.args %}\n"
      "    {{ a.ctype }} *{{ a.name }}{{ a.sep }}\n"
      "{% endfor %}\n"
      ") {\n"
      "  {# one comment per argument #}\n"
      "  {% for a in op.args %}\n"
      "  /* {{ a.name }}: {{ a.dtype }} */\n"
      "  {% endfor %}\n"
      "}\n",
      "static void matmul_kernel(\n"
      "    float *x, \n"
      "    int64_t *y, \n"
      "    double *out\n"
      ") {\n"
      "  /* x: float32 */\n"
      "  /* y: int64 */\n"
      "  /* out: float64 */\n"
      "}\n");
  /* The same list inline. */
  EXPECT_OUT(
      "void {{ op.name }}({% for a in op.args %}{{ a.ctype }} *{{ a.name }}{{ a.sep }}"
      "{% endfor %});\n",
      "void matmul(float *x, int64_t *y, double *out);\n");
}

static void test_errors(const og_value *ctx) {
  /* Lookups. */
  EXPECT_ERR("{{ x }}", "t.tmpl:1:4: error: 'x' is undefined\n");
  EXPECT_ERR("a\nb\n  {{ x }}",
             "t.tmpl:3:6: error: 'x' is undefined\n"
             " 3 |   {{ x }}\n"
             "   |      ^\n");
  EXPECT_ERR("{{ op.nope }}", "t.tmpl:1:7: error: 'nope' is undefined (no such key in the map)\n");
  EXPECT_ERR("{{ op.meta.kind.nope }}", "t.tmpl:1:17: error: 'nope' is undefined (no such key");
  EXPECT_ERR("{{ name.x }}", "t.tmpl:1:9: error: cannot look up 'x' in a string (not a map)\n");
  EXPECT_ERR("{{ op.args.x }}", "t.tmpl:1:12: error: cannot look up 'x' in a list (not a map)\n");
  EXPECT_ERR("{{ n.x }}", "t.tmpl:1:6: error: cannot look up 'x' in a int (not a map)\n");
  EXPECT_ERR("{{ t.x }}", "t.tmpl:1:6: error: cannot look up 'x' in a bool (not a map)\n");
  EXPECT_ERR("{{ nul.x }}", "t.tmpl:1:8: error: cannot look up 'x' in a null (not a map)\n");
  EXPECT_ERR("{% for x in names %}{% endfor %}{{ x }}", "t.tmpl:1:36: error: 'x' is undefined\n");
  EXPECT_ERR("{% for x in names %}{{ x }}{{ x.y }}{% endfor %}",
             "t.tmpl:1:33: error: cannot look up 'y' in a string (not a map)\n");

  /* Printing containers. */
  EXPECT_ERR("{{ names }}", "t.tmpl:1:4: error: cannot print a list\n");
  EXPECT_ERR("x{{ op }}", "t.tmpl:1:5: error: cannot print a map\n");
  EXPECT_ERR("{{ op.args }}", "t.tmpl:1:7: error: cannot print a list\n");
  EXPECT_ERR("{% for l in nested %}{{ l }}{% endfor %}", "t.tmpl:1:25: error: cannot print a list\n");

  /* for over a non-list. */
  EXPECT_ERR("{% for x in name %}{% endfor %}", "t.tmpl:1:13: error: cannot loop over a string (not a list)\n");
  EXPECT_ERR("{% for x in op %}{% endfor %}", "t.tmpl:1:13: error: cannot loop over a map (not a list)\n");
  EXPECT_ERR("{% for x in op.name %}{% endfor %}", "t.tmpl:1:16: error: cannot loop over a string");
  EXPECT_ERR("{% for x in n %}{% endfor %}", "t.tmpl:1:13: error: cannot loop over a int");
  EXPECT_ERR("{% for x in nul %}{% endfor %}", "t.tmpl:1:13: error: cannot loop over a null");
  EXPECT_ERR("{% for x in missing %}{% endfor %}", "t.tmpl:1:13: error: 'missing' is undefined\n");

  /* Unterminated tags, comments and strings; characters no template has. */
  EXPECT_ERR("a\n{{ name", "t.tmpl:2:1: error: unterminated '{{' tag (missing '}}')\n");
  EXPECT_ERR("{{ name %}", "t.tmpl:1:9: error: unexpected character '%' in tag\n");
  EXPECT_ERR("x {% for x in names", "t.tmpl:1:3: error: unterminated '{%' tag (missing '%}')\n");
  EXPECT_ERR("{% for x in names }}{% endfor %}", "t.tmpl:1:19: error: unexpected character '}' in tag\n");
  EXPECT_ERR("a {# comment", "t.tmpl:1:3: error: unterminated comment (missing '#}')\n");
  EXPECT_ERR("{% include \"abc %}", "t.tmpl:1:12: error: unterminated string literal\n");
  EXPECT_ERR("{% include 'a\\'b' %}", "t.tmpl:1:14: error: escape sequences are not supported in strings\n");
  EXPECT_ERR("{{ a ! b }}", "t.tmpl:1:6: error: unexpected character '!' in tag\n");
  EXPECT_ERR("{{ a @ b }}", "t.tmpl:1:6: error: unexpected character '@' in tag\n");
  EXPECT_ERR("{{ a\x01 }}", "t.tmpl:1:5: error: unexpected byte 0x01 in tag\n");
  /* The lexer reads the whole file first: its errors come before the parser's. */
  EXPECT_ERR("{{ }}{{ @ }}", "t.tmpl:1:9: error: unexpected character '@' in tag\n");

  /* Unbalanced blocks. */
  EXPECT_ERR("{% for x in names %}x", "t.tmpl:1:4: error: unclosed 'for' (missing '{% endfor %}')\n");
  EXPECT_ERR("\n  {% for x in names %}{% for y in names %}{% endfor %}",
             "t.tmpl:2:6: error: unclosed 'for' (missing '{% endfor %}')\n");
  EXPECT_ERR("x{% endfor %}", "t.tmpl:1:5: error: unexpected 'endfor' with no matching opening tag\n");
  EXPECT_ERR("{% if t %}x", "t.tmpl:1:4: error: unclosed 'if' (missing '{% endif %}')\n");
  EXPECT_ERR("{% if t %}{% elif f %}x", "t.tmpl:1:14: error: unclosed 'elif' (missing '{% endif %}')\n");
  EXPECT_ERR("{% if t %}{% else %}x", "t.tmpl:1:4: error: unclosed 'if' (missing '{% endif %}')\n");
  EXPECT_ERR("x{% endif %}", "t.tmpl:1:5: error: unexpected 'endif' with no matching opening tag\n");
  EXPECT_ERR("x{% else %}", "t.tmpl:1:5: error: unexpected 'else' with no matching opening tag\n");
  EXPECT_ERR("{% elif t %}", "t.tmpl:1:4: error: unexpected 'elif' with no matching opening tag\n");
  EXPECT_ERR("{% if t %}{% endfor %}",
             "t.tmpl:1:14: error: unexpected 'endfor' inside 'if' (expected '{% endif %}')\n");
  EXPECT_ERR("{% for x in names %}{% endif %}",
             "t.tmpl:1:24: error: unexpected 'endif' inside 'for' (expected '{% endfor %}')\n");
  EXPECT_ERR("{% for x in names %}{% else %}{% endfor %}",
             "t.tmpl:1:24: error: unexpected 'else' inside 'for' (expected '{% endfor %}')\n");
  EXPECT_ERR("{% if t %}{% else %}{% elif f %}{% endif %}",
             "t.tmpl:1:24: error: unexpected 'elif' after 'else' (expected '{% endif %}')\n");
  EXPECT_ERR("{% if t %}{% else %}{% else %}{% endif %}",
             "t.tmpl:1:24: error: unexpected 'else' after 'else' (expected '{% endif %}')\n");
  EXPECT_ERR("{% if %}{% endif %}", "t.tmpl:1:7: error: expected a name path, got end of tag\n");
  EXPECT_ERR("{% if t f %}{% endif %}", "t.tmpl:1:9: error: expected end of tag, got 'f'\n");
  EXPECT_ERR("{% if t %}{% else t %}{% endif %}", "t.tmpl:1:19: error: expected end of tag, got 't'\n");
  EXPECT_ERR("{% if t %}{% endif t %}", "t.tmpl:1:20: error: expected end of tag, got 't'\n");
  /* What an if cannot test, and names it cannot find; each only where it renders. */
  EXPECT_ERR("{% if n %}{% endif %}",
             "t.tmpl:1:7: error: cannot test a int (an if takes a bool, a list or a string)\n");
  EXPECT_ERR("{% if op %}{% endif %}",
             "t.tmpl:1:7: error: cannot test a map (an if takes a bool, a list or a string)\n");
  EXPECT_ERR("{% if nul %}{% endif %}", "t.tmpl:1:7: error: cannot test a null");
  EXPECT_ERR("{% if nope %}{% endif %}", "t.tmpl:1:7: error: 'nope' is undefined\n");
  EXPECT_ERR("{% if f %}{% elif op.nope %}{% endif %}",
             "t.tmpl:1:22: error: 'nope' is undefined (no such key in the map)\n");
  EXPECT_OUT("{% if t %}ok{% elif nope %}{% endif %}", "ok");
  EXPECT_ERR("{% for x in names %}{% endfor %}{% endfor %}",
             "t.tmpl:1:36: error: unexpected 'endfor' with no matching opening tag\n");

  /* Malformed paths and statements. */
  EXPECT_ERR("{% %}", "t.tmpl:1:4: error: expected a statement keyword, got end of tag\n");
  EXPECT_ERR("{% 1 %}", "t.tmpl:1:4: error: expected a statement keyword, got number 1\n");
  EXPECT_ERR("{% \"for\" %}", "t.tmpl:1:4: error: expected a statement keyword, got string\n");
  EXPECT_ERR("{{ }}", "t.tmpl:1:4: error: expected a name path, got end of tag\n");
  EXPECT_ERR("{{ name name }}", "t.tmpl:1:9: error: expected end of tag, got 'name'\n");
  EXPECT_ERR("{{ op. }}", "t.tmpl:1:8: error: expected a key name after '.', got end of tag\n");
  EXPECT_ERR("{{ op..name }}", "t.tmpl:1:7: error: expected a key name after '.', got '.'\n");
  EXPECT_ERR("{{ .name }}", "t.tmpl:1:4: error: expected a name path, got '.'\n");
  EXPECT_ERR("{{ op.0 }}", "t.tmpl:1:7: error: expected a key name after '.', got number 0\n");
  EXPECT_ERR("{% for 1 in names %}{% endfor %}", "t.tmpl:1:8: error: expected a loop variable name, got number 1\n");
  EXPECT_ERR("{% for %}{% endfor %}", "t.tmpl:1:8: error: expected a loop variable name, got end of tag\n");
  EXPECT_ERR("{% for x of names %}{% endfor %}", "t.tmpl:1:10: error: expected 'in', got 'of'\n");
  EXPECT_ERR("{% for k, v in op %}{% endfor %}", "t.tmpl:1:9: error: expected 'in', got ','\n");
  EXPECT_ERR("{% for x in %}{% endfor %}", "t.tmpl:1:13: error: expected a name path, got end of tag\n");
  EXPECT_ERR("{% for x in names x %}{% endfor %}", "t.tmpl:1:19: error: expected end of tag, got 'x'\n");
  EXPECT_ERR("{% for x in names %}{% endfor x %}", "t.tmpl:1:31: error: expected end of tag, got 'x'\n");
  EXPECT_ERR("{% include %}", "t.tmpl:1:12: error: expected a template name string, got end of tag\n");
  EXPECT_ERR("{% include name %}", "t.tmpl:1:12: error: expected a template name string, got 'name'\n");
  EXPECT_ERR("{% include \"a\" \"b\" %}", "t.tmpl:1:16: error: expected end of tag, got string\n");
  /* A syntax error fails the template even where it would never render. */
  EXPECT_ERR("{% for x in empty_list %}{{ x. }}{% endfor %}",
             "t.tmpl:1:32: error: expected a key name after '.', got end of tag\n");
}

/* Jinja syntax the engine dropped: each gets an error that names it. */
static void test_removed(const og_value *ctx) {
  EXPECT_ERR("{% set x = 1 %}", "t.tmpl:1:4: error: unknown statement 'set' (templates support for, if, include)\n");
  /* An if tests a path, nothing more. */
  EXPECT_ERR("{% if a == b and not c %}{% endif %}", "t.tmpl:1:9: error: operator '==' is not supported\n");
  EXPECT_ERR("{% if not t %}{% endif %}", "t.tmpl:1:7: error: operator 'not' is not supported\n");
  EXPECT_ERR("{% if t and f %}{% endif %}", "t.tmpl:1:9: error: operator 'and' is not supported\n");
  EXPECT_ERR("{% if names | length %}{% endif %}", "t.tmpl:1:13: error: filters are not supported\n");
  EXPECT_ERR("{% raw %}", "t.tmpl:1:4: error: unknown statement 'raw'");
  EXPECT_ERR("{% macro m() %}", "t.tmpl:1:4: error: unknown statement 'macro'");

  EXPECT_ERR("{{ name | upper }}", "t.tmpl:1:9: error: filters are not supported\n");
  EXPECT_ERR("{{ names | join(\", \") }}", "t.tmpl:1:10: error: filters are not supported\n");
  EXPECT_ERR("{{ x | default(\"d\") }}", "t.tmpl:1:6: error: filters are not supported\n");
  EXPECT_ERR("{% for x in names | sort %}{% endfor %}", "t.tmpl:1:19: error: filters are not supported\n");

  EXPECT_ERR("{{ names[0] }}", "t.tmpl:1:9: error: indexing is not supported (a path is dotted names: a.b.c)\n");
  EXPECT_ERR("{{ op[\"name\"] }}", "t.tmpl:1:6: error: indexing is not supported");
  EXPECT_ERR("{{ [1] }}", "t.tmpl:1:4: error: indexing is not supported");

  EXPECT_ERR("{{ (name) }}", "t.tmpl:1:4: error: parentheses are not supported\n");
  EXPECT_ERR("{{ range(3) }}", "t.tmpl:1:9: error: parentheses are not supported\n");

  EXPECT_ERR("{{ n == 3 }}", "t.tmpl:1:6: error: operator '==' is not supported\n");
  EXPECT_ERR("{{ n != 3 }}", "t.tmpl:1:6: error: operator '!=' is not supported\n");
  EXPECT_ERR("{{ n >= 3 }}", "t.tmpl:1:6: error: operator '>=' is not supported\n");
  EXPECT_ERR("{{ n < 3 }}", "t.tmpl:1:6: error: operator '<' is not supported\n");
  EXPECT_ERR("{{ n + 1 }}", "t.tmpl:1:6: error: operator '+' is not supported\n");
  EXPECT_ERR("{{ n - 1 }}", "t.tmpl:1:6: error: operator '-' is not supported\n");
  EXPECT_ERR("{{ -n }}", "t.tmpl:1:4: error: operator '-' is not supported\n");
  EXPECT_ERR("{{ name ~ \"x\" }}", "t.tmpl:1:9: error: operator '~' is not supported\n");
  EXPECT_ERR("{{+ n }}", "t.tmpl:1:3: error: operator '+' is not supported\n");
  EXPECT_ERR("{{ a = b }}", "t.tmpl:1:6: error: operator '=' is not supported\n");
  EXPECT_ERR("{{ not t }}", "t.tmpl:1:4: error: operator 'not' is not supported\n");
  EXPECT_ERR("{{ t and f }}", "t.tmpl:1:6: error: operator 'and' is not supported\n");
  EXPECT_ERR("{{ t or f }}", "t.tmpl:1:6: error: operator 'or' is not supported\n");
  EXPECT_ERR("{{ x is defined }}", "t.tmpl:1:6: error: operator 'is' is not supported\n");
  EXPECT_ERR("{% for in in names %}{% endfor %}", "t.tmpl:1:8: error: operator 'in' is not supported\n");

  EXPECT_ERR("{{ 42 }}", "t.tmpl:1:4: error: expected a name path, got number 42\n");
  EXPECT_ERR("{{ 0x1f }}", "t.tmpl:1:4: error: expected a name path, got number 0x1f\n");
  EXPECT_ERR("{{ \"str\" }}", "t.tmpl:1:4: error: expected a name path, got string\n");
  EXPECT_ERR("{{ true }}", "t.tmpl:1:4: error: expected a name path, got literal 'true'\n");
  EXPECT_ERR("{{ none }}", "t.tmpl:1:4: error: expected a name path, got literal 'none'\n");
  EXPECT_ERR("{% for false in names %}{% endfor %}",
             "t.tmpl:1:8: error: expected a loop variable name, got literal 'false'\n");
  EXPECT_ERR("{% include \"inner\" ~ \".tmpl\" %}", "t.tmpl:1:20: error: operator '~' is not supported\n");

  /* loop.* is not bound; the message says why. */
  EXPECT_ERR("{% for x in names %}{{ loop.index }}{% endfor %}",
             "t.tmpl:1:24: error: 'loop' is undefined (loop.* variables are not supported)\n");
  /* The first problem in reading order is the one reported. */
  EXPECT_ERR("{{ name | upper }}{% set t %}", "t.tmpl:1:9: error: filters are not supported\n");
  EXPECT_ERR("{% set t %}{{ name | upper }}", "t.tmpl:1:4: error: unknown statement 'set'");
}

static void test_include_errors(const og_value *ctx) {
  /* A missing template: reported, plus where it was included. */
  char *diag;
  char *got = og_test_render("x\n{% include \"nope.tmpl\" %}", ctx, &diag);
  OG_CHECK(got == NULL);
  static const char cannot[] = "nope.tmpl: error: cannot read: ";
  OG_CHECK(strncmp(diag, cannot, strlen(cannot)) == 0);
  OG_CHECK_CONTAINS(diag, "\nt.tmpl:2:4: note: included from here\n");
  free(diag);
  /* Errors inside an included template point into it. */
  og_test_write("bad_render.tmpl", "ok {{ undefined_thing }}");
  EXPECT_ERR("{% include \"bad_render.tmpl\" %}", "bad_render.tmpl:1:7: error: 'undefined_thing' is undefined\n");
  og_test_write("bad_parse.tmpl", "\n{% set t %}");
  EXPECT_ERR("{% include \"bad_parse.tmpl\" %}",
             "bad_parse.tmpl:2:4: error: unknown statement 'set' (templates support for, if, include)\n"
             " 2 | {% set t %}\n"
             "   |    ^\n"
             "t.tmpl:1:4: note: included from here\n"
             " 1 | {% include \"bad_parse.tmpl\" %}\n"
             "   |    ^\n");
  /* Infinite recursion stops at depth 32. */
  og_test_write("self.tmpl", "x{% include \"self.tmpl\" %}");
  EXPECT_ERR("{% include \"self.tmpl\" %}",
             "self.tmpl:1:5: error: includes nested deeper than 32 (recursive include of 'self.tmpl'?)\n");
  og_test_write("ping.tmpl", "{% include \"pong.tmpl\" %}");
  og_test_write("pong.tmpl", "{% include \"ping.tmpl\" %}");
  EXPECT_ERR("{% include \"ping.tmpl\" %}",
             "pong.tmpl:1:4: error: includes nested deeper than 32 (recursive include of 'ping.tmpl'?)\n");
  /* Recursion bounded by data is fine: 32 levels exactly. */
  for (int i = 0; i < 31; ++i) {
    char name[32], text[64];
    snprintf(name, sizeof name, "d%d.tmpl", i);
    snprintf(text, sizeof text, "{%% include \"d%d.tmpl\" %%}", i + 1);
    og_test_write(name, text);
  }
  og_test_write("d31.tmpl", "deep");
  EXPECT_OUT("{% include \"d0.tmpl\" %}", "deep");
  og_test_write("d31.tmpl", "{% include \"deep.tmpl\" %}");
  og_test_write("deep.tmpl", "deeper");
  EXPECT_ERR("{% include \"d0.tmpl\" %}",
             "d31.tmpl:1:4: error: includes nested deeper than 32 (recursive include of 'deep.tmpl'?)\n");
}

/* Pathological nesting of for-blocks is an error at its 257th level, not a stack
 * overflow; 256 levels render. */
static void test_depth(const og_value *ctx) {
  static const char open[] = "{% for v in once %}", close[] = "{% endfor %}";
  og_buf text = {0};
  for (int i = 0; i < 50000; ++i) og_buf_puts(&text, open);
  og_buf_puts(&text, "x");
  for (int i = 0; i < 50000; ++i) og_buf_puts(&text, close);
  char *diag;
  char *got = og_test_render(og_buf_str(&text), ctx, &diag);
  OG_CHECK(got == NULL);
  char want[128];
  snprintf(want, sizeof want, "t.tmpl:1:%zu: error: template nested deeper than 256 levels\n",
           256 * (sizeof open - 1) + 4);
  OG_CHECK(strncmp(diag, want, strlen(want)) == 0);
  free(diag);

  /* Unclosed as well as deep: still the depth error, once. */
  og_buf_clear(&text);
  for (int i = 0; i < 50000; ++i) og_buf_puts(&text, open);
  got = og_test_render(og_buf_str(&text), ctx, &diag);
  OG_CHECK(got == NULL);
  OG_CHECK(strncmp(diag, want, strlen(want)) == 0);
  int errors = 0;
  for (const char *p = diag; (p = strstr(p, ": error: ")); ++p) ++errors;
  OG_CHECK(errors == 1);
  free(diag);

  for (int levels = 256; levels <= 257; ++levels) {
    og_buf_clear(&text);
    for (int i = 0; i < levels; ++i) og_buf_puts(&text, open);
    og_buf_puts(&text, "deep");
    for (int i = 0; i < levels; ++i) og_buf_puts(&text, close);
    got = og_test_render(og_buf_str(&text), ctx, &diag);
    if (levels == 256)
      OG_CHECK_STR(got, "deep");
    else
      OG_CHECK(got == NULL && strncmp(diag, want, strlen(want)) == 0);
    free(got);
    free(diag);
  }

  /* An elif nests in the if before it: a long chain meets the same limit. */
  for (int elifs = 254; elifs <= 256; elifs += 2) {
    og_buf_clear(&text);
    og_buf_puts(&text, "{% if f %}");
    for (int i = 0; i < elifs; ++i) og_buf_puts(&text, "{% elif f %}");
    og_buf_puts(&text, "{% else %}end{% endif %}");
    got = og_test_render(og_buf_str(&text), ctx, &diag);
    if (elifs == 254)
      OG_CHECK_STR(got, "end");
    else
      OG_CHECK(got == NULL && strstr(diag, "error: template nested deeper than 256 levels\n") != NULL);
    free(got);
    free(diag);
  }
  og_buf_free(&text);
}

int main(void) {
  if (!mkdtemp(og_test_dir)) {
    perror("test_tmpl: mkdtemp");
    return 2;
  }
  og_value *ctx = og_test_ctx();
  test_depth(ctx);
  test_text(ctx);
  test_paths(ctx);
  test_long_paths(ctx);
  test_for(ctx);
  test_if(ctx);
  test_include(ctx);
  test_env(ctx);
  test_comments(ctx);
  test_whitespace(ctx);
  test_errors(ctx);
  test_removed(ctx);
  test_include_errors(ctx);
  og_value_free(ctx);
  og_test_cleanup();
  return og_check_report("test_tmpl");
}
