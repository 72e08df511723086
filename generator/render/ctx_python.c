/* The Python side of an op: its record (opspec._runtime.Op) and function in ops.py, and
 * its stub in ops.pyi. */
#include "render/ctx_python.h"
#include "render/ctx_require.h"

#include <stdlib.h>
#include <string.h>

#include "render/c_text.h"
#include "util/escape.h"

/* Formatting follows ruff's (line length 120, see ruff.toml), so that the generated
 * module is already formatted: a list is written on one line when it fits and has one
 * item, else one item per line with a trailing comma. */
#define OG_PY_LINE 120

static void og_spell_py(og_buf *out, const char *name, void *ud) {
  (void)ud;
  og_buf_printf(out, "s[\"%s\"]", name);
}

static char *og_py_dims(const og_array *a) {
  og_buf b = {0};
  og_buf_putc(&b, '(');
  for (size_t d = 0; d < a->ndims; ++d) {
    const og_dim *dim = &a->dims[d];
    if (d) og_buf_puts(&b, ", ");
    if (dim->kind == OG_DIM_ELLIPSIS)
      og_buf_puts(&b, "...");
    else if (dim->kind == OG_DIM_INT)
      og_buf_printf(&b, "%lld", (long long)dim->value);
    else if (dim->kind == OG_DIM_SYM)
      og_buf_printf(&b, "\"%s\"", dim->name);
    else if (dim->expr->kind == OG_E_INT)
      og_buf_printf(&b, "%lld", (long long)dim->expr->ival);
    else if (dim->expr->kind == OG_E_NAME) /* a symbol or an int attribute, passed through */
      og_buf_printf(&b, "\"%s\"", dim->expr->name);
    else {
      og_buf_puts(&b, "lambda s: ");
      og_expr_render_py(dim->expr, &b, og_spell_py, NULL);
    }
  }
  if (a->ndims == 1) og_buf_putc(&b, ',');
  og_buf_putc(&b, ')');
  return og_buf_take(&b);
}

/* An input's `check:` as `, check=_Check(...)`: what its contents must satisfy, which
 * opspec.testing.check_op reads to make valid example data. Nothing without. */
static void og_py_check(og_buf *b, const og_content_check *c) {
  if (!c->present) return;
  og_buf_puts(b, ", check=_Check(");
  const char *sep = "";
  if (c->min) {
    og_buf_puts(b, "min=lambda s: ");
    og_expr_render_py(c->min, b, og_spell_py, NULL);
    sep = ", ";
  }
  if (c->max) {
    og_buf_printf(b, "%smax=lambda s: ", sep);
    og_expr_render_py(c->max, b, og_spell_py, NULL);
    sep = ", ";
  }
  if (c->sorted) og_buf_printf(b, "%ssorted=True", sep);
  og_buf_puts(b, ")");
}

static og_value *og_py_arrays(const og_array *arrays, size_t n) {
  og_value *items = og_value_list();
  for (size_t i = 0; i < n; ++i) {
    char *dims = og_py_dims(&arrays[i]);
    og_buf b = {0};
    og_buf_printf(&b, "_Array(\"%s\", \"%s\", %s", arrays[i].name, arrays[i].dtype, dims);
    og_py_check(&b, &arrays[i].check);
    og_buf_puts(&b, ")");
    og_list_push(items, og_value_str_take(og_buf_take(&b)));
    free(dims);
  }
  return items;
}

/* The docstring's lines: the doc, then the attributes, escaped, without trailing
 * blanks (ruff strips them). Empty when there is nothing to say. */
static og_value *og_py_doc(const og_op *op) {
  og_buf text = {0};
  og_buf_puts(&text, op->doc);
  while (text.len && (og_buf_str(&text)[text.len - 1] == '\n' || og_buf_str(&text)[text.len - 1] == ' ')) text.len--;
  og_buf trimmed = {0};
  og_buf_append(&trimmed, og_buf_str(&text), text.len);
  og_buf_free(&text);
  if (op->nattrs) {
    og_buf_puts(&trimmed, trimmed.len ? "\n\nAttributes (static; compiled into the call):"
                                      : "Attributes (static; compiled into the call):");
    for (size_t i = 0; i < op->nattrs; ++i) {
      const og_attr *a = &op->attrs[i];
      og_buf_printf(&trimmed, "\n    %s (%s", a->name, og_attr_types[a->type].name);
      if (a->has_default) og_buf_printf(&trimmed, ", default %s", a->default_py);
      og_buf_puts(&trimmed, ")");
      if (a->doc && a->doc[0]) {
        og_buf_puts(&trimmed, ": ");
        /* Continuation lines of an attribute's doc, under its text. */
        for (const char *p = a->doc; *p; ++p) {
          if (*p == '\n' && p[1])
            og_buf_puts(&trimmed, "\n        ");
          else if (*p != '\n')
            og_buf_putc(&trimmed, *p);
        }
      }
    }
  }
  og_buf escaped = {0};
  og_escape_py_string(&escaped, og_buf_str(&trimmed));
  og_buf_free(&trimmed);
  og_value *lines = og_lines();
  const char *p = og_buf_str(&escaped);
  while (escaped.len && *p) {
    const char *eol = strchr(p, '\n');
    size_t len = eol ? (size_t)(eol - p) : strlen(p);
    while (len && (p[len - 1] == ' ' || p[len - 1] == '\t')) --len;
    og_line(lines, "%.*s", (int)len, p);
    if (!eol) break;
    p = eol + 1;
  }
  og_buf_free(&escaped);
  return lines;
}

/* The parameters of an op's function: inputs, then the attributes and `backend`
 * keyword-only. */
static og_value *og_py_params(const og_op *op, bool typed) {
  og_value *params = og_value_list();
  og_buf b = {0};
  for (size_t i = 0; i < op->ninputs; ++i) {
    og_buf_clear(&b);
    og_buf_printf(&b, "%s%s", op->inputs[i].name, typed ? ": _ArrayLike" : "");
    og_list_push(params, og_value_str(og_buf_str(&b)));
  }
  og_list_push(params, og_value_str("*"));
  for (size_t i = 0; i < op->nattrs; ++i) {
    const og_attr *a = &op->attrs[i];
    og_buf_clear(&b);
    og_buf_puts(&b, a->name);
    if (typed) og_buf_printf(&b, ": %s", og_attr_types[a->type].py_type);
    if (a->has_default) og_buf_printf(&b, typed ? " = %s" : "=%s", a->default_py);
    og_list_push(params, og_value_str(og_buf_str(&b)));
  }
  /* `backend` is a reserved name (names.c), so no spec name can take it. */
  og_list_push(params, og_value_str(typed ? "backend: _Backend | None = None" : "backend=None"));
  og_buf_free(&b);
  return params;
}

/* The body of a one-line Python string literal: og_escape_py_string's escapes, and a
 * newline (which a path may hold) as \n. */
static void og_escape_py_line(og_buf *out, const char *text) {
  og_buf escaped = {0};
  og_escape_py_string(&escaped, text);
  for (const char *p = og_buf_str(&escaped); *p; ++p)
    if (*p == '\n')
      og_buf_puts(out, "\\n");
    else
      og_buf_putc(out, *p);
  og_buf_free(&escaped);
}

/* A formula as the body of a lambda that takes the names it reads: one line, in
 * parentheses (a YAML block's line breaks become spaces). */
static void og_py_lambda(og_buf *b, const og_formula *f) {
  og_buf_puts(b, "lambda ");
  for (size_t k = 0; k < f->nnames; ++k) og_buf_printf(b, "%s, ", f->names[k]);
  og_buf_puts(b, "**_: (");
  size_t len = strlen(f->text);
  while (len && (f->text[len - 1] == '\n' || f->text[len - 1] == ' ')) --len;
  for (size_t i = 0; i < len; ++i) og_buf_putc(b, f->text[i] == '\n' || f->text[i] == '\r' ? ' ' : f->text[i]);
  og_buf_puts(b, ")");
}

/* A list of the record as ruff lays it out, as a record {is_types (false), key, one_line,
 * items}: on one line (`key=(item,),`) when it has at most one item and fits, else one
 * item a line. */
static og_value *og_py_list(const char *key, og_value *items) {
  og_buf one = {0};
  og_buf_printf(&one, "    %s=(", key);
  for (size_t i = 0; i < og_list_len(items); ++i)
    og_buf_printf(&one, "%s%s", i ? ", " : "", og_value_as_str(og_list_at(items, i)));
  og_buf_puts(&one, og_list_len(items) == 1 ? ",)," : "),");
  og_value *list = og_value_map();
  og_map_set_bool(list, "is_types", false);
  og_map_set_str(list, "key", key);
  og_map_set_bool(list, "one_line", og_list_len(items) <= 1 && one.len <= OG_PY_LINE);
  og_map_set(list, "items", items);
  og_buf_free(&one);
  return list;
}

/* {sep, ...}: an item of a list written on one line, `sep` the ", " before all but the
 * first. */
static og_value *og_py_item(size_t i) {
  og_value *item = og_value_map();
  og_map_set_str(item, "sep", i ? ", " : "");
  return item;
}

/* `types={...}`: each type variable {sep, name, choices {sep, name}, single}. */
static og_value *og_py_types(const og_op *op) {
  og_value *types = og_value_list();
  for (size_t t = 0; t < op->ntypes; ++t) {
    og_value *type = og_py_item(t), *choices = og_value_list();
    og_map_set_str(type, "name", op->types[t].name);
    for (size_t c = 0; c < op->types[t].nchoices; ++c) {
      og_value *choice = og_py_item(c);
      og_map_set_str(choice, "name", op->types[t].choices[c]);
      og_list_push(choices, choice);
    }
    og_map_set(type, "choices", choices);
    og_map_set_bool(type, "single", op->types[t].nchoices == 1);
    og_list_push(types, type);
  }
  return types;
}

static og_value *og_py_attrs(const og_op *op) {
  og_value *items = og_value_list();
  og_buf b = {0};
  for (size_t i = 0; i < op->nattrs; ++i) {
    og_buf_clear(&b);
    og_buf_printf(&b, "_Attr(\"%s\", \"%s\")", op->attrs[i].name, og_attr_types[op->attrs[i].type].name);
    og_list_push(items, og_value_str(og_buf_str(&b)));
  }
  og_buf_free(&b);
  return og_py_list("attrs", items);
}

/* `aliases={input: output, ...}`: {sep, input, output}. */
static og_value *og_py_aliases(const og_op *op) {
  og_value *aliases = og_value_list();
  for (size_t i = 0; i < op->noutputs; ++i) {
    if (op->outputs[i].alias_of < 0) continue;
    og_value *alias = og_py_item(og_list_len(aliases));
    og_map_set_int(alias, "input", op->outputs[i].alias_of);
    og_map_set_int(alias, "output", (int64_t)i);
    og_list_push(aliases, alias);
  }
  return aliases;
}

/* `derivatives={...}` (opspec._runtime.Derivative): each {input, kind, formulas {sep, key,
 * lambda, where}}, `where` the formula's place in the spec (an error while JAX traces it
 * says so). */
static og_value *og_py_derivatives(const og_op *op) {
  og_value *derivs = og_value_list();
  og_buf b = {0};
  for (size_t i = 0; i < op->nderivs; ++i) {
    const og_derivative *dv = &op->derivs[i];
    const char *input = op->inputs[dv->input].name;
    og_value *deriv = og_value_map(), *formulas = og_value_list();
    og_map_set_str(deriv, "input", input);
    og_map_set_str(deriv, "kind", og_deriv_kind_names[dv->kind]);
    for (size_t f = 0; f < dv->nformulas; ++f) {
      const og_formula *fm = &dv->formulas[f];
      og_value *formula = og_py_item(f);
      og_map_set_str(formula, "key", fm->output >= 0 ? op->outputs[fm->output].name : input);
      og_buf_clear(&b);
      og_py_lambda(&b, fm);
      og_map_set_str(formula, "lambda", og_buf_str(&b));
      og_buf_clear(&b);
      og_escape_py_line(&b, fm->loc.src ? fm->loc.src->path : op->src->path);
      og_buf_printf(&b, ":%d", fm->loc.line);
      og_map_set_str(formula, "where", og_buf_str(&b));
      og_list_push(formulas, formula);
    }
    og_map_set(deriv, "formulas", formulas);
    og_list_push(derivs, deriv);
  }
  og_buf_free(&b);
  return derivs;
}

/* `derivative_lets=(...)`: each `let:` name {name, lambda, where}, in the spec's order. */
static og_value *og_py_lets(const og_op *op) {
  og_value *lets = og_value_list();
  og_buf b = {0};
  for (size_t i = 0; i < op->nlets; ++i) {
    const og_let *let = &op->lets[i];
    og_value *item = og_value_map();
    og_map_set_str(item, "name", let->name);
    og_buf_clear(&b);
    og_py_lambda(&b, &let->formula);
    og_map_set_str(item, "lambda", og_buf_str(&b));
    og_buf_clear(&b);
    og_escape_py_line(&b, let->loc.src ? let->loc.src->path : op->src->path);
    og_buf_printf(&b, ":%d", let->loc.line);
    og_map_set_str(item, "where", og_buf_str(&b));
    og_list_push(lets, item);
  }
  og_buf_free(&b);
  return lets;
}

/* `reduce=` (how the outputs of shards combine: {sep, symbol, how}), `independent=`
 * (the dims a sharding rule may keep split: {sep, symbol}) and `halo=` (the dims it may
 * keep split exchanging edges: {sep, symbol, radii}), where the spec has them
 * (opspec/_sharding.py). */
static void og_py_sharding(const og_op *op, og_value *py) {
  og_value *reduce = og_value_list(), *independent = og_value_list();
  for (size_t r = 0; r < op->nreduce; ++r) {
    og_value *item = og_py_item(r);
    og_map_set_str(item, "symbol", op->reduce[r].symbol);
    og_map_set_str(item, "how", og_reduce_names[op->reduce[r].how]);
    og_list_push(reduce, item);
  }
  for (size_t k = 0; k < op->nindependent; ++k) {
    og_value *item = og_py_item(k);
    og_map_set_str(item, "symbol", op->independent[k].symbol);
    og_list_push(independent, item);
  }
  og_map_set(py, "reduce", reduce);
  og_map_set(py, "independent", independent);
  og_map_set_bool(py, "one_independent", op->nindependent == 1);
  og_value *halo = og_value_list();
  for (size_t k = 0; k < op->nhalo; ++k) {
    og_value *item = og_py_item(k);
    og_map_set_str(item, "symbol", op->halo[k].symbol);
    og_buf radii = {0};
    og_buf_printf(&radii, "(%lld, %lld)", (long long)op->halo[k].lo, (long long)op->halo[k].hi);
    og_map_set_str(item, "radii", og_buf_str(&radii));
    og_buf_free(&radii);
    og_list_push(halo, item);
  }
  og_map_set(py, "halo", halo);
}

/* The spec's cost formulas over the call's scope (opspec._runtime.cost): {key, value}. */
static og_value *og_py_costs(const og_op *op) {
  const og_expr *exprs[] = {op->bytes, op->flops};
  static const char *const keys[] = {"bytes", "flops"};
  og_value *costs = og_value_list();
  for (size_t c = 0; c < 2; ++c) {
    if (!exprs[c]) continue;
    og_value *cost = og_value_map();
    og_buf b = {0};
    og_expr_render_py(exprs[c], &b, og_spell_py, NULL);
    og_map_set_str(cost, "key", keys[c]);
    og_map_set(cost, "value", og_value_str_take(og_buf_take(&b)));
    og_list_push(costs, cost);
  }
  return costs;
}

/* The op's record (`_op_<name> = _Op(...)`) into `py`. */
static void og_py_record(const og_op *op, og_value *py) {
  /* The record's leading fields, in order: the lists laid out as ruff lays them out, and
   * the type variables between them. */
  og_value *fields = og_value_list(), *types = og_value_map();
  og_list_push(fields, og_py_list("inputs", og_py_arrays(op->inputs, op->ninputs)));
  og_list_push(fields, og_py_list("outputs", og_py_arrays(op->outputs, op->noutputs)));
  og_map_set_bool(types, "is_types", true);
  og_map_set(types, "types", og_py_types(op));
  og_list_push(fields, types);
  og_list_push(fields, og_py_attrs(op));
  og_map_set(py, "fields", fields);
  og_map_set_str(py, "vmap", op->vmap == OG_VMAP_NONE ? "None" : "");
  og_map_set_str(py, "vmap_name", og_vmap_names[op->vmap]);
  og_map_set(py, "aliases", og_py_aliases(op));
  og_map_set(py, "derivatives", og_py_derivatives(op));
  og_map_set(py, "lets", og_py_lets(op));
  og_map_set(py, "require", og_ctx_require_py(op));
  og_py_sharding(op, py);
  og_map_set(py, "costs", og_py_costs(op));
}

/* The docstring as a record {one_line, multi, first, rest}: one line `"""first"""`, or
 * `"""first`, the rest's lines (empty ones without indent) and `"""`; nothing when there
 * is nothing to say. */
static og_value *og_py_docstring(const og_op *op) {
  og_value *doc = og_py_doc(op), *record = og_value_map(), *rest = og_value_list();
  size_t n = og_list_len(doc);
  og_map_set_bool(record, "one_line", n == 1);
  og_map_set_bool(record, "multi", n > 1);
  og_map_set_str(record, "first", n ? og_value_as_str(og_list_at(doc, 0)) : "");
  for (size_t i = 1; i < n; ++i) og_list_push(rest, og_value_str(og_value_as_str(og_list_at(doc, i))));
  og_map_set(record, "rest", rest);
  og_value_free(doc);
  return record;
}

/* The function's `return _call(...)` as a record {one_line, inputs, attrs}: on one line
 * where it fits. */
static og_value *og_py_call(const og_op *op) {
  og_buf call = {0}, tuple = {0}, attrs = {0};
  og_buf_putc(&tuple, '(');
  for (size_t i = 0; i < op->ninputs; ++i) og_buf_printf(&tuple, "%s%s", i ? ", " : "", op->inputs[i].name);
  og_buf_puts(&tuple, op->ninputs == 1 ? ",)" : ")");
  og_buf_putc(&attrs, '{');
  for (size_t i = 0; i < op->nattrs; ++i)
    og_buf_printf(&attrs, "%s\"%s\": %s", i ? ", " : "", op->attrs[i].name, op->attrs[i].name);
  og_buf_putc(&attrs, '}');
  og_buf_printf(&call, "    return _call(_op_%s, %s, %s, backend)", op->name, og_buf_str(&tuple), og_buf_str(&attrs));
  og_value *record = og_value_map();
  og_map_set_bool(record, "one_line", call.len <= OG_PY_LINE);
  og_map_set(record, "inputs", og_value_str_take(og_buf_take(&tuple)));
  og_map_set(record, "attrs", og_value_str_take(og_buf_take(&attrs)));
  og_buf_free(&call);
  return record;
}

og_value *og_ctx_python(const og_op *op, const char *fingerprint) {
  og_value *py = og_value_map();
  og_py_record(op, py);
  /* The generated code's, which exports record (opspec/_primitive.py). */
  og_map_set_str(py, "fingerprint", fingerprint);
  /* The parameters: inputs, then `*`, the attributes and `backend`, so always two or
   * more, one a line (as ruff writes a list that does not fit one item on a line). */
  og_map_set(py, "params", og_py_params(op, false));
  og_map_set(py, "typed_params", og_py_params(op, true));
  og_buf ret = {0};
  if (op->noutputs > 1) {
    og_buf_puts(&ret, "_tuple[");
    for (size_t i = 0; i < op->noutputs; ++i) og_buf_printf(&ret, "%s_jax.Array", i ? ", " : "");
    og_buf_puts(&ret, "]");
  } else {
    og_buf_puts(&ret, "_jax.Array");
  }
  og_map_set(py, "returns", og_value_str_take(og_buf_take(&ret)));
  og_map_set(py, "doc", og_py_docstring(op));
  og_map_set(py, "call", og_py_call(op));
  return py;
}
