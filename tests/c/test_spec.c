/* The spec loader and checker: every shipped spec loads; every bad-spec fixture fails
 * with its message at its line and column, and nothing else is reported. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "check/check.h"

#define BAD "tests/fixtures/bad/"

/* Each fixture carries its own expectation at its end, next to the input it is about
 * (as torchgen's and Argument Clinic's golden tests do):
 *
 *   # expect: LINE:COL: error: MESSAGE    the first diagnostic, exactly
 *   # errors: N                           how many errors in all
 *
 * Every .yaml in the folder must have both: a fixture without is a test failure. */
static bool og_read_expectation(const char *text, const char *key, char *out, size_t n) {
  const char *p = strstr(text, key);
  if (!p) return false;
  p += strlen(key);
  size_t len = strcspn(p, "\n");
  if (len >= n) return false;
  memcpy(out, p, len);
  out[len] = '\0';
  return true;
}

static int og_name_cmp(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static void og_test_bad_specs(void) {
  DIR *dir = opendir(BAD);
  OG_CHECK(dir != NULL);
  if (!dir) return;
  char *names[512];
  size_t nnames = 0;
  for (struct dirent *e; (e = readdir(dir)) != NULL && nnames < 512;) {
    size_t len = strlen(e->d_name);
    if (len > 5 && strcmp(e->d_name + len - 5, ".yaml") == 0) names[nnames++] = og_xstrdup(e->d_name);
  }
  closedir(dir);
  qsort(names, nnames, sizeof *names, og_name_cmp);
  OG_CHECK(nnames >= 40);
  for (size_t i = 0; i < nnames; ++i) {
    char path[512], first[1024], count[32], want[1600];
    snprintf(path, sizeof path, BAD "%s", names[i]);
    og_diag setup = {0};
    og_source *src = og_source_read(path, &setup);
    OG_CHECK(src != NULL);
    bool has = src && og_read_expectation(src->text, "\n# expect: ", first, sizeof first) &&
               og_read_expectation(src->text, "\n# errors: ", count, sizeof count);
    og_source_free(src);
    og_diag_free(&setup);
    OG_CHECK(has);
    if (!has) {
      fprintf(stderr, "%s: no '# expect:' and '# errors:' lines\n", path);
      free(names[i]);
      continue;
    }
    snprintf(want, sizeof want, "%s:%s\n", path, first);
    og_diag d = {0};
    og_op *op = og_spec_load(path, &d);
    OG_CHECK(op == NULL);
    bool same = strncmp(og_buf_str(&d.out), want, strlen(want)) == 0;
    OG_CHECK(same);
    if (!same) fprintf(stderr, "--- want:\n%s--- got:\n%s\n", want, og_buf_str(&d.out));
    OG_CHECK(d.errors == atoi(count));
    if (d.errors != atoi(count)) fprintf(stderr, "%s: %d errors\n%s\n", path, d.errors, og_buf_str(&d.out));
    og_op_free(op);
    og_diag_free(&d);
    free(names[i]);
  }
}

/* `text` with each "\n" written as `eol`. */
static char *og_with_line_ends(const char *text, const char *eol) {
  og_buf out = {0};
  for (const char *p = text; *p; ++p)
    if (*p == '\n')
      og_buf_puts(&out, eol);
    else
      og_buf_putc(&out, *p);
  return og_buf_take(&out);
}

/* YAML ends a line at "\r\n", a lone "\r", "\n" or a NEL: every bad fixture written
 * with each gets the very diagnostics it gets with "\n", source lines and carets included
 * (a lone "\r" once made the cut-at-a-comma check read past the text). LS and PS end a
 * line too, but libyaml keeps them in a block scalar's text, where C does not take them. */
static void og_test_line_ends(void) {
  static const char *const eols[] = {"\r\n", "\r", "\xC2\x85"};
  DIR *dir = opendir(BAD);
  OG_CHECK(dir != NULL);
  if (!dir) return;
  int compared = 0;
  for (struct dirent *e; (e = readdir(dir)) != NULL;) {
    size_t len = strlen(e->d_name);
    if (len <= 5 || strcmp(e->d_name + len - 5, ".yaml") != 0) continue;
    char path[512];
    snprintf(path, sizeof path, BAD "%s", e->d_name);
    og_diag want = {0};
    og_source *src = og_source_read(path, &want);
    /* Fixtures about bytes themselves (encodings, control characters) are left out. */
    bool plain = src && strlen(src->text) == src->len && !strchr(src->text, '\r');
    for (const unsigned char *c = src ? (const unsigned char *)src->text : NULL; plain && *c; ++c)
      plain = *c >= 0x20 ? *c < 0x7f : *c == '\n';
    if (!plain) {
      og_source_free(src);
      og_diag_free(&want);
      continue;
    }
    char *lf_text = og_xstrdup(src->text);
    og_op_free(og_spec_load_source(src, &want));
    for (size_t k = 0; k < sizeof eols / sizeof eols[0]; ++k) {
      og_diag got = {0};
      char *text = og_with_line_ends(lf_text, eols[k]);
      og_op_free(og_spec_load_source(og_source_from_string(path, text), &got));
      bool same = strcmp(og_buf_str(&got.out), og_buf_str(&want.out)) == 0 && got.errors == want.errors;
      OG_CHECK(same);
      if (!same)
        fprintf(stderr, "%s, line end %zu:\n--- want:\n%s--- got:\n%s\n", path, k, og_buf_str(&want.out),
                og_buf_str(&got.out));
      compared++;
      free(text);
      og_diag_free(&got);
    }
    free(lf_text);
    og_diag_free(&want);
  }
  closedir(dir);
  OG_CHECK(compared >= 120);
}

/* The comma message with a lone "\r" for line ends, in full: the source line and caret. */
static void og_test_comma_with_cr(void) {
  og_diag d = {0};
  const char *text =
      "op: t\rinputs:\r  - {name: a, dtype: float32, shape: [n]}\r  - {name: b, dtype: float32, shape: [m]}\r"
      "outputs:\r  - {name: y, dtype: float32, shape: [max(n, m)]}\rlaunch: [\"max(n, m)\"]\rkernel: |\r  y[i] = 0;\r";
  OG_CHECK(og_spec_load_source(og_source_from_string("<cr>", text), &d) == NULL);
  OG_CHECK_STR(og_buf_str(&d.out),
               "<cr>:6:39: error: a shape dim is cut at a comma: YAML ends an item of a flow sequence [...] at a "
               "comma, so this one is 'max(n'; quote the expression: \"max(n, m)\"\n"
               " 6 |   - {name: y, dtype: float32, shape: [max(n, m)]}\n"
               "   |                                       ^\n");
  og_diag_free(&d);
}

static void og_test_quote_and_caret(void) {
  og_diag d = {0};
  OG_CHECK(og_spec_load(BAD "unknown_dtype.yaml", &d) == NULL);
  OG_CHECK_CONTAINS(og_buf_str(&d.out),
                    "\n 4 |   - {name: x, dtype: flaot32, shape: [n]}\n"
                    "   |                      ^\n");
  og_diag_free(&d);
}

static void og_test_missing_file(void) {
  og_diag d = {0};
  OG_CHECK(og_spec_load(BAD "no_such_spec.yaml", &d) == NULL);
  OG_CHECK_CONTAINS(og_buf_str(&d.out), "no_such_spec.yaml: error: cannot read: No such file or directory");
  og_diag_free(&d);
}

/* An unknown top-level key: the message lists every key the loader takes there, the
 * last one taken (halo) included. */
static void og_test_allowed_keys_listed(void) {
  og_diag d = {0};
  og_source *src = og_source_from_string("<spec>", "op: x\nbogus: 1\n");
  OG_CHECK(og_spec_load_source(src, &d) == NULL);
  OG_CHECK_CONTAINS(og_buf_str(&d.out), "unknown key 'bogus' in spec (expected one of: op, doc, types, inputs,");
  OG_CHECK_CONTAINS(og_buf_str(&d.out), ", reduce, independent, fastmath, halo)");
  og_diag_free(&d);
}

static void og_test_good_spec_model(void) {
  og_diag d = {0};
  og_op *op = og_spec_load("specs/csr_matvec.yaml", &d);
  OG_CHECK(op != NULL);
  if (!op) {
    fprintf(stderr, "%s", og_buf_str(&d.out));
    og_diag_free(&d);
    return;
  }
  OG_CHECK_STR(op->name, "csr_matvec");
  OG_CHECK(op->ninputs == 4 && op->noutputs == 1 && op->ntypes == 1);
  OG_CHECK(op->nsymbols == 3);
  OG_CHECK_STR(op->symbols[0], "nnz");
  OG_CHECK_STR(op->symbols[1], "rows_p1");
  OG_CHECK(op->inputs[1].typevar == -1 && op->inputs[0].typevar == 0);
  OG_CHECK(op->outputs[0].dims[0].kind == OG_DIM_EXPR);
  OG_CHECK(op->launch.n == 1 && op->kernel.present && !op->cpu.present);
  OG_CHECK(op->bytes != NULL && op->flops != NULL);
  /* The body starts on the line after `kernel: |`, wherever the spec puts it. */
  const char *kernel_key = strstr(op->src->text, "\nkernel: |\n");
  int kernel_line = 2;
  for (const char *c = op->src->text; kernel_key && c <= kernel_key; ++c) kernel_line += *c == '\n';
  OG_CHECK(kernel_key && op->kernel.line == kernel_line);
  OG_CHECK(og_op_nvariants(op) == 2);
  og_op_free(op);

  op = og_spec_load("specs/exp_trace.yaml", &d);
  OG_CHECK(op != NULL);
  if (op) {
    OG_CHECK(op->outputs[0].alias_of == 0 && op->inputs[0].aliased);
    OG_CHECK(!op->inputs[1].aliased);
  }
  og_op_free(op);
  OG_CHECK(d.errors == 0);
  og_diag_free(&d);
}

int main(void) {
  og_test_bad_specs();
  og_test_quote_and_caret();
  og_test_line_ends();
  og_test_comma_with_cr();
  og_test_missing_file();
  og_test_allowed_keys_listed();
  og_test_good_spec_model();
  return og_check_report("test_spec");
}
