/* The rewrite of bfloat16/float16 bodies into float compute with 2-byte loads and stores
 * (generator/util/c_lowp.c): every rule, and every use that stops it with its reason. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"
#include "util/c_lowp.h"
#include "check.h"

/* Arrays x, y (T), w (U) and the fixed-dtype bfloat16 array f; T and U may be 2-byte. */
static bool og_rewrite(const char *code, og_buf *out, og_lowp_stop *stop) {
  og_lowp_names names = {0};
  og_lowp_names_add(&names, "x", "T");
  og_lowp_names_add(&names, "y", "T");
  og_lowp_names_add(&names, "w", "U");
  og_lowp_names_add(&names, "f", NULL);
  og_idents types = {0};
  og_idents_add(&types, "T");
  og_idents_add(&types, "U");
  bool ok = og_lowp_rewrite(code, &names, &types, out, stop);
  og_idents_free(&types);
  og_lowp_names_free(&names);
  return ok;
}

static void og_expect(const char *code, const char *want) {
  og_buf out = {0};
  og_lowp_stop stop = {0};
  bool ok = og_rewrite(code, &out, &stop);
  if (!ok) fprintf(stderr, "stopped at %d:%d: %s\n", stop.line, stop.col, stop.what);
  OG_CHECK(ok);
  if (ok) OG_CHECK_STR(og_buf_str(&out), want);
  free(stop.what);
  og_buf_free(&out);
}

/* The rewrite stops at line:col with a reason that contains `why`. */
static void og_expect_stop(const char *code, int line, int col, const char *why) {
  og_buf out = {0};
  og_lowp_stop stop = {0};
  bool ok = og_rewrite(code, &out, &stop);
  OG_CHECK(!ok);
  if (!ok) {
    if (stop.line != line || stop.col != col) fprintf(stderr, "%s: stopped at %d:%d\n", code, stop.line, stop.col);
    OG_CHECK(stop.line == line && stop.col == col);
    OG_CHECK_CONTAINS(stop.what, why);
  }
  free(stop.what);
  og_buf_free(&out);
}

static void og_test_rules(void) {
  /* reads and stores, whitespace, comments and line breaks kept */
  og_expect("y[i] = (T)(1 / (1 + exp(-x[i])));", "y[i] = OPSPEC_STORE_T((T)(1 / (1 + exp(-OPSPEC_LOAD_T(x[i])))));");
  og_expect("  y[i] = x[i] > 0 ? x[i] : 0;  /* relu */\n",
            "  y[i] = OPSPEC_STORE_T(OPSPEC_LOAD_T(x[i]) > 0 ? OPSPEC_LOAD_T(x[i]) : 0);  /* relu */\n");
  og_expect("T s = 0;\nfor (int64_t k = 0; k < n; ++k)\n  s += x[i * n + k] * w[k];\ny[i] = s;",
            "T s = 0;\nfor (int64_t k = 0; k < n; ++k)\n  s += OPSPEC_LOAD_T(x[i * n + k]) * OPSPEC_LOAD_U(w[k]);\n"
            "y[i] = OPSPEC_STORE_T(s);");
  /* a store after if/else, a label, a block; == and <= are reads */
  og_expect("if (x[i] == 0) y[i] = 1; else y[i] = 2;",
            "if (OPSPEC_LOAD_T(x[i]) == 0) y[i] = OPSPEC_STORE_T(1); else y[i] = OPSPEC_STORE_T(2);");
  og_expect("{ y[i] = x[i] <= 1; }", "{ y[i] = OPSPEC_STORE_T(OPSPEC_LOAD_T(x[i]) <= 1); }");
  /* an index that reads another element, and a comma ending the value */
  og_expect("for (int k = 0; k < 2; y[k] = 0, ++k) y[(int)x[0]] = x[1];",
            "for (int k = 0; k < 2; y[k] = OPSPEC_STORE_T(0), ++k) y[(int)OPSPEC_LOAD_T(x[0])] = "
            "OPSPEC_STORE_T(OPSPEC_LOAD_T(x[1]));");
  /* compound stores */
  og_expect("y[i] += x[i] * 2;", "y[i] = OPSPEC_STORE_T(OPSPEC_LOAD_T(y[i]) + (OPSPEC_LOAD_T(x[i]) * 2));");
  og_expect("y[i + 1] <<= 1;", "y[i + 1] = OPSPEC_STORE_T(OPSPEC_LOAD_T(y[i + 1]) << (1));");
  og_expect("y[i] *= y[i];", "y[i] = OPSPEC_STORE_T(OPSPEC_LOAD_T(y[i]) * (OPSPEC_LOAD_T(y[i])));");
  /* pointer locals into an array, which then are arrays of their own */
  og_expect("const T *OPSPEC_RESTRICT row = x + i * n;\nT *out = y;\nout[0] = row[1];",
            "const OPSPEC_STORAGE_T *OPSPEC_RESTRICT row = x + i * n;\nOPSPEC_STORAGE_T *out = y;\n"
            "out[0] = OPSPEC_STORE_T(OPSPEC_LOAD_T(row[1]));");
  og_expect("T *restrict r = y - (int)x[0];", "OPSPEC_STORAGE_T *restrict r = y - (int)OPSPEC_LOAD_T(x[0]);");
  /* a pointer into other memory (scratch), plain T values, strings and comments */
  og_expect("T *s = scratch + i; T v = s[0]; s[1] = v; /* x */ puts(\"x[\");",
            "T *s = scratch + i; T v = s[0]; s[1] = v; /* x */ puts(\"x[\");");
  og_expect("#pragma GCC unroll 4\ny[i] = 0;", "#pragma GCC unroll 4\ny[i] = OPSPEC_STORE_T(0);");
  /* && is not an address */
  og_expect("y[i] = a && x[i];", "y[i] = OPSPEC_STORE_T(a && OPSPEC_LOAD_T(x[i]));");
}

static void og_test_stops(void) {
  og_expect_stop("T v = *x;", 0, 8, "through '*'");
  og_expect_stop("y[i] = 0;\nfoo(x);", 1, 5, "as a pointer");
  og_expect_stop("const T *p = x; p++;", 0, 17, "moves");
  og_expect_stop("T *p = &x[i];", 0, 9, "address");
  og_expect_stop("y[i]++;", 0, 1, "incremented");
  og_expect_stop("++y[i];", 0, 3, "incremented");
  og_expect_stop("T a = y[i] = 1;", 0, 7, "inside an expression");
  og_expect_stop("y[i++] += 1;", 0, 1, "side effects");
  og_expect_stop("y[g(i)] -= 1;", 0, 1, "side effects");
  og_expect_stop("y[i]\n  += 1;", 0, 1, "broken over lines");
  og_expect_stop("size_t b = sizeof(T);", 0, 12, "sizeof");
  og_expect_stop("size_t b = sizeof x[0];", 0, 12, "sizeof");
  og_expect_stop("float *p = (T *)buf;", 0, 13, "cast");
  og_expect_stop("T v = f[i];", 0, 7, "fixed dtype");
  og_expect_stop("const T *p = w + 1;", 0, 14, "another type variable");
  og_expect_stop("const T *p = x + 1, *q = y;", 0, 19, "declares more");
  og_expect_stop("const T *p = x ? x : y;", 0, 14, "not 'x' or 'x + offset'");
  og_expect_stop("#define X(k) x[k]\ny[i] = X(0);", 0, 1, "directive");
  og_expect_stop("#define X(k) \\\n  (x[k])\ny[i] = X(0);", 0, 1, "directive");
}

int main(void) {
  og_test_rules();
  og_test_stops();
  return og_check_report("test_c_lowp");
}
