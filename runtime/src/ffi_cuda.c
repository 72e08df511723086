/* Stream, scratch memory and errors for the generated CUDA handlers; see ffi_cuda.h. */
#include "opspec/ffi_cuda.h"

#include <stdio.h>
#include <string.h>

XLA_FFI_Error *opspec_cuda_stream(XLA_FFI_CallFrame *cf, const char *op, void **stream) {
  XLA_FFI_Stream_Get_Args args;
  memset(&args, 0, sizeof args);
  args.struct_size = XLA_FFI_Stream_Get_Args_STRUCT_SIZE;
  args.ctx = cf->ctx;
  XLA_FFI_Error *err = cf->api->XLA_FFI_Stream_Get(&args);
  if (err) return opspec_reword_error(cf, err, XLA_FFI_Error_Code_INTERNAL, op, "cannot get XLA's CUDA stream");
  if (!args.stream) return opspec_error(cf, XLA_FFI_Error_Code_INTERNAL, op, "XLA gave no CUDA stream");
  *stream = args.stream;
  return NULL;
}

XLA_FFI_Error *opspec_device_alloc(XLA_FFI_CallFrame *cf, const char *op, const char *name, size_t bytes, void **ptr) {
  *ptr = NULL;
  if (bytes == 0) return NULL;
  XLA_FFI_DeviceMemory_Allocate_Args args;
  memset(&args, 0, sizeof args);
  args.struct_size = XLA_FFI_DeviceMemory_Allocate_Args_STRUCT_SIZE;
  args.ctx = cf->ctx;
  args.size = bytes;
  args.alignment = 16; /* the most XLA's allocator promises through this API */
  XLA_FFI_Error *err = cf->api->XLA_FFI_DeviceMemory_Allocate(&args);
  if (err) {
    char what[160];
    snprintf(what, sizeof what, "cannot allocate %zu bytes for scratch '%s'", bytes, name);
    return opspec_reword_error(cf, err, XLA_FFI_Error_Code_RESOURCE_EXHAUSTED, op, what);
  }
  if (!args.data)
    return opspec_error(cf, XLA_FFI_Error_Code_RESOURCE_EXHAUSTED, op, "cannot allocate %zu bytes for scratch '%s'", bytes,
                        name);
  *ptr = args.data;
  return NULL;
}

void opspec_device_free(XLA_FFI_CallFrame *cf, size_t bytes, void *ptr) {
  if (!ptr) return;
  XLA_FFI_DeviceMemory_Free_Args args;
  memset(&args, 0, sizeof args);
  args.struct_size = XLA_FFI_DeviceMemory_Free_Args_STRUCT_SIZE;
  args.ctx = cf->ctx;
  args.size = bytes;
  args.data = ptr;
  XLA_FFI_Error *err = cf->api->XLA_FFI_DeviceMemory_Free(&args);
  /* Nothing to report it through: the call itself succeeded. */
  if (err) opspec_drop_error(cf, err);
}

XLA_FFI_Error *opspec_cuda_error(XLA_FFI_CallFrame *cf, const char *op, const char *kernel, int code) {
  return opspec_error(cf, XLA_FFI_Error_Code_INTERNAL, op, "CUDA kernel '%s' failed: %s (code %d)", kernel ? kernel : "?",
                      opspec_cuda_error_string(code), code);
}
