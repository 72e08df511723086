/* The handler file of an op as template values (render/ctx_ffi.c). */
#ifndef OG_CTX_FFI_H
#define OG_CTX_FFI_H

#include "model/model.h"
#include "plan/plan.h"
#include "render/value.h"

/* Sets the keys of the handler file on `v`: ffi_tables, ffi_functions, ffi_desc. */
void og_ctx_ffi(const og_op *op, const og_op_plan *plan, og_value *v);

#endif /* OG_CTX_FFI_H */
