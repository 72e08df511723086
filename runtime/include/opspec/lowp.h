/* bfloat16 and float16 in a CPU kernel that computes in float (docs/spec.md, "bfloat16 and float16 on CPU").
 *
 * A bfloat16 or float16 variant of a portable op keeps its arrays in their 2-byte form
 * (`uint16_t` bits, OPSPEC_STORAGE_<T>) and computes in float (T is float there): the
 * generator rewrites every element read `x[i]` of such an array into
 * OPSPEC_LOAD_T(x[i]) and every store `y[i] = v` into `y[i] = OPSPEC_STORE_T(v)`
 * (generator/util/c_lowp.c). These are the conversions those macros name: integer and
 * float operations without branches, which GCC vectorises (shifts, masks, compares and
 * selects), so that the loop stays one vector loop with no widening pass around it.
 * Widening is exact; narrowing rounds to nearest, ties to even, and keeps a NaN a quiet
 * NaN (its sign and the payload bits that fit). Included by opspec/math.h, after a
 * fastmath file's optimisation pragma, so that these inline into its kernels.
 */
#ifndef OPSPEC_LOWP_H
#define OPSPEC_LOWP_H

#include <stdint.h>
#include <string.h>

/* The identity, for a variant whose type variable is not 2-byte. */
#define OPSPEC_SAME(v) (v)

/* Always inlined: a kernel is a target clone (opspec/cpu.h), and GCC 12 inlines a plain
 * static inline function into a clone of another arch only where its size estimate
 * allows; the float16 conversions stayed out-of-line calls in the x86-64-v4 clone of a
 * row loop, which then ran 10x slower than bfloat16 (bench/bench_ml.py). */
#if defined(__GNUC__) || defined(__clang__)
#define OPSPEC_LOWP_INLINE static inline __attribute__((always_inline))
#else
#define OPSPEC_LOWP_INLINE static inline
#endif

OPSPEC_LOWP_INLINE uint32_t opspec_lowp_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}

OPSPEC_LOWP_INLINE float opspec_lowp_float(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

/* bfloat16 is the upper half of a float32. */
OPSPEC_LOWP_INLINE float opspec_load_bfloat16(uint16_t bits) { return opspec_lowp_float((uint32_t)bits << 16); }

/* Round to nearest even by adding 0x7fff plus the lowest kept bit; a NaN keeps its upper
 * half with the quiet bit set (rounding could carry it into infinity). */
OPSPEC_LOWP_INLINE uint16_t opspec_store_bfloat16(float value) {
  uint32_t u = opspec_lowp_bits(value);
  uint32_t nan = u >> 16 | 0x40u;
  uint32_t rounded = (u + 0x7fffu + (u >> 16 & 1u)) >> 16;
  return (uint16_t)((u & 0x7fffffffu) > 0x7f800000u ? nan : rounded);
}

/* float16: 1 sign bit, 5 exponent bits (bias 15), 10 mantissa bits. A normal half's
 * exponent moves by 127 - 15 = 112; infinity and NaN (exponent 31) move to 255, a NaN
 * quietened; a subnormal (exponent 0) is its mantissa times 2^-24, exact in float. */
OPSPEC_LOWP_INLINE float opspec_load_float16_soft(uint16_t bits) {
  uint32_t magnitude = bits & 0x7fffu;
  uint32_t sign = (uint32_t)(bits & 0x8000u) << 16;
  uint32_t normal = (magnitude << 13) + (112u << 23);
  uint32_t special = (normal + (112u << 23)) | (magnitude > 0x7c00u ? 0x00400000u : 0u);
  uint32_t subnormal = opspec_lowp_bits((float)(int32_t)magnitude * 0x1p-24f);
  uint32_t out = magnitude >= 0x7c00u ? special : magnitude < 0x0400u ? subnormal : normal;
  return opspec_lowp_float(out | sign);
}

/* A float of magnitude `a` (bits) at or above 2^-14 (half's smallest normal) drops 13
 * mantissa bits, rounded to nearest even (a carry into the exponent is right, up to
 * infinity); at 2^16 and above, and infinity, the result is infinity. Below 2^-14 the
 * half is subnormal, a multiple of 2^-24: adding 0.5f, whose ulp is 2^-24, rounds the
 * magnitude to that multiple in the FPU's own round-to-nearest-even, and the sum's low
 * mantissa bits are the half's. */
OPSPEC_LOWP_INLINE uint16_t opspec_store_float16_soft(float value) {
  uint32_t u = opspec_lowp_bits(value);
  uint32_t a = u & 0x7fffffffu;
  uint32_t sign = u >> 16 & 0x8000u;
  uint32_t nan = 0x7e00u | (a >> 13 & 0x3ffu);
  uint32_t normal = ((a + 0xfffu + (a >> 13 & 1u)) >> 13) - (112u << 10);
  uint32_t subnormal = opspec_lowp_bits(opspec_lowp_float(a) + 0.5f) - 0x3f000000u;
  uint32_t out = a > 0x7f800000u ? nan : a >= 0x47800000u ? 0x7c00u : a >= 0x38800000u ? normal : subnormal;
  return (uint16_t)(out | sign);
}

/* float16 in a loop GCC vectorises: F16C's vcvtph2ps and vcvtps2ph, 8 or 16 lanes an
 * instruction, where the exact integer forms above take some 30 vector operations a
 * pair. GCC 12 vectorises no `_Float16` conversion with F16C alone, and an intrinsic in
 * a loop stays scalar; so the conversions are functions declared `simd`, as libmvec's
 * are (opspec/math.h), and a vectorised loop calls their 8- and 16-lane forms
 * (_ZGVdN8v_..., _ZGVeN16v_...). runtime/src/lowp_vector.c defines every form from the
 * exact integer code; runtime/src/lowp_f16c.c replaces the AVX2 and AVX-512 ones with
 * F16C. Both give the same bits (tests/c/test_lowp.c). Their argument and result are
 * 32-bit, so that a loop of float values and their 2-byte elements has one vector
 * length. Where the compiler is not GCC on x86-64 ELF, or OPSPEC_NO_LOWP_VECTOR is
 * defined (code not linked with those files), the exact forms are inlined. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__ELF__) && \
    !defined(OPSPEC_NO_LOWP_VECTOR)
#define OPSPEC_LOWP_VECTOR      1
#define OPSPEC_LOWP_VECTOR_DECL __attribute__((simd("notinbranch"), const, nothrow, leaf))
float opspec_float16_widen(uint32_t bits) OPSPEC_LOWP_VECTOR_DECL;
uint32_t opspec_float16_narrow(float value) OPSPEC_LOWP_VECTOR_DECL;
OPSPEC_LOWP_INLINE float opspec_load_float16(uint16_t bits) { return opspec_float16_widen(bits); }
OPSPEC_LOWP_INLINE uint16_t opspec_store_float16(float value) { return (uint16_t)opspec_float16_narrow(value); }
#else
OPSPEC_LOWP_INLINE float opspec_load_float16(uint16_t bits) { return opspec_load_float16_soft(bits); }
OPSPEC_LOWP_INLINE uint16_t opspec_store_float16(float value) { return opspec_store_float16_soft(value); }
#endif

/* float16 tiles (runtime/src/lowp_tiles.c). Where a float16 kernel's body reads and
 * writes its arrays only element-wise at the launch index (docs/spec.md, "bfloat16 and
 * float16 on CPU"), opspec-gen writes its float16 variant as a loop over tiles of
 * OPSPEC_CPU_TILE elements: each 2-byte input's tile is widened into a float array on
 * the stack, the float32 kernel runs on the tile, and each 2-byte output's tile is
 * narrowed back. A tile of a few hundred floats per array stays in L1; widening and
 * narrowing take F16C's instructions, 8 or 16 elements each, where the CPU has them, so
 * the float32 loop runs with no conversion call inside it. */
#define OPSPEC_CPU_TILE 512
void opspec_float16_widen_tile(float *dst, const uint16_t *src, int64_t n);
void opspec_float16_narrow_tile(uint16_t *dst, const float *src, int64_t n);

/* float16 row spans (generator/plan/spans.h). Where a 2-D kernel's body reads and
 * writes its float16 arrays only as slices `a[base + j]` of its rows, its float16
 * variant runs a block of rows at a time: the span of each array that the block's
 * slices touch, [lo, hi), is widened once into a float array on the stack (an input)
 * or narrowed once from one (an output), and the rows run on the floats.
 * OPSPEC_CPU_SPAN_FLOATS floats (32 KiB) are shared among an op's arrays. A read span
 * takes the slices' extremes: it holds elements the block reads and those between them
 * in the same array. A written span must be covered exactly: each slice starts where
 * the last ended (`ok` false otherwise), so that narrowing the span writes only
 * elements the rows store. */
#define OPSPEC_CPU_SPAN_FLOATS 8192

typedef struct opspec_span {
  int64_t lo, hi;
  int ok;
} opspec_span;

#define OPSPEC_SPAN_EMPTY \
  { INT64_MAX, INT64_MIN, 1 }

OPSPEC_LOWP_INLINE void opspec_span_read(opspec_span *s, int64_t base, int64_t n) {
  s->lo = base < s->lo ? base : s->lo;
  s->hi = base + n > s->hi ? base + n : s->hi;
}

OPSPEC_LOWP_INLINE void opspec_span_write(opspec_span *s, int64_t base, int64_t n) {
  if (s->hi < s->lo)
    s->lo = base;
  else
    s->ok = s->ok && base == s->hi;
  s->hi = base + n;
}

/* Whether the span is whole and at most `floats` long (unsigned: no overflow). */
OPSPEC_LOWP_INLINE int opspec_span_fits(const opspec_span *s, int64_t floats) {
  return s->ok && s->lo <= s->hi && (uint64_t)s->hi - (uint64_t)s->lo <= (uint64_t)floats;
}

OPSPEC_LOWP_INLINE void opspec_span_widen(float *span, const uint16_t *array, opspec_span at) {
  opspec_float16_widen_tile(span, array + at.lo, at.hi - at.lo);
}

OPSPEC_LOWP_INLINE void opspec_span_narrow(uint16_t *array, const float *span, opspec_span at) {
  opspec_float16_narrow_tile(array + at.lo, span, at.hi - at.lo);
}

#endif /* OPSPEC_LOWP_H */
