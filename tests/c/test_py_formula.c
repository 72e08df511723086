/* The scanner of derivative formulas: the names a formula reads, and what it refuses. */
#include <stddef.h>

#include "util/buf.h"
#include "check.h"
#include "load/py_formula.h"

/* Names as "name@offset ...", or "error@offset: why". */
static void og_expect_scan(const char *text, const char *want) {
  og_py_scan scan;
  og_py_scan_formula(text, &scan);
  og_buf got = {0};
  if (scan.error)
    og_buf_printf(&got, "error@%zu: %s", scan.error_offset, scan.error);
  else
    for (size_t i = 0; i < scan.nnames; ++i)
      og_buf_printf(&got, "%s%s@%zu", i ? " " : "", scan.names[i].name, scan.names[i].offset);
  OG_CHECK_STR(og_buf_str(&got), want);
  og_buf_free(&got);
  og_py_scan_free(&scan);
}

int main(void) {
  og_expect_scan("out * (1 - out)", "out@0 out@11");
  /* attributes after '.', keyword arguments' names and strings are not names read */
  og_expect_scan("jnp.exp(-x.T[0], axis=0)", "jnp@0 x@9");
  og_expect_scan("jnp.repeat(a, b, total_repeat_length=c.shape[0])", "jnp@0 a@11 b@14 c@37");
  og_expect_scan("jnp.where(x == 'y', 1.5e-3, -2)", "jnp@0 x@10");
  og_expect_scan("x[:, None] * y[1:] if x is not None else -y", "x@0 y@13 x@22 y@42");
  og_expect_scan("f(*xs, **kw)", "f@0 xs@3 kw@9");
  og_expect_scan("a @ b ** 2 // c % d", "a@0 b@4 c@14 d@18");
  og_expect_scan("(a,\n b)", "a@1 b@5");
  /* refused */
  og_expect_scan("out * (1 - out", "error@6: a bracket opened here is not closed");
  og_expect_scan("out * ", "error@6: the formula ends with an operator");
  og_expect_scan("   ", "error@0: the formula is empty");
  og_expect_scan("a b", "error@2: an operator is missing before this name");
  og_expect_scan("a * / b", "error@4: an operand is missing before this operator");
  og_expect_scan("x)", "error@1: this bracket closes nothing open");
  og_expect_scan("x = 1", "error@2: assignments are not allowed in a formula");
  og_expect_scan("(y := 2)", "error@3: assignments are not allowed in a formula");
  og_expect_scan("x # comment", "error@2: this character has no place in a formula (one Python expression)");
  og_expect_scan("x; import os", "error@1: this character has no place in a formula (one Python expression)");
  og_expect_scan("[v for v in x]",
                 "error@3: Python statements, lambdas and comprehensions are not allowed in a formula");
  og_expect_scan("lambda: 0", "error@0: Python statements, lambdas and comprehensions are not allowed in a formula");
  og_expect_scan("'open", "error@0: this string is not closed on its line");
  og_expect_scan(".5 * x.", "error@7: the formula ends with an operator");
  return og_check_report("test_py_formula");
}
