/* The hand-written half of every generated XLA FFI handler.
 *
 * A generated handler describes its op with constant tables (opspec_op_desc) and lets
 * this module do the checking: the stage, the counts of arguments, results and
 * attributes, every dtype, rank and dim, the binding of shape symbols and type
 * variables. Checking lives here once, tested once, instead of being spelled out in
 * each generated file. Every failure is an INVALID_ARGUMENT error naming the op and the
 * argument; nothing here crashes on a malformed call frame.
 *
 * Pure C against xla/ffi/api/c_api.h.
 */
#ifndef OPSPEC_FFI_H
#define OPSPEC_FFI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "xla/ffi/api/c_api.h"

#ifdef __cplusplus
extern "C" {
#endif

#define OPSPEC_MAX_RANK 8
#define OPSPEC_MAX_TYPEVARS 4
#define OPSPEC_MAX_SYMBOLS 32
#define OPSPEC_MAX_ATTRS 32

#if defined(__GNUC__) || defined(__clang__)
#define OPSPEC_UNUSED __attribute__((unused))
#define OPSPEC_EXPORT __attribute__((visibility("default")))
#else
#define OPSPEC_UNUSED
#define OPSPEC_EXPORT
#endif

/* `restrict` in C, its extension spelling in CUDA C++. */
#ifdef __cplusplus
#define OPSPEC_RESTRICT __restrict__
#else
#define OPSPEC_RESTRICT restrict
#endif

/* Integer helpers that shape expressions compile to, on the host and in CUDA bodies. */
#ifdef __CUDACC__
#define OPSPEC_HOST_DEVICE __host__ __device__
#else
#define OPSPEC_HOST_DEVICE
#endif
OPSPEC_HOST_DEVICE static inline int64_t opspec_min(int64_t a, int64_t b) { return a < b ? a : b; }
OPSPEC_HOST_DEVICE static inline int64_t opspec_max(int64_t a, int64_t b) { return a > b ? a : b; }
OPSPEC_HOST_DEVICE static inline int64_t opspec_cdiv(int64_t a, int64_t b) { return b ? (a + b - 1) / b : 0; }

typedef enum opspec_dim_kind {
  OPSPEC_DIM_FIXED,    /* value: the extent */
  OPSPEC_DIM_SYM,      /* value: index of the shape symbol (inputs only) */
  OPSPEC_DIM_ELLIPSIS, /* the shared group of leading dims */
  OPSPEC_DIM_EXPR,     /* value: index into the computed extents (outputs only) */
} opspec_dim_kind;

typedef struct opspec_dim {
  int32_t kind;
  int64_t value;
} opspec_dim;

/* dtype >= 0 is an XLA_FFI_DataType; dtype < 0 means type variable -1 - dtype. */
#define OPSPEC_TYPEVAR(index) (-1 - (index))

typedef struct opspec_array_desc {
  const char *name;
  int32_t dtype;
  int32_t ndims;
  const opspec_dim *dims;
} opspec_array_desc;

typedef struct opspec_attr_desc {
  const char *name; /* the table is sorted by name, as XLA sorts the attributes */
  int32_t dtype;
} opspec_attr_desc;

typedef struct opspec_typevar_desc {
  const char *name;
  int32_t nchoices;
  const int32_t *choices; /* XLA dtypes, in the spec's order */
} opspec_typevar_desc;

typedef struct opspec_op_desc {
  const char *name;
  int32_t ninputs, noutputs, nattrs, ntypes, nsymbols;
  const opspec_array_desc *inputs, *outputs;
  const opspec_attr_desc *attrs;
  const opspec_typevar_desc *types;
  const char *const *symbols;
} opspec_op_desc;

/* What binding the inputs established. */
typedef struct opspec_bound {
  int32_t variant; /* mixed-radix index of the type-variable choices, first var slowest */
  int32_t dtypes[OPSPEC_MAX_TYPEVARS];
  int64_t symbols[OPSPEC_MAX_SYMBOLS];
  const void *attrs[OPSPEC_MAX_ATTRS]; /* scalar values, in desc->attrs order */
  int32_t ellipsis_rank;               /* -1 while no input with '...' was seen */
  int64_t ellipsis[OPSPEC_MAX_RANK];
} opspec_bound;

/* Answers XLA's metadata query (API version and traits) if this call frame is one.
 * Every handler calls this first and returns NULL when it returns true. */
bool opspec_metadata_query(XLA_FFI_CallFrame *cf, XLA_FFI_Handler_Traits traits);

/* Checks stage and counts, binds type variables, symbols, the '...' group and the
 * attributes from the inputs. */
XLA_FFI_Error *opspec_bind_inputs(XLA_FFI_CallFrame *cf, const opspec_op_desc *op, opspec_bound *b);

/* Checks every result buffer against the bound dtypes and `extents` (the values of the
 * outputs' OPSPEC_DIM_EXPR dims, computed by the generated code). */
XLA_FFI_Error *opspec_check_outputs(XLA_FFI_CallFrame *cf, const opspec_op_desc *op, const opspec_bound *b,
                                    const int64_t *extents);

/* The data pointer of argument / result `index`; fills its element count and shape
 * (padded with 1s to OPSPEC_MAX_RANK). Only valid after the checks above. */
void *opspec_arg(XLA_FFI_CallFrame *cf, int64_t index, int64_t *size, int64_t *shape);
void *opspec_ret(XLA_FFI_CallFrame *cf, int64_t index, int64_t *size, int64_t *shape);

/* An error to return from a handler: "opspec <op>: <message>". */
XLA_FFI_Error *opspec_error(XLA_FFI_CallFrame *cf, XLA_FFI_Error_Code code, const char *op, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

/* The dtype's name ("float32"), or NULL for a dtype opspec does not support. */
const char *opspec_dtype_name(int32_t dtype);
/* Bytes per element of a supported dtype, or 0. */
size_t opspec_dtype_size(int32_t dtype);

#ifdef __cplusplus
}
#endif

#endif /* OPSPEC_FFI_H */
