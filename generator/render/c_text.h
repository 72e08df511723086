/* Pieces of generated text that every renderer needs (render/c_text.c): the renderers
 * (ctx.c, ctx_kernels.c, ctx_ffi.c, ctx_python.c) call these, never each other. */
#ifndef OG_C_TEXT_H
#define OG_C_TEXT_H

#include <stdbool.h>

#include "model/model.h"
#include "render/value.h"
#include "util/buf.h"

/* A list of lines (strings without their newline). */
og_value *og_lines(void);
void og_line(og_value *lines, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The C type of a dtype name ("float32" -> "float"), or NULL. */
const char *og_dtype_ctype(const char *dtype);
/* The XLA code of a dtype as generated code names it: "OPSPEC_DT_float32". */
void og_dtype_enum(og_buf *out, const char *dtype);
/* The C element type of an array: its type variable's name or its dtype's C type. */
const char *og_array_ctype(const og_array *a);
/* An expression in plain C with names as they are (locals of a kernel or launcher). */
og_value *og_c_expr(const og_expr *e);
/* An expression with checked arithmetic and names read from `args->` (NAME_size, for
 * an array NAME of `op`, from args->NAME.size). */
og_value *og_c_expr_checked(const og_op *op, const og_expr *e);
/* The spec's spelling of an expression, as a C string literal's body. */
og_value *og_spec_text(const og_expr *e);
/* `text` through `escape` (util/escape.h), as a string value. */
og_value *og_escaped(void (*escape)(og_buf *, const char *), const char *text);

#endif /* OG_C_TEXT_H */
