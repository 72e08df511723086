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

typedef void opspec_float16_widen_fn(float *, const uint16_t *, int64_t);
typedef void opspec_float16_narrow_fn(uint16_t *, const float *, int64_t);

/* The form is picked at the first call, not by an ifunc resolver: a resolver runs while
 * the loader relocates, before a sanitizer's runtime is ready, and an instrumented one
 * crashes the ASan build at load. A race between two first calls stores the same
 * pointer twice. */
static _Atomic(opspec_float16_widen_fn *) opspec_float16_widen_form;
static _Atomic(opspec_float16_narrow_fn *) opspec_float16_narrow_form;

void opspec_float16_widen_tile(float *dst, const uint16_t *src, int64_t n) {
  opspec_float16_widen_fn *form = atomic_load_explicit(&opspec_float16_widen_form, memory_order_relaxed);
  if (!form) {
    __builtin_cpu_init();
    form = __builtin_cpu_supports("x86-64-v4")   ? opspec_float16_widen_tile_v4
           : __builtin_cpu_supports("x86-64-v3") ? opspec_float16_widen_tile_v3
                                                 : opspec_float16_widen_tile_soft;
    atomic_store_explicit(&opspec_float16_widen_form, form, memory_order_relaxed);
  }
  form(dst, src, n);
}

void opspec_float16_narrow_tile(uint16_t *dst, const float *src, int64_t n) {
  opspec_float16_narrow_fn *form = atomic_load_explicit(&opspec_float16_narrow_form, memory_order_relaxed);
  if (!form) {
    __builtin_cpu_init();
    form = __builtin_cpu_supports("x86-64-v4")   ? opspec_float16_narrow_tile_v4
           : __builtin_cpu_supports("x86-64-v3") ? opspec_float16_narrow_tile_v3
                                                 : opspec_float16_narrow_tile_soft;
    atomic_store_explicit(&opspec_float16_narrow_form, form, memory_order_relaxed);
  }
  form(dst, src, n);
}
#else
void opspec_float16_widen_tile(float *dst, const uint16_t *src, int64_t n) {
  opspec_float16_widen_tile_soft(dst, src, n);
}

void opspec_float16_narrow_tile(uint16_t *dst, const float *src, int64_t n) {
  opspec_float16_narrow_tile_soft(dst, src, n);
}
#endif
