#include "plan/plan.h"

#include <stdlib.h>
#include <string.h>

#include "plan/lowp.h"
#include "plan/spans.h"
#include "util/c_idents.h"

/* Whether the innermost launch loop gets `#pragma omp simd`: when it is the innermost
 * loop (the body has none of its own, whose inner loop is then the one to vectorise)
 * and the body cannot leave it (OpenMP forbids a jump out of a simd loop) nor report
 * through opspec_reject()'s atomic store. The pragma asserts what a portable kernel
 * promises anyway: each index runs on its own, in any order (threads, GPU lanes). */
static bool og_plan_cpu_simd(const og_op *op) {
  static const char *const stops[] = {"for", "while", "do", "goto", "return", "break", "switch", "opspec_reject"};
  og_idents used = {0};
  og_idents_scan(&used, op->kernel.text);
  bool simd = true;
  for (size_t k = 0; k < sizeof stops / sizeof stops[0]; ++k) simd = simd && !og_idents_has(&used, stops[k]);
  og_idents_free(&used);
  return simd;
}

const og_body *og_plan_cpu_body(const og_op *op) { return op->cpu.present ? &op->cpu : &op->kernel; }

void og_plan_op(const og_op *op, og_op_plan *plan) {
  plan->has_cuda = op->ncuda > 0 || op->kernel.present;
  /* A portable kernel without scratch (which is one element's) runs a natively batched
   * call in one launch (opspec_op_desc.cuda_batch_grid): the batch runs along the grid's
   * z for 1 or 2 launch dims, and in each thread's loop for 3, whose launch takes z. */
  plan->cuda_batch_grid = !op->ncuda && op->kernel.present && !op->nscratch;
  plan->cpu_portable = !op->cpu.present;
  plan->cpu_simd = plan->cpu_portable && og_plan_cpu_simd(op);
  plan->body_shared = !op->cpu.present && !op->ncuda;
  /* `fastmath:` reaches the CPU file only: nvcc's kernels follow their own flags. */
  plan->fastmath = op->fastmath;
  plan->rejects = og_op_rejects(op);
  plan->nvariants = og_op_nvariants(op);
  og_buf body = {0}, prologue = {0};
  og_lowp_stop stop;
  const og_body *where;
  plan->cpu_lowp = og_lowp_rewrite_op(op, &body, &prologue, &stop, &where);
  free(stop.what);
  og_buf_free(&body);
  og_buf_free(&prologue);
  /* Where the loop cannot convert, bfloat16 arrays reach the kernel as float copies, as
   * do fixed-dtype bfloat16 ones (which only the widening path reads). */
  bool bf16 = false;
  for (size_t t = 0; t < op->ntypes; ++t)
    for (size_t c = 0; c < op->types[t].nchoices; ++c) bf16 |= !strcmp(op->types[t].choices[c], "bfloat16");
  const og_array *lists[] = {op->inputs, op->outputs};
  size_t counts[] = {op->ninputs, op->noutputs};
  for (size_t l = 0; l < 2; ++l)
    for (size_t i = 0; i < counts[l]; ++i) bf16 |= lists[l][i].typevar < 0 && !strcmp(lists[l][i].dtype, "bfloat16");
  plan->widens_bfloat16 = bf16 && !plan->cpu_lowp;
  plan->cpu_tiles = og_tiles_plan(op, plan, &plan->tiles);
  og_spans spans; /* the renderer plans them again for their details, as it rewrites the body again */
  plan->cpu_spans = og_spans_plan(op, plan, &spans);
  og_spans_free(&spans);
}
