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
    return opspec_error(cf, XLA_FFI_Error_Code_RESOURCE_EXHAUSTED, op, "cannot allocate %zu bytes for scratch '%s'",
                        bytes, name);
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
  return opspec_error(cf, XLA_FFI_Error_Code_INTERNAL, op, "CUDA kernel '%s' failed: %s (code %d)",
                      kernel ? kernel : "?", opspec_cuda_error_string(code), code);
}

/* The element size of array `desc` under the bound dtypes. */
static size_t opspec_elem_size(const opspec_array_desc *desc, const opspec_bound *bound) {
  return opspec_dtype_size(desc->dtype < 0 ? bound->dtypes[-1 - desc->dtype] : desc->dtype);
}

static opspec_array *opspec_array_at(void *args, size_t offset) { return (opspec_array *)((char *)args + offset); }

XLA_FFI_Error *opspec_run_cuda(XLA_FFI_CallFrame *cf, const opspec_op_desc *op, void *args,
                               opspec_cuda_launch_fn *launch) {
  if (opspec_metadata_query(cf, XLA_FFI_HANDLER_TRAITS_COMMAND_BUFFER_COMPATIBLE)) return NULL;
  opspec_bound bound;
  XLA_FFI_Error *err = opspec_decode(cf, op, args, &bound);
  if (err) return err;
  /* Inputs' `check:`s read host memory: on GPU the data is on the device, and checking
   * would cost a copy and a synchronisation, so they run on CPU only. */
  if (op->cuda && (err = op->cuda(cf, args))) return err;
  void *stream = NULL;
  if ((err = opspec_cuda_stream(cf, op->name, &stream))) return err;
  size_t output_bytes[OPSPEC_MAX_OUTPUTS], scratch_bytes[OPSPEC_MAX_SCRATCH];
  for (int32_t i = 0; i < op->noutputs; ++i)
    if ((err = opspec_buffer_bytes(cf, op->name, "output", op->outputs[i].name,
                                   opspec_array_at(args, op->outputs[i].offset)->size,
                                   opspec_elem_size(&op->outputs[i], &bound), &output_bytes[i])))
      return err;
  int32_t allocated = 0;
  for (; allocated < op->nscratch; ++allocated) {
    const opspec_array_desc *desc = &op->scratch[allocated];
    opspec_array *a = opspec_array_at(args, desc->offset);
    if ((err = opspec_buffer_bytes(cf, op->name, "scratch", desc->name, a->size, opspec_elem_size(desc, &bound),
                                   &scratch_bytes[allocated])) ||
        (err = opspec_device_alloc(cf, op->name, desc->name, scratch_bytes[allocated], &a->data)))
      break;
  }
  const char *failed_kernel = NULL;
  int code = err ? 0 : launch(args, bound.variant, stream, output_bytes, &failed_kernel);
  /* XLA's allocator is stream-ordered: freeing after enqueueing is safe. */
  for (int32_t i = 0; i < allocated; ++i)
    opspec_device_free(cf, scratch_bytes[i], opspec_array_at(args, op->scratch[i].offset)->data);
  if (err) return err;
  if (code) return opspec_cuda_error(cf, op->name, failed_kernel, code);
  return NULL;
}
