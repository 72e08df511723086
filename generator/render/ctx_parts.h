/* The emitters: pure functions from the op model to the pieces of text the templates
 * print. Templates only substitute these values and iterate over these lists; every
 * decision about what the generated code says is taken here, in C, once.
 *
 *   emit_ctx.c     the context of each template, and the Python stubs
 *   emit_kernels.c the kernels: the body include, the CPU variants, the CUDA file
 *   emit_ffi.c     the handler tables and the generated halves of the handlers
 */
#ifndef OG_EMIT_PARTS_H
#define OG_EMIT_PARTS_H

#include "check/c_idents.h"
#include "model/model.h"
#include "render/value.h"

/* A list of lines (strings without their newline). */
og_value *og_lines(void);
void og_line(og_value *lines, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A list of zero or one empty map: how a template prints a part only where it applies
 * ({% for yes in op.with_cuda %} ... {% endfor %}). */
og_value *og_when(bool condition);

/* The C type of a dtype name ("float32" -> "float"), or NULL. */
const char *og_dtype_ctype(const char *dtype);
/* The XLA code of a dtype as generated code names it: "OPSPEC_DT_float32". */
void og_dtype_enum(og_buf *out, const char *dtype);
/* The C element type of an array: its type variable's name or its dtype's C type. */
const char *og_array_ctype(const og_array *a);
/* An expression in plain C with names as they are (locals of a kernel or launcher). */
og_value *og_c_expr(const og_expr *e);
/* An expression with checked arithmetic and names read from `args->`. */
og_value *og_c_expr_checked(const og_expr *e);
/* The spec's spelling of an expression, as a C string literal's body. */
og_value *og_spec_text(const og_expr *e);

/* Whether the op's CUDA launcher runs a natively batched call whole, in one launch
 * (opspec_op_desc.cuda_batch_grid): a portable kernel without scratch (which is one
 * element's). The batch runs along the grid's z for 1 or 2 launch dims, and in each
 * thread's loop for 3, whose launch takes z. */
bool og_cuda_batch_grid(const og_op *op);

/* Sets the keys of the kernel files on `v` (the op's map): body_inc, cpu_variants,
 * cpu_lines, cuda_kernels, cuda_launch, ... (see the function). */
void og_emit_kernels(const og_op *op, og_value *v);
/* Sets the keys of the handler file on `v`: ffi_tables, ffi_functions, ffi_desc. */
void og_emit_ffi(const og_op *op, og_value *v);

#endif /* OG_EMIT_PARTS_H */
