/* The one dtype table of opspec.
 *
 * Every place that maps a dtype name to something else expands this X-macro, so the
 * generator (spec validation, C type names), the runtime (XLA_FFI_DataType checks) and
 * the Python stubs (NumPy names, written by the generator) can never drift apart.
 *
 *   X(name,     C type,    CUDA type, XLA_FFI_DataType value, NumPy dtype name)
 *
 * The XLA values are those of xla::PrimitiveType (see xla/ffi/api/c_api.h); they are
 * spelled as numbers so the generator does not need the jaxlib header to build.
 * Only dtypes with a plain C type are listed: float16/bfloat16 and complex types are
 * rejected at spec load time rather than half-supported.
 */
#ifndef OPSPEC_DTYPES_H
#define OPSPEC_DTYPES_H

/* A table, aligned by hand. */
/* clang-format off */
#define OPSPEC_DTYPES(X)                                  \
  X(bool,    bool,     bool,     1,  "bool")              \
  X(int8,    int8_t,   int8_t,   2,  "int8")              \
  X(int16,   int16_t,  int16_t,  3,  "int16")             \
  X(int32,   int32_t,  int32_t,  4,  "int32")             \
  X(int64,   int64_t,  int64_t,  5,  "int64")             \
  X(uint8,   uint8_t,  uint8_t,  6,  "uint8")             \
  X(uint16,  uint16_t, uint16_t, 7,  "uint16")            \
  X(uint32,  uint32_t, uint32_t, 8,  "uint32")            \
  X(uint64,  uint64_t, uint64_t, 9,  "uint64")            \
  X(float32, float,    float,    11, "float32")           \
  X(float64, double,   double,   12, "float64")
/* clang-format on */

/* Symbolic names for the XLA dtype codes, for hand-written code. */
enum opspec_dtype {
#define OPSPEC_DTYPE_ENUM(name, ctype, cutype, xla, np) OPSPEC_DT_##name = xla,
  OPSPEC_DTYPES(OPSPEC_DTYPE_ENUM)
#undef OPSPEC_DTYPE_ENUM
};

#endif /* OPSPEC_DTYPES_H */
