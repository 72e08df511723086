/* Derivative formulas (spec key `derivatives:`) are Python expressions, evaluated at
 * trace time with jnp. The generator cannot run Python, so it checks what it can: the
 * tokens, the brackets, that operands and operators alternate, and every name the
 * formula reads, which the spec checker then resolves against the op (py_formula.c). */
#ifndef OG_PY_FORMULA_H
#define OG_PY_FORMULA_H

#include <stddef.h>

/* A name a formula reads: not an attribute after '.', not a keyword argument's name. */
typedef struct og_py_name {
  char *name;
  size_t offset; /* bytes into the formula */
} og_py_name;

typedef struct og_py_scan {
  og_py_name *names;
  size_t nnames;
  const char *error; /* NULL, or why the formula is not an expression opspec accepts */
  size_t error_offset;
} og_py_scan;

/* Scans `text`; on a problem stops and sets error. Free with og_py_scan_free. */
void og_py_scan_formula(const char *text, og_py_scan *scan);
void og_py_scan_free(og_py_scan *scan);

#endif /* OG_PY_FORMULA_H */
