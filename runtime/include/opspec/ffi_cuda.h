/* The GPU half of the handler runtime, in C: XLA's stream and allocator through the
 * FFI C API, and CUDA errors as FFI errors. Needs no CUDA headers: the stream travels
 * as void *, and CUDA error texts come from cuda.cu. */
#ifndef OPSPEC_FFI_CUDA_H
#define OPSPEC_FFI_CUDA_H

#include <stddef.h>

#include "opspec/ffi.h"

#ifdef __cplusplus
extern "C" {
#endif

/* XLA's CUDA stream for this call. */
XLA_FFI_Error *opspec_cuda_stream(XLA_FFI_CallFrame *cf, const char *op, void **stream);
/* Device memory for scratch buffer `name` from XLA's stream-ordered allocator (NULL for
 * 0 bytes); a failure names the op and the buffer. */
XLA_FFI_Error *opspec_device_alloc(XLA_FFI_CallFrame *cf, const char *op, const char *name, size_t bytes, void **ptr);
void opspec_device_free(XLA_FFI_CallFrame *cf, size_t bytes, void *ptr);
/* "opspec <op>: CUDA kernel '<kernel>' failed: <CUDA's message> (code N)" */
XLA_FFI_Error *opspec_cuda_error(XLA_FFI_CallFrame *cf, const char *op, const char *kernel, int code);
/* CUDA's text for an error code (defined in cuda.cu). */
const char *opspec_cuda_error_string(int code);

#ifdef __cplusplus
}
#endif

#endif /* OPSPEC_FFI_CUDA_H */
