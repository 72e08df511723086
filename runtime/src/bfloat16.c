/* bfloat16 on CPU; see opspec/bfloat16.h. */
#include "opspec/bfloat16.h"

#include <stdlib.h>
#include <string.h>

#include "opspec/pages.h"

static int64_t opspec_widened_count;

int64_t opspec_widened_arrays(void) { return __atomic_load_n(&opspec_widened_count, __ATOMIC_RELAXED); }

bool opspec_has_bfloat16(const opspec_op_desc *op, const opspec_bound *bound) {
  for (int32_t t = 0; t < op->ntypes; ++t)
    if (bound->dtypes[t] == OPSPEC_DT_bfloat16) return true;
  return false;
}

/* Widens one array: its XLA buffer `buf`, its view in `args` (`view`) or in the batch
 * (`batch_data`, `steps`). */
static XLA_FFI_Error *opspec_widen_one(XLA_FFI_CallFrame *cf, const opspec_op_desc *op, const char *role,
                                       const char *name, const XLA_FFI_Buffer *buf, bool output, opspec_array *view,
                                       void **batch_data, int64_t *steps, int32_t batch_rank, opspec_widened *w) {
  size_t count = 1;
  for (int64_t d = 0; d < buf->rank; ++d) count *= (size_t)buf->dims[d]; /* XLA allocated it at 2 bytes each */
  float *copy = output ? calloc(count ? count : 1, sizeof *copy) : malloc((count ? count : 1) * sizeof *copy);
  if (!copy)
    return opspec_error(cf, XLA_FFI_Error_Code_RESOURCE_EXHAUSTED, op->name,
                        "%s '%s': no memory for a float copy of its %zu bfloat16 elements", role, name, count);
  opspec_advise_huge_pages(copy, count * sizeof *copy); /* fresh memory, written next (runtime/src/pages.c) */
  uint16_t *data = buf->data;
  if (!output)
    for (size_t e = 0; e < count; ++e) copy[e] = opspec_bfloat16_to_float(data[e]);
  w->arrays[w->n].copy = copy;
  w->arrays[w->n].data = data;
  w->arrays[w->n].count = count;
  w->arrays[w->n].output = output;
  w->n++;
  __atomic_fetch_add(&opspec_widened_count, 1, __ATOMIC_RELAXED);
  if (batch_rank) {
    *batch_data = copy;
    for (int32_t k = 0; k < batch_rank; ++k) steps[k] *= 2; /* float elements are twice as wide */
  } else {
    view->data = copy;
  }
  return NULL;
}

XLA_FFI_Error *opspec_widen_bfloat16(XLA_FFI_CallFrame *cf, const opspec_op_desc *op, const opspec_bound *bound,
                                     opspec_batch *batch, void *args, opspec_widened *w) {
  XLA_FFI_Error *err = NULL;
  for (int32_t i = 0; i < op->ninputs && !err; ++i)
    if (opspec_bound_dtype(&op->inputs[i], bound) == OPSPEC_DT_bfloat16)
      err = opspec_widen_one(cf, op, "input", op->inputs[i].name, cf->args.args[i], false,
                             opspec_array_at(args, op->inputs[i].offset), &batch->in[i].data, batch->in_step[i],
                             batch->rank, w);
  for (int32_t i = 0; i < op->noutputs && !err; ++i)
    if (opspec_bound_dtype(&op->outputs[i], bound) == OPSPEC_DT_bfloat16)
      err = opspec_widen_one(cf, op, "output", op->outputs[i].name, cf->rets.rets[i], true,
                             opspec_array_at(args, op->outputs[i].offset), &batch->out[i].data, batch->out_step[i],
                             batch->rank, w);
  return err;
}

void opspec_narrow_bfloat16(opspec_widened *w, bool kernel_ran) {
  for (int32_t a = 0; a < w->n; ++a) {
    if (kernel_ran && w->arrays[a].output)
      for (size_t e = 0; e < w->arrays[a].count; ++e)
        w->arrays[a].data[e] = opspec_float_to_bfloat16(w->arrays[a].copy[e]);
    free(w->arrays[a].copy);
  }
  w->n = 0;
}
