/* The AVX2 and AVX-512 forms of opspec/lowp.h's float16 conversions, in F16C's
 * instructions: vcvtph2ps widens exactly; vcvtps2ph with round-to-nearest-even narrows
 * as the exact code does (overflow to infinity, subnormal halves, a NaN kept quiet with
 * its sign and upper payload bits), whatever the rounding mode in MXCSR. They replace the
 * weak forms of runtime/src/lowp_vector.c. Names and argument passing are the x86-64
 * vector function ABI's for `simd("notinbranch")` on `float f(uint32_t)` and
 * `uint32_t f(float)`: 'd' (AVX2) 8 lanes in a ymm register, 'e' (AVX-512) 16 in a zmm.
 * Every CPU with AVX2 or AVX-512F has F16C (x86-64-v3 requires it), and a kernel calls
 * these only from code compiled for one of those. */
#include <stdint.h>

#include "opspec/lowp.h"

#if OPSPEC_LOWP_VECTOR
#include <immintrin.h>

#define OPSPEC_F16C_ROUND _MM_FROUND_TO_NEAREST_INT

__m256 _ZGVdN8v_opspec_float16_widen(__m256i bits);
__m256i _ZGVdN8v_opspec_float16_narrow(__m256 value);
__m512 _ZGVeN16v_opspec_float16_widen(__m512i bits);
__m512i _ZGVeN16v_opspec_float16_narrow(__m512 value);

/* The 8 bit patterns are in the low halves of 32-bit lanes: packed to 16 bits, widened. */
__attribute__((target("avx2,f16c"))) __m256 _ZGVdN8v_opspec_float16_widen(__m256i bits) {
  __m128i packed = _mm_packus_epi32(_mm256_castsi256_si128(bits), _mm256_extracti128_si256(bits, 1));
  return _mm256_cvtph_ps(packed);
}

__attribute__((target("avx2,f16c"))) __m256i _ZGVdN8v_opspec_float16_narrow(__m256 value) {
  return _mm256_cvtepu16_epi32(_mm256_cvtps_ph(value, OPSPEC_F16C_ROUND));
}

__attribute__((target("avx512f"))) __m512 _ZGVeN16v_opspec_float16_widen(__m512i bits) {
  return _mm512_cvtph_ps(_mm512_cvtepi32_epi16(bits));
}

__attribute__((target("avx512f"))) __m512i _ZGVeN16v_opspec_float16_narrow(__m512 value) {
  return _mm512_cvtepu16_epi32(_mm512_cvtps_ph(value, OPSPEC_F16C_ROUND));
}
#endif
