/* Accuracy of the float32 math a kernel body calls (opspec/math.h, opspec/vmath.h), in
 * the loops and the three CPU forms the generated kernels have, against XLA:CPU's budgets
 * (docs/performance.md, "Math functions").
 *
 *   test_vmath [STRIDE [FUNCTION...]]
 *
 * Every STRIDE-th float32 bit pattern (STRIDE 1: all 2^32; ctest runs 127, a prime, so
 * that every sign, exponent and low mantissa bit occurs) goes through a vectorised loop
 * of each function in the baseline (SSE2) form and, where the CPU has them, the x86-64-v3
 * (AVX2) and x86-64-v4 (AVX-512) forms. Each result is compared with glibc's double function of the same input
 * (within a double ulp, so exact to about 1e-9 float ulp): the error in ulps of the
 * correctly rounded float result, as XLA's accuracy test counts it (the distance between
 * the two floats in representable steps), and the error of the unrounded value in float
 * ulps. A result of 0 where the reference rounds to a nonzero subnormal counts as
 * flushed, not as an error: XLA's CPU code runs with subnormals flushed to zero
 * (sigmoid's 1/(1+exp(-x)) is 0 below x = -88.7, where exp(-x) overflows). Non-finite inputs are skipped by the sweep and checked as classes apart: NaN,
 * +-inf, +-0 and the domain edges must give the reference's NaN, infinity or signed zero.
 * A function over its budget, or a class error, fails the test, in the forms kernels
 * run it in: erf's x86-64-v4 form is shown but unused (4 ulp; opspec/cpu.h).
 */
#include <float.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opspec/math.h"

#define FORM_V3 __attribute__((target("arch=x86-64-v3")))
#define FORM_V4 __attribute__((target("arch=x86-64-v4")))

/* One loop per function and form, as a portable kernel's launch loop is written. */
#define UNARY(name, expr)                                                            \
  static void name##_base(const float *restrict x, float *restrict y, int n) {       \
    _Pragma("omp simd") for (int i = 0; i < n; ++i) {                                \
      const float v = x[i];                                                          \
      y[i] = (expr);                                                                 \
    }                                                                                \
  }                                                                                  \
  FORM_V3 static void name##_v3(const float *restrict x, float *restrict y, int n) { \
    _Pragma("omp simd") for (int i = 0; i < n; ++i) {                                \
      const float v = x[i];                                                          \
      y[i] = (expr);                                                                 \
    }                                                                                \
  }                                                                                  \
  FORM_V4 static void name##_v4(const float *restrict x, float *restrict y, int n) { \
    _Pragma("omp simd") for (int i = 0; i < n; ++i) {                                \
      const float v = x[i];                                                          \
      y[i] = (expr);                                                                 \
    }                                                                                \
  }

UNARY(k_exp, exp(v))
UNARY(k_log, log(v))
UNARY(k_log1p, log1p(v))
UNARY(k_tanh, tanh(v))
UNARY(k_erf, erf(v))
UNARY(k_sigmoid, 1.0f / (1.0f + exp(-v)))
UNARY(k_sqrt, sqrt(v))
UNARY(k_rsqrt, 1.0f / sqrt(v))
UNARY(k_fmin, fmin(v, 0.5f))
UNARY(k_fmax, fmax(v, -0.5f))

/* The references, in double, with <math.h>'s own functions (the macros are for float). */
static double r_exp(double x) { return (exp)(x); }
static double r_log(double x) { return (log)(x); }
static double r_log1p(double x) { return (log1p)(x); }
static double r_tanh(double x) { return (tanh)(x); }
static double r_erf(double x) { return (erf)(x); }
static double r_sigmoid(double x) { return 1.0 / (1.0 + (exp)(-x)); }
static double r_sqrt(double x) { return (sqrt)(x); }
static double r_rsqrt(double x) { return 1.0 / (sqrt)(x); }
static double r_fmin(double x) { return (fmin)(x, 0.5); }
static double r_fmax(double x) { return (fmax)(x, -0.5); }

typedef void kernel_fn(const float *restrict, float *restrict, int);

struct fn {
  const char *name;
  kernel_fn *form[3]; /* x86-64, x86-64-v3, x86-64-v4 */
  double (*ref)(double);
  int budget; /* XLA:CPU's max ulp (accuracy_budget.h); sigmoid: exp's, fmin/fmax exact */
  int forms;  /* the forms a kernel calling it has: erf none past x86-64-v3 (opspec/cpu.h) */
};

#define FN(name, budget, forms) \
  { #name, {k_##name##_base, k_##name##_v3, k_##name##_v4 }, r_##name, budget, forms }
static const struct fn fns[] = {
    FN(exp, 6, 3),     FN(log, 1, 3),  FN(log1p, 1, 3), FN(tanh, 3, 3), FN(erf, 2, 2),
    FN(sigmoid, 6, 3), FN(sqrt, 0, 3), FN(rsqrt, 1, 3), FN(fmin, 0, 3), FN(fmax, 0, 3),
};
enum { NFN = sizeof fns / sizeof fns[0], NFORM = 3, CHUNK = 4096 };
static const char *const form_names[NFORM] = {"x86-64", "x86-64-v3", "x86-64-v4"};

struct worst {
  int64_t ulps;     /* distance between the result and the rounded reference */
  double err;       /* |result - reference| in ulps of the reference */
  float at, at_err; /* the inputs where each was largest */
  int64_t class_errors;
  int64_t flushed; /* results 0 where the reference rounds to a subnormal, as in XLA */
};

static uint32_t bits_of(float x) {
  uint32_t u;
  memcpy(&u, &x, sizeof u);
  return u;
}

static float float_of(uint32_t u) {
  float x;
  memcpy(&x, &u, sizeof x);
  return x;
}

/* Floats in order as integers: -0 and +0 both 0, each step one representable float. */
static int64_t ordinal(float x) {
  const uint32_t u = bits_of(x);
  return u >> 31 ? -(int64_t)(u & 0x7fffffffu) : (int64_t)u;
}

/* The spacing of floats at |r| (the subnormal spacing below the normal range), from the
 * bits of the double (frexp and ldexp are calls, in the sweep's innermost loop). */
static double ulp_at(double r) {
  const double a = fabs(r) < 0x1p-126 ? 0x1p-126 : fabs(r);
  uint64_t u;
  memcpy(&u, &a, sizeof u);
  u = (u & 0x7ff0000000000000u) - ((uint64_t)23 << 52);
  double ulp;
  memcpy(&ulp, &u, sizeof ulp);
  return ulp;
}

static void score(struct worst *w, float x, float y, double r) {
  if (isnan(r) || isnan(y)) {
    w->class_errors += isnan(r) != isnan(y);
    return;
  }
  if (y == 0.0f && (float)r != 0.0f && fabs(r) < FLT_MIN) {
    ++w->flushed;
    return;
  }
  const int64_t d = llabs(ordinal(y) - ordinal((float)r));
  const double e = isinf(y) || isinf(r) ? (y == (float)r ? 0.0 : INFINITY) : fabs((double)y - r) / ulp_at(r);
  if (d > w->ulps) w->ulps = d, w->at = x;
  if (e > w->err) w->err = e, w->at_err = x;
}

static void merge(struct worst *into, const struct worst *w) {
  if (w->ulps > into->ulps) into->ulps = w->ulps, into->at = w->at;
  if (w->err > into->err) into->err = w->err, into->at_err = w->at_err;
  into->class_errors += w->class_errors;
  into->flushed += w->flushed;
}

/* Inputs g*stride for g in [first, first + n): finite ones; a non-finite pattern is
 * replaced by 1.0f (checked apart). */
static int fill(float *x, uint64_t first, int n, uint64_t stride) {
  int m = 0;
  for (int k = 0; k < n; ++k) {
    const uint64_t b = (first + (uint64_t)k) * stride;
    if (b > UINT32_MAX) break;
    const float v = float_of((uint32_t)b);
    x[m++] = isfinite(v) ? v : 1.0f;
  }
  return m;
}

static void sweep(uint64_t stride, int forms, const int *selected, struct worst out[NFN][NFORM]) {
  const uint64_t count = UINT32_MAX / stride + 1, chunks = (count + CHUNK - 1) / CHUNK;
  memset(out, 0, sizeof(struct worst) * NFN * NFORM);
#pragma omp parallel
  {
    struct worst mine[NFN][NFORM];
    memset(mine, 0, sizeof mine);
    float x[CHUNK], y[CHUNK];
    double r[CHUNK];
#pragma omp for schedule(dynamic, 16)
    for (uint64_t c = 0; c < chunks; ++c) {
      const int n = fill(x, c * CHUNK, CHUNK, stride);
      for (int f = 0; f < NFN; ++f) {
        if (!selected[f]) continue;
        for (int k = 0; k < n; ++k) r[k] = fns[f].ref(x[k]);
        for (int form = 0; form < forms; ++form) {
          fns[f].form[form](x, y, n);
          for (int k = 0; k < n; ++k) score(&mine[f][form], x[k], y[k], r[k]);
        }
      }
    }
#pragma omp critical
    for (int f = 0; f < NFN; ++f)
      for (int form = 0; form < forms; ++form) merge(&out[f][form], &mine[f][form]);
  }
}

/* NaN, infinities, signed zeros and the domain edges: the result must be NaN exactly
 * where the reference is, and equal it (sign included) where it is infinite or zero. */
static int64_t check_classes(const struct fn *fn, int form) {
  const float edges[] = {0.0f,      -0.0f,       INFINITY,    -INFINITY,    NAN,           -NAN,    1.0f,     -1.0f,
                         -2.0f,     FLT_MAX,     -FLT_MAX,    FLT_TRUE_MIN, -FLT_TRUE_MIN, FLT_MIN, -FLT_MIN, 0x1p-30f,
                         -0x1p-30f, 88.7228394f, 88.7228470f, -103.972084f, -87.3365479f,  0x1p-29f};
  enum { NE = sizeof edges / sizeof edges[0] };
  float y[NE];
  fn->form[form](edges, y, NE);
  int64_t errors = 0;
  for (int k = 0; k < NE; ++k) {
    const double r = fn->ref(edges[k]);
    const float rf = (float)r;
    const int bad = isnan(r) ? !isnan(y[k]) : (isinf(rf) || rf == 0.0f) && bits_of(y[k]) != bits_of(rf);
    if (bad) {
      printf("  class error: %s(%a) = %a, expected %a (%s form)\n", fn->name, (double)edges[k], (double)y[k],
             (double)rf, form_names[form]);
      ++errors;
    }
  }
  return errors;
}

int main(int argc, char **argv) {
  const uint64_t stride = argc > 1 ? strtoull(argv[1], NULL, 10) : 127;
  int selected[NFN];
  for (int f = 0; f < NFN; ++f) {
    selected[f] = argc <= 2;
    for (int a = 2; a < argc; ++a) selected[f] |= strcmp(argv[a], fns[f].name) == 0;
  }
  if (stride == 0) {
    fprintf(stderr, "usage: test_vmath [STRIDE >= 1 [FUNCTION...]]\n");
    return 2;
  }
  __builtin_cpu_init();
  const int forms = __builtin_cpu_supports("x86-64-v4") ? 3 : __builtin_cpu_supports("x86-64-v3") ? 2 : 1;
  static struct worst w[NFN][NFORM];
  sweep(stride, forms, selected, w);
  printf("float32 inputs: every %" PRIu64 "-th bit pattern (%" PRIu64 " finite and non-finite), forms: %s\n", stride,
         UINT32_MAX / stride + 1,
         forms == 3   ? "x86-64 (SSE2), x86-64-v3 (AVX2), x86-64-v4 (AVX-512)"
         : forms == 2 ? "x86-64 (SSE2), x86-64-v3 (AVX2)"
                      : "x86-64 (SSE2) only");
  printf("%-8s %-10s %8s %10s %-16s %-16s %8s %6s %6s\n", "function", "form", "max ulp", "max err", "at (ulp)",
         "at (err)", "flushed", "budget", "result");
  int failed = 0;
  for (int f = 0; f < NFN; ++f) {
    for (int form = 0; form < forms && selected[f]; ++form) {
      struct worst *s = &w[f][form];
      s->class_errors += check_classes(&fns[f], form);
      /* A form no kernel calling it runs is measured and shown, not held to the budget. */
      const int unused = form >= fns[f].forms;
      const int bad = !unused && (s->ulps > fns[f].budget || s->class_errors > 0);
      failed |= bad;
      char at[32], at_err[32];
      snprintf(at, sizeof at, "%a", (double)s->at);
      snprintf(at_err, sizeof at_err, "%a", (double)s->at_err);
      printf("%-8s %-10s %8" PRId64 " %10.3f %-16s %-16s %8" PRId64 " %6d %6s%s\n", fns[f].name, form_names[form],
             s->ulps, s->err, at, at_err, s->flushed, fns[f].budget,
             bad      ? "FAIL"
             : unused ? "unused"
                      : "ok",
             s->class_errors ? " (class errors)" : "");
    }
  }
  return failed;
}
