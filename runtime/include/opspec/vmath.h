/* opspec's own float32 math for kernel bodies, where glibc's vector math (libmvec) misses
 * XLA:CPU's accuracy budget: log (libmvec 3.9 ulp, budget 1) and log1p (budget 1).
 *
 * Each function is static inline and branch-free (selects, no calls), so that GCC
 * inlines it into a kernel loop and vectorises it in both CPU forms (SSE2 and
 * x86-64-v3) with whatever else the loop computes; clang vectorises it too, where
 * libmvec is not reached. The float input is reduced in float bits (32-bit integer
 * operations, which SSE2 has) and the polynomial runs in double, so that the result
 * before its one rounding to float is within about 1e-12 of the exact value: the float
 * result is within 0.5 ulp plus that (measured over every float32 input:
 * tests/c/test_vmath.c, docs/performance.md "Math functions").
 *
 * Included by opspec/math.h, before its type-generic macros, which map log(v) and
 * log1p(v) on a float (and a float16) value here. The double functions stay glibc's.
 */
#ifndef OPSPEC_VMATH_H
#define OPSPEC_VMATH_H

#include <math.h>
#include <stdint.h>
#include <string.h>

static inline uint32_t opspec_vm_bits(float x) {
  uint32_t u;
  memcpy(&u, &x, sizeof u);
  return u;
}

static inline float opspec_vm_float(uint32_t u) {
  float x;
  memcpy(&x, &u, sizeof x);
  return x;
}

/* log(x) in double for a finite float x > 0 (subnormals included); other x give
 * garbage, which the callers select away. x = 2^k m with m in [sqrt(1/2), sqrt(2)),
 * and log(m) = 2 atanh(s), s = (m-1)/(m+1), |s| < 0.1716: the series' terms past
 * s^15/15 are below 2e-13 of the sum. */
static inline double opspec_vm_log_positive(float x) {
  const int subnormal = x < 0x1p-126f;
  const uint32_t u = opspec_vm_bits(subnormal ? x * 0x1p23f : x);
  /* Adding 2^23 less sqrt(2)'s mantissa (0x3504f3) carries into the exponent exactly
   * when the mantissa is sqrt(2)'s or more. */
  const int32_t k = (int32_t)((u + 0x004afb0du) >> 23) - 127;
  const float m = opspec_vm_float(u - ((uint32_t)k << 23));
  const double f = (double)m - 1.0; /* exact */
  const double s = f / (2.0 + f);
  const double z = s * s;
  const double p =
      1.0 + z * (1.0 / 3 + z * (1.0 / 5 + z * (1.0 / 7 + z * (1.0 / 9 + z * (1.0 / 11 + z * (1.0 / 13 + z / 15))))));
  const double ln2 = 0x1.62e42fefa39efp-1;
  return (double)(k - (subnormal ? 23 : 0)) * ln2 + 2.0 * s * p;
}

/* logf with glibc's special values: log(+-0) = -inf, log(x < 0) = NaN, log(+inf) = +inf,
 * NaN stays NaN. */
static inline float opspec_logf(float x) {
  const float r = (float)opspec_vm_log_positive(x);
  const float special = x == 0.0f ? -INFINITY : (x < 0.0f ? NAN : x + x);
  return x > 0.0f && x < INFINITY ? r : special;
}

/* log1pf: w = 1 + x rounded to float, c = (1 + x) - w exactly (in double: 1 + x is exact
 * there for |x| >= 2^-29), and log1p(x) = log(w) + log(1 + t), t = c/w, |t| <= 2^-24:
 * t - t^2/2 is within 2^-73 of the last (t alone is not: where x is near 2^-24 the
 * result is that small too, and t^2/2 is 0.06 of its ulp). Below 2^-29, log1p(x) rounds
 * to x itself. log1p(-1) = -inf, x < -1 NaN. */
static inline float opspec_log1pf(float x) {
  const double sum = 1.0 + (double)x;
  const float w = (float)sum;
  const double c = sum - (double)w;
  const double t = c / (double)w;
  const float r = (float)(opspec_vm_log_positive(w) + t * (1.0 - 0.5 * t));
  const float special = x == -1.0f ? -INFINITY : (x < -1.0f ? NAN : x + x);
  const float general = x > -1.0f && x < INFINITY ? r : special;
  return fabsf(x) < 0x1p-29f ? x : general;
}

#endif /* OPSPEC_VMATH_H */
