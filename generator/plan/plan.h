/* Planning: what each generated file of an op says, decided once from the checked model
 * (`const og_op *` in, a plan out). The renderers (render/) read these facts and never
 * decide them again; the templates test them with `{% if %}`. */
#ifndef OG_PLAN_H
#define OG_PLAN_H

#include <stdbool.h>
#include <stddef.h>

#include "model/model.h"
#include "plan/tiles.h"

typedef struct og_op_plan {
  bool has_cuda;        /* a portable `kernel` or `cuda:` kernels: the op has CUDA handlers */
  bool cuda_batch_grid; /* the CUDA launcher runs a natively batched call whole (below) */
  bool cpu_portable;    /* the CPU kernel is the portable `kernel` (not a raw `cpu:` body) */
  bool cpu_simd;        /* the portable CPU kernel's innermost launch loop gets `omp simd` */
  bool body_shared;     /* the CPU kernel and the CUDA kernel include the same body */
  bool fastmath;        /* the CPU kernels may reassociate (OPSPEC_FASTMATH, opspec/cpu.h) */
  bool rejects;         /* some input's check is in_kernel: opspec_reject() is defined */
  size_t nvariants;     /* CPU kernels, one per combination of type-variable choices */
  bool cpu_lowp;        /* bfloat16/float16 variants compute in float, converting in the loop (plan/lowp.h) */
  bool widens_bfloat16; /* the CPU handler widens the call's bfloat16 arrays to float copies */
  bool cpu_tiles;       /* float16 variants run the float32 kernel on F16C tiles (plan/tiles.h) */
  og_tiles tiles;       /* where cpu_tiles: each input's and output's part in them */
  bool cpu_spans;       /* float16 variants of a 2-D launch run their rows on F16C spans (plan/spans.h) */
} og_op_plan;

/* Plans `op`: fills every field of `plan`. */
void og_plan_op(const og_op *op, og_op_plan *plan);

/* The body the CPU runs: the raw `cpu:` body, or else the portable `kernel`. */
const og_body *og_plan_cpu_body(const og_op *op);

#endif /* OG_PLAN_H */
