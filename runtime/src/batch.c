/* Native batching; see opspec/batch.h. */
#include "opspec/batch.h"

#include <string.h>

#define OPSPEC_BATCH_ATTR "opspec_batch"

static bool opspec_is_batch_attr(const XLA_FFI_ByteSpan *name) {
  return name->len == sizeof OPSPEC_BATCH_ATTR - 1 && memcmp(name->ptr, OPSPEC_BATCH_ATTR, name->len) == 0;
}

/* Which attribute is opspec_batch, or -1. */
static int64_t opspec_find_batch_attr(const XLA_FFI_CallFrame *cf) {
  for (int64_t j = 0; j < cf->attrs.size; ++j)
    if (opspec_is_batch_attr(cf->attrs.names[j])) return j;
  return -1;
}

/* The attribute's values, checked: [rank, one mask per input]. */
static XLA_FFI_Error *opspec_batch_spec(XLA_FFI_CallFrame *cf, const opspec_op_desc *op, int64_t j,
                                        const int64_t **values) {
  const XLA_FFI_Array *a = cf->attrs.attrs[j];
  if (cf->attrs.types[j] != XLA_FFI_AttrType_ARRAY || a->dtype != XLA_FFI_DataType_S64 ||
      a->size != (size_t)op->ninputs + 1)
    return opspec_error(cf, XLA_FFI_Error_Code_INVALID_ARGUMENT, op->name,
                        "attribute 'opspec_batch': expected an int64 array of %d values (rank, one mask per input)",
                        (int)op->ninputs + 1);
  *values = a->data;
  int64_t rank = (*values)[0];
  if (rank < 1 || rank > OPSPEC_MAX_BATCH_RANK)
    return opspec_error(cf, XLA_FFI_Error_Code_INVALID_ARGUMENT, op->name,
                        "attribute 'opspec_batch': rank %lld is not in 1..%d", (long long)rank, OPSPEC_MAX_BATCH_RANK);
  for (int32_t i = 0; i < op->ninputs; ++i)
    if ((*values)[1 + i] < 0 || (*values)[1 + i] >= ((int64_t)1 << rank))
      return opspec_error(cf, XLA_FFI_Error_Code_INVALID_ARGUMENT, op->name,
                          "attribute 'opspec_batch': mask %lld of input '%s' names batch dims beyond rank %lld",
                          (long long)(*values)[1 + i], op->inputs[i].name, (long long)rank);
  return NULL;
}

/* Strips the leading batch dims `has` (bits over `rank` dims) from `buf` into `core`, and
 * fills the byte steps; checks each stripped extent against the batch's. */
static XLA_FFI_Error *opspec_strip(XLA_FFI_CallFrame *cf, const opspec_op_desc *op, const char *role, const char *name,
                                   const XLA_FFI_Buffer *buf, opspec_batch *batch, int64_t has, XLA_FFI_Buffer *core,
                                   int64_t *step) {
  int64_t nb = __builtin_popcountll((unsigned long long)has);
  if (buf->rank < nb)
    return opspec_error(cf, XLA_FFI_Error_Code_INVALID_ARGUMENT, op->name,
                        "%s '%s': rank %lld has fewer dims than its %lld batch dims", role, name, (long long)buf->rank,
                        (long long)nb);
  *core = *buf;
  core->rank = buf->rank - nb;
  core->dims = buf->dims + nb;
  /* The steps stay in int64 for any buffer XLA allocated; a forged frame (a fuzzer's) is
   * refused rather than wrapped. opspec_decode checks the core's rank and dims. */
  int64_t bytes = (int64_t)opspec_dtype_size(buf->dtype), d = nb;
  for (int64_t e = 0; e < core->rank && e < OPSPEC_MAX_RANK; ++e)
    if (core->dims[e] < 0 || __builtin_mul_overflow(bytes, core->dims[e], &bytes))
      return opspec_error(cf, XLA_FFI_Error_Code_INVALID_ARGUMENT, op->name,
                          "%s '%s': its dims are negative or their byte size overflows int64", role, name);
  for (int32_t k = batch->rank - 1; k >= 0; --k) { /* innermost batch dim first */
    step[k] = 0;
    if (!(has >> k & 1)) continue;
    int64_t extent = buf->dims[--d];
    if (extent != batch->extent[k])
      return opspec_error(cf, XLA_FFI_Error_Code_INVALID_ARGUMENT, op->name,
                          "%s '%s': batch dim %d is %lld, expected %lld", role, name, (int)k, (long long)extent,
                          (long long)batch->extent[k]);
    step[k] = bytes;
    if (__builtin_mul_overflow(bytes, extent, &bytes))
      return opspec_error(cf, XLA_FFI_Error_Code_INVALID_ARGUMENT, op->name, "%s '%s': its byte size overflows int64",
                          role, name);
  }
  return NULL;
}

/* The batch's extents and element count, from the first output's leading dims. The
 * extents come from a buffer XLA allocated, but the attribute that says how many of its
 * dims are batch dims may be forged (a raw ffi_call): every extent is checked. An extent
 * of 0 is an empty batch, whatever the others (count 0: the handlers run nothing, and
 * opspec_batch_point, which divides by the extents, is never called). */
static XLA_FFI_Error *opspec_batch_extents(XLA_FFI_CallFrame *cf, const opspec_op_desc *op, opspec_batch *batch) {
  const XLA_FFI_Buffer *first = cf->rets.rets[0];
  if (cf->rets.types[0] != XLA_FFI_RetType_BUFFER || !first || first->rank < batch->rank)
    return opspec_error(cf, XLA_FFI_Error_Code_INVALID_ARGUMENT, op->name,
                        "output '%s' has fewer dims than the call's %d batch dims", op->outputs[0].name,
                        (int)batch->rank);
  bool empty = false;
  for (int32_t k = 0; k < batch->rank; ++k) {
    batch->extent[k] = first->dims[k];
    if (first->dims[k] < 0)
      return opspec_error(cf, XLA_FFI_Error_Code_INVALID_ARGUMENT, op->name,
                          "output '%s': batch dim %d is %lld, expected at least 0", op->outputs[0].name, (int)k,
                          (long long)first->dims[k]);
    empty |= first->dims[k] == 0;
  }
  for (int32_t k = 0; k < batch->rank && !empty; ++k)
    if (__builtin_mul_overflow(batch->count, batch->extent[k], &batch->count))
      return opspec_error(cf, XLA_FFI_Error_Code_INVALID_ARGUMENT, op->name,
                          "output '%s': the batch's element count (the product of its %d batch dims) overflows int64",
                          op->outputs[0].name, (int)batch->rank);
  if (empty) batch->count = 0;
  return NULL;
}

/* batch->frame: `cf` with every buffer stripped of its batch dims (`spec`: one mask per
 * input; outputs have them all) and without the attribute opspec_batch (index j). */
static XLA_FFI_Error *opspec_batch_frame(XLA_FFI_CallFrame *cf, const opspec_op_desc *op, opspec_batch *batch,
                                         const int64_t *spec, int64_t j) {
  XLA_FFI_Error *err;
  batch->frame = *cf;
  for (int32_t i = 0; i < op->ninputs; ++i) {
    if (cf->args.types[i] != XLA_FFI_ArgType_BUFFER || !cf->args.args[i])
      return opspec_error(cf, XLA_FFI_Error_Code_INVALID_ARGUMENT, op->name, "input '%s' is not a buffer",
                          op->inputs[i].name);
    if ((err = opspec_strip(cf, op, "input", op->inputs[i].name, cf->args.args[i], batch, spec[1 + i], &batch->in[i],
                            batch->in_step[i])))
      return err;
    batch->in_ptr[i] = &batch->in[i];
  }
  for (int32_t i = 0; i < op->noutputs; ++i) {
    if (cf->rets.types[i] != XLA_FFI_RetType_BUFFER || !cf->rets.rets[i])
      return opspec_error(cf, XLA_FFI_Error_Code_INVALID_ARGUMENT, op->name, "output '%s' is not a buffer",
                          op->outputs[i].name);
    if ((err = opspec_strip(cf, op, "output", op->outputs[i].name, cf->rets.rets[i], batch,
                            ((int64_t)1 << batch->rank) - 1, &batch->out[i], batch->out_step[i])))
      return err;
    batch->out_ptr[i] = &batch->out[i];
  }
  batch->frame.args.args = batch->in_ptr;
  batch->frame.rets.rets = batch->out_ptr;
  int64_t n = 0;
  for (int64_t a = 0; a < cf->attrs.size; ++a) {
    if (a == j) continue;
    batch->attr_types[n] = cf->attrs.types[a];
    batch->attr_names[n] = cf->attrs.names[a];
    batch->attrs[n++] = cf->attrs.attrs[a];
  }
  batch->frame.attrs.size = n;
  batch->frame.attrs.types = batch->attr_types;
  batch->frame.attrs.names = batch->attr_names;
  batch->frame.attrs.attrs = batch->attrs;
  return NULL;
}

/* opspec_batch_split of a call with opspec_batch (index j): out of line, so that the
 * unbatched call, which only looks for it, needs no stack frame. */
static __attribute__((noinline)) XLA_FFI_Error *opspec_batch_split_at(XLA_FFI_CallFrame *cf, const opspec_op_desc *op,
                                                                      opspec_batch *batch, XLA_FFI_CallFrame **call,
                                                                      int64_t j) {
  const int64_t *spec = NULL;
  XLA_FFI_Error *err = opspec_batch_spec(cf, op, j, &spec);
  if (err) return err;
  /* Counts first: the buffers below are indexed by the op's tables. */
  if (cf->args.size != op->ninputs || cf->rets.size != op->noutputs || op->noutputs < 1)
    return opspec_bind_inputs(cf, op, &(opspec_bound){0}); /* reports the mismatch */
  batch->rank = (int32_t)spec[0];
  if ((err = opspec_batch_extents(cf, op, batch))) return err;
  if (cf->attrs.size > OPSPEC_MAX_ATTRS + 2)
    return opspec_error(cf, XLA_FFI_Error_Code_INVALID_ARGUMENT, op->name,
                        "%lld attributes besides opspec_batch, more than an op's %d and opspec_kernel",
                        (long long)cf->attrs.size - 1, OPSPEC_MAX_ATTRS);
  if ((err = opspec_batch_frame(cf, op, batch, spec, j))) return err;
  *call = &batch->frame;
  return NULL;
}

XLA_FFI_Error *opspec_batch_split(XLA_FFI_CallFrame *cf, const opspec_op_desc *op, opspec_batch *batch,
                                  XLA_FFI_CallFrame **call) {
  batch->rank = 0;
  batch->count = 1;
  *call = cf;
  int64_t j = opspec_find_batch_attr(cf);
  return j < 0 ? NULL : opspec_batch_split_at(cf, op, batch, call, j);
}

void opspec_batch_point(const opspec_batch *batch, const opspec_op_desc *op, void *args, int64_t b) {
  int64_t index[OPSPEC_MAX_BATCH_RANK];
  for (int32_t k = batch->rank - 1; k >= 0; --k) {
    index[k] = b % batch->extent[k];
    b /= batch->extent[k];
  }
  for (int32_t i = 0; i < op->ninputs; ++i) {
    int64_t offset = 0;
    for (int32_t k = 0; k < batch->rank; ++k) offset += index[k] * batch->in_step[i][k];
    opspec_array_at(args, op->inputs[i].offset)->data = (char *)batch->in[i].data + offset;
  }
  for (int32_t i = 0; i < op->noutputs; ++i) {
    int64_t offset = 0;
    for (int32_t k = 0; k < batch->rank; ++k) offset += index[k] * batch->out_step[i][k];
    opspec_array_at(args, op->outputs[i].offset)->data = (char *)batch->out[i].data + offset;
  }
}
