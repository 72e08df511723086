/* The op model as template values.
 *
 * Templates hold no logic beyond loops and conditionals, so everything they print that
 * needs a decision (a C type, a descriptor initialiser, an expression in C or Python
 * spelling, whether a pointer may be restrict) is decided here, once.
 */
#ifndef OG_EMIT_CTX_H
#define OG_EMIT_CTX_H

#include "model.h"
#include "value.h"

/* The context of one op's templates: {"op": {...}}. */
og_value *og_ctx_op(const og_op *op);
/* The context of the whole-library templates (registry, Python stubs):
 * {"ops": [op, ...]} with ops sorted by name. */
og_value *og_ctx_library(og_op *const *ops, size_t nops);

/* The C type of a dtype name, or NULL. */
const char *og_dtype_ctype(const char *dtype);

#endif /* OG_EMIT_CTX_H */
