/* The rewrite that lets a bfloat16 or float16 variant of a body compute in float while
 * its arrays keep their 2-byte form (runtime/include/opspec/lowp.h, docs/spec.md
 * "bfloat16 and float16 on CPU"): every element read `x[idx]` of such an array becomes OPSPEC_LOAD_T(x[idx]),
 * every statement store `x[idx] = rhs` becomes `x[idx] = OPSPEC_STORE_T(rhs)`, and a
 * compound `x[idx] op= rhs` (idx without side effects) becomes
 * `x[idx] = OPSPEC_STORE_T(OPSPEC_LOAD_T(x[idx]) op (rhs))`, where T is the array's
 * type variable. A local `[const] T *[restrict] p = x [+|- e]` is such an array too; its
 * `T` becomes OPSPEC_STORAGE_T, the 2-byte type.
 *
 * Any other use of such a name (a pointer dereferenced, incremented, passed on or cast,
 * an element's address, a store inside an expression, `sizeof` of T or of an element,
 * a directive that names it) cannot be rewritten soundly: the rewrite stops there and
 * says where and why, and the op keeps the widening path. Tokens from c_tokens.h; the
 * text between tokens (blanks, comments, line breaks) is copied, so lines stay lines.
 */
#ifndef OG_C_LOWP_H
#define OG_C_LOWP_H

#include <stdbool.h>
#include <stddef.h>

#include "util/buf.h"
#include "util/c_idents.h"

/* The arrays a rewrite knows, growing with the pointer locals it finds: `typevar` NULL
 * marks a name that may not be used at all (a fixed-dtype bfloat16 array). */
typedef struct og_lowp_names {
  struct {
    char *name, *typevar;
  } * items;
  size_t n, cap;
} og_lowp_names;

void og_lowp_names_add(og_lowp_names *names, const char *name, const char *typevar);
void og_lowp_names_free(og_lowp_names *names);

/* Why a rewrite stopped: the use at `line` (from 0 within the code) and `col` (from 1),
 * and what it is, in words (`what`, owned). */
typedef struct og_lowp_stop {
  int line, col;
  char *what;
} og_lowp_stop;

/* Rewrites `code` into `out`; `typevars` are the type variables that may be 2-byte.
 * Adds the pointer locals it declares to `names` (so that a prologue's reach its body).
 * False, with `stop` filled (free stop->what), where a use cannot be rewritten. */
bool og_lowp_rewrite(const char *code, og_lowp_names *names, const og_idents *typevars, og_buf *out,
                     og_lowp_stop *stop);

#endif /* OG_C_LOWP_H */
