/* The bfloat16 and float16 conversions of CPU kernels that compute in float
 * (runtime/include/opspec/lowp.h), against independent references: the compiler's own
 * `_Float16` conversions for float16, and the scalar functions of opspec/dtypes.h (which
 * the CUDA simulator and the handler's widening use) for bfloat16.
 *
 *   test_lowp [STRIDE]
 *
 * Every one of the 65,536 2-byte patterns is widened and compared bit for bit (a NaN:
 * a quiet NaN of the same sign). Narrowing is checked on every STRIDE-th float32 bit
 * pattern (ctest: 251, a prime, so that every exponent, sign and low mantissa bit
 * occurs; 1 runs all 2^32), on every float that lies exactly halfway between two
 * results or one bit either side of it, at every exponent (the ties that round to even),
 * and on the edges: zeros, infinities, NaNs, the largest finite values and the overflow
 * and subnormal boundaries. The loops are written as a kernel's are (`omp simd`), so
 * that the vectorised forms are what is tested where the compiler vectorises them, and
 * compiled for each CPU form a kernel has (baseline x86-64, x86-64-v3, x86-64-v4), each
 * run where this CPU has it: float16's vector conversions are F16C's instructions in the
 * last two and the exact integer code in the first (runtime/src/lowp_f16c.c,
 * lowp_vector.c). The tiles' conversions (runtime/src/lowp_tiles.c, which pick their
 * form by CPUID) must give the same bits as the loops, from unaligned starts.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opspec/dtypes.h"
#include "opspec/lowp.h"

static long failures;

static uint32_t bits_of(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}

static float float_of(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

static uint16_t half_bits(_Float16 h) {
  uint16_t u;
  memcpy(&u, &h, sizeof u);
  return u;
}

/* The conversion loops, as a kernel's, compiled for one CPU form. */
#define LOWP_LOOPS(form, attributes)                                                         \
  attributes static void widen_##form(const uint16_t *in, float *bf, float *hf, size_t n) {  \
    _Pragma("omp simd") for (size_t i = 0; i < n; ++i) bf[i] = opspec_load_bfloat16(in[i]);  \
    _Pragma("omp simd") for (size_t i = 0; i < n; ++i) hf[i] = opspec_load_float16(in[i]);   \
  }                                                                                          \
  attributes static void narrow_##form(const float *x, uint16_t *b, uint16_t *h, size_t n) { \
    _Pragma("omp simd") for (size_t i = 0; i < n; ++i) b[i] = opspec_store_bfloat16(x[i]);   \
    _Pragma("omp simd") for (size_t i = 0; i < n; ++i) h[i] = opspec_store_float16(x[i]);    \
  }

LOWP_LOOPS(baseline, )
LOWP_LOOPS(v3, __attribute__((target("arch=x86-64-v3"))))
LOWP_LOOPS(v4, __attribute__((target("arch=x86-64-v4"))))

typedef struct {
  const char *name;
  void (*widen)(const uint16_t *, float *, float *, size_t);
  void (*narrow)(const float *, uint16_t *, uint16_t *, size_t);
} lowp_form;

static const lowp_form forms[] = {
    {"x86-64", widen_baseline, narrow_baseline},
    {"x86-64-v3", widen_v3, narrow_v3},
    {"x86-64-v4", widen_v4, narrow_v4},
};

/* The form under test. */
static const lowp_form *form = &forms[0];

static bool cpu_has(const char *name) {
  __builtin_cpu_init();
  if (strcmp(name, "x86-64-v3") == 0)
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("bmi2");
  if (strcmp(name, "x86-64-v4") == 0)
    return cpu_has("x86-64-v3") && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
  return true;
}

static void fail(const char *what, uint32_t in, uint32_t got, uint32_t want) {
  if (failures++ < 20)
    fprintf(stderr, "%s %s(0x%08" PRIx32 "): got 0x%08" PRIx32 ", want 0x%08" PRIx32 "\n", form->name, what, in, got,
            want);
}

/* Widening every 2-byte pattern. */
static void check_widen(void) {
  static uint16_t in[65536];
  static float bf[65536], hf[65536], tile[65536];
  for (uint32_t i = 0; i < 65536; ++i) in[i] = (uint16_t)i;
  form->widen(in, bf, hf, 65536);
  /* The tiles' widening (runtime/src/lowp_tiles.c, this CPU's form), from an odd start:
   * unaligned, and ending in a partial vector. */
  tile[0] = 0;
  opspec_float16_widen_tile(tile + 1, in + 1, 65535);
  for (uint32_t i = 0; i < 65536; ++i) {
    uint32_t want = bits_of(opspec_bfloat16_to_float((uint16_t)i)), got = bits_of(bf[i]);
    if (got != want) fail("load_bfloat16", i, got, want);
    _Float16 h;
    uint16_t b = (uint16_t)i;
    memcpy(&h, &b, sizeof h);
    want = bits_of((float)h);
    got = bits_of(hf[i]);
    bool nan = (i & 0x7fffu) > 0x7c00u;
    /* A NaN: quiet, same sign and payload (the compiler may or may not quieten it). */
    if (nan ? (got | 0x00400000u) != (want | 0x00400000u) || !(got & 0x00400000u) : got != want)
      fail("load_float16", i, got, want);
    if (i && bits_of(tile[i]) != got) fail("float16_widen_tile", i, bits_of(tile[i]), got);
  }
}

/* Narrowing `n` floats, both ways, against the references. */
static void check_narrow(const uint32_t *in, size_t n) {
  float *x = calloc(n, sizeof *x); /* calloc: GCC cannot see that the loop below fills it */
  uint16_t *b = malloc(n * sizeof *b), *h = malloc(n * sizeof *h), *t = calloc(n, sizeof *t);
  for (size_t i = 0; i < n; ++i) x[i] = float_of(in[i]);
  form->narrow(x, b, h, n);
  if (n > 1) opspec_float16_narrow_tile(t + 1, x + 1, (int64_t)n - 1); /* odd start, as above */
  for (size_t i = 0; i < n; ++i) {
    uint16_t want = opspec_float_to_bfloat16(x[i]);
    if (b[i] != want) fail("store_bfloat16", in[i], b[i], want);
    want = half_bits((_Float16)x[i]);
    bool nan = (in[i] & 0x7fffffffu) > 0x7f800000u;
    if (nan ? (h[i] | 0x200u) != (want | 0x200u) || !(h[i] & 0x200u) || (h[i] & 0x7c00u) != 0x7c00u : h[i] != want)
      fail("store_float16", in[i], h[i], want);
    if (i && t[i] != h[i]) fail("float16_narrow_tile", in[i], t[i], h[i]);
  }
  free(t);
  free(x);
  free(b);
  free(h);
}

/* Floats at and around every tie of both narrowings, at every exponent and sign. */
static void check_ties(void) {
  static const uint32_t low[] = {0, 1, 0x0fff, 0x1000, 0x1001, 0x1fff, 0x7fff, 0x8000, 0x8001, 0xffff};
  size_t n = 0, cap = 2u * 256u * 1024u * (sizeof low / sizeof *low);
  uint32_t *in = malloc(cap * sizeof *in);
  for (uint32_t sign = 0; sign < 2; ++sign)
    for (uint32_t e = 0; e < 256; ++e)
      for (uint32_t k = 0; k < 1024; ++k) /* the 10 bits above the 13 float16 drops */
        for (size_t l = 0; l < sizeof low / sizeof *low; ++l) {
          uint32_t mant = ((k << 13) | (low[l] & 0x1fffu) | (low[l] & 0xe000u)) & 0x7fffffu;
          in[n++] = sign << 31 | e << 23 | mant;
        }
  check_narrow(in, n);
  /* float16's subnormal ties: odd multiples of 2^-25, one float ulp either side. */
  n = 0;
  for (uint32_t m = 1; m < 2048 && n + 6 <= cap; m += 2) {
    uint32_t t = bits_of((float)m * 0x1p-25f);
    in[n++] = t;
    in[n++] = t + 1;
    in[n++] = t - 1;
    in[n++] = t | 0x80000000u;
    in[n++] = (t + 1) | 0x80000000u;
    in[n++] = (t - 1) | 0x80000000u;
  }
  check_narrow(in, n);
  free(in);
}

static void check_edges(void) {
  static const uint32_t edges[] = {
      0x00000000u, 0x80000000u, 0x7f800000u, 0xff800000u, 0x7fc00000u, 0xffc00000u, 0x7f800001u, 0xff800001u,
      0x7fffffffu, 0x7f7fffffu, 0xff7fffffu, 0x477fe000u, 0x477fefffu, 0x477ff000u, 0x477ff001u, 0x47800000u,
      0x38800000u, 0x387fffffu, 0x33000000u, 0x33000001u, 0x32ffffffu, 0x00000001u, 0x007fffffu, 0x00800000u,
      0x7f7f8000u, 0x7f7f7fffu, 0x7f7fc000u, 0x3f800000u, 0xbf800000u, 0x33800000u, 0x337fffffu, 0x387fe000u};
  check_narrow(edges, sizeof edges / sizeof *edges);
}

/* Every `stride`-th float32 pattern, in blocks. */
static void check_sweep(uint32_t stride) {
  enum { BLOCK = 1 << 20 };
  uint32_t *in = malloc(BLOCK * sizeof *in);
  uint64_t u = 0;
  while (u <= UINT32_MAX) {
    size_t n = 0;
    for (; n < BLOCK && u <= UINT32_MAX; u += stride) in[n++] = (uint32_t)u;
    check_narrow(in, n);
  }
  free(in);
}

int main(int argc, char **argv) {
  uint32_t stride = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 10) : 251;
  if (stride == 0) stride = 1;
  for (size_t f = 0; f < sizeof forms / sizeof *forms; ++f) {
    form = &forms[f];
    if (!cpu_has(form->name)) {
      printf("test_lowp: %s: not this CPU's, skipped\n", form->name);
      continue;
    }
    check_widen();
    check_edges();
    check_ties();
    check_sweep(stride);
    printf("test_lowp: %s checked\n", form->name);
  }
  printf("test_lowp: stride %" PRIu32 ", %ld failures\n", stride, failures);
  return failures != 0;
}
