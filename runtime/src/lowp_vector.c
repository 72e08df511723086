/* The float16 conversions of CPU kernels, in every vector form GCC's `simd` declaration
 * in opspec/lowp.h names (SSE2 4 lanes, AVX 8, AVX2 8, AVX-512 16) and the scalar one,
 * all from the exact integer code of opspec/lowp.h: GCC makes the vector forms from the
 * scalar body. They are weak, so that runtime/src/lowp_f16c.c's F16C forms of AVX2 and
 * AVX-512 take their place where both are linked; the SSE2 and AVX ones stay these (those
 * instruction sets do not include F16C). */
#include <stdint.h>

#include "opspec/lowp.h"

#if OPSPEC_LOWP_VECTOR
__attribute__((weak, simd("notinbranch"))) float opspec_float16_widen(uint32_t bits) {
  return opspec_load_float16_soft((uint16_t)bits);
}

__attribute__((weak, simd("notinbranch"))) uint32_t opspec_float16_narrow(float value) {
  return opspec_store_float16_soft(value);
}
#endif
