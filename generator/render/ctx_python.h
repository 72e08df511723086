/* The Python side of an op (render/ctx_python.c), as lines for ops.py and ops.pyi. */
#ifndef OG_CTX_PYTHON_H
#define OG_CTX_PYTHON_H

#include "model/model.h"
#include "render/value.h"

/* The op's record (with the fingerprint of its generated code, in hex) and function,
 * formatted as ruff formats them. */
og_value *og_ctx_python(const og_op *op, const char *fingerprint);
/* The op's typed stub. */
og_value *og_ctx_stub(const og_op *op);

#endif /* OG_CTX_PYTHON_H */
