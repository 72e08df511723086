/* The kernels of an op as template values (render/ctx_kernels.c): the body include,
 * the CPU variants, the CUDA kernels and launcher. */
#ifndef OG_CTX_KERNELS_H
#define OG_CTX_KERNELS_H

#include "model/model.h"
#include "plan/plan.h"
#include "render/value.h"

/* Sets the records of the kernel files on `v` (the op's map): body, cpu_variants,
 * cpu_locals, cpu_loops, cuda_kernels, launcher, ... (see the function). */
void og_ctx_kernels(const og_op *op, const og_op_plan *plan, og_value *v);

#endif /* OG_CTX_KERNELS_H */
