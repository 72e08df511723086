/* The CUDA handlers' one path, and the two backends it runs on; see opspec/ffi_cuda.h. */
#include "opspec/batch.h"
#include "opspec/ffi_cuda.h"
#include "opspec/registry.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef OPSPEC_WITH_CUDA_SIM
#include "opspec/cuda_sim.h"
#endif

/* ---- the device XLA names ----------------------------------------------------------- */

opspec_ffi_device_ordinal_fn *opspec_ffi_device_ordinal(const XLA_FFI_Api *api) {
  opspec_ffi_device_ordinal_fn *fn = NULL;
  /* Past the end of XLA_FFI_Api as a 0.1 header declares it: read by offset. */
  if (api->struct_size >= OPSPEC_FFI_DEVICE_ORDINAL_SLOT + sizeof fn)
    memcpy(&fn, (const char *)api + OPSPEC_FFI_DEVICE_ORDINAL_SLOT, sizeof fn);
  return fn;
}

XLA_FFI_Error *opspec_cuda_device_ordinal(XLA_FFI_CallFrame *cf, const char *op, const opspec_cuda_backend *backend,
                                          int *device) {
  *device = 0;
  opspec_ffi_device_ordinal_fn *get = opspec_ffi_device_ordinal(cf->api);
  if (get) {
    opspec_ffi_device_ordinal_args args;
    memset(&args, 0, sizeof args);
    args.struct_size = OPSPEC_FFI_DEVICE_ORDINAL_ARGS_SIZE;
    args.ctx = cf->ctx;
    XLA_FFI_Error *err = get(&args);
    if (err) return opspec_reword_error(cf, err, XLA_FFI_Error_Code_INTERNAL, op, "cannot get XLA's device ordinal");
    *device = args.device_ordinal;
    return NULL;
  }
  int count = 0, code = backend->device_count(&count);
  if (code) return opspec_cuda_error(cf, op, backend, "(device count)", code);
  if (count > 1)
    return opspec_error(cf, XLA_FFI_Error_Code_UNIMPLEMENTED, op,
                        "there are %d %ss, and the XLA FFI of the jaxlib in use (API %d.%d) has no "
                        "XLA_FFI_DeviceOrdinal_Get to tell which one XLA runs this call on; use a newer jaxlib "
                        "(the one in requirements.txt), or one device (CUDA_VISIBLE_DEVICES; for the simulator, "
                        "one JAX CPU device)",
                        count, backend->device_noun, cf->api->api_version.major_version,
                        cf->api->api_version.minor_version);
  return NULL;
}

XLA_FFI_Error *opspec_cuda_error(XLA_FFI_CallFrame *cf, const char *op, const opspec_cuda_backend *backend,
                                 const char *kernel, int code) {
  return opspec_error(cf, XLA_FFI_Error_Code_INTERNAL, op, "%s '%s' failed: %s (code %d)", backend->kernel_noun,
                      kernel ? kernel : "?", backend->error_string(code), code);
}

/* ---- the inputs' checks on the device ----------------------------------------------- */

/* The device memory of a call's checks: the check kernel's result, then the flag
 * opspec_reject() sets. */
#define OPSPEC_CHECKS_BYTES 16
#define OPSPEC_CHECKS_FLAG  8

/* opspec_check_values' way to the device for one call (opspec_device_scan): the backend's
 * check kernel on the call's stream, with its result in `slot`. */
typedef struct opspec_cuda_scan {
  opspec_device_scan scan; /* first: the callbacks get a pointer to it */
  const opspec_cuda_backend *backend;
  void *stream;
  void *slot; /* OPSPEC_CHECKS_BYTES of device memory, or NULL: the call checks nothing */
  int *flag;  /* in `slot`, where the op has in_kernel checks; NULL otherwise */
  /* Scans this call found good: an input a batched call shares between its elements
   * (vmap over x only: csr_matvec's indptr) is scanned once, not once per element,
   * each scan costing a synchronisation. */
  struct {
    const void *data;
    int64_t count;
    uint64_t lo, hi;
    int32_t dtype;
    bool sorted;
  } good[8];
  int ngood;
} opspec_cuda_scan;

static int opspec_cuda_scan_first_bad(opspec_device_scan *scan, const void *data, int32_t dtype, int64_t count,
                                      uint64_t lo, uint64_t hi, bool sorted, int64_t *first) {
  opspec_cuda_scan *s = (opspec_cuda_scan *)scan;
  for (int i = 0; i < s->ngood; ++i)
    if (s->good[i].data == data && s->good[i].count == count && s->good[i].lo == lo && s->good[i].hi == hi &&
        s->good[i].dtype == dtype && s->good[i].sorted == sorted) {
      *first = -1;
      return 0;
    }
  int code = s->backend->first_bad(s->stream, s->slot, data, dtype, count, lo, hi, sorted, first);
  if (!code && *first < 0 && s->ngood < (int)OPSPEC_COUNT(s->good)) {
    s->good[s->ngood].data = data;
    s->good[s->ngood].count = count;
    s->good[s->ngood].lo = lo;
    s->good[s->ngood].hi = hi;
    s->good[s->ngood].dtype = dtype;
    s->good[s->ngood].sorted = sorted;
    ++s->ngood;
  }
  return code;
}

static int opspec_cuda_scan_to_host(opspec_device_scan *scan, void *dst, const void *src, size_t bytes) {
  opspec_cuda_scan *s = (opspec_cuda_scan *)scan;
  return s->backend->to_host(s->stream, dst, src, bytes);
}

/* Runs `check` (op->contents or op->kernel_checked: the generated calls of
 * opspec_check_values) on every element of the call, scanning on the device: the same
 * messages as on CPU, naming the first bad position within the first bad element. */
static XLA_FFI_Error *opspec_cuda_check(XLA_FFI_CallFrame *cf, const opspec_op_desc *op, void *args,
                                        const opspec_batch *batch, opspec_args_fn *check, opspec_cuda_scan *s) {
  XLA_FFI_Error *err = NULL;
  XLA_FFI_CallFrame frame;
  XLA_FFI_CallFrame *scanning = opspec_frame_with_scan(&frame, cf, &s->scan);
  s->scan.code = 0;
  for (int64_t b = 0; b < batch->count && !err && !s->scan.code; ++b) {
    if (batch->rank) opspec_batch_point(batch, op, args, b);
    err = check(scanning, args);
  }
  if (!err && s->scan.code) err = opspec_cuda_error(cf, op->name, s->backend, "(content check)", s->scan.code);
  return err;
}

/* The checks before the kernels, as on CPU: `contents` scans while checks are on; the
 * in_kernel inputs are left to the body, which sets a flag in device memory (cleared
 * here) as it reads them. Each scan waits for the stream. */
static XLA_FFI_Error *opspec_cuda_checks_before(XLA_FFI_CallFrame *cf, const opspec_op_desc *op, void *args,
                                                const opspec_batch *batch, int device, opspec_cuda_scan *s) {
  const opspec_cuda_backend *backend = s->backend;
  const bool scan_first = op->contents && opspec_checks_enabled();
  if (!scan_first && !op->kernel_checked) return NULL;
  XLA_FFI_Error *err = backend->stream(cf, op->name, device, &s->stream);
  if (!err) err = backend->alloc(cf, op->name, "(content checks)", OPSPEC_CHECKS_BYTES, &s->slot);
  if (!err && scan_first) err = opspec_cuda_check(cf, op, args, batch, op->contents, s);
  if (err || !op->kernel_checked) return err;
  s->flag = (int *)(void *)((char *)s->slot + OPSPEC_CHECKS_FLAG);
  memcpy((char *)args + op->rejected_at, &s->flag, sizeof s->flag);
  const int code = backend->zero(s->stream, s->flag, sizeof *s->flag);
  return code ? opspec_cuda_error(cf, op->name, backend, "(clear the rejection flag)", code) : NULL;
}

/* After kernels that called opspec_reject(): as on CPU (opspec_rejection in handler.c,
 * whose messages these are), the in_kernel checks name the first bad position, or say
 * that checks are off, or that the body rejected what the check allows. The outputs
 * are not used: the call fails. */
static XLA_FFI_Error *opspec_cuda_rejection(XLA_FFI_CallFrame *cf, const opspec_op_desc *op, void *args,
                                            const opspec_batch *batch, opspec_cuda_scan *s) {
  if (!opspec_checks_enabled())
    return opspec_error(cf, XLA_FFI_Error_Code_INVALID_ARGUMENT, op->name,
                        "the kernel rejected a value of an input checked in_kernel (checks are off: "
                        "%s.set_checks(True) names the position)",
                        opspec_package_name); /* the package's own knob: myops.set_checks */
  XLA_FFI_Error *err = opspec_cuda_check(cf, op, args, batch, op->kernel_checked, s);
  if (err) return err;
  return opspec_error(cf, XLA_FFI_Error_Code_INVALID_ARGUMENT, op->name,
                      "the kernel called opspec_reject(), but every input checked in_kernel meets its check: the "
                      "body rejects what the spec's check allows");
}

/* The checks after the kernels: the rejection flag read back (a wait for the stream),
 * and only if the body set it, the in_kernel inputs scanned. */
static XLA_FFI_Error *opspec_cuda_checks_after(XLA_FFI_CallFrame *cf, const opspec_op_desc *op, void *args,
                                               const opspec_batch *batch, opspec_cuda_scan *s) {
  if (!s->flag) return NULL;
  int rejected = 0;
  const int code = s->backend->to_host(s->stream, &rejected, s->flag, sizeof rejected);
  if (code) return opspec_cuda_error(cf, op->name, s->backend, "(read the rejection flag)", code);
  return rejected ? opspec_cuda_rejection(cf, op, args, batch, s) : NULL;
}

/* ---- the one path ------------------------------------------------------------------- */

/* Whether [data, data + bytes) overlaps an input: an output XLA aliased to its input. */
static bool opspec_shares_input(const opspec_op_desc *op, void *args, const opspec_bound *bound, const void *data,
                                size_t bytes) {
  const char *lo = data, *hi = lo + bytes;
  for (int32_t i = 0; i < op->ninputs; ++i) {
    const opspec_array *in = opspec_array_at(args, op->inputs[i].offset);
    const char *in_lo = in->data, *in_hi = in_lo + (size_t)in->size * opspec_elem_size(&op->inputs[i], bound);
    if (lo < in_hi && in_lo < hi) return true;
  }
  return false;
}

/* Allocates scratch, launches, frees: everything that runs with the call's device
 * current. `batch` NULL: one element; otherwise the whole batch in one launch per kernel
 * (op->cuda_batch_grid), whose outputs are every element's. */
static XLA_FFI_Error *opspec_run_on_device(XLA_FFI_CallFrame *cf, const opspec_op_desc *op, void *args,
                                           const opspec_batch *batch, const opspec_cuda_backend *backend,
                                           const opspec_cuda_launch *launch, const opspec_bound *bound, int device) {
  void *stream = NULL;
  XLA_FFI_Error *err = backend->stream(cf, op->name, device, &stream);
  if (err) return err;
  size_t output_bytes[OPSPEC_MAX_OUTPUTS], scratch_bytes[OPSPEC_MAX_SCRATCH];
  for (int32_t i = 0; i < op->noutputs; ++i) {
    if ((err = opspec_buffer_bytes(cf, op->name, "output", op->outputs[i].name,
                                   opspec_array_at(args, op->outputs[i].offset)->size,
                                   opspec_elem_size(&op->outputs[i], bound), &output_bytes[i])))
      return err;
    /* An output has every batch dim, outermost, and element 0 at its start: the whole
     * buffer, which XLA allocated, so the product fits. */
    if (batch) output_bytes[i] *= (size_t)batch->count;
  }
  int32_t allocated = 0;
  for (; allocated < op->nscratch; ++allocated) {
    const opspec_array_desc *desc = &op->scratch[allocated];
    opspec_array *a = opspec_array_at(args, desc->offset);
    if ((err = opspec_buffer_bytes(cf, op->name, "scratch", desc->name, a->size, opspec_elem_size(desc, bound),
                                   &scratch_bytes[allocated])) ||
        (err = backend->alloc(cf, op->name, desc->name, scratch_bytes[allocated], &a->data)))
      break;
  }
  if (!err && backend->fresh_output)
    for (int32_t i = 0; i < op->noutputs; ++i)
      if (!opspec_shares_input(op, args, bound, opspec_array_at(args, op->outputs[i].offset)->data, output_bytes[i]))
        backend->fresh_output(opspec_array_at(args, op->outputs[i].offset)->data, output_bytes[i]);
  const char *failed_kernel = NULL;
  int code =
      err ? 0
          : opspec_cuda_launch_run(launch, op, bound, args, batch, stream, backend->zero, output_bytes, &failed_kernel);
  /* XLA's allocator is stream-ordered: freeing after enqueueing is safe. */
  for (int32_t i = 0; i < allocated; ++i)
    backend->free(cf, scratch_bytes[i], opspec_array_at(args, op->scratch[i].offset)->data);
  if (err) return err;
  if (code) return opspec_cuda_error(cf, op->name, backend, failed_kernel, code);
  return NULL;
}

/* Every element's launches: the portable kernel takes a native batch along the grid's z,
 * in one launch; raw `cuda:` kernels see one element, so each element's launches run in
 * turn, on the one stream. */
static XLA_FFI_Error *opspec_launch_batch(XLA_FFI_CallFrame *cf, const opspec_op_desc *op, void *args,
                                          const opspec_batch *batch, const opspec_cuda_backend *backend,
                                          const opspec_cuda_launch *launch, const opspec_bound *bound, int device) {
  if (batch->rank && op->cuda_batch_grid && batch->count > 0) {
    opspec_batch_point(batch, op, args, 0);
    return opspec_run_on_device(cf, op, args, batch, backend, launch, bound, device);
  }
  XLA_FFI_Error *err = NULL;
  for (int64_t b = 0; b < batch->count && !err; ++b) {
    if (batch->rank) opspec_batch_point(batch, op, args, b);
    err = opspec_run_on_device(cf, op, args, NULL, backend, launch, bound, device);
  }
  return err;
}

/* The extension has its own CUDA runtime, whose current device is its own: makes it the
 * one XLA runs this call on (whose stream XLA hands us), remembering the one that was
 * current in `previous`, since the host thread is XLA's. */
static XLA_FFI_Error *opspec_enter_device(XLA_FFI_CallFrame *cf, const char *op, const opspec_cuda_backend *backend,
                                          int *device, int *previous) {
  XLA_FFI_Error *err = opspec_cuda_device_ordinal(cf, op, backend, device);
  if (err) return err;
  int code = backend->get_device(previous);
  if (code) return opspec_cuda_error(cf, op, backend, "(get device)", code);
  if (*device != *previous && (code = backend->set_device(*device)))
    return opspec_cuda_error(cf, op, backend, "(set device)", code);
  return NULL;
}

/* Puts the previous device back; returns `err`, the call's outcome, or else the failure
 * to restore. */
static XLA_FFI_Error *opspec_leave_device(XLA_FFI_CallFrame *cf, const char *op, const opspec_cuda_backend *backend,
                                          int device, int previous, XLA_FFI_Error *err) {
  int code = 0;
  if (device != previous && (code = backend->set_device(previous)) && !err)
    return opspec_cuda_error(cf, op, backend, "(restore device)", code);
  return err;
}

XLA_FFI_Error *opspec_run_cuda(XLA_FFI_CallFrame *cf, const opspec_op_desc *op, void *args,
                               const opspec_cuda_backend *backend, const opspec_cuda_launch *launch) {
  /* A handler that waits for the device (the checks) cannot be replayed from a CUDA
   * graph: XLA must call it each time. Without checks it only enqueues work. */
  const bool has_checks = op->contents || op->kernel_checked;
  if (opspec_metadata_query(cf, has_checks ? 0 : XLA_FFI_HANDLER_TRAITS_COMMAND_BUFFER_COMPATIBLE)) return NULL;
  opspec_batch batch;
  XLA_FFI_CallFrame *call;
  opspec_bound bound;
  XLA_FFI_Error *err = opspec_batch_split(cf, op, &batch, &call);
  if (err || (err = opspec_decode(call, op, args, &bound)) || (err = opspec_check_overlap(cf, op))) return err;
  if (op->cuda && (err = op->cuda(call, args))) return err;
  int device = 0, previous = 0;
  if ((err = opspec_enter_device(cf, op->name, backend, &device, &previous))) return err;
  opspec_cuda_scan scan = {.scan = {.first_bad = opspec_cuda_scan_first_bad, .to_host = opspec_cuda_scan_to_host},
                           .backend = backend};
  if (!(err = opspec_cuda_checks_before(call, op, args, &batch, device, &scan)) &&
      !(err = opspec_launch_batch(call, op, args, &batch, backend, launch, &bound, device)))
    err = opspec_cuda_checks_after(call, op, args, &batch, &scan);
  backend->free(call, OPSPEC_CHECKS_BYTES, scan.slot); /* after the last use: the stream waited */
  return opspec_leave_device(cf, op->name, backend, device, previous, err);
}

/* ---- a GPU -------------------------------------------------------------------------- */

#ifdef OPSPEC_WITH_CUDA
XLA_FFI_Error *opspec_cuda_stream(XLA_FFI_CallFrame *cf, const char *op, int device, void **stream) {
  (void)device; /* XLA's stream is the device's XLA runs the call on */
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

const opspec_cuda_backend opspec_cuda_gpu = {
    .kernel_noun = "CUDA kernel",
    .device_noun = "GPU",
    .device_count = opspec_cudart_device_count,
    .get_device = opspec_cudart_get_device,
    .set_device = opspec_cudart_set_device,
    .stream = opspec_cuda_stream,
    .alloc = opspec_device_alloc,
    .free = opspec_device_free,
    .error_string = opspec_cudart_error_string,
    .fresh_output = NULL,
    .first_bad = opspec_cudart_first_bad,
    .to_host = opspec_cudart_to_host,
    .zero = opspec_cudart_zero,
};
#endif

/* ---- the CUDA simulator ------------------------------------------------------------- */

#ifdef OPSPEC_WITH_CUDA_SIM
/* On the CPU platform XLA has no stream and no device allocator for a handler ("XLA FFI
 * GPU context is not available"): the simulated device's own stream, and host memory. */
static XLA_FFI_Error *opspec_sim_stream(XLA_FFI_CallFrame *cf, const char *op, int device, void **stream) {
  *stream = opspec_sim_device_stream(device);
  if (!*stream)
    return opspec_error(cf, XLA_FFI_Error_Code_INTERNAL, op,
                        "the CUDA simulator has no device %d (opspec_sim_set_device_count)", device);
  return NULL;
}

/* Like XLA's device allocator: NULL for 0 bytes, and contents left undefined, which here
 * means all-ones bytes (NaN, -1), so that a kernel reading scratch it never wrote shows. */
static XLA_FFI_Error *opspec_sim_alloc(XLA_FFI_CallFrame *cf, const char *op, const char *name, size_t bytes,
                                       void **ptr) {
  *ptr = NULL;
  if (bytes == 0) return NULL;
  XLA_FFI_Error *err = opspec_host_alloc(cf, op, name, bytes, ptr);
  if (!err) memset(*ptr, 0xff, bytes);
  return err;
}

static void opspec_sim_free(XLA_FFI_CallFrame *cf, size_t bytes, void *ptr) {
  (void)cf, (void)bytes;
  free(ptr);
}

static void opspec_sim_fresh_output(void *data, size_t bytes) {
  if (bytes) memset(data, 0xff, bytes);
}

const opspec_cuda_backend opspec_cuda_sim = {
    .kernel_noun = "simulated CUDA kernel",
    .device_noun = "simulated GPU",
    .device_count = opspec_sim_device_count,
    .get_device = opspec_sim_get_device,
    .set_device = opspec_sim_set_device,
    .stream = opspec_sim_stream,
    .alloc = opspec_sim_alloc,
    .free = opspec_sim_free,
    .error_string = opspec_sim_error_string,
    .fresh_output = opspec_sim_fresh_output,
    .first_bad = opspec_sim_first_bad,
    .to_host = opspec_sim_to_host,
    .zero = opspec_sim_zero,
};
#endif
