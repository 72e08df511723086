/* The identifier scanner that decides which names a generated body declares. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"
#include "util/c_idents.h"
#include "util/c_jumps.h"
#include "check.h"

static void og_expect_idents(const char *code, const char *want) {
  og_idents set = {0};
  og_idents_scan(&set, code);
  og_buf got = {0};
  for (size_t i = 0; i < set.n; ++i) og_buf_printf(&got, "%s%s", i ? " " : "", set.names[i]);
  OG_CHECK_STR(og_buf_str(&got), want);
  og_buf_free(&got);
  og_idents_free(&set);
}

static void og_collect_decl(const char *name, int line, int col, void *ud) {
  og_buf_printf(ud, "%s@%d:%d ", name, line, col);
}

static void og_expect_decls(const char *code, const char *want) {
  og_idents types = {0};
  og_idents_add(&types, "T");
  og_buf got = {0};
  og_idents_scan_decls(code, &types, og_collect_decl, &got);
  OG_CHECK_STR(og_buf_str(&got), want);
  og_buf_free(&got);
  og_idents_free(&types);
}

static void og_collect_jump(const char *word, int line, int col, void *ud) {
  og_buf_printf(ud, "%s@%d:%d ", word, line, col);
}

static void og_expect_jumps(const char *code, const char *want) {
  og_buf got = {0};
  og_body_jumps(code, og_collect_jump, &got);
  OG_CHECK_STR(og_buf_str(&got), want);
  if (strcmp(og_buf_str(&got), want) != 0) fprintf(stderr, "jumps of: %s\n", code);
  og_buf_free(&got);
}

/* The jumps that would leave a portable body: return and goto anywhere, break and
 * continue outside loops (break: and switches) of the body's own. */
static void og_test_jumps(void) {
  og_expect_jumps("if (v < -10.0f) { y[i] = 0; return; }\ny[i] = v;", "return@0:29 ");
  og_expect_jumps("for (int p = 0; p < n; ++p) { if (a[p]) break; continue; }\nbreak;", "break@1:1 ");
  og_expect_jumps("while (c) { do { if (d) continue; } while (e); }\ncontinue;", "continue@1:1 ");
  og_expect_jumps("switch (m) { case 0: y[i] = 1; break; default: continue; }", "continue@0:48 ");
  /* Unbraced loop bodies, an if/else inside one, a do ... while, and what follows them. */
  og_expect_jumps("for (;;) if (a) break; else continue;\nbreak;", "break@1:1 ");
  og_expect_jumps("for (;;) for (;;) { break; }\ncontinue;", "continue@1:1 ");
  og_expect_jumps("do x++; while (x < 3);\nbreak;", "break@1:1 ");
  og_expect_jumps("for (;;) do { break; } while (0);\ncontinue;", "continue@1:1 ");
  og_expect_jumps("for (;;) { for (;;) { return; } goto out; }", "return@0:23 goto@0:33 ");
  /* Comments, strings and directives hold no jumps. */
  og_expect_jumps("/* return; */ s = \"break;\"; // continue;\n#define STOP return\ny[i] = 0;", "");
}

int main(void) {
  og_test_jumps();
  /* Declarations after a type: C's words, *_t names, the op's type variables. */
  og_expect_decls("T acc = 0;\nfor (int32_t p = a[i]; p < b; ++p) acc += x[p] * y;\nconst float *row = A + i * cols;",
                  "acc@0:3 p@1:14 row@2:14 ");
  og_expect_decls("unsigned long long n, m;\nreturn total; /* int z; */ s = \"int q;\";", "n@0:20 m@0:23 ");
  /* Every declarator of a list, but not the arguments of a call in an initialiser. */
  og_expect_decls("int a = f(b, c), d[4];\nfor (int64_t i = 0, j = 1; i < j; ++i) {}", "a@0:5 d@0:18 i@1:14 j@1:21 ");
  og_expect_decls("extern __shared__ unsigned char opspec_shared[];", "opspec_shared@0:33 ");
  og_expect_idents("out[i] = trace[i] * decay + spikes[i];", "decay i out spikes trace");
  /* Comments, strings, characters and numbers hold no identifiers. */
  og_expect_idents("y[i] = 0x1fULL + 1e-3f; // x_size\n/* n */ z = \"m \\\" k\" + 'q';", "i y z");
  og_expect_idents("#pragma omp parallel for if (opspec_cpu_parallel(out_size))\n",
                   "for if omp opspec_cpu_parallel out_size parallel pragma");
  /* Sorted and unique; an unterminated comment or string ends the scan quietly. */
  og_expect_idents("b a b /* never closed", "a b");
  og_expect_idents("s = \"never closed\n t", "s t");
  og_idents set = {0};
  og_idents_scan(&set, "alpha * x[i]");
  OG_CHECK(og_idents_has(&set, "alpha") && og_idents_has(&set, "x") && !og_idents_has(&set, "alp"));
  og_idents_free(&set);
  return og_check_report("test_idents");
}
