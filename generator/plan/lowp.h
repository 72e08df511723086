/* bfloat16 and float16 on CPU: whether an op's kernel computes in float with 2-byte
 * loads and stores in its loop (util/c_lowp.h, runtime/include/opspec/lowp.h), or, where
 * its body uses such an array otherwise, as before: bfloat16 arrays widened to float
 * copies by the handler, float16 computed in _Float16. */
#ifndef OG_PLAN_LOWP_H
#define OG_PLAN_LOWP_H

#include <stdbool.h>

#include "model/model.h"
#include "util/buf.h"
#include "util/c_lowp.h"
#include "util/diag.h"

/* Whether type variable `t` may bind bfloat16 or float16. */
bool og_lowp_typevar(const og_typevar *t);

/* Whether some type variable of `op` may bind bfloat16 or float16. */
bool og_lowp_any(const og_op *op);

/* The CPU body (and a portable kernel's prologue) of `op` rewritten for its 2-byte
 * variants, into `body` and `prologue`: true; false where a use stops the rewrite
 * (`stop`, free stop->what; `where` the body it is in), or where no type variable may
 * be 2-byte (stop->what NULL). */
bool og_lowp_rewrite_op(const og_op *op, og_buf *body, og_buf *prologue, og_lowp_stop *stop, const og_body **where);

/* A note on `d` where `op` has 2-byte variants that cannot take the in-loop path:
 * the use, and what it costs. */
void og_lowp_note(const og_op *op, og_diag *d);

#endif /* OG_PLAN_LOWP_H */
