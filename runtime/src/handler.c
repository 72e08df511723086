/* The CPU handler of every op, driven by its tables (opspec_op_desc): decode the call
 * into the op's args struct, check contents, provide scratch memory, run the kernel of
 * the bound type variant. Generated code describes; this file does, once. */
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "opspec/batch.h"
#include "opspec/cpu.h"
#include "opspec/ffi.h"

/* Runs on every call for every buffer: the product in a local (writing it through `a`
 * made the compiler reload it, as `a->shape` might alias XLA's dims), and the rank was
 * checked against OPSPEC_MAX_RANK by opspec_check_buffer. */
static void opspec_view(const XLA_FFI_Buffer *buf, opspec_array *a) {
  const int64_t rank = buf->rank;
  int64_t size = 1;
  a->data = buf->data;
  for (int64_t d = 0; d < rank; ++d) {
    const int64_t extent = buf->dims[d];
    a->shape[d] = extent;
    size *= extent; /* buffers XLA allocated: the product fits */
  }
  for (int64_t d = rank; d < OPSPEC_MAX_RANK; ++d) a->shape[d] = 1;
  a->size = size;
}

XLA_FFI_Error *opspec_decode(XLA_FFI_CallFrame *cf, const opspec_op_desc *op, void *args, opspec_bound *bound) {
  XLA_FFI_Error *err = opspec_bind_inputs(cf, op, bound);
  if (err) return err;
  for (int32_t i = 0; i < op->nsymbols; ++i)
    memcpy((char *)args + op->symbols[i].offset, &bound->symbols[i], sizeof(int64_t));
  for (int32_t i = 0; i < op->nattrs; ++i)
    memcpy((char *)args + op->attrs[i].offset, bound->attrs[i], opspec_dtype_size(op->attrs[i].dtype));
  for (int32_t i = 0; i < op->ninputs; ++i) opspec_view(cf->args.args[i], opspec_array_at(args, op->inputs[i].offset));

  int64_t extents[OPSPEC_MAX_OUTPUTS * OPSPEC_MAX_RANK];
  for (int32_t i = 0; i < op->nscratch; ++i) {
    opspec_array *a = opspec_array_at(args, op->scratch[i].offset);
    a->data = NULL;
    for (int d = 0; d < OPSPEC_MAX_RANK; ++d) a->shape[d] = 1;
  }
  if (op->shapes && (err = op->shapes(cf, args, extents))) return err;
  if ((err = opspec_check_outputs(cf, op, bound, extents))) return err;
  for (int32_t i = 0; i < op->noutputs; ++i)
    opspec_view(cf->rets.rets[i], opspec_array_at(args, op->outputs[i].offset));
  /* A scratch buffer's count may overflow even where each dim is valid: it then stays
   * OPSPEC_SIZE_INVALID, which opspec_buffer_bytes reports by name. */
  for (int32_t i = 0; i < op->nscratch; ++i) {
    opspec_array *a = opspec_array_at(args, op->scratch[i].offset);
    a->size = 1;
    for (int d = 0; d < OPSPEC_MAX_RANK; ++d) a->size = opspec_safe_mul(a->size, a->shape[d]);
  }
  if (op->launch && (err = op->launch(cf, args))) return err;
  return NULL;
}

/* The bytes of scratch buffer `i` under the bound dtypes. */
static XLA_FFI_Error *opspec_scratch_bytes(XLA_FFI_CallFrame *cf, const opspec_op_desc *op, const opspec_bound *bound,
                                           void *args, int32_t i, size_t *bytes) {
  const opspec_array_desc *desc = &op->scratch[i];
  return opspec_buffer_bytes(cf, op->name, "scratch", desc->name, opspec_array_at(args, desc->offset)->size,
                             opspec_elem_size(desc, bound), bytes);
}

/* Runs the kernel over every batch element: the elements in parallel, each on one
 * thread, when each is too small for its kernel to go parallel but all together are
 * not (and there is no scratch memory, which is per call); otherwise one after the
 * other, each kernel deciding for itself. */
static void opspec_run_batch(const opspec_batch *batch, const opspec_op_desc *op, void *args,
                             opspec_cpu_kernel *kernel) {
  int64_t element = 0; /* output elements of one batch element: the work to split */
  for (int32_t i = 0; i < op->noutputs; ++i) element += opspec_array_at(args, op->outputs[i].offset)->size;
  int64_t total = element > 0 && batch->count > INT64_MAX / element ? INT64_MAX : element * batch->count;
  int threads = opspec_cpu_threads();
  char *copies = NULL; /* each thread points its own copy of the args at its elements */
  if (op->nscratch == 0 && batch->count > 1 && !opspec_cpu_parallel(element) && opspec_cpu_parallel(total))
    copies = malloc((size_t)threads * op->args_size);
  if (copies) {
#pragma omp parallel num_threads(threads)
    {
#ifdef _OPENMP
      void *mine = copies + (size_t)omp_get_thread_num() * op->args_size;
#else
      void *mine = copies;
#endif
      memcpy(mine, args, op->args_size);
#pragma omp for schedule(static)
      for (int64_t b = 0; b < batch->count; ++b) {
        opspec_batch_point(batch, op, mine, b);
        kernel(mine);
      }
    }
    free(copies);
    return;
  }
  for (int64_t b = 0; b < batch->count; ++b) {
    opspec_batch_point(batch, op, args, b);
    kernel(args);
  }
}

XLA_FFI_Error *opspec_run_cpu(XLA_FFI_CallFrame *cf, const opspec_op_desc *op, void *args,
                              opspec_cpu_kernel *const *variants) {
  if (opspec_metadata_query(cf, 0)) return NULL;
  opspec_batch batch;
  XLA_FFI_CallFrame *call;
  opspec_bound bound;
  XLA_FFI_Error *err = opspec_batch_split(cf, op, &batch, &call);
  if (err || (err = opspec_decode(call, op, args, &bound))) return err;
  if (op->contents && opspec_checks_enabled())
    for (int64_t b = 0; b < batch.count && !err; ++b) {
      if (batch.rank) opspec_batch_point(&batch, op, args, b);
      err = op->contents(call, args);
    }
  if (err) return err;
  int32_t allocated = 0;
  for (; allocated < op->nscratch; ++allocated) {
    size_t bytes;
    opspec_array *a = opspec_array_at(args, op->scratch[allocated].offset);
    if ((err = opspec_scratch_bytes(call, op, &bound, args, allocated, &bytes)) ||
        (err = opspec_host_alloc(call, op->name, op->scratch[allocated].name, bytes, &a->data)))
      break;
  }
  if (!err) {
    if (batch.rank)
      opspec_run_batch(&batch, op, args, variants[bound.variant]);
    else
      variants[bound.variant](args);
  }
  for (int32_t i = 0; i < allocated; ++i) free(opspec_array_at(args, op->scratch[i].offset)->data);
  return err;
}
