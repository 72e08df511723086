/* The identifier scanner that decides which names a generated body declares. */
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"
#include "util/c_idents.h"
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

int main(void) {
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
