/* The op model as template values.
 *
 * Templates only substitute values and iterate over lists, so everything they print
 * that needs a decision (a declaration, a table row, an expression in C or Python
 * spelling, whether a part applies at all) is decided by the emitters (emit_parts.h).
 */
#ifndef OG_EMIT_CTX_H
#define OG_EMIT_CTX_H

#include "model/model.h"
#include "render/value.h"

/* The context of one op's templates: {"op": {...}}. */
og_value *og_ctx_op(const og_op *op);
/* The context of the whole-library templates (registry, Python stubs):
 * {"ops": [op, ...]} with ops sorted by name. */
og_value *og_ctx_library(og_op *const *ops, size_t nops);

#endif /* OG_EMIT_CTX_H */
