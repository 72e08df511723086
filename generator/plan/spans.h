/* float16 row spans: whether an op with a 2-D launch runs its float16 variants on float
 * spans of its rows (runtime/include/opspec/lowp.h, OPSPEC_CPU_SPAN_FLOATS) instead of
 * converting each element in its loop with a call (plan/lowp.h).
 *
 * A row-wise body such as rope's reads `x[i * dim + j]` and `x[i * dim + half + j]`:
 * for a row i, each read runs over a slice `base .. base + J` of x, where `base` does
 * not depend on j and J is the inner launch extent. Where every float16 array is named
 * only so, the kernel can work out, for a block of rows, the span of elements each such
 * array reads or writes: it evaluates the bases row by row (the body's leading integer
 * constants first), widens each input's span once with F16C (8 or 16 elements an
 * instruction), runs the rows on float spans, and narrows each output's span once. The
 * in-loop form spends a call per 8 or 16 elements on each load and store, and saves its
 * live vector registers around every one; the float loop between the spans has none.
 * The values are the in-loop form's: each float16 element widened exactly, the body
 * computed in float as written, each stored value rounded once.
 *
 * What the plan requires (docs/spec.md, "float16 row spans"), so that a span holds only
 * elements the rows read, or all that they write:
 * - a 2-D launch, a portable body that vectorises (plan.h's cpu_simd) with the in-loop
 *   rewrite done (cpu_lowp), no `in_kernel` check, no scratch, no prologue, no alias;
 * - no branch of any kind in the body (`if`, `?:`, `&&`, `||`, a block): every read
 *   and every store runs for every index, so a read span holds elements the body reads
 *   anyway, and a stored span is written whole;
 * - every float16 array named only as `a[E]` with E `j`, `P + j` or `j + P`, where P
 *   names only `i`, shape symbols, integer attributes, `<array>_size` and the body's
 *   leading constants (`const int64_t name = ...;` made of the same), with `+ - * / %`
 *   outside parentheses; inputs read so, outputs only stored so (`y[P + j] = v;`);
 * - `i` and those names never assigned in the body; at most OG_SPAN_MAX_ARRAYS arrays.
 * At run time a block grows by rows while each input's span fits its part of
 * OPSPEC_CPU_SPAN_FLOATS and each output's slices follow one another with no gap or
 * overlap; a row that fits no span runs converting in its loop, as any other op does. */
#ifndef OG_PLAN_SPANS_H
#define OG_PLAN_SPANS_H

#include <stdbool.h>
#include <stddef.h>

#include "model/model.h"
#include "util/buf.h"

struct og_op_plan; /* plan/plan.h */

#define OG_SPAN_MAX_ARRAYS 8
#define OG_SPAN_MAX_SLICES 32

/* One slice of a row: array `array` (an index among the inputs, then the outputs) at
 * `base .. base + J`; `base` as the body writes it ("0" for `a[j]`). */
typedef struct og_span_slice {
  size_t array;
  char *base;
} og_span_slice;

typedef struct og_spans {
  og_span_slice reads[OG_SPAN_MAX_SLICES];  /* one per distinct input slice */
  og_span_slice writes[OG_SPAN_MAX_SLICES]; /* one per store, in the body's order */
  size_t nreads, nwrites;
  size_t arrays[OG_SPAN_MAX_ARRAYS]; /* the arrays with a span: inputs, then outputs */
  size_t narrays;
  size_t hoisted_end;                   /* the bytes of the body its leading constants take */
  char *unread[OG_SPAN_MAX_SLICES + 1]; /* `i` or a constant no base reads: (void) in the pass over a block */
  size_t nunread;
  og_buf body; /* the body for the spans: each `a[E]` read from a[E]'s span */
} og_spans;

/* Whether `op`'s float16 variants run on row spans (`spans` filled; free it with
 * og_spans_free). Reads the plan's other CPU facts. */
bool og_spans_plan(const og_op *op, const struct og_op_plan *plan, og_spans *spans);
void og_spans_free(og_spans *spans);

/* Whether variant `pick` (a choice per type variable) runs on spans, given that the op
 * does: every type variable that may be 2-byte is float16 there. */
bool og_spans_variant(const og_op *op, const size_t *pick);

#endif /* OG_PLAN_SPANS_H */
