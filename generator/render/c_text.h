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

/* The column limit of generated C and CUDA: .clang-format's ColumnLimit. */
#define OG_C_COLUMNS 120

/* `lead`, then `items` separated by ", ", then `close`, laid out as clang-format lays it
 * out (.clang-format): on one line where it fits, else, with `one_per_line`, one item a
 * line (clang-format's layout of designated initializers), or bin-packed; the lines
 * after the first aligned under the first item. `lead` holds the line's indentation.
 * Lines as records {lead, items {text, sep}, close}: `sep` ", " between items on a line
 * and "," at a line's end; `close` is empty except on the last line. */
og_value *og_wrap(const char *lead, const char *const *items, size_t n, const char *close, bool one_per_line);
/* og_wrap, its lines appended to `lines`. */
void og_wrap_into(og_value *lines, const char *lead, const char *const *items, size_t n, const char *close,
                  bool one_per_line);
/* A call or a function head, `indent` then `head` (ending in '('), `items` and `close`,
 * as clang-format lays it out where it does not fit one line: either aligned under the
 * first item (og_wrap), or with every item after a break that follows `head`, 4 columns
 * further in, bin-packed. clang-format keeps the aligned form while it takes at most
 * `slack` lines more than the other: 1 for a call, 3 for a function's head (clang-format
 * 14 with .clang-format: measured on random lists; tests/c/test_value.c holds the edges). */
og_value *og_wrap_broken(const char *indent, const char *head, const char *const *items, size_t n, const char *close,
                         size_t slack);
#define OG_SLACK_CALL 1
#define OG_SLACK_HEAD 3
/* The head of a counting loop, "for (int64_t INDEX = BEGIN; INDEX < END; STEP)" and " {"
 * where it opens a block, as og_wrap's lines (`sep` "; " or ";"), wrapped at the
 * semicolons as clang-format wraps it. `indent` is the line's indentation. */
og_value *og_for_head(const char *indent, const char *index, const char *begin, const char *end, const char *step,
                      bool opens_block);
/* The columns of og_wrap's text on one line. */
size_t og_wrap_width(const char *lead, const char *const *items, size_t n, const char *close);
/* og_wrap of a list value of strings, its lines appended to `lines`. */
void og_wrap_list(og_value *lines, const char *lead, const og_value *items, const char *close, bool one_per_line);

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
