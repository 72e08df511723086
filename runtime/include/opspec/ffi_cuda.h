/* The CUDA half of the handler runtime, in C (runtime/src/ffi_cuda.c).
 *
 * One path runs every CUDA handler (opspec_run_cuda): decode and check the call, select
 * the device XLA runs it on, get the stream, allocate scratch, launch the op's kernels,
 * free, restore the device, turn failures into errors that name the op and the kernel.
 * What differs between a GPU and the CUDA simulator is only where devices, streams and
 * memory come from: an opspec_cuda_backend. Needs no CUDA headers: streams travel as
 * void *, codes as int (cudaError_t values).
 */
#ifndef OPSPEC_FFI_CUDA_H
#define OPSPEC_FFI_CUDA_H

#include <stddef.h>

#include "opspec/ffi.h"

#ifdef __cplusplus
extern "C" {
#endif

struct opspec_cuda_backend {
  const char *kernel_noun; /* "CUDA kernel" or "simulated CUDA kernel", in errors */
  const char *device_noun; /* "GPU" or "simulated GPU", in errors */
  /* cudaGetDeviceCount, cudaGetDevice, cudaSetDevice: 0 or a cudaError_t. */
  int (*device_count)(int *count);
  int (*get_device)(int *device);
  int (*set_device)(int device);
  /* The stream for this call on `device`. */
  XLA_FFI_Error *(*stream)(XLA_FFI_CallFrame *cf, const char *op, int device, void **stream);
  /* Scratch memory: NULL for 0 bytes; a failure names the op and the buffer. */
  XLA_FFI_Error *(*alloc)(XLA_FFI_CallFrame *cf, const char *op, const char *name, size_t bytes, void **ptr);
  void (*free)(XLA_FFI_CallFrame *cf, size_t bytes, void *ptr);
  /* CUDA's text for a code (the simulator's: with what it saw). */
  const char *(*error_string)(int code);
  /* Before the launch, for each output that shares no memory with an input: NULL on a
   * GPU; the simulator fills it with garbage, as memory XLA hands a kernel may hold, so
   * that an element no thread writes shows in the result instead of a lucky zero. */
  void (*fresh_output)(void *data, size_t bytes);
  /* The inputs' `check:`s on the device (cuda_check.cu; opspec_device_scan in
   * opspec/ffi.h): the check kernel on `stream` with its result in the 8 bytes of device
   * memory at `slot`, copied back after a synchronisation; a copy to the host after one;
   * a memset to zero; a memset of `bytes` to the byte `value` (check_op's output fill,
   * opspec_set_output_fill), ordered on `stream`. Each 0 or a cudaError_t. */
  int (*first_bad)(void *stream, void *slot, const void *data, int32_t dtype, int64_t count, uint64_t lo, uint64_t hi,
                   bool sorted, int64_t *first);
  int (*to_host)(void *stream, void *dst, const void *src, size_t bytes);
  int (*zero)(void *stream, void *ptr, size_t bytes);
  int (*fill)(void *stream, void *ptr, int value, size_t bytes);
};

/* cuda_check.cu, compiled for a GPU (opspec_cudart_*) and for the simulator (opspec_sim_*). */
int opspec_cudart_first_bad(void *stream, void *slot, const void *data, int32_t dtype, int64_t count, uint64_t lo,
                            uint64_t hi, bool sorted, int64_t *first);
int opspec_cudart_to_host(void *stream, void *dst, const void *src, size_t bytes);
int opspec_cudart_zero(void *stream, void *ptr, size_t bytes);
int opspec_cudart_fill(void *stream, void *ptr, int value, size_t bytes);
int opspec_sim_first_bad(void *stream, void *slot, const void *data, int32_t dtype, int64_t count, uint64_t lo,
                         uint64_t hi, bool sorted, int64_t *first);
int opspec_sim_to_host(void *stream, void *dst, const void *src, size_t bytes);
int opspec_sim_zero(void *stream, void *ptr, size_t bytes);
int opspec_sim_fill(void *stream, void *ptr, int value, size_t bytes);

/* XLA's stream and allocator, the CUDA runtime's devices (built with OPSPEC_WITH_CUDA). */
XLA_FFI_Error *opspec_cuda_stream(XLA_FFI_CallFrame *cf, const char *op, int device, void **stream);
XLA_FFI_Error *opspec_device_alloc(XLA_FFI_CallFrame *cf, const char *op, const char *name, size_t bytes, void **ptr);
void opspec_device_free(XLA_FFI_CallFrame *cf, size_t bytes, void *ptr);
int opspec_cudart_device_count(int *count); /* cuda.cu */
int opspec_cudart_get_device(int *device);
int opspec_cudart_set_device(int device);
const char *opspec_cudart_error_string(int code);

/* XLA_FFI_DeviceOrdinal_Get, which XLA added in FFI API 0.2 (jaxlib 0.8.1) at the end of
 * XLA_FFI_Api, right after XLA_FFI_RunId_Get. Spelled here because opspec also compiles
 * against FFI API 0.1 headers (jaxlib 0.5-0.7), which lack it, and a build made with one
 * may run under a newer jaxlib that has it. ffi_abi.c checks these against every header
 * that has the call. It is used only when the table XLA hands a handler is large enough
 * to hold it, so the handlers still need no more than FFI API 0.1 (OPSPEC_FFI_API_MINOR). */
typedef struct opspec_ffi_device_ordinal_args {
  size_t struct_size;
  opspec_ffi_extension *extension_start;
  XLA_FFI_ExecutionContext *ctx;
  int32_t device_ordinal; /* out */
} opspec_ffi_device_ordinal_args;
typedef XLA_FFI_Error *opspec_ffi_device_ordinal_fn(opspec_ffi_device_ordinal_args *args);
#define OPSPEC_FFI_DEVICE_ORDINAL_SLOT      184 /* its offset in XLA_FFI_Api */
#define OPSPEC_FFI_DEVICE_ORDINAL_ARGS_SIZE 28  /* XLA_FFI_DeviceOrdinal_Get_Args_STRUCT_SIZE */

/* XLA_FFI_DeviceOrdinal_Get of `api`, or NULL where the table XLA handed over ends
 * before it (an older jaxlib). */
opspec_ffi_device_ordinal_fn *opspec_ffi_device_ordinal(const XLA_FFI_Api *api);

/* The device XLA runs this call on: XLA_FFI_DeviceOrdinal_Get where the XLA in use has
 * it. Without it, device 0 when `backend` has one device, and an error naming the op when
 * it has several: the kernels would run on whichever device happens to be current. */
XLA_FFI_Error *opspec_cuda_device_ordinal(XLA_FFI_CallFrame *cf, const char *op, const opspec_cuda_backend *backend,
                                          int *device);

/* "opspec <op>: <noun> '<kernel>' failed: <CUDA's message> (code N)" */
XLA_FFI_Error *opspec_cuda_error(XLA_FFI_CallFrame *cf, const char *op, const opspec_cuda_backend *backend,
                                 const char *kernel, int code);

#ifdef __cplusplus
}
#endif

#endif /* OPSPEC_FFI_CUDA_H */
