/* Native batching: one FFI call runs an op over a whole jax.vmap batch.
 *
 * opspec's batching rule (opspec/_primitive.py) does not loop or broadcast: it moves each
 * batched input's vmapped axis to the front and adds one attribute to the call,
 * `opspec_batch`, an int64 array [rank, mask_0, ..., mask_{ninputs-1}]:
 *   - every output starts with `rank` batch dims (the outermost vmap first);
 *   - input i starts with those batch dims k whose bit k of mask_i is set, in order,
 *     and is read in place, at the same address, for every index along the others
 *     (a batch stride of 0: an unbatched matrix is never copied).
 * The handler strips the batch dims, checks and decodes the call as one batch element
 * sees it, and runs the kernel once per element (the elements in parallel on CPU when
 * each is too small to parallelise on its own). A call without the attribute is one
 * element. Names starting with `opspec_` are reserved in specs, so it cannot collide
 * with an op's own attribute.
 */
#ifndef OPSPEC_BATCH_H
#define OPSPEC_BATCH_H

#include "opspec/ffi.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct opspec_batch {
  int32_t rank;                          /* 0: not batched, one element */
  int64_t count;                         /* elements: the product of the extents */
  int64_t extent[OPSPEC_MAX_BATCH_RANK]; /* from the outputs' leading dims */
  /* Bytes to step for index k along batch dim k; 0 where an input lacks dim k. */
  int64_t in_step[OPSPEC_MAX_INPUTS][OPSPEC_MAX_BATCH_RANK];
  int64_t out_step[OPSPEC_MAX_OUTPUTS][OPSPEC_MAX_BATCH_RANK];
  /* The call as one element sees it: buffers without their batch dims, attributes
   * without opspec_batch. Its buffers' data are element 0's. */
  XLA_FFI_CallFrame frame;
  XLA_FFI_Buffer in[OPSPEC_MAX_INPUTS], out[OPSPEC_MAX_OUTPUTS];
  void *in_ptr[OPSPEC_MAX_INPUTS], *out_ptr[OPSPEC_MAX_OUTPUTS];
  XLA_FFI_AttrType attr_types[OPSPEC_MAX_ATTRS + 1]; /* the op's, and opspec_kernel */
  XLA_FFI_ByteSpan *attr_names[OPSPEC_MAX_ATTRS + 1];
  void *attrs[OPSPEC_MAX_ATTRS + 1];
} opspec_batch;

/* Reads `opspec_batch` from the call, checks it against the buffers, and sets *call to
 * the frame one element sees: `cf` itself when the call is not batched (batch->rank 0,
 * batch->count 1). */
XLA_FFI_Error *opspec_batch_split(XLA_FFI_CallFrame *cf, const opspec_op_desc *op, opspec_batch *batch,
                                  XLA_FFI_CallFrame **call);

/* Points every input and output array of the decoded `args` at batch element `b`. */
void opspec_batch_point(const opspec_batch *batch, const opspec_op_desc *op, void *args, int64_t b);

#ifdef __cplusplus
}
#endif

#endif /* OPSPEC_BATCH_H */
