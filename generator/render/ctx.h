/* The op model and its plan as template values (render/ctx.c).
 *
 * Templates substitute values, test facts and iterate over lists; everything they print
 * that needs a decision was decided by the planner (plan/plan.h) and spelt here.
 */
#ifndef OG_CTX_H
#define OG_CTX_H

#include "model/model.h"
#include "plan/plan.h"
#include "render/value.h"

/* One op's map: what its own templates read as `op`. */
og_value *og_ctx_op(const og_op *op, const og_op_plan *plan);
/* Adds to an op's map what the library's Python files read, which needs the op's
 * fingerprint (known once its own files are rendered): fingerprint, py. */
void og_ctx_op_python(og_value *v, const og_op *op, const char *fingerprint);
/* The context of the whole-library templates (registry, Python stubs): {"ops": `ops`}
 * (a list of op maps in name order, taken over) and the limits and vocabularies. */
og_value *og_ctx_library(og_value *ops);

#endif /* OG_CTX_H */
