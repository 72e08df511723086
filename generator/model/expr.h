/* Shape expressions: the small integer language of output shapes, launch extents,
 * grid/block sizes, scratch sizes and shared-memory sizes.
 *
 *   expr  := term (('+' | '-') term)*
 *   term  := unary (('*' | '/' | '%') unary)*
 *   unary := '-' unary | atom
 *   atom  := INT | NAME | NAME '(' expr (',' expr)* ')' | '(' expr ')'
 *
 * At most OPSPEC_MAX_EXPR_NODES terms and operators, nested at most
 * OPSPEC_MAX_EXPR_DEPTH deep (opspec/limits.h).
 * Values are int64 and non-negative in practice; '/' and '%' are integer division
 * (C semantics, which equal Python's // and % on non-negative operands).
 * Functions: min(a, b), max(a, b), cdiv(a, b) (ceiling division).
 * NAME is [A-Za-z_][A-Za-z0-9_]*: a shape symbol, an integer attribute, or a derived
 * name such as x_size; the parser does not judge names, the loader does.
 */
#ifndef OG_EXPR_H
#define OG_EXPR_H

#include <stdbool.h>
#include <stdint.h>

#include "util/buf.h"
#include "util/diag.h"

typedef enum og_expr_kind {
  OG_E_INT,  /* ival */
  OG_E_NAME, /* name */
  OG_E_NEG,  /* -a */
  OG_E_BIN,  /* a op b, op one of + - * / % */
  OG_E_CALL, /* name(a, b): min, max, cdiv */
} og_expr_kind;

typedef struct og_expr {
  og_expr_kind kind;
  og_loc loc; /* where this node starts */
  int64_t ival;
  char *name; /* OG_E_NAME variable, OG_E_CALL function */
  char op;    /* OG_E_BIN */
  struct og_expr *a, *b;
} og_expr;

/* Parses `text`, which starts at `loc` in its source (a single line). Reports syntax
 * errors (with the column of the offending character) and unknown functions or wrong
 * argument counts through `d`; returns NULL then. */
og_expr *og_expr_parse(const char *text, og_loc loc, og_diag *d);
void og_expr_free(og_expr *e);

/* Calls `fn` for every variable name, in order of appearance. */
typedef void og_expr_name_fn(const og_expr *name_node, void *ud);
void og_expr_visit_names(const og_expr *e, og_expr_name_fn *fn, void *ud);
/* Whether `e` (NULL: none) names the variable `name`. */
bool og_expr_names(const og_expr *e, const char *name);

/* How to spell a variable when rendering; NULL means "as is". */
typedef void og_expr_spell_fn(og_buf *out, const char *name, void *ud);

/* Renders as a C expression of type int64_t (min/max/cdiv become the runtime's
 * opspec_min / opspec_max / opspec_cdiv). Parenthesised only where needed. */
void og_expr_render_c(const og_expr *e, og_buf *out, og_expr_spell_fn *spell, void *ud);
/* Renders as a spec writes it, for messages: normalised spacing and parentheses,
 * min / max / cdiv by their own names. */
void og_expr_render_spec(const og_expr *e, og_buf *out);
/* Renders as a C expression in which every operation is checked: each becomes a call
 * of opspec_safe_add / _sub / _mul / _div / _mod / _neg / _min / _max / _cdiv, which
 * give OPSPEC_SIZE_INVALID on division by zero or int64 overflow. Handlers compute
 * every size this way before any kernel computes the same sizes with plain operators. */
void og_expr_render_c_checked(const og_expr *e, og_buf *out, og_expr_spell_fn *spell, void *ud);
/* Renders as a Python expression ('/' becomes '//', cdiv(a, b) becomes -(-(a) // (b)),
 * min and max become _min and _max, which the stub module binds to the builtins so an op
 * named max cannot shadow them). */
void og_expr_render_py(const og_expr *e, og_buf *out, og_expr_spell_fn *spell, void *ud);

/* Evaluates with variables from `lookup` (returns false if unknown). Returns false on an
 * unknown name or division by zero. */
typedef bool og_expr_lookup_fn(const char *name, int64_t *value, void *ud);
bool og_expr_eval(const og_expr *e, og_expr_lookup_fn *lookup, void *ud, int64_t *out);

/* Reports (as "<what> divides by zero" or "... overflows int64") every constant part of
 * `e` that cannot be computed. Returns false if it reported anything. */
bool og_expr_check_constants(const og_expr *e, const char *what, og_diag *d);

/* True if the expression is a bare integer literal or a bare name. */
bool og_expr_is_atom(const og_expr *e);

#endif /* OG_EXPR_H */
