/* Unit tests for the template engine: exact output for every construct, filter and
 * whitespace rule, and the exact "name:LINE:COL: error:" of every error. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "tmpl.h"

/* ---- fixtures -------------------------------------------------------------------- */

static og_value *og_test_arg(const char *name, const char *dtype) {
  og_value *a = og_value_map();
  og_map_set_str(a, "name", name);
  og_map_set_str(a, "dtype", dtype);
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
  og_value *ctx = og_value_map();
  og_map_set_str(ctx, "name", "add");
  og_map_set_int(ctx, "n", 3);
  og_map_set_int(ctx, "zero", 0);
  og_map_set_int(ctx, "one", 1);
  og_map_set_bool(ctx, "t", true);
  og_map_set_bool(ctx, "f", false);
  og_map_set(ctx, "nul", og_value_null());
  og_map_set_str(ctx, "empty", "");
  og_map_set_str(ctx, "key", "name");
  og_map_set(ctx, "names", og_test_str_list(names, 3));
  og_value *nums = og_value_list();
  og_list_push(nums, og_value_int(1));
  og_list_push(nums, og_value_int(20));
  og_map_set(ctx, "nums", nums);
  og_map_set(ctx, "empty_list", og_value_list());
  og_map_set(ctx, "empty_map", og_value_map());
  og_value *mixed = og_value_list();
  og_list_push(mixed, og_value_str("x"));
  og_list_push(mixed, og_value_int(2));
  og_list_push(mixed, og_value_bool(true));
  og_map_set(ctx, "mixed", mixed);
  og_value *nested = og_value_list();
  og_list_push(nested, og_value_list());
  og_map_set(ctx, "nested", nested);
  og_map_set_str(ctx, "text", "line1\nline2\n\nline4\n");

  og_value *op = og_value_map();
  og_map_set_str(op, "name", "matmul");
  og_map_set_str(op, "dtype", "float32");
  og_value *args = og_value_list();
  og_list_push(args, og_test_arg("x", "float32"));
  og_list_push(args, og_test_arg("y", "int64"));
  og_list_push(args, og_test_arg("out", "float64"));
  og_map_set(op, "args", args);
  og_map_set(ctx, "op", op);
  return ctx;
}

/* ---- helpers --------------------------------------------------------------------- */

/* Renders `text`, registered in `env` as "t.tmpl". Returns the output or NULL on
 * failure; *diag gets the diagnostics. The caller frees both. */
static char *og_test_render_in(og_tmpl_env *env, const char *text, const og_value *ctx,
                               char **diag) {
  og_buf out = {0};
  og_diag d = {0};
  og_tmpl_env_add(env, "t.tmpl", text);
  bool ok = og_tmpl_render(env, "t.tmpl", ctx, &out, &d);
  /* Success and a clean og_diag must agree, or a caller could miss an error. */
  OG_CHECK(ok == (d.errors == 0));
  *diag = og_buf_take(&d.out);
  og_diag_free(&d);
  if (!ok) {
    og_buf_free(&out);
    return NULL;
  }
  return og_buf_take(&out);
}

static void og_test_out_in(int line, og_tmpl_env *env, const char *text, const og_value *ctx,
                           const char *want) {
  int failed = og_check_failed;
  char *diag;
  char *got = og_test_render_in(env, text, ctx, &diag);
  OG_CHECK_STR(got, want);
  if (og_check_failed != failed)
    fprintf(stderr, "  (test at line %d; template:\n%s\n  diagnostics:\n%s)\n", line, text, diag);
  free(got);
  free(diag);
}

static void og_test_out(int line, const char *text, const og_value *ctx, const char *want) {
  og_tmpl_env *env = og_tmpl_env_new(NULL);
  og_test_out_in(line, env, text, ctx, want);
  og_tmpl_env_free(env);
}

/* Checks that rendering fails and the diagnostics start with `want`. */
static void og_test_err_in(int line, og_tmpl_env *env, const char *text, const og_value *ctx,
                           const char *want) {
  int failed = og_check_failed;
  char *diag;
  char *got = og_test_render_in(env, text, ctx, &diag);
  OG_CHECK(got == NULL);
  if (strncmp(diag, want, strlen(want)) == 0)
    OG_CHECK(1);
  else
    OG_CHECK_STR(diag, want);
  if (og_check_failed != failed) fprintf(stderr, "  (test at line %d; template:\n%s)\n", line, text);
  free(got);
  free(diag);
}

static void og_test_err(int line, const char *text, const og_value *ctx, const char *want) {
  og_tmpl_env *env = og_tmpl_env_new(NULL);
  og_test_err_in(line, env, text, ctx, want);
  og_tmpl_env_free(env);
}

#define EXPECT_OUT(text, want) og_test_out(__LINE__, text, ctx, want)
#define EXPECT_ERR(text, want) og_test_err(__LINE__, text, ctx, want)

/* ---- tests ----------------------------------------------------------------------- */

static void test_literals(const og_value *ctx) {
  EXPECT_OUT("", "");
  EXPECT_OUT("plain text\n", "plain text\n");
  EXPECT_OUT("{ not a tag }", "{ not a tag }");
  EXPECT_OUT("{{ \"a\\\"b\\\\c\\nd\\te\" }}", "a\"b\\c\nd\te");
  EXPECT_OUT("{{ 'single \\'q\\' and \"d\"' }}", "single 'q' and \"d\"");
  EXPECT_OUT("{{ \"%} and }}\" }}", "%} and }}");
  EXPECT_OUT("{{ 42 }}|{{ -7 }}|{{ 0 }}", "42|-7|0");
  EXPECT_OUT("{{ 9223372036854775807 }}|{{ -9223372036854775808 }}",
             "9223372036854775807|-9223372036854775808");
  EXPECT_OUT("{{ true }}|{{ false }}|{{ none }}|", "true|false||");
  EXPECT_OUT("{{name}}{{   name   }}", "addadd");
  EXPECT_OUT("{{\nname\n}}", "add");
}

static void test_paths(const og_value *ctx) {
  EXPECT_OUT("{{ name }} {{ n }} {{ t }} {{ f }} [{{ nul }}] [{{ empty }}]",
             "add 3 true false [] []");
  EXPECT_OUT("{{ op.name }}", "matmul");
  EXPECT_OUT("{{ op.args[1].name }}", "y");
  EXPECT_OUT("{{ op[\"name\"] }}/{{ op['dtype'] }}", "matmul/float32");
  EXPECT_OUT("{{ op[key] }}", "matmul");
  EXPECT_OUT("{{ names[0] }}{{ names[2] }}{{ names[-1] }}{{ names[-3] }}", "acca");
  EXPECT_OUT("{{ names[one] }}{{ nums[one] }}", "b20");
  EXPECT_OUT("{{ op.args[2][\"dtype\"] }}", "float64");
  EXPECT_OUT("{{ (op).name }}", "matmul");
}

static void test_filters(const og_value *ctx) {
  EXPECT_OUT("{{ \"MatMul_2d\" | upper }}|{{ \"MatMul_2d\" | lower }}", "MATMUL_2D|matmul_2d");
  EXPECT_OUT("{{ n | upper }}", "3");

  EXPECT_OUT("{{ names | join(\", \") }}", "a, b, c");
  EXPECT_OUT("{{ names | join }}|{{ names | join() }}", "abc|abc");
  EXPECT_OUT("{{ nums | join(\"*\") }}", "1*20");
  EXPECT_OUT("{{ mixed | join(\",\") }}", "x,2,true");
  EXPECT_OUT("[{{ empty_list | join(\",\") }}]", "[]");

  EXPECT_OUT("{{ names | length }} {{ op | length }} {{ name | length }} {{ empty_list | length }}",
             "3 3 3 0");

  EXPECT_OUT("{{ missing | default(\"dflt\") }}", "dflt");
  EXPECT_OUT("{{ op.missing | default(7) }}", "7");
  EXPECT_OUT("{{ missing.deeper[3] | default(\"d\") }}", "d");
  EXPECT_OUT("{{ names[9] | default(\"oob\") }}", "oob");
  EXPECT_OUT("{{ missing | default(name) }}", "add");
  EXPECT_OUT("{{ name | default(\"x\") }}", "add");
  EXPECT_OUT("[{{ nul | default(\"x\") }}][{{ empty | default(\"x\") }}]", "[][]");
  EXPECT_OUT("[{{ missing | default }}]", "[]");
  EXPECT_OUT("{{ missing | default(\"abc\") | upper }}", "ABC");
  EXPECT_OUT("{{ missing | default(names) | join(\"+\") }}", "a+b+c");
  EXPECT_OUT("{{ (missing | default(op)).args[0].name }}", "x");

  EXPECT_OUT("{{ text | indent(2) }}", "line1\n  line2\n\n  line4\n");
  EXPECT_OUT("{{ text | indent }}", "line1\n    line2\n\n    line4\n");
  EXPECT_OUT("{{ \"a\\nb\" | indent(3) }}", "a\n   b");
  EXPECT_OUT("{{ \"a\\n  \\nb\" | indent(1) }}", "a\n   \n b");
  EXPECT_OUT("{{ \"single\" | indent(8) }}", "single");

  EXPECT_OUT("{{ \"float32\" | ctype }} {{ \"float64\" | ctype }} {{ \"int8\" | ctype }} "
             "{{ \"uint64\" | ctype }} {{ \"bool\" | ctype }}",
             "float double int8_t uint64_t bool");
  EXPECT_OUT("{{ op.dtype | ctype }}", "float");
  EXPECT_OUT("{{ \"float32\" | cutype }} {{ \"int32\" | cutype }}", "float int32_t");
  EXPECT_OUT("{{ \"float32\" | xla_dtype }} {{ \"bool\" | xla_dtype }} {{ \"uint8\" | xla_dtype }}",
             "11 1 6");
  EXPECT_OUT("{% if \"float64\" | xla_dtype == 12 %}int{% endif %}", "int");
  EXPECT_OUT("{{ \"float64\" | np_dtype }} {{ \"uint16\" | np_dtype }}", "float64 uint16");

  EXPECT_OUT("[{{ \"\" | cstring }}][{{ name | cstring }}]", "[][add]");
  og_value *sctx = og_value_map();
  og_map_set_str(sctx, "s", "a\"b\\c\nd\te'f?\?=g\x01h\xc3\xa9" "7");
  og_test_out(__LINE__, "\"{{ s | cstring }}\"", sctx,
              "\"a\\\"b\\\\c\\nd\\011e'f?\\?=g\\001h\\303\\2517\"");
  og_test_out(__LINE__, "'{{ s | pystring }}'", sctx,
              "'a\\\"b\\\\c\\nd\\x09e\\'f?\?=g\\x01h\xc3\xa9" "7'");
  og_value_free(sctx);

  EXPECT_OUT("{{ \"a.b.c\" | replace(\".\", \"::\") }}", "a::b::c");
  EXPECT_OUT("{{ \"aaa\" | replace(\"aa\", \"b\") }}", "ba");
  EXPECT_OUT("{{ op.name | replace(\"mat\", \"\") | upper }}", "MUL");
  EXPECT_OUT("{{ \"x\" | replace(\"y\", \"z\") }}", "x");
}

static void test_if(const og_value *ctx) {
  EXPECT_OUT("{% if t %}yes{% endif %}", "yes");
  EXPECT_OUT("{% if f %}yes{% endif %}", "");
  EXPECT_OUT("{% if f %}1{% else %}2{% endif %}", "2");
  EXPECT_OUT("{% if f %}1{% elif zero %}2{% elif n %}3{% else %}4{% endif %}", "3");
  EXPECT_OUT("{% if f %}1{% elif zero %}2{% else %}4{% endif %}", "4");
  /* Truthiness. */
  EXPECT_OUT("{% if empty %}T{% else %}F{% endif %}{% if name %}T{% else %}F{% endif %}"
             "{% if zero %}T{% else %}F{% endif %}{% if n %}T{% else %}F{% endif %}"
             "{% if nul %}T{% else %}F{% endif %}{% if empty_list %}T{% else %}F{% endif %}"
             "{% if names %}T{% else %}F{% endif %}{% if empty_map %}T{% else %}F{% endif %}"
             "{% if op %}T{% else %}F{% endif %}{% if \"\" %}T{% else %}F{% endif %}",
             "FTFTFFTFTF");
  /* Comparisons: ints, strings, bools; different kinds are unequal. */
  EXPECT_OUT("{% if n == 3 %}a{% endif %}{% if n != 3 %}b{% endif %}", "a");
  EXPECT_OUT("{% if name == \"add\" %}a{% endif %}{% if name != 'add' %}b{% endif %}", "a");
  EXPECT_OUT("{% if n == \"3\" %}a{% else %}b{% endif %}", "b");
  EXPECT_OUT("{% if t == true %}a{% endif %}{% if f == false %}b{% endif %}"
             "{% if one == true %}c{% endif %}{% if nul == none %}d{% endif %}",
             "abd");
  EXPECT_OUT("{{ n == 3 }} {{ n != 3 }}", "true false");
  /* not, and, or, parentheses and precedence. */
  EXPECT_OUT("{% if not f %}a{% endif %}{% if not t %}b{% endif %}", "a");
  EXPECT_OUT("{% if t and n %}a{% endif %}{% if t and zero %}b{% endif %}", "a");
  EXPECT_OUT("{% if f or n %}a{% endif %}{% if f or zero %}b{% endif %}", "a");
  EXPECT_OUT("{{ f or t and f }}", "false");       /* or < and */
  EXPECT_OUT("{{ (f or t) and t }}", "true");
  EXPECT_OUT("{{ not f and t }}", "true");         /* and < not */
  EXPECT_OUT("{{ not n == 3 }}", "false");         /* not < comparison */
  EXPECT_OUT("{{ not not t }}", "true");
  EXPECT_OUT("{{ names | length == 3 }}", "true"); /* comparison < filter */
  /* Short-circuit: the undefined right-hand side is never looked at. */
  EXPECT_OUT("{% if f and missing %}x{% endif %}{% if t or missing %}y{% endif %}", "y");
  EXPECT_OUT("{% if t %}{% if f %}a{% else %}b{% endif %}{% endif %}", "b");
}

static void test_for(const og_value *ctx) {
  EXPECT_OUT("{% for x in names %}{{ x }};{% endfor %}", "a;b;c;");
  EXPECT_OUT("{% for x in empty_list %}never{% endfor %}", "");
  EXPECT_OUT("{% for x in names %}{{ loop.index0 }}{{ loop.index }}{{ loop.length }}"
             "{% if loop.first %}F{% endif %}{% if loop.last %}L{% endif %} {% endfor %}",
             "013F 123 233L ");
  /* Nested: `loop` is the innermost, and the outer one comes back after endfor. */
  EXPECT_OUT("{% for a in names %}{% for b in nums %}{{ loop.index }}{{ a }}{{ b }} "
             "{% endfor %}{{ loop.index }}|{% endfor %}",
             "1a1 2a20 1|1b1 2b20 2|1c1 2c20 3|");
  /* The loop variable shadows, and its scope ends at endfor. */
  EXPECT_OUT("{% for name in names %}{{ name }}{% endfor %}{{ name }}", "abcadd");
  EXPECT_OUT("{% for a in op.args %}{{ a.name }}:{{ a.dtype | ctype }} {% endfor %}",
             "x:float y:int64_t out:double ");
  EXPECT_OUT("{% for l in nested %}{% for x in l %}x{% endfor %}{{ l | length }}{% endfor %}",
             "0");
}

static void test_include(const og_value *ctx) {
  og_tmpl_env *env = og_tmpl_env_new(NULL);
  og_tmpl_env_add(env, "arg.tmpl", "{{ a.dtype | ctype }} {{ a.name }}");
  og_tmpl_env_add(env, "outer.tmpl", "<{% include \"inner.tmpl\" %}>");
  og_tmpl_env_add(env, "inner.tmpl", "{{ name }}");
  og_test_out_in(__LINE__, env, "{% include \"inner.tmpl\" %}!", ctx, "add!");
  og_test_out_in(__LINE__, env, "{% include 'outer.tmpl' %}", ctx, "<add>");
  /* Loop variables in scope are visible to the included template. */
  og_test_out_in(__LINE__, env,
                 "{% for a in op.args %}{% include \"arg.tmpl\" %}"
                 "{% if not loop.last %}, {% endif %}{% endfor %}",
                 ctx, "float x, int64_t y, double out");
  /* An included template's own whitespace rules apply inside it. */
  og_tmpl_env_add(env, "block.tmpl", "{% if t %}\n  body\n{% endif %}\n");
  og_test_out_in(__LINE__, env, "{\n{% include \"block.tmpl\" %}\n}\n", ctx, "{\n  body\n}\n");
  /* Overriding a template replaces it. */
  og_tmpl_env_add(env, "inner.tmpl", "{{ n }}");
  og_test_out_in(__LINE__, env, "{% include \"inner.tmpl\" %}", ctx, "3");
  og_tmpl_env_free(env);
}

/* Templates loaded from a directory, lazily, and cached for the env's lifetime. */
static void test_dir(const og_value *ctx) {
  char dir[] = "/tmp/og_test_tmpl_XXXXXX";
  if (!mkdtemp(dir)) {
    OG_CHECK(!"mkdtemp failed");
    return;
  }
  char path[256], inc_path[256];
  snprintf(path, sizeof path, "%s/main.c.tmpl", dir);
  snprintf(inc_path, sizeof inc_path, "%s/inc.tmpl", dir);
  FILE *f = fopen(path, "w");
  fputs("int {{ name }};\n{% include \"inc.tmpl\" %}", f);
  fclose(f);
  f = fopen(inc_path, "w");
  fputs("/* {{ n }} */\n", f);
  fclose(f);

  og_tmpl_env *env = og_tmpl_env_new(dir);
  og_buf out = {0};
  og_diag d = {0};
  OG_CHECK(og_tmpl_render(env, "main.c.tmpl", ctx, &out, &d));
  OG_CHECK_STR(og_buf_str(&out), "int add;\n/* 3 */\n");
  /* Cached: changing the file does not change the next render. */
  f = fopen(inc_path, "w");
  fputs("changed\n", f);
  fclose(f);
  og_buf_clear(&out);
  OG_CHECK(og_tmpl_render(env, "main.c.tmpl", ctx, &out, &d));
  OG_CHECK_STR(og_buf_str(&out), "int add;\n/* 3 */\n");
  OG_CHECK(d.errors == 0);

  /* Errors name the file by its path under dir. */
  f = fopen(path, "w");
  fputs("ok\n{{ bad }}\n", f);
  fclose(f);
  og_tmpl_env *env2 = og_tmpl_env_new(dir);
  og_buf_clear(&out);
  OG_CHECK(!og_tmpl_render(env2, "main.c.tmpl", ctx, &out, &d));
  OG_CHECK_STR(og_buf_str(&out), "ok\n"); /* partial output */
  char want[512];
  snprintf(want, sizeof want,
           "%s/main.c.tmpl:2:4: error: 'bad' is undefined\n"
           " 2 | {{ bad }}\n"
           "   |    ^\n",
           dir);
  OG_CHECK_STR(og_buf_str(&d.out), want);
  og_diag_free(&d);
  d = (og_diag){0};

  /* A missing file. */
  OG_CHECK(!og_tmpl_render(env2, "nope.tmpl", ctx, &out, &d));
  snprintf(want, sizeof want, "%s/nope.tmpl: error: cannot read: ", dir);
  OG_CHECK(strncmp(og_buf_str(&d.out), want, strlen(want)) == 0);
  og_diag_free(&d);

  og_buf_free(&out);
  og_tmpl_env_free(env);
  og_tmpl_env_free(env2);
  unlink(path);
  unlink(inc_path);
  rmdir(dir);
}

static void test_comments(const og_value *ctx) {
  EXPECT_OUT("a{# comment #}b", "ab");
  EXPECT_OUT("a{# {{ not rendered }} {% if %} #}b", "ab");
  EXPECT_OUT("a{# multi\nline\ncomment #}b", "ab");
  EXPECT_OUT("{##}x", "x");
  EXPECT_OUT("a\n  {# own line #}\nb\n", "a\nb\n");
  EXPECT_OUT("a {# trailing #}\nb\n", "a b\n");
}

static void test_whitespace(const og_value *ctx) {
  /* Explicit stripping, including newlines, on each side of each tag kind. */
  EXPECT_OUT("a  \n  {%- if t %}x{% endif %}", "ax");
  EXPECT_OUT("{% if t -%}\n\n  x{% endif %}", "x");
  EXPECT_OUT("a \n {{- n -}} \n b", "a3b");
  EXPECT_OUT("a \n {{- n }} \n b", "a3 \n b");
  EXPECT_OUT("a \n {{ n -}} \n b", "a \n 3b");
  EXPECT_OUT("a \n {#- c -#} \n b", "ab");
  EXPECT_OUT("{% for x in names -%}\n  {{ x }}\n{%- endfor %}", "abc");
  EXPECT_OUT("a {{-1}}", "a1"); /* `{{-` is always the strip marker, as in Jinja */
  /* lstrip_blocks: indentation before a block tag alone at the start of its line. */
  EXPECT_OUT("  {% if t %}x{% endif %}", "x");
  EXPECT_OUT("a\n\t \t{% if t %}\nx\n{% endif %}\n", "a\nx\n");
  EXPECT_OUT("a {% if t %}x{% endif %}", "a x");            /* text before it */
  EXPECT_OUT("{{ n }}  {% if t %}x{% endif %}\n", "3  x");   /* an output tag before it */
  EXPECT_OUT("{% if t %}  {% endif %}|\n", "  |\n");        /* a block tag before it */
  /* trim_blocks: exactly one newline after a block tag goes. */
  EXPECT_OUT("{% if t %}\nx\n{% endif %}\n", "x\n");
  EXPECT_OUT("{% if t %}\n\nx{% endif %}", "\nx");
  EXPECT_OUT("{% if t %}x{% endif %}\ny", "xy");            /* even after content */
  EXPECT_OUT("a\r\n  {% if t %}\r\nx\r\n  {% endif %}\r\nb", "a\r\nx\r\nb");
  /* {{ }} is never trimmed implicitly. */
  EXPECT_OUT("  {{ n }}\n", "  3\n");
  EXPECT_OUT("{{ n }}\n{{ n }}\n", "3\n3\n");
  /* `+` opts out of lstrip ({%+) and trim (+%}). */
  EXPECT_OUT("a\n  {%+ if t %}\n  x\n  {% endif +%}\nb", "a\n    x\n\nb");
  EXPECT_OUT("  {#+ c +#}\nx", "  \nx");

  /* Block tags on their own lines leave no blank lines; nested, indented. */
  EXPECT_OUT("{% for a in names %}\n"
             "  {% for b in nums %}\n"
             "{{ loop.index }}.{{ b }}\n"
             "  {% endfor %}\n"
             "{{ loop.index }}:{{ loop.first }}/{{ loop.last }}/{{ loop.length }}\n"
             "{% endfor %}\n",
             "1.1\n2.20\n1:true/false/3\n1.1\n2.20\n2:false/false/3\n1.1\n2.20\n3:false/true/3\n");

  /* Realistic C: a parameter list, one per line; `+%}` keeps the newline after the
   * comma's endif (plain %} would join the lines, exactly as in Jinja). */
  EXPECT_OUT("static void {{ op.name }}_kernel(\n"
             "{% for a in op.args %}\n"
             "    {{ a.dtype | ctype }} *{{ a.name }}{% if not loop.last %},{% endif +%}\n"
             "{% endfor %}\n"
             ") {\n"
             "  {# one comment per argument #}\n"
             "  {% for a in op.args %}\n"
             "  {% if loop.first %}\n"
             "  /* first: {{ a.name }} */\n"
             "  {% elif loop.last %}\n"
             "  /* last: {{ a.name }} */\n"
             "  {% else %}\n"
             "  /* middle {{ loop.index }}/{{ loop.length }} */\n"
             "  {% endif %}\n"
             "  {% endfor %}\n"
             "}\n",
             "static void matmul_kernel(\n"
             "    float *x,\n"
             "    int64_t *y,\n"
             "    double *out\n"
             ") {\n"
             "  /* first: x */\n"
             "  /* middle 2/3 */\n"
             "  /* last: out */\n"
             "}\n");
  /* The same list inline, comma-separated. */
  EXPECT_OUT("void {{ op.name }}({% for a in op.args %}{{ a.dtype | ctype }} *{{ a.name }}"
             "{% if not loop.last %}, {% endif %}{% endfor %});\n",
             "void matmul(float *x, int64_t *y, double *out);\n");
  /* And through join. */
  EXPECT_OUT("f({{ names | join(\", \") }});\n", "f(a, b, c);\n");
}

static void test_errors(const og_value *ctx) {
  /* Lookups. */
  EXPECT_ERR("{{ x }}", "t.tmpl:1:4: error: 'x' is undefined\n");
  EXPECT_ERR("a\nb\n  {{ x }}", "t.tmpl:3:6: error: 'x' is undefined\n"
                                " 3 |   {{ x }}\n"
                                "   |      ^\n");
  EXPECT_ERR("{{ op.nope }}", "t.tmpl:1:7: error: 'nope' is undefined (no such key in the map)");
  EXPECT_ERR("{{ op[\"nope\"] }}", "t.tmpl:1:7: error: 'nope' is undefined");
  EXPECT_ERR("{{ name.x }}", "t.tmpl:1:9: error: cannot look up 'x' in a string (not a map)");
  EXPECT_ERR("{{ missing.x | default(1) | upper }}{{ name.x | default(1) }}",
             "t.tmpl:1:45: error: cannot look up 'x' in a string");
  EXPECT_ERR("{{ names[3] }}", "t.tmpl:1:10: error: list index 3 out of range (length 3)");
  EXPECT_ERR("{{ names[-4] }}", "t.tmpl:1:10: error: list index -4 out of range (length 3)");
  EXPECT_ERR("{{ name[0] }}", "t.tmpl:1:9: error: cannot index a string with an int");
  EXPECT_ERR("{{ names[t] }}", "t.tmpl:1:10: error: index must be an int or a string, got bool");
  EXPECT_ERR("{% if t %}{{ loop.index }}{% endif %}", "t.tmpl:1:14: error: 'loop' is undefined");
  EXPECT_ERR("{% for x in names %}{% endfor %}{{ x }}", "t.tmpl:1:36: error: 'x' is undefined");
  EXPECT_ERR("{% if missing == 1 %}{% endif %}", "t.tmpl:1:7: error: 'missing' is undefined");
  EXPECT_ERR("{{ missing | upper | default(\"\") }}", "t.tmpl:1:4: error: 'missing' is undefined");

  /* Printing and comparing containers. */
  EXPECT_ERR("{{ names }}", "t.tmpl:1:4: error: cannot print a list");
  EXPECT_ERR("x{{ op }}", "t.tmpl:1:5: error: cannot print a map");
  EXPECT_ERR("{% if names == 1 %}{% endif %}", "t.tmpl:1:13: error: cannot compare a list with a int");

  /* Filters. */
  EXPECT_ERR("{{ name | nope }}", "t.tmpl:1:11: error: unknown filter 'nope'");
  EXPECT_ERR("{% if f %}{{ name | nope }}{% endif %}", "t.tmpl:1:21: error: unknown filter 'nope'");
  EXPECT_ERR("{{ names | join(\",\", 2) }}",
             "t.tmpl:1:12: error: filter 'join' takes 0 to 1 arguments, got 2");
  EXPECT_ERR("{{ name | replace(\"a\") }}",
             "t.tmpl:1:11: error: filter 'replace' takes 2 argument(s), got 1");
  EXPECT_ERR("{{ name | upper(1) }}", "t.tmpl:1:11: error: filter 'upper' takes 0 argument(s), got 1");
  EXPECT_ERR("{{ names | upper }}", "t.tmpl:1:12: error: filter 'upper': input must be a string, got list");
  EXPECT_ERR("{{ name | join }}", "t.tmpl:1:11: error: filter 'join': input must be a list, got string");
  EXPECT_ERR("{{ nested | join }}", "t.tmpl:1:13: error: filter 'join': each item must be a string, got list");
  EXPECT_ERR("{{ n | length }}", "t.tmpl:1:8: error: filter 'length': input must be a list, map or string, got int");
  EXPECT_ERR("{{ name | indent(\"2\") }}", "t.tmpl:1:11: error: filter 'indent': width must be a non-negative int");
  EXPECT_ERR("{{ \"float16\" | ctype }}", "t.tmpl:1:16: error: filter 'ctype': unknown dtype 'float16'");
  EXPECT_ERR("{{ \"x\" | cutype }}", "t.tmpl:1:10: error: filter 'cutype': unknown dtype 'x'");
  EXPECT_ERR("{{ \"x\" | xla_dtype }}", "t.tmpl:1:10: error: filter 'xla_dtype': unknown dtype 'x'");
  EXPECT_ERR("{{ n | np_dtype }}", "t.tmpl:1:8: error: filter 'np_dtype': input must be a dtype name, got int");
  EXPECT_ERR("{{ name | replace(\"\", \"x\") }}", "t.tmpl:1:11: error: filter 'replace': the string to replace is empty");
  EXPECT_ERR("{{ name | replace(names, \"x\") }}", "t.tmpl:1:11: error: filter 'replace': first argument must be a string, got list");
  EXPECT_ERR("{{ name | join(x) }}", "t.tmpl:1:16: error: 'x' is undefined");

  /* for over a non-list. */
  EXPECT_ERR("{% for x in name %}{% endfor %}", "t.tmpl:1:13: error: cannot loop over a string (not a list)");
  EXPECT_ERR("{% for x in op %}{% endfor %}", "t.tmpl:1:13: error: cannot loop over a map (not a list)");

  /* Unterminated tags, comments and strings. */
  EXPECT_ERR("a\n{{ name", "t.tmpl:2:1: error: unterminated '{{' tag (missing '}}')");
  EXPECT_ERR("{{ name %}", "t.tmpl:1:9: error: unexpected character '%' in tag");
  EXPECT_ERR("x {% if t", "t.tmpl:1:3: error: unterminated '{%' tag (missing '%}')");
  EXPECT_ERR("{% if t }}{% endif %}", "t.tmpl:1:9: error: unexpected character '}' in tag");
  EXPECT_ERR("a {# comment", "t.tmpl:1:3: error: unterminated comment (missing '#}')");
  EXPECT_ERR("{{ \"abc }}", "t.tmpl:1:4: error: unterminated string literal");
  EXPECT_ERR("{{ \"a\\qb\" }}", "t.tmpl:1:6: error: unknown escape sequence in string");
  EXPECT_ERR("{{+ n }}", "t.tmpl:1:3: error: unexpected character '+' in tag");
  EXPECT_ERR("{{ a = b }}", "t.tmpl:1:6: error: unexpected character '=' in tag");
  EXPECT_ERR("{{ 99999999999999999999 }}", "t.tmpl:1:4: error: integer literal out of range");

  /* Unbalanced blocks. */
  EXPECT_ERR("{% if t %}x", "t.tmpl:1:4: error: unclosed 'if' (missing '{% endif %}')");
  EXPECT_ERR("{% if t %}{% else %}x", "t.tmpl:1:4: error: unclosed 'if' (missing '{% endif %}')");
  EXPECT_ERR("\n  {% for x in names %}{% if t %}{% endif %}",
             "t.tmpl:2:6: error: unclosed 'for' (missing '{% endfor %}')");
  EXPECT_ERR("x{% endfor %}", "t.tmpl:1:5: error: unexpected 'endfor' with no matching opening tag");
  EXPECT_ERR("{% endif %}", "t.tmpl:1:4: error: unexpected 'endif' with no matching opening tag");
  EXPECT_ERR("{% else %}", "t.tmpl:1:4: error: unexpected 'else' with no matching opening tag");
  EXPECT_ERR("{% for x in names %}{% endif %}{% endfor %}",
             "t.tmpl:1:24: error: unexpected 'endif' with no matching opening tag");
  EXPECT_ERR("{% if t %}{% else %}{% elif f %}{% endif %}",
             "t.tmpl:1:24: error: unexpected 'elif' with no matching opening tag");
  EXPECT_ERR("{% raw %}", "t.tmpl:1:4: error: unknown statement 'raw'");
  EXPECT_ERR("{% set x = 1 %}", "t.tmpl:1:10: error: unexpected character '=' in tag");
  EXPECT_ERR("{% %}", "t.tmpl:1:4: error: expected a statement keyword, got end of tag");

  /* Malformed expressions and statements. */
  EXPECT_ERR("{{ }}", "t.tmpl:1:4: error: expected an expression, got end of tag");
  EXPECT_ERR("{{ name name }}", "t.tmpl:1:9: error: expected end of tag, got 'name'");
  EXPECT_ERR("{{ op. }}", "t.tmpl:1:8: error: expected an attribute name after '.', got end of tag");
  EXPECT_ERR("{{ names[0 }}", "t.tmpl:1:12: error: expected ']', got end of tag");
  EXPECT_ERR("{{ (name }}", "t.tmpl:1:10: error: expected ')', got end of tag");
  EXPECT_ERR("{{ name | }}", "t.tmpl:1:11: error: expected a filter name after '|', got end of tag");
  EXPECT_ERR("{{ names | join(\",\" }}", "t.tmpl:1:21: error: expected ',' or ')', got end of tag");
  EXPECT_ERR("{{ t and }}", "t.tmpl:1:10: error: expected an expression, got end of tag");
  EXPECT_ERR("{{ and }}", "t.tmpl:1:4: error: expected an expression, got 'and'");
  EXPECT_ERR("{% if %}{% endif %}", "t.tmpl:1:7: error: expected an expression, got end of tag");
  EXPECT_ERR("{% if t x %}{% endif %}", "t.tmpl:1:9: error: expected end of tag, got 'x'");
  EXPECT_ERR("{% else x %}", "t.tmpl:1:4: error: unexpected 'else'");
  EXPECT_ERR("{% if t %}{% else x %}{% endif %}", "t.tmpl:1:19: error: expected end of tag, got 'x'");
  EXPECT_ERR("{% if t %}{% endif x %}", "t.tmpl:1:20: error: expected end of tag, got 'x'");
  EXPECT_ERR("{% for 1 in names %}{% endfor %}", "t.tmpl:1:8: error: expected a loop variable name, got integer");
  EXPECT_ERR("{% for x of names %}{% endfor %}", "t.tmpl:1:10: error: expected 'in', got 'of'");
  EXPECT_ERR("{% include %}", "t.tmpl:1:12: error: expected an expression, got end of tag");
}

static void test_include_errors(const og_value *ctx) {
  og_tmpl_env *env = og_tmpl_env_new(NULL);
  /* A missing template: reported, plus where it was included. */
  og_test_err_in(__LINE__, env, "x\n{% include \"nope.tmpl\" %}", ctx,
                 "opspec-gen: error: unknown template 'nope.tmpl'\n"
                 "t.tmpl:2:4: note: included from here\n");
  og_test_err_in(__LINE__, env, "{% include n %}", ctx,
                 "t.tmpl:1:12: error: include needs a template name string, got int");
  /* Errors inside an included template point into it. */
  og_tmpl_env_add(env, "bad_render.tmpl", "ok {{ undefined_thing }}");
  og_test_err_in(__LINE__, env, "{% include \"bad_render.tmpl\" %}", ctx,
                 "bad_render.tmpl:1:7: error: 'undefined_thing' is undefined");
  og_tmpl_env_add(env, "bad_parse.tmpl", "\n{% if t %}");
  og_test_err_in(__LINE__, env, "{% include \"bad_parse.tmpl\" %}", ctx,
                 "bad_parse.tmpl:2:4: error: unclosed 'if' (missing '{% endif %}')\n"
                 " 2 | {% if t %}\n"
                 "   |    ^\n"
                 "t.tmpl:1:4: note: included from here\n"
                 " 1 | {% include \"bad_parse.tmpl\" %}\n"
                 "   |    ^\n");
  /* Infinite recursion stops at depth 32. */
  og_tmpl_env_add(env, "self.tmpl", "x{% include \"self.tmpl\" %}");
  og_test_err_in(__LINE__, env, "{% include \"self.tmpl\" %}", ctx,
                 "self.tmpl:1:5: error: includes nested deeper than 32 (recursive include of 'self.tmpl'?)\n");
  og_tmpl_env_add(env, "ping.tmpl", "{% include \"pong.tmpl\" %}");
  og_tmpl_env_add(env, "pong.tmpl", "{% include \"ping.tmpl\" %}");
  og_test_err_in(__LINE__, env, "{% include \"ping.tmpl\" %}", ctx,
                 "pong.tmpl:1:4: error: includes nested deeper than 32 (recursive include of "
                 "'ping.tmpl'?)\n");
  /* Recursion bounded by data is fine: 32 levels exactly. */
  og_tmpl_env_add(env, "deep.tmpl", "{% if n %}.{% endif %}");
  for (int i = 0; i < 31; ++i) {
    char name[32], text[64];
    snprintf(name, sizeof name, "d%d.tmpl", i);
    snprintf(text, sizeof text, "{%% include \"d%d.tmpl\" %%}", i + 1);
    og_tmpl_env_add(env, name, text);
  }
  og_tmpl_env_add(env, "d31.tmpl", "deep");
  og_test_out_in(__LINE__, env, "{% include \"d0.tmpl\" %}", ctx, "deep");
  og_tmpl_env_add(env, "d31.tmpl", "{% include \"deep.tmpl\" %}");
  og_test_err_in(__LINE__, env, "{% include \"d0.tmpl\" %}", ctx,
                 "d31.tmpl:1:4: error: includes nested deeper than 32");
  og_tmpl_env_free(env);

  /* The first render of an unknown template, with no dir. */
  env = og_tmpl_env_new(NULL);
  og_buf out = {0};
  og_diag d = {0};
  OG_CHECK(!og_tmpl_render(env, "absent.tmpl", ctx, &out, &d));
  OG_CHECK_STR(og_buf_str(&d.out), "opspec-gen: error: unknown template 'absent.tmpl'\n");
  OG_CHECK(d.errors == 1);
  og_diag_free(&d);
  og_buf_free(&out);
  og_tmpl_env_free(env);
}

/* Output is appended, and the same env renders many times. */
static void test_append(const og_value *ctx) {
  og_tmpl_env *env = og_tmpl_env_new(NULL);
  og_tmpl_env_add(env, "a", "{{ name }};");
  og_buf out = {0};
  og_diag d = {0};
  og_buf_puts(&out, "pre:");
  OG_CHECK(og_tmpl_render(env, "a", ctx, &out, &d));
  OG_CHECK(og_tmpl_render(env, "a", ctx, &out, &d));
  OG_CHECK_STR(og_buf_str(&out), "pre:add;add;");
  /* A NULL context: everything is undefined, but literals work. */
  og_buf_clear(&out);
  og_tmpl_env_add(env, "b", "{{ 1 }}{{ x | default(\"d\") }}");
  OG_CHECK(og_tmpl_render(env, "b", NULL, &out, &d));
  OG_CHECK_STR(og_buf_str(&out), "1d");
  OG_CHECK(d.errors == 0);
  og_diag_free(&d);
  og_buf_free(&out);
  og_tmpl_env_free(env);
}

/* Pathological nesting is an error at its 257th level, not a stack overflow: 50,000
 * nested blocks, `not`s, parentheses and chains of each kind. */
static void test_depth(const og_value *ctx) {
  static const struct {
    const char *open, *middle, *close;
  } shapes[] = {
      {"{% if true %}", "x", "{% endif %}"},
      {"{% for v in names %}", "x", "{% endfor %}"},
      {"{{ ", "not ", "true }}"},
      {"{{ ", "(", "1 }}"},
      {"{{ name", ".x", " }}"},
      {"{{ name", " | upper", " }}"},
      {"{{ true", " and true", " }}"},
      {"{{ names", "[0]", " }}"},
  };
  for (size_t s = 0; s < sizeof shapes / sizeof *shapes; ++s) {
    og_buf text = {0};
    bool blocks = shapes[s].open[1] == '%';
    for (int i = 0; i < 50000; ++i) og_buf_puts(&text, blocks ? shapes[s].open : (i ? shapes[s].middle : shapes[s].open));
    if (!blocks) og_buf_puts(&text, shapes[s].middle);
    og_buf_puts(&text, blocks ? shapes[s].middle : shapes[s].close);
    for (int i = 0; blocks && i < 50000; ++i) og_buf_puts(&text, shapes[s].close);
    og_tmpl_env *env = og_tmpl_env_new(NULL);
    char *diag;
    char *got = og_test_render_in(env, og_buf_str(&text), ctx, &diag);
    OG_CHECK(got == NULL);
    OG_CHECK_CONTAINS(diag, "template nested deeper than 256 levels");
    free(got);
    free(diag);
    og_tmpl_env_free(env);
    og_buf_free(&text);
  }
  /* 200 levels are fine. */
  og_buf text = {0};
  for (int i = 0; i < 200; ++i) og_buf_puts(&text, "{% if true %}");
  og_buf_puts(&text, "deep");
  for (int i = 0; i < 200; ++i) og_buf_puts(&text, "{% endif %}");
  og_test_out(__LINE__, og_buf_str(&text), ctx, "deep");
  og_buf_free(&text);
}

int main(void) {
  og_value *ctx = og_test_ctx();
  test_depth(ctx);
  test_literals(ctx);
  test_paths(ctx);
  test_filters(ctx);
  test_if(ctx);
  test_for(ctx);
  test_include(ctx);
  test_dir(ctx);
  test_comments(ctx);
  test_whitespace(ctx);
  test_errors(ctx);
  test_include_errors(ctx);
  test_append(ctx);
  og_value_free(ctx);
  return og_check_report("test_tmpl");
}
