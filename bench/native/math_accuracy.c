/* Speed and accuracy of the float math a kernel body can call (docs/performance.md,
 * "Math functions"): glibc's scalar libm, glibc's vector forms (libmvec, reached as
 * opspec/math.h reaches them: a `simd` declaration and a loop GCC vectorises) and SLEEF
 * (Debian libsleef-dev), for expf, logf, tanhf and powf.
 *
 * Accuracy: the largest error in float ulps against the double function of glibc
 * (under 1 double ulp, so exact to ~1e-9 float ulp), over every 3rd float bit pattern
 * (1.4e9 values: every finite float class, subnormals, both signs), plus NaN, +-inf,
 * +-0 and the overflow and underflow thresholds, where the class must match (NaN for
 * NaN, the same infinity). powf: 2e7 random pairs and the edge grid.
 * Speed: ns per element of a 65,536-element loop (in cache), best of 20.
 *
 *   gcc -O3 -fno-math-errno [-mavx2 -mfma] bench/native/math_accuracy.c \
 *       -I/usr/include/x86_64-linux-gnu -lsleef -lmvec -lm -o /tmp/math_accuracy
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <sleef.h>

#define SIMD __attribute__((simd("notinbranch")))
float expf(float) SIMD;
float logf(float) SIMD;
float tanhf(float) SIMD;
float powf(float, float) SIMD;

/* The same functions through a wrapper GCC cannot vectorise: libm's scalar path. */
__attribute__((noinline)) static float s_exp(float x) { return expf(x); }
__attribute__((noinline)) static float s_log(float x) { return logf(x); }
__attribute__((noinline)) static float s_tanh(float x) { return tanhf(x); }
__attribute__((noinline)) static float s_pow(float x, float y) { return powf(x, y); }

#if defined(__AVX2__)
#define SLEEF1(f, x) f##f8_u10(x)
typedef __m256 vf;
#define VL     8
#define VLOAD  _mm256_loadu_ps
#define VSTORE _mm256_storeu_ps
#else
#define SLEEF1(f, x) f##f4_u10(x)
typedef __m128 vf;
#define VL           4
#define VLOAD        _mm_loadu_ps
#define VSTORE       _mm_storeu_ps
#endif

enum { N = 1 << 16 };
static float xs[N], ys[N], out[N];

#define LOOPS(name, expr1, sleef)                                              \
  static void v_##name(int64_t n) {                                            \
    for (int64_t i = 0; i < n; ++i) out[i] = expr1(xs[i]);                     \
  }                                                                            \
  static void l_##name(int64_t n) {                                            \
    for (int64_t i = 0; i < n; ++i) out[i] = s_##name(xs[i]);                  \
  }                                                                            \
  static void q_##name(int64_t n) {                                            \
    for (int64_t i = 0; i < n; i += VL) VSTORE(out + i, sleef(VLOAD(xs + i))); \
  }
#define SL_EXP(v)  SLEEF1(Sleef_exp, v)
#define SL_LOG(v)  SLEEF1(Sleef_log, v)
#define SL_TANH(v) SLEEF1(Sleef_tanh, v)
LOOPS(exp, expf, SL_EXP)
LOOPS(log, logf, SL_LOG)
LOOPS(tanh, tanhf, SL_TANH)
static void v_pow(int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = powf(xs[i], ys[i]);
}
static void l_pow(int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = s_pow(xs[i], ys[i]);
}
static void q_pow(int64_t n) {
  for (int64_t i = 0; i < n; i += VL)
#if defined(__AVX2__)
    VSTORE(out + i, Sleef_powf8_u10(VLOAD(xs + i), VLOAD(ys + i)));
#else
    VSTORE(out + i, Sleef_powf4_u10(VLOAD(xs + i), VLOAD(ys + i)));
#endif
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

static double best_ns(void (*f)(int64_t)) {
  double best = 1e30;
  for (int r = 0; r < 20; ++r) {
    const double t0 = now();
    f(N);
    const double t = now() - t0;
    if (t < best) best = t;
  }
  return best / N * 1e9;
}

static float from_bits(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}

/* Error of got in units of the last place of the float nearest ref; -1 when the class
 * (NaN, infinity) does not match. */
static double ulp_error(float got, double ref) {
  if (isnan(ref)) return isnan(got) ? 0 : -1;
  if (isnan(got)) return -1;
  const float r = (float)ref;
  if (isinf(r) || isinf(got)) {
    if (got == r) return 0;
    if (isinf(got) && !isinf(r)) return fabs(ref) > 0x1.fffffep127 ? 0.5 : -1; /* rounds to inf */
    return -1;
  }
  int e;
  frexp(r == 0 ? ref : (double)r, &e);
  double ulp = ldexp(1.0, e - 24);
  if (ulp < 0x1p-149) ulp = 0x1p-149;
  return fabs((double)got - ref) / ulp;
}

typedef struct {
  double max;
  float at;
  long bad;
} stat;

static void note(stat *s, float x, float got, double ref) {
  const double e = ulp_error(got, ref);
  if (e < 0) {
    if (s->bad++ == 0) s->at = x;
    return;
  }
  if (e > s->max) {
    s->max = e;
    s->at = x;
  }
}

typedef double (*dref)(double);
static const float edges[] = {NAN,
                              -NAN,
                              INFINITY,
                              -INFINITY,
                              0.0f,
                              -0.0f,
                              0x1p-149f,
                              -0x1p-149f,
                              0x1p-126f,
                              0x1.fffffcp-127f,
                              88.72283f,
                              88.72284f,
                              89.0f,
                              -87.33654f,
                              -103.97208f,
                              -104.0f,
                              1.0f,
                              -1.0f,
                              0x1.fffffep127f,
                              -0x1.fffffep127f,
                              9.0f,
                              10.0f,
                              20.0f,
                              -9.0f};

static void accuracy1(const char *name, void (*vec)(int64_t), void (*lib)(int64_t), void (*sl)(int64_t), dref ref) {
  stat sv = {0, 0, 0}, sl_ = {0, 0, 0}, sq = {0, 0, 0};
  uint64_t k = 0;
  int64_t n = 0;
  const int nedges = sizeof edges / sizeof edges[0];
  for (int64_t e = 0; e < nedges; ++e) xs[n++] = edges[e];
  for (;;) {
    while (n < N && k <= 0xffffffffu) {
      xs[n++] = from_bits((uint32_t)k);
      k += 3;
    }
    while (n % VL) xs[n++] = 1.0f;
    vec(n);
    for (int64_t i = 0; i < n; ++i) ys[i] = out[i];
    lib(n);
    for (int64_t i = 0; i < n; ++i) {
      const double r = ref((double)xs[i]);
      note(&sv, xs[i], ys[i], r);
      note(&sl_, xs[i], out[i], r);
    }
    sl(n);
    for (int64_t i = 0; i < n; ++i) note(&sq, xs[i], out[i], ref((double)xs[i]));
    if (k > 0xffffffffu) break;
    n = 0;
  }
  printf("%-6s max ulp: libm %.3f  libmvec %.3f (at %a, %ld class errors)  sleef u10 %.3f (at %a, %ld)\n", name,
         sl_.max, sv.max, sv.at, sv.bad, sq.max, sq.at, sq.bad);
  for (int64_t i = 0; i < N; ++i) xs[i] = (float)(i % 2000) * 0.01f - 10.0f + 1e-3f;
  printf("%-6s ns/elem: libm %.2f  libmvec %.2f  sleef %.2f\n", name, best_ns(lib), best_ns(vec), best_ns(sl));
}

static uint64_t rng = 88172645463325252ull;
static uint32_t next(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return (uint32_t)rng;
}

static void accuracy_pow(void) {
  stat sv = {0, 0, 0}, sl_ = {0, 0, 0}, sq = {0, 0, 0};
  const int nedges = sizeof edges / sizeof edges[0];
  for (int round = 0; round < 320; ++round) {
    int64_t n = 0;
    if (round == 0)
      for (int a = 0; a < nedges; ++a)
        for (int b = 0; b < nedges; ++b) {
          xs[n] = edges[a];
          ys[n++] = edges[b];
        }
    while (n < N) {
      /* positive bases across the range, exponents of moderate size, and some negative
       * bases with integer exponents */
      xs[n] = from_bits(next() & 0x7fffffffu);
      ys[n] = (float)((int32_t)next()) * 0x1p-26f;
      if ((next() & 7) == 0) {
        xs[n] = -xs[n];
        ys[n] = (float)((int)ys[n]);
      }
      ++n;
    }
    v_pow(n);
    for (int64_t i = 0; i < n; ++i) out[i] = out[i];
    static float keep[N];
    memcpy(keep, out, sizeof keep);
    l_pow(n);
    for (int64_t i = 0; i < n; ++i) {
      const double r = pow((double)xs[i], (double)ys[i]);
      note(&sv, xs[i], keep[i], r);
      note(&sl_, xs[i], out[i], r);
    }
    q_pow(n);
    for (int64_t i = 0; i < n; ++i) note(&sq, xs[i], out[i], pow((double)xs[i], (double)ys[i]));
  }
  printf("%-6s max ulp: libm %.3f  libmvec %.3f (at x=%a, %ld class errors)  sleef u10 %.3f (%ld)\n", "pow", sl_.max,
         sv.max, sv.at, sv.bad, sq.max, sq.bad);
  for (int64_t i = 0; i < N; ++i) {
    xs[i] = (float)(i % 1000) * 0.01f + 0.01f;
    ys[i] = (float)(i % 37) * 0.25f - 4.0f;
  }
  printf("%-6s ns/elem: libm %.2f  libmvec %.2f  sleef %.2f\n", "pow", best_ns(l_pow), best_ns(v_pow), best_ns(q_pow));
}

int main(void) {
#if defined(__AVX2__)
  printf("AVX2 build: libmvec _ZGVdN8v_*, SLEEF *f8_u10\n");
#else
  printf("baseline x86-64 build: libmvec _ZGVbN4v_*, SLEEF *f4_u10\n");
#endif
  accuracy1("exp", v_exp, l_exp, q_exp, exp);
  accuracy1("log", v_log, l_log, q_log, log);
  accuracy1("tanh", v_tanh, l_tanh, q_tanh, tanh);
  accuracy_pow();
  return 0;
}
