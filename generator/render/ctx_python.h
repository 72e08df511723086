/* The Python side of an op (render/ctx_python.c), for ops.py and ops.pyi. */
#ifndef OG_CTX_PYTHON_H
#define OG_CTX_PYTHON_H

#include "model/model.h"
#include "render/value.h"

/* What ops.py and ops.pyi say of the op, formatted as ruff formats them: {record (the
 * op record's lines, with the fingerprint of its generated code in hex), params,
 * typed_params, returns, doc {one_line, multi, first, rest}, call {one_line, inputs,
 * attrs}}. */
og_value *og_ctx_python(const og_op *op, const char *fingerprint);

#endif /* OG_CTX_PYTHON_H */
