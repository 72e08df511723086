/* opspec's own float32 math for kernel bodies, where glibc's vector math (libmvec) misses
 * XLA:CPU's accuracy budget: log (libmvec 3.9 ulp, budget 1) and log1p (budget 1).
 *
 * Each function is static inline and branch-free (selects, no calls), so that GCC
 * inlines it into a kernel loop and vectorises it in every CPU form (SSE2, x86-64-v3,
 * x86-64-v4) with whatever else the loop computes; clang vectorises it too, where
 * libmvec is not reached. It computes in float, as XLA's own code does, so that a vector
 * holds as many lanes as the loop's float data (8 with AVX2, 16 with AVX-512): the input
 * is reduced in its bits (32-bit integer operations, which SSE2 has) and the terms are
 * ordered so that the float roundings of all but the last sum stay far below an ulp
 * (measured over every float32 input: tests/c/test_vmath.c, docs/performance.md "Math
 * functions"). The kernels are compiled without FMA contraction (C11), so the same
 * roundings happen in every form.
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

/* The reduction shared by log and log1p: w = 2^k m with m in [sqrt(1/2), sqrt(2)), for a
 * finite float w > 0 (subnormals included; other w give garbage, which the callers
 * select away), and f = m - 1, exact (Sterbenz). Adding 2^23 less sqrt(2)'s mantissa
 * (0x3504f3) to the bits carries into the exponent exactly when the mantissa is
 * sqrt(2)'s or more. */
static inline float opspec_vm_reduce(float w, float *k) {
  const int subnormal = w < 0x1p-126f;
  const uint32_t u = opspec_vm_bits(subnormal ? w * 0x1p23f : w);
  const int32_t e = (int32_t)((u + 0x004afb0du) >> 23) - 127;
  *k = (float)(e - (subnormal ? 23 : 0));
  return opspec_vm_float(u - ((uint32_t)e << 23)) - 1.0f;
}

/* log(1 + f) for f in [sqrt(1/2) - 1, sqrt(2) - 1], plus k ln 2 and a correction c
 * (below the result's ulp) added where it is smallest. With s = f/(2 + f) and
 * h = f^2/2, log(1 + f) = 2 atanh(s) = f - h + s (h + R), R = 2s^2/3 + 2s^4/5 + ...:
 * f is exact and the rest is small beside it (s (h + R) is at most 1% of the result),
 * so that the float rounding of every term but the last sum stays below a tenth of an
 * ulp. |s| < 0.1716: R's terms past s^10 are below 2^-40 of the result. ln 2 is split
 * so that k ln2_hi is exact for every k here. */
static inline float opspec_vm_log1p_reduced(float f, float k, float c) {
  const float s = f / (2.0f + f);
  const float z = s * s;
  const float r = z * (2.0f / 3 + z * (2.0f / 5 + z * (2.0f / 7 + z * (2.0f / 9 + z * (2.0f / 11)))));
  const float h = 0.5f * f * f;
  const float ln2_hi = 0x1.62e4p-1f, ln2_lo = 0x1.7f7d1cp-20f;
  return k * ln2_hi + (f - (h - (s * (h + r) + (k * ln2_lo + c))));
}

/* logf with glibc's special values: log(+-0) = -inf, log(x < 0) = NaN, log(+inf) = +inf,
 * NaN stays NaN. */
static inline float opspec_logf(float x) {
  float k;
  const float f = opspec_vm_reduce(x, &k);
  const float r = opspec_vm_log1p_reduced(f, k, 0.0f);
  const float special = x == 0.0f ? -INFINITY : (x < 0.0f ? NAN : x + x);
  return x > 0.0f && x < INFINITY ? r : special;
}

/* log1pf: w = 1 + x rounded to float and its rounding error c = (1 + x) - w, exact
 * (Fast2Sum: the larger of 1 and |x| first); log1p(x) = log(w) + log(1 + c/w), and
 * |c/w| <= 2^-24, so log(1 + c/w) = c/w to within 2^-48 of it. Where |x| is so small
 * that w is 1, the result is c = x itself; +-0 keep their sign. log1p(-1) = -inf,
 * x < -1 NaN. */
static inline float opspec_log1pf(float x) {
  const float w = 1.0f + x;
  const float c = fabsf(x) <= 1.0f ? x - (w - 1.0f) : 1.0f - (w - x);
  float k;
  const float f = opspec_vm_reduce(w, &k);
  const float r = opspec_vm_log1p_reduced(f, k, c / w);
  const float special = x == -1.0f ? -INFINITY : (x < -1.0f ? NAN : x + x);
  return x > -1.0f && x < INFINITY && x != 0.0f ? r : special;
}

#endif /* OPSPEC_VMATH_H */
