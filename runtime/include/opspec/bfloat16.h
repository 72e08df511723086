/* bfloat16 on CPU: no C compiler this project builds with computes in bfloat16 (GCC 12
 * has no __bf16 in C), so a kernel variant for a type variable's bfloat16 choice is
 * compiled for float. Where its body reads and writes bfloat16 arrays only element by
 * element, the kernel converts each element in its loop (opspec/lowp.h) and needs
 * nothing here. Otherwise (opspec_op_desc.widens_bfloat16) the CPU handler hands it
 * float copies of the call's bfloat16 arrays: inputs widened exactly, outputs narrowed
 * back rounded to nearest even, NaN kept a NaN. CUDA kernels compute in __nv_bfloat16
 * and need none of this. */
#ifndef OPSPEC_BFLOAT16_H
#define OPSPEC_BFLOAT16_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "opspec/batch.h"
#include "opspec/ffi.h"

typedef struct opspec_widened {
  int32_t n; /* copies made; the only field set before opspec_widen_bfloat16 */
  struct {
    float *copy;
    uint16_t *data; /* the XLA buffer */
    size_t count;   /* elements, every batch element's */
    bool output;
  } arrays[OPSPEC_MAX_INPUTS + OPSPEC_MAX_OUTPUTS];
} opspec_widened;

/* Arrays widened since the extension loaded, every call's (tests read it: _opspec.widened_arrays). */
int64_t opspec_widened_arrays(void);

/* Whether the call bound a type variable to bfloat16. */
bool opspec_has_bfloat16(const opspec_op_desc *op, const opspec_bound *bound);

/* Points every bfloat16 input and output of the decoded call at a float copy of its
 * whole XLA buffer (of frame `cf`; inputs converted, outputs zeroed): in `args`, or for a
 * natively batched call in `batch`, whose byte steps double. Records the copies in `w`
 * (w->n must be 0). */
XLA_FFI_Error *opspec_widen_bfloat16(XLA_FFI_CallFrame *cf, const opspec_op_desc *op, const opspec_bound *bound,
                                     opspec_batch *batch, void *args, opspec_widened *w);

/* With `kernel_ran`, writes every output copy back into its bfloat16 buffer; then frees
 * the copies. */
void opspec_narrow_bfloat16(opspec_widened *w, bool kernel_ran);

/* One value each way: opspec_bfloat16_to_float and opspec_float_to_bfloat16, in
 * opspec/dtypes.h. */

#endif /* OPSPEC_BFLOAT16_H */
