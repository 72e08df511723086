/* The identifier scanner that decides which names a generated body declares. */
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "c_idents.h"
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

int main(void) {
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
