/* The hand-written half of every generated XLA FFI handler.
 *
 * A generated handler describes its op with constant tables (opspec_op_desc) and lets
 * this module do the checking: the stage, the counts of arguments, results and
 * attributes, every dtype, rank and dim, the binding of shape symbols and type
 * variables. Checking lives here once, tested once, instead of being spelled out in
 * each generated file. Every failure is an INVALID_ARGUMENT error naming the op and the
 * argument; nothing here crashes on a malformed call frame. The generated code also
 * computes every size with the checked helpers below before using it, and checks
 * input contents where the spec asks (opspec_check_values).
 *
 * Pure C against xla/ffi/api/c_api.h, through opspec/ffi_compat.h.
 */
#ifndef OPSPEC_FFI_H
#define OPSPEC_FFI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "opspec/dtypes.h"
#include "opspec/ffi_compat.h" /* xla/ffi/api/c_api.h, whatever its FFI API version */
#include "opspec/limits.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The XLA FFI API version every opspec handler declares when XLA asks (the metadata
 * query): the oldest one that has everything opspec uses, not the version of the header
 * compiled against (XLA_FFI_API_MAJOR/MINOR). XLA accepts a handler that declares a
 * version at most its own (jaxlib 0.5-0.7 ship FFI API 0.1, 0.8.1-0.9.0 ship 0.2, 0.9.1-0.10
 * ship 0.3), so declaring the minimum lets one build run on every jaxlib from 0.5, while a
 * handler declaring its header's version is refused by every older jaxlib.
 *
 * What opspec uses exists since FFI API 0.1: the call frame, buffers, scalar attributes,
 * errors, the metadata extension with traits, and on GPU the stream and the device
 * allocator. ffi_abi.c checks at compile time that each of these structs, fields and
 * codes keeps its 0.1 layout in the header compiled against. Raise this only together
 * with a use of a newer feature, and with the run-time range in opspec/_runtime.py. */
#define OPSPEC_FFI_API_MAJOR 0
#define OPSPEC_FFI_API_MINOR 1

#if defined(__GNUC__) || defined(__clang__)
#define OPSPEC_EXPORT __attribute__((visibility("default")))
#else
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
/* The ceiling of a / b for every sign, as Python's -(-a // b): C truncates toward zero,
 * which is the ceiling exactly when the quotient is negative or exact. b == 0 gives 0;
 * handlers reject that case (opspec_safe_cdiv) before any kernel computes it. */
OPSPEC_HOST_DEVICE static inline int64_t opspec_cdiv(int64_t a, int64_t b) {
  return b ? a / b + (a % b != 0 && (a < 0) == (b < 0)) : 0;
}

/* Checked size arithmetic for handlers.
 *
 * Handlers compute every shape expression (output and scratch dims, launch extents, GPU
 * block sizes, shared memory) with these before anything uses the result: division by
 * zero or an int64 overflow yields OPSPEC_SIZE_INVALID, and an invalid operand passes
 * it on, so one comparison after the whole expression catches a failure anywhere in
 * it (opspec_check_sizes). Kernels keep the plain operators above: they only run once
 * the handler has computed the same expressions from the same values without failure.
 * INT64_MIN itself is the poison value, so it can never be a valid size, and INT64_MIN
 * / -1 (which traps on x86) cannot be reached. */
#define OPSPEC_SIZE_INVALID INT64_MIN

/* Overflow tests: the compiler's builtins on the host; nvcc has none in device code,
 * where the classic two's-complement tests stand in (only CUDA bodies could call them
 * there; handlers run on the host). */
OPSPEC_HOST_DEVICE static inline bool opspec_add_overflows(int64_t a, int64_t b, int64_t *r) {
#ifdef __CUDA_ARCH__
  *r = (int64_t)((uint64_t)a + (uint64_t)b);
  return ((a ^ *r) & (b ^ *r)) < 0; /* both operands differ in sign from the result */
#else
  return __builtin_add_overflow(a, b, r);
#endif
}
OPSPEC_HOST_DEVICE static inline bool opspec_sub_overflows(int64_t a, int64_t b, int64_t *r) {
#ifdef __CUDA_ARCH__
  *r = (int64_t)((uint64_t)a - (uint64_t)b);
  return ((a ^ b) & (a ^ *r)) < 0; /* operands of different sign, result not of a's */
#else
  return __builtin_sub_overflow(a, b, r);
#endif
}
OPSPEC_HOST_DEVICE static inline bool opspec_mul_overflows(int64_t a, int64_t b, int64_t *r) {
#ifdef __CUDA_ARCH__
  *r = (int64_t)((uint64_t)a * (uint64_t)b);
  return __mul64hi(a, b) != (*r < 0 ? -1 : 0); /* the high half only repeats the sign */
#else
  return __builtin_mul_overflow(a, b, r);
#endif
}

OPSPEC_HOST_DEVICE static inline int64_t opspec_safe_add(int64_t a, int64_t b) {
  int64_t r;
  if (a == OPSPEC_SIZE_INVALID || b == OPSPEC_SIZE_INVALID || opspec_add_overflows(a, b, &r))
    return OPSPEC_SIZE_INVALID;
  return r;
}
OPSPEC_HOST_DEVICE static inline int64_t opspec_safe_sub(int64_t a, int64_t b) {
  int64_t r;
  if (a == OPSPEC_SIZE_INVALID || b == OPSPEC_SIZE_INVALID || opspec_sub_overflows(a, b, &r))
    return OPSPEC_SIZE_INVALID;
  return r;
}
OPSPEC_HOST_DEVICE static inline int64_t opspec_safe_mul(int64_t a, int64_t b) {
  int64_t r;
  if (a == OPSPEC_SIZE_INVALID || b == OPSPEC_SIZE_INVALID || opspec_mul_overflows(a, b, &r))
    return OPSPEC_SIZE_INVALID;
  return r;
}
/* C's truncating division and remainder. Neither operand is INT64_MIN past the first
 * test, so INT64_MIN / -1 cannot happen. */
OPSPEC_HOST_DEVICE static inline int64_t opspec_safe_div(int64_t a, int64_t b) {
  return a == OPSPEC_SIZE_INVALID || b == OPSPEC_SIZE_INVALID || b == 0 ? OPSPEC_SIZE_INVALID : a / b;
}
OPSPEC_HOST_DEVICE static inline int64_t opspec_safe_mod(int64_t a, int64_t b) {
  return a == OPSPEC_SIZE_INVALID || b == OPSPEC_SIZE_INVALID || b == 0 ? OPSPEC_SIZE_INVALID : a % b;
}
OPSPEC_HOST_DEVICE static inline int64_t opspec_safe_neg(int64_t a) { return a == OPSPEC_SIZE_INVALID ? a : -a; }
OPSPEC_HOST_DEVICE static inline int64_t opspec_safe_min(int64_t a, int64_t b) {
  return a == OPSPEC_SIZE_INVALID || b == OPSPEC_SIZE_INVALID ? OPSPEC_SIZE_INVALID : opspec_min(a, b);
}
OPSPEC_HOST_DEVICE static inline int64_t opspec_safe_max(int64_t a, int64_t b) {
  return a == OPSPEC_SIZE_INVALID || b == OPSPEC_SIZE_INVALID ? OPSPEC_SIZE_INVALID : opspec_max(a, b);
}
/* Ceiling division, as opspec_cdiv; the quotient's magnitude is at most |a|, so the
 * rounding step cannot overflow. */
OPSPEC_HOST_DEVICE static inline int64_t opspec_safe_cdiv(int64_t a, int64_t b) {
  return a == OPSPEC_SIZE_INVALID || b == OPSPEC_SIZE_INVALID || b == 0 ? OPSPEC_SIZE_INVALID : opspec_cdiv(a, b);
}

typedef enum opspec_dim_kind {
  OPSPEC_DIM_FIXED,    /* value: the extent */
  OPSPEC_DIM_SYM,      /* value: index of the shape symbol (an output's: as bound by the inputs) */
  OPSPEC_DIM_ELLIPSIS, /* the shared group of leading dims */
  OPSPEC_DIM_EXPR,     /* value: index into the computed extents (outputs only) */
} opspec_dim_kind;

typedef struct opspec_dim {
  int32_t kind;
  int64_t value;
} opspec_dim;

/* dtype >= 0 is an XLA_FFI_DataType; dtype < 0 means type variable -1 - dtype. */
#define OPSPEC_TYPEVAR(index) (-1 - (index))

/* Dims, as the tables of generated handlers spell them. */
#define OPSPEC_FIXED(extent) \
  { OPSPEC_DIM_FIXED, (extent) }
#define OPSPEC_SYM(symbol) \
  { OPSPEC_DIM_SYM, (symbol) }
#define OPSPEC_ELLIPSIS \
  { OPSPEC_DIM_ELLIPSIS, 0 }
#define OPSPEC_EXPR(extent) \
  { OPSPEC_DIM_EXPR, (extent) }

/* One array as a kernel sees it: the data, the element count, the dims padded with 1s.
 * Every array of an op is one of these in its args struct, filled by opspec_decode. */
typedef struct opspec_array {
  void *data;
  int64_t size;
  int64_t shape[OPSPEC_MAX_RANK];
} opspec_array;

typedef struct opspec_array_desc {
  const char *name;
  int32_t dtype; /* OPSPEC_DT_* or OPSPEC_TYPEVAR(i) */
  int32_t ndims;
  const opspec_dim *dims; /* scratch buffers: none; their dims come from `shapes` */
  size_t offset;          /* of its opspec_array in the args struct */
} opspec_array_desc;

typedef struct opspec_attr_desc {
  const char *name; /* the table is sorted by name, as XLA sorts the attributes */
  int32_t dtype;
  size_t offset; /* of its value in the args struct */
} opspec_attr_desc;

typedef struct opspec_symbol_desc {
  const char *name;
  size_t offset; /* of its int64_t in the args struct */
} opspec_symbol_desc;

typedef struct opspec_typevar_desc {
  const char *name;
  int32_t nchoices;
  const int32_t *choices; /* XLA dtypes, in the spec's order */
} opspec_typevar_desc;

/* The generated half of a handler: the spec's expressions over this call's values.
 *   shapes:   fills `extents` (the outputs' OPSPEC_DIM_EXPR dims, in order) and every
 *             scratch buffer's shape, from inputs, symbols and attributes;
 *   launch:   computes the portable launch's extents (which may read any array's size)
 *             into `extents` and checks them;
 *   contents: the inputs' `check:`s (while opspec_checks_enabled(); on the CUDA path
 *             through an opspec_device_scan), but for those marked in_kernel;
 *   kernel_checked: the in_kernel ones, which the body checks as it reads (calling
 *             opspec_reject()), on CPU and GPU; the handler scans them only after a
 *             rejection, to name the first bad position;
 *   cuda:     checks the CUDA launch configuration.
 * Each computes with the opspec_safe_* helpers and returns opspec_check_sizes' verdict.
 * NULL where the spec has nothing to compute. */
typedef XLA_FFI_Error *opspec_shapes_fn(XLA_FFI_CallFrame *cf, void *args, int64_t *extents);
typedef XLA_FFI_Error *opspec_args_fn(XLA_FFI_CallFrame *cf, const void *args);
typedef XLA_FFI_Error *opspec_launch_fn(XLA_FFI_CallFrame *cf, const void *args, int64_t *extents);
/* The spec's `bytes:` (cost[0]) and `flops:` (cost[1]) of a call whose type variables
 * are bound to `dtypes`; leaves alone an entry the spec does not give. */
typedef void opspec_cost_fn(const void *args, const int32_t *dtypes, int64_t *cost);

typedef struct opspec_op_desc {
  const char *name;
  /* The fingerprint of the op's generated code (16 hex digits, or "" for none): an
   * exported call records it in its attribute opspec_kernel, and opspec_bind_inputs
   * refuses a call whose fingerprint differs (the kernel changed since the export). */
  const char *fingerprint;
  size_t args_size; /* of the op's args struct: native batching copies it per thread */
  int32_t ninputs, noutputs, nscratch, nattrs, ntypes, nsymbols;
  const opspec_array_desc *inputs, *outputs, *scratch;
  const opspec_attr_desc *attrs;
  const opspec_typevar_desc *types;
  const opspec_symbol_desc *symbols;
  /* The spec's `aliases`: per output, the input whose buffer it may be (XLA's
   * input_output_aliases), or -1; NULL where the spec declares none. An output that is
   * any other input's buffer is refused (opspec_check_overlap). */
  const int32_t *aliases;
  opspec_shapes_fn *shapes;
  opspec_launch_fn *launch;
  opspec_args_fn *contents, *cuda, *kernel_checked;
  /* The spec's `bytes:`/`flops:` as C, or NULL where it gives neither: the work of a
   * call, which decides its threads (runtime/src/handler.c). */
  opspec_cost_fn *cost;
  /* The spec's `require:`: NULL, or the check of the call's symbols and attributes that
   * opspec_decode runs once they are bound (an error names the condition and values). */
  opspec_args_fn *require;
  /* With kernel_checked: where the args struct holds the `int *` that opspec_reject()
   * sets (the call's flag on CPU, a flag in device memory on the CUDA path). */
  size_t rejected_at;
  int32_t launch_ndims; /* of the portable launch, 1-3; 0 for none */
  /* The op's CUDA launcher runs a natively batched call in one launch: a portable
   * kernel without scratch (the batch along the grid's z, or in each thread's loop for a
   * 3-D launch). Otherwise the handler enqueues each element's launches in turn. */
  bool cuda_batch_grid;
  /* The CPU kernel's bfloat16 variants compute on float copies of the call's bfloat16
   * arrays, which the handler makes and writes back (opspec/bfloat16.h): the body uses
   * such an array other than element by element (opspec-gen's note says where). Without
   * it, a bfloat16 variant converts each element as it loads and stores it, in the loop
   * (opspec/lowp.h), and the arrays reach the kernel as they are. */
  bool widens_bfloat16;
} opspec_op_desc;

/* What binding the inputs established. opspec_bind_inputs initialises only what says
 * what is bound (dtypes, dtype_from, symbols_bound, ellipsis_rank): symbols and attrs
 * hold values once bound, and are garbage before, which is cheaper on every call than
 * clearing them. */
typedef struct opspec_bound {
  int32_t variant;                         /* mixed-radix index of the type-variable choices, first var slowest */
  int32_t dtypes[OPSPEC_MAX_TYPEVARS];     /* -1 while unbound */
  int32_t dtype_from[OPSPEC_MAX_TYPEVARS]; /* the input that bound each one, for messages */
  uint32_t symbols_bound;                  /* bit s: symbols[s] is bound (OPSPEC_MAX_SYMBOLS <= 32) */
  int64_t symbols[OPSPEC_MAX_SYMBOLS];
  const void *attrs[OPSPEC_MAX_ATTRS]; /* scalar values, in desc->attrs order */
  int32_t ellipsis_rank;               /* -1 while no input with '...' was seen */
  int64_t ellipsis[OPSPEC_MAX_RANK];
  int64_t launch[3]; /* the portable launch's extents, set by opspec_decode */
} opspec_bound;

/* Answers XLA's metadata query (OPSPEC_FFI_API_MAJOR/MINOR and traits) if this call
 * frame is one. Every handler calls this first and returns NULL when it returns true. */
bool opspec_metadata_query(XLA_FFI_CallFrame *cf, XLA_FFI_Handler_Traits traits);

/* Checks stage and counts, binds type variables, symbols, the '...' group and the
 * attributes from the inputs. */
XLA_FFI_Error *opspec_bind_inputs(XLA_FFI_CallFrame *cf, const opspec_op_desc *op, opspec_bound *b);

/* Checks every result buffer against the bound dtypes and `extents` (the values of the
 * outputs' OPSPEC_DIM_EXPR dims, computed by the generated code). */
XLA_FFI_Error *opspec_check_outputs(XLA_FFI_CallFrame *cf, const opspec_op_desc *op, const opspec_bound *b,
                                    const int64_t *extents);

/* One shape expression a handler computed, to check before anything uses it. */
typedef struct opspec_size_check {
  const char *what; /* "output 'y' dim 0", "scratch 'tmp' dim 1", "launch extent 0", "cuda kernel 'k' block 0" */
  const char *text; /* the expression as written in the spec */
  int64_t value;    /* computed with the opspec_safe_* helpers */
  int64_t min;      /* 0 for extents and sizes, 1 for thread and block counts */
} opspec_size_check;

/* The first of `n` checks whose value is OPSPEC_SIZE_INVALID or below its minimum, as
 * an INVALID_ARGUMENT error: "opspec <op>: <what> = '<text>' divides by zero or
 * overflows int64" or "... = '<text>' is -3, expected at least 0". NULL if all pass. */
XLA_FFI_Error *opspec_check_sizes(XLA_FFI_CallFrame *cf, const char *op, const opspec_size_check *checks, int32_t n);
/* The element count of an array (of checks), as opspec_check_sizes takes it. */
#define OPSPEC_COUNT(array) ((int32_t)(sizeof(array) / sizeof((array)[0])))

/* The bytes of `count` elements of `elem_size` bytes each, for buffer `name` (`role`
 * is "scratch" or "output"): an error naming the op and the buffer if the count is
 * invalid or negative or the product exceeds PTRDIFF_MAX: never a wrapped size. */
XLA_FFI_Error *opspec_buffer_bytes(XLA_FFI_CallFrame *cf, const char *op, const char *role, const char *name,
                                   int64_t count, size_t elem_size, size_t *bytes);
/* Host memory for scratch buffer `name`: a pointer that is never NULL on success, also
 * for 0 bytes (so "no memory" and "nothing to allocate" cannot be confused), or a
 * RESOURCE_EXHAUSTED error naming the buffer. Freed with free(). */
XLA_FFI_Error *opspec_host_alloc(XLA_FFI_CallFrame *cf, const char *op, const char *name, size_t bytes, void **ptr);

/* What a spec's `check:` promises about an integer input's contents. Bounds are
 * inclusive and computed with the opspec_safe_* helpers; the texts are the spec's. */
typedef struct opspec_value_check {
  bool has_min;
  int64_t min;
  const char *min_text;
  bool has_max;
  int64_t max;
  const char *max_text;
  bool sorted; /* non-decreasing */
} opspec_value_check;

/* Scans `count` elements of integer dtype `dtype` (an XLA code) at `data`, and reports
 * the first position that breaks `check`, e.g.
 *   "opspec csr_matvec: input 'indices'[17] = 9 is out of range: expected 0 <= value <= n - 1 = 7"
 *   "opspec csr_matvec: input 'indptr'[3] = 2 is less than indptr[2] = 5: expected non-decreasing values"
 * Positions are flat (row-major) element indices. Host data, unless `cf` carries an
 * opspec_device_scan (opspec_frame_with_scan). */
XLA_FFI_Error *opspec_check_values(XLA_FFI_CallFrame *cf, const char *op, const char *input, const void *data,
                                   int32_t dtype, int64_t count, const opspec_value_check *check);

/* How opspec_check_values reaches data on a device (the CUDA handlers, ffi_cuda.c): the
 * scan runs there, and only the values an error prints are copied back. The generated
 * check functions pass their call frame on to opspec_check_values, so the scan travels
 * in it: a CUDA handler calls them with a copy of its frame whose extension list starts
 * with the scan (opspec_frame_with_scan). */
typedef struct opspec_device_scan opspec_device_scan;
struct opspec_device_scan {
  opspec_ffi_extension extension; /* first: the node of the frame's extension list */
  /* The first position in [0, count) whose value lies outside [lo, hi] or (if `sorted`)
   * is less than the one before, or -1: 0 or a cudaError_t. lo and hi are values of the
   * dtype's C type, converted to uint64. */
  int (*first_bad)(opspec_device_scan *scan, const void *data, int32_t dtype, int64_t count, uint64_t lo, uint64_t hi,
                   bool sorted, int64_t *first);
  /* Copies `bytes` from the device to the host: 0 or a cudaError_t. */
  int (*to_host)(opspec_device_scan *scan, void *dst, const void *src, size_t bytes);
  int code; /* the first failure; a scan that failed reports no bad value */
};

/* Fills `frame` with `cf` and `scan` at the head of its extension list, and returns it:
 * the frame to give the check functions in cf's place. Only opspec's own code sees it;
 * the extension's type is opspec's, which XLA never looks for. */
XLA_FFI_CallFrame *opspec_frame_with_scan(XLA_FFI_CallFrame *frame, const XLA_FFI_CallFrame *cf,
                                          opspec_device_scan *scan);

/* The process-wide switch for opspec_check_values (opspec.set_checks() in Python; on
 * by default). Shape and size checks are not switchable: they keep handlers safe. */
void opspec_set_checks(bool enabled);
bool opspec_checks_enabled(void);

/* The byte every output that is not an input's memory is filled with before the kernel
 * runs (CPU and CUDA handlers), or -1 (the default): opspec.testing.check_op runs each
 * backend with two bytes and finds the elements no thread wrote (0xff fills every float
 * dtype with NaN). A bool output gets the byte's lowest bit (opspec_output_fill_value),
 * which keeps it a valid bool. Set from Python by <package>._opspec.set_output_fill. */
void opspec_set_output_fill(int byte);
int opspec_output_fill(void);
int opspec_output_fill_value(int32_t dtype, int byte);

/* The dtype (XLA code) of argument `index`. Only valid after opspec_bind_inputs. */
int32_t opspec_arg_dtype(XLA_FFI_CallFrame *cf, int64_t index);

/* Refuses a call (`cf` as XLA made it, batch dims and all) in which an output is an
 * input's buffer (the same address, neither empty) that op->aliases does not let it
 * alias: a raw ffi_call with input_output_aliases the spec does not declare would
 * otherwise run the kernel over its own input. XLA aliases whole buffers only, so the
 * addresses are compared, nothing more. Only valid after opspec_decode has checked the
 * counts and kinds of the buffers. */
XLA_FFI_Error *opspec_check_overlap(XLA_FFI_CallFrame *cf, const opspec_op_desc *op);

/* Checks a call against `op` and fills the op's args struct at `args`: every input,
 * output and scratch opspec_array (scratch data stays NULL: the backend allocates it),
 * every symbol and attribute; runs op->shapes and op->launch on the way. */
XLA_FFI_Error *opspec_decode(XLA_FFI_CallFrame *cf, const opspec_op_desc *op, void *args, opspec_bound *bound);

struct opspec_batch; /* opspec/batch.h */

struct opspec_launch; /* opspec/launch.h */

/* Starts one kernel of an op on `stream` with its grid and block `cfg`: opspec_cuda_start
 * (opspec/cuda.h), instantiated for the kernel in <op>_cuda.cu, so compiled for that
 * file's backend. The kernel's parameters are the op's args struct at `args` and, for
 * the portable kernel, the natively batched call `batch` (NULL: one element) of an op
 * with `ninputs` inputs. 0, or a CUDA error code naming the kernel in *failed_kernel. */
typedef int opspec_cuda_start_fn(const struct opspec_launch *cfg, void *stream, const char **failed_kernel,
                                 const void *args, const struct opspec_batch *batch, int32_t ninputs);

/* An op's CUDA kernels (generated: opspec_<op>_cuda_launch in <op>_cuda.cu), which
 * opspec_cuda_launch_run configures, checks and starts. */
typedef struct opspec_cuda_launch {
  /* Every kernel's grid and block into config[k], from the spec's launch expressions;
   * NULL: the portable kernel, default threads over the extents opspec_decode computed. */
  void (*configure)(const void *args, struct opspec_launch *config);
  int32_t nvariants, nkernels;
  opspec_cuda_start_fn *const *kernels; /* [variant * nkernels + k]: each variant's in launch order */
} opspec_cuda_launch;

/* Enqueues an op's kernels for the call's type variant on `stream` (runtime/src/launch.c):
 * configures every kernel and checks the configurations (a bad one is reported with its
 * kernel's name before anything runs), zero-fills the outputs when a launch is empty
 * (`zero`, the backend's memset; `output_bytes` are the outputs' sizes, every element's),
 * then starts the variant's kernels in order. `batch` is NULL for one element; otherwise
 * the natively batched call (opspec/batch.h) that the op's portable kernel runs whole in
 * one launch (only where op->cuda_batch_grid says so; `args` then points at element 0).
 * Returns 0 or a CUDA error code, naming the kernel in *failed_kernel. */
int opspec_cuda_launch_run(const opspec_cuda_launch *launch, const opspec_op_desc *op, const opspec_bound *bound,
                           void *args, const struct opspec_batch *batch, void *stream,
                           int (*zero)(void *stream, void *ptr, size_t bytes), const size_t *output_bytes,
                           const char **failed_kernel);

/* Where a CUDA handler's devices, streams and scratch memory come from
 * (opspec/ffi_cuda.h): a GPU, through XLA and the CUDA runtime (built with
 * OPSPEC_WITH_CUDA), or the CUDA simulator (OPSPEC_WITH_CUDA_SIM). */
typedef struct opspec_cuda_backend opspec_cuda_backend;
extern const opspec_cuda_backend opspec_cuda_gpu, opspec_cuda_sim;

/* The whole CUDA handler (runtime/src/ffi_cuda.c), the same for both backends: the
 * metadata query (command-buffer compatible when the op has no `check:`: it then only
 * enqueues work on XLA's stream and allocates through XLA; an op with checks waits for
 * the device to read their results, which a CUDA graph cannot replay), opspec_decode,
 * the launch configuration's checks, the device XLA names made current, the inputs'
 * checks, output sizes, scratch memory, then `launch`, then the in_kernel rejection
 * flag, then the previous device made current again. */
XLA_FFI_Error *opspec_run_cuda(XLA_FFI_CallFrame *cf, const opspec_op_desc *op, void *args,
                               const opspec_cuda_backend *backend, const opspec_cuda_launch *launch);

/* A CPU kernel, one per type variant in opspec_bound.variant order: a raw `cpu:` body,
 * which does a whole call (its own loops, its own OpenMP)... */
typedef void opspec_cpu_kernel(const void *args);
/* ...or a portable kernel, which runs the body for the first launch index in
 * [begin, end) and every value of the others: the handler runs the loop, in ranges. */
typedef void opspec_cpu_range_kernel(const void *args, int64_t begin, int64_t end);

/* The whole CPU handler: the metadata query, opspec_decode, the content checks, scratch
 * memory, then the variant's kernel. `args` is the op's args struct (uninitialised).
 * opspec_run_cpu calls a raw kernel once per batch element; opspec_run_cpu_range cuts
 * the launch of every batch element into ranges and runs them on the calling thread and
 * helpers (opspec/parallel.h) once the whole call reaches the parallel threshold. */
XLA_FFI_Error *opspec_run_cpu(XLA_FFI_CallFrame *cf, const opspec_op_desc *op, void *args,
                              opspec_cpu_kernel *const *variants);
XLA_FFI_Error *opspec_run_cpu_range(XLA_FFI_CallFrame *cf, const opspec_op_desc *op, void *args,
                                    opspec_cpu_range_kernel *const *variants);

/* A dtype (an XLA code) for messages: its name, or "unsupported dtype (XLA code N)"
 * written into `buf`. */
const char *opspec_dtype_label(int32_t dtype, char *buf, size_t n);

/* An error to return from a handler: "<package> <op>: <message>" (opspec_package_name:
 * "opspec <op>: ..." for opspec's own ops, "mypkg <op>: ..." for a user package's). */
XLA_FFI_Error *opspec_error(XLA_FFI_CallFrame *cf, XLA_FFI_Error_Code code, const char *op, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

/* An error XLA returned to us, reworded as "opspec <op>: <what>: <XLA's message>" so
 * that it names the op; XLA's error is destroyed (a handler owns the errors it gets). */
XLA_FFI_Error *opspec_reword_error(XLA_FFI_CallFrame *cf, XLA_FFI_Error *err, XLA_FFI_Error_Code code, const char *op,
                                   const char *what);
/* Destroys an error nobody will see. */
void opspec_drop_error(XLA_FFI_CallFrame *cf, XLA_FFI_Error *err);

/* The dtype's name ("float32"), or NULL for a dtype opspec does not support. */
const char *opspec_dtype_name(int32_t dtype);
/* Bytes per element of a supported dtype, or 0. */
size_t opspec_dtype_size(int32_t dtype);

/* The opspec_array at `offset` in an args struct (an opspec_array_desc's offset). */
static inline opspec_array *opspec_array_at(void *args, size_t offset) {
  return (opspec_array *)((char *)args + offset);
}

/* The dtype of array `desc` under the dtypes the inputs bound. */
static inline int32_t opspec_bound_dtype(const opspec_array_desc *desc, const opspec_bound *bound) {
  return desc->dtype < 0 ? bound->dtypes[-1 - desc->dtype] : desc->dtype;
}

/* Bytes per element of array `desc` under the dtypes the inputs bound. */
static inline size_t opspec_elem_size(const opspec_array_desc *desc, const opspec_bound *bound) {
  return opspec_dtype_size(opspec_bound_dtype(desc, bound));
}

#ifdef __cplusplus
}
#endif

#include "opspec/handlers.h" /* the tables and handlers of generated <op>_ffi.c files */

#endif /* OPSPEC_FFI_H */
