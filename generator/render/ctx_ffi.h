/* The handler file of an op as template values (render/ctx_ffi.c). */
#ifndef OG_CTX_FFI_H
#define OG_CTX_FFI_H

#include "model/model.h"
#include "plan/plan.h"
#include "render/value.h"

/* Sets the records of the handler file on `v`: ffi_tables, ffi_functions, the
 * descriptor's desc_arrays, desc_tables, desc_functions, aliases and facts. */
void og_ctx_ffi(const og_op *op, const og_op_plan *plan, og_value *v);

#endif /* OG_CTX_FFI_H */
