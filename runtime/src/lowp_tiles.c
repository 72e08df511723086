/* float16 tiles: a run of 2-byte elements widened into floats, or floats narrowed into
 * 2-byte elements, for a float16 kernel that runs its float32 twin on stack tiles
 * (opspec/lowp.h, OPSPEC_CPU_TILE). The portable loops use the exact integer code of
 * opspec/lowp.h; on x86-64 with GCC the entry points pick F16C's vcvtph2ps/vcvtps2ph,
 * 8 lanes (x86-64-v3) or 16 (x86-64-v4), once, at their first call, by the same CPUID
 * test that picks the kernels' forms (runtime/src/cpu.c). The F16C loops
 * give the exact code's bits (tests/c/test_lowp.c checks every pattern). */
#include <stdatomic.h>
#include <stdint.h>

#include "opspec/lowp.h"

static void opspec_float16_widen_tile_soft(float *dst, const uint16_t *src, int64_t n) {
  for (int64_t k = 0; k < n; ++k) dst[k] = opspec_load_float16_soft(src[k]);
}

static void opspec_float16_narrow_tile_soft(uint16_t *dst, const float *src, int64_t n) {
  for (int64_t k = 0; k < n; ++k) dst[k] = opspec_store_float16_soft(src[k]);
}

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__ELF__)
#include <immintrin.h>

/* The tail of a tile (under a vector) takes the exact code. */
__attribute__((target("avx2,f16c"))) static void opspec_float16_widen_tile_v3(float *dst, const uint16_t *src,
                                                                              int64_t n) {
  int64_t k = 0;
  for (; k + 8 <= n; k += 8) _mm256_storeu_ps(dst + k, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(src + k))));
  opspec_float16_widen_tile_soft(dst + k, src + k, n - k);
}

__attribute__((target("avx2,f16c"))) static void opspec_float16_narrow_tile_v3(uint16_t *dst, const float *src,
                                                                               int64_t n) {
  int64_t k = 0;
  for (; k + 8 <= n; k += 8)
    _mm_storeu_si128((__m128i *)(dst + k), _mm256_cvtps_ph(_mm256_loadu_ps(src + k), _MM_FROUND_TO_NEAREST_INT));
  opspec_float16_narrow_tile_soft(dst + k, src + k, n - k);
}

__attribute__((target("avx512f"))) static void opspec_float16_widen_tile_v4(float *dst, const uint16_t *src,
                                                                            int64_t n) {
  int64_t k = 0;
  for (; k + 16 <= n; k += 16)
    _mm512_storeu_ps(dst + k, _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(src + k))));
  opspec_float16_widen_tile_soft(dst + k, src + k, n - k);
}

__attribute__((target("avx512f"))) static void opspec_float16_narrow_tile_v4(uint16_t *dst, const float *src,
                                                                             int64_t n) {
  int64_t k = 0;
  for (; k + 16 <= n; k += 16)
    _mm256_storeu_si256((__m256i *)(dst + k), _mm512_cvtps_ph(_mm512_loadu_ps(src + k), _MM_FROUND_TO_NEAREST_INT));
  opspec_float16_narrow_tile_soft(dst + k, src + k, n - k);
}

/* This CPU's form: 4 (x86-64-v4), 3 (x86-64-v3), 1 (the exact code), 0 not yet known.
 * It is found at the first call, not by an ifunc resolver: a resolver runs while the
 * loader relocates, before a sanitizer's runtime is ready, and an instrumented one
 * crashes the ASan build at load. Two first calls at once store the same value. */
static _Atomic int opspec_float16_tile_level;

static int opspec_float16_tile_form(void) {
  int level = atomic_load_explicit(&opspec_float16_tile_level, memory_order_relaxed);
  if (!level) {
    __builtin_cpu_init();
    level = __builtin_cpu_supports("x86-64-v4") ? 4 : __builtin_cpu_supports("x86-64-v3") ? 3 : 1;
    atomic_store_explicit(&opspec_float16_tile_level, level, memory_order_relaxed);
  }
  return level;
}

void opspec_float16_widen_tile(float *dst, const uint16_t *src, int64_t n) {
  switch (opspec_float16_tile_form()) {
    case 4:
      opspec_float16_widen_tile_v4(dst, src, n);
      return;
    case 3:
      opspec_float16_widen_tile_v3(dst, src, n);
      return;
    default:
      opspec_float16_widen_tile_soft(dst, src, n);
  }
}

void opspec_float16_narrow_tile(uint16_t *dst, const float *src, int64_t n) {
  switch (opspec_float16_tile_form()) {
    case 4:
      opspec_float16_narrow_tile_v4(dst, src, n);
      return;
    case 3:
      opspec_float16_narrow_tile_v3(dst, src, n);
      return;
    default:
      opspec_float16_narrow_tile_soft(dst, src, n);
  }
}
#else
void opspec_float16_widen_tile(float *dst, const uint16_t *src, int64_t n) {
  opspec_float16_widen_tile_soft(dst, src, n);
}

void opspec_float16_narrow_tile(uint16_t *dst, const float *src, int64_t n) {
  opspec_float16_narrow_tile_soft(dst, src, n);
}
#endif
