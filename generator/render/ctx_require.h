/* `require:` as template values (render/ctx_require.c): the handler's check of each
 * condition for raw calls, and the record's conditions the binder checks at trace time. */
#ifndef OG_CTX_REQUIRE_H
#define OG_CTX_REQUIRE_H

#include "model/model.h"
#include "render/value.h"

/* The handler's checks, in the spec's order: each {test, call}: the C condition over
 * `args`, and og_wrap's lines of the opspec_error call that a call failing it returns
 * (its message names the condition as written and the values of the names it reads). */
og_value *og_ctx_require_c(const og_op *op);
/* The record's `require=`: each {text, names, test}: the condition as written (a Python
 * string's body), the tuple of names it reads and the Python condition over `s`. */
og_value *og_ctx_require_py(const og_op *op);

#endif /* OG_CTX_REQUIRE_H */
