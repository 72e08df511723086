/* The one dtype table of opspec.
 *
 * Every place that maps a dtype name to something else expands this X-macro, so the
 * generator (spec validation, C type names), the runtime (XLA_FFI_DataType checks) and
 * the Python stubs (NumPy names, written by the generator) can never drift apart.
 *
 *   X(name, C type, CUDA type, XLA_FFI_DataType value, NumPy dtype name, integer)
 *
 * `integer` is 1 for the signed and unsigned integer dtypes (not bool): the dtypes whose
 * contents a `check:` bounds, in the generator's checker and the runtime's scans alike.
 *
 * The XLA values are those of xla::PrimitiveType (see xla/ffi/api/c_api.h); they are
 * spelled as numbers so the generator does not need the jaxlib header to build.
 * float16 is opspec_float16 (below): _Float16 in C and host C++, __half under nvcc.
 * bfloat16 is opspec_bfloat16: __nv_bfloat16 under nvcc, a class that computes in float
 * in host C++ (the CUDA simulator), and storage only in C: no C compiler here has an
 * arithmetic bfloat16, so the CPU handler widens bfloat16 arrays to float around a
 * kernel compiled for float (runtime/src/handler.c). Complex types are rejected at spec
 * load time rather than half-supported.
 */
#ifndef OPSPEC_DTYPES_H
#define OPSPEC_DTYPES_H

#include <stdint.h>

/* float16 in bodies: arithmetic that the compiler carries out in float (or wider) and
 * rounds to float16 on store. Where the compiler has no _Float16 (clang before 15 on
 * x86-64), a storage-only struct of the same size: the runtime still sizes float16
 * buffers, and a kernel that computes with one fails to compile instead of computing
 * on integers. */
#if defined(__CUDACC__)
#include <cuda_fp16.h>
typedef __half opspec_float16;
#elif defined(__FLT16_MAX__) && defined(__cplusplus) && defined(OPSPEC_CUDA_SIM)
/* The CUDA simulator's kernels: a class with __half's conversions and operators
 * (opspec/cuda_sim_half.h, below), so that what nvcc rejects fails here too. */
#define OPSPEC_SIM_FLOAT16 1
#elif defined(__FLT16_MAX__)
typedef _Float16 opspec_float16;
#else
typedef struct opspec_float16 {
  uint16_t bits;
} opspec_float16;
#endif

/* bfloat16: the upper half of a float32, rounded to nearest even. */
#if defined(__CUDACC__)
#include <cuda_bf16.h>
typedef __nv_bfloat16 opspec_bfloat16;
#else
#include <string.h>

/* The two conversions, once for the CPU handler (runtime/src/bfloat16.c) and the CUDA
 * simulator's class below: widening is exact; narrowing rounds to nearest, ties to
 * even, and keeps a NaN a quiet NaN. */
static inline float opspec_bfloat16_to_float(uint16_t bits) {
  uint32_t u = (uint32_t)bits << 16;
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

static inline uint16_t opspec_float_to_bfloat16(float value) {
  uint32_t u;
  memcpy(&u, &value, sizeof u);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)(u >> 16 | 0x40);
  return (uint16_t)((u + 0x7fffu + (u >> 16 & 1)) >> 16);
}

#if defined(__cplusplus)
/* The CUDA simulator's bfloat16 (host C++): every operation converts to float, as
 * __nv_bfloat16's do on GPUs without bfloat16 arithmetic, and rounds on the way back;
 * its conversions and operators are __nv_bfloat16's (opspec/cuda_sim_half.h). */
#include "opspec/cuda_sim_half.h"
typedef opspec_sim_narrow<opspec_sim_bfloat16_codec> opspec_bfloat16;
#ifdef OPSPEC_SIM_FLOAT16
typedef opspec_sim_narrow<opspec_sim_float16_codec> opspec_float16;
#endif
#else
typedef struct opspec_bfloat16 {
  uint16_t bits;
} opspec_bfloat16;
#endif
#endif

/* A table, aligned by hand. */
/* clang-format off */
#define OPSPEC_DTYPES(X)                                             \
  X(bool,     bool,            bool,            1,  "bool",     0)  \
  X(int8,     int8_t,          int8_t,          2,  "int8",     1)  \
  X(int16,    int16_t,         int16_t,         3,  "int16",    1)  \
  X(int32,    int32_t,         int32_t,         4,  "int32",    1)  \
  X(int64,    int64_t,         int64_t,         5,  "int64",    1)  \
  X(uint8,    uint8_t,         uint8_t,         6,  "uint8",    1)  \
  X(uint16,   uint16_t,        uint16_t,        7,  "uint16",   1)  \
  X(uint32,   uint32_t,        uint32_t,        8,  "uint32",   1)  \
  X(uint64,   uint64_t,        uint64_t,        9,  "uint64",   1)  \
  X(float16,  opspec_float16,  opspec_float16,  10, "float16",  0)  \
  X(float32,  float,           float,           11, "float32",  0)  \
  X(float64,  double,          double,          12, "float64",  0)  \
  X(bfloat16, opspec_bfloat16, opspec_bfloat16, 16, "bfloat16", 0)
/* clang-format on */

/* Symbolic names for the XLA dtype codes, for hand-written code. */
enum opspec_dtype {
#define OPSPEC_DTYPE_ENUM(name, ctype, cutype, xla, np, integer) OPSPEC_DT_##name = xla,
  OPSPEC_DTYPES(OPSPEC_DTYPE_ENUM)
#undef OPSPEC_DTYPE_ENUM
};

/* For an X of the table that writes code for the integer rows only (a C type's scan, a
 * kernel instantiation): its body as OPSPEC_IF_INTEGER(integer, ...), which keeps `...`
 * where the row's `integer` is 1 and drops it where it is 0. */
#define OPSPEC_IF_INTEGER(integer, ...) OPSPEC_IF_INTEGER_##integer(__VA_ARGS__)
#define OPSPEC_IF_INTEGER_1(...)        __VA_ARGS__
#define OPSPEC_IF_INTEGER_0(...)

/* Whether an XLA dtype code is one of the integer dtypes (the table's last column). */
static inline int opspec_dtype_is_integer(int32_t xla) {
  switch (xla) {
#define OPSPEC_DTYPE_INTEGER(name, ctype, cutype, xla_code, np, integer) \
  case xla_code:                                                         \
    return integer;
    OPSPEC_DTYPES(OPSPEC_DTYPE_INTEGER)
#undef OPSPEC_DTYPE_INTEGER
    default:
      return 0;
  }
}

#endif /* OPSPEC_DTYPES_H */
