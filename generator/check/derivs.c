/* The checking half of `derivatives:` (docs/gradients.md): every name a formula reads
 * resolves, and the inputs and outputs it differentiates are floating point. */
#include "check/derivs.h"

#include <stdio.h>
#include <string.h>

#include "model/dtype.h"

/* What a formula may read besides the op's arrays, attributes and symbols, and the
 * tangents and cotangents of its kind: the modules the runtime passes in, and the
 * Python builtins a shape computation needs. */
static const char *const og_formula_modules[] = {"jnp", "lax", "jax", "np", "ops"};

static const char *const og_formula_builtins[] = {"abs", "float", "int", "len", "max", "min", "range", "sum", "tuple"};

static bool og_listed(const char *name, const char *const *list, size_t n) {
  for (size_t i = 0; i < n; ++i)
    if (strcmp(list[i], name) == 0) return true;
  return false;
}

static bool og_is_array(const og_array *arrays, size_t n, const char *name) {
  for (size_t i = 0; i < n; ++i)
    if (arrays[i].name && strcmp(arrays[i].name, name) == 0) return true;
  return false;
}

/* "<array>_<suffix>" for an array of `arrays`. */
static bool og_is_suffixed(const og_array *arrays, size_t n, const char *name, const char *suffix) {
  size_t len = strlen(name), slen = strlen(suffix);
  if (len <= slen || strcmp(name + len - slen, suffix) != 0) return false;
  for (size_t i = 0; i < n; ++i)
    if (arrays[i].name && strlen(arrays[i].name) == len - slen && strncmp(arrays[i].name, name, len - slen) == 0)
      return true;
  return false;
}

/* What every formula may read: the op's arrays, attributes and symbols, the modules and
 * the builtins. */
static bool og_op_formula_name(const og_op *op, const char *name) {
  return og_is_array(op->inputs, op->ninputs, name) || og_is_array(op->outputs, op->noutputs, name) ||
         og_op_attr(op, name) || og_op_symbol(op, name) >= 0 || og_listed(name, og_formula_modules, 5) ||
         og_listed(name, og_formula_builtins, sizeof og_formula_builtins / sizeof *og_formula_builtins);
}

/* Whether `name` is one of the first `n` lets. */
static bool og_is_let(const og_op *op, size_t n, const char *name) {
  for (size_t i = 0; i < n && i < op->nlets; ++i)
    if (strcmp(op->lets[i].name, name) == 0) return true;
  return false;
}

static bool og_py_identifier(const char *s) {
  static const char *const keywords[] = {
      "False",    "None",   "True",  "and",  "as",     "assert",   "async",   "await", "break", "class",
      "continue", "def",    "del",   "elif", "else",   "except",   "finally", "for",   "from",  "global",
      "if",       "import", "in",    "is",   "lambda", "nonlocal", "not",     "or",    "pass",  "raise",
      "return",   "try",    "while", "with", "yield",  "match",    "case"};
  if (!*s || (*s >= '0' && *s <= '9')) return false;
  for (const char *c = s; *c; ++c)
    if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '_')) return false;
  return !og_listed(s, keywords, sizeof keywords / sizeof *keywords);
}

/* `let:` names: each a Python name of its own that hides nothing a formula reads; its
 * formula reads what every formula reads and the lets before it (not the tangents or
 * cotangents: one let serves every kind of formula). */
static void og_check_lets(const og_op *op, og_diag *d) {
  for (size_t i = 0; i < op->nlets; ++i) {
    const og_let *let = &op->lets[i];
    bool hides = og_op_formula_name(op, let->name) || og_is_suffixed(op->inputs, op->ninputs, let->name, "_dot") ||
                 og_is_suffixed(op->outputs, op->noutputs, let->name, "_bar");
    if (!og_py_identifier(let->name))
      og_diag_error(d, let->loc, "let name '%s' is not a Python name (letters, digits and '_', not a keyword)",
                    let->name);
    else if (hides)
      og_diag_error(d, let->loc,
                    "let name '%s' is already a name formulas read (an input, output, attribute, shape symbol, "
                    "tangent, cotangent, module or builtin): rename the let",
                    let->name);
    else if (og_is_let(op, i, let->name))
      og_diag_error(d, let->loc, "let name '%s' is given twice", let->name);
    const og_formula *fm = &let->formula;
    for (size_t k = 0; k < fm->nnames; ++k) {
      const char *name = fm->names[k];
      if (og_op_formula_name(op, name) || og_is_let(op, i, name)) continue;
      og_diag_error(d, fm->name_locs[k],
                    "unknown name '%s' in let '%s' (a let reads the op's inputs, outputs, attributes and shape "
                    "symbols, the lets before it, and jnp, lax, jax, np, ops; not tangents or cotangents)",
                    name, let->name);
    }
  }
}

void og_check_derivatives(const og_op *op, og_diag *d) {
  og_check_lets(op, d);
  if (!op->nderivs) return;
  /* A formula reads arrays by name beside jnp, lax, ...: no array may hide one. */
  for (size_t r = 0; r < 2; ++r) {
    const og_array *arrays = r ? op->outputs : op->inputs;
    size_t n = r ? op->noutputs : op->ninputs;
    for (size_t i = 0; i < n; ++i)
      if (arrays[i].name && og_listed(arrays[i].name, og_formula_modules, 5))
        og_diag_error(d, arrays[i].loc, "'%s' is the module %s in derivative formulas: rename the %s", arrays[i].name,
                      arrays[i].name, r ? "output" : "input");
  }
  for (size_t i = 0; i < op->nderivs; ++i) {
    const og_derivative *dv = &op->derivs[i];
    const og_array *in = &op->inputs[dv->input];
    if (!og_array_dtypes_all(op, in, og_dtype_is_float))
      og_diag_error(d, dv->loc, "input '%s' is not floating point: integer and bool inputs have no derivative",
                    in->name);
    for (size_t j = 0; j < i; ++j)
      if (op->derivs[j].input == dv->input) og_diag_error(d, dv->loc, "input '%s' has two derivatives", in->name);
    for (size_t f = 0; f < dv->nformulas; ++f) {
      const og_formula *fm = &dv->formulas[f];
      if (fm->output >= 0 && !og_array_dtypes_all(op, &op->outputs[fm->output], og_dtype_is_float))
        og_diag_error(d, fm->loc, "output '%s' is not floating point: it has no tangent", op->outputs[fm->output].name);
      for (size_t k = 0; k < fm->nnames; ++k) {
        const char *name = fm->names[k];
        bool known = og_op_formula_name(op, name) || og_is_let(op, op->nlets, name);
        char want[OPSPEC_MAX_NAME + 8];
        snprintf(want, sizeof want, "%s_dot", in->name);
        if (dv->kind == OG_DERIV_JVP && strcmp(name, want) == 0) known = true;
        if (dv->kind == OG_DERIV_TRANSPOSE && og_is_suffixed(op->outputs, op->noutputs, name, "_bar")) known = true;
        if (!known)
          og_diag_error(d, fm->name_locs[k],
                        "unknown name '%s' in the %s derivative of input '%s' (a formula reads the op's inputs, "
                        "outputs, attributes and shape symbols%s%s, and jnp, lax, jax, np, ops)",
                        name, og_deriv_kind_names[dv->kind], in->name,
                        dv->kind == OG_DERIV_JVP         ? ", the tangent <input>_dot"
                        : dv->kind == OG_DERIV_TRANSPOSE ? ", the outputs' cotangents <output>_bar"
                                                         : "",
                        op->nlets ? ", the names 'let' gives" : "");
      }
    }
  }
}
