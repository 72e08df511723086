/* Template renderer: walks the AST against a context value.
 *
 * Lookups are strict: an undefined name, a missing key or an index out of range is an
 * error, except in the input of a lenient filter (`default`), where it yields
 * "undefined" instead. Names resolve through the scope chain (loop variables, innermost
 * first) and then the context map.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "tmpl_internal.h"

enum { OG_TMPL_MAX_INCLUDE_DEPTH = 32 };

/* Loop bindings live on the C stack of the for-loop that made them. */
typedef struct og_tmpl_scope {
  const char *name;
  const og_value *value;
  const struct og_tmpl_scope *up;
} og_tmpl_scope;

typedef struct og_tmpl_renderer {
  og_tmpl_env *env;
  const og_value *ctx;
  og_buf *out;
  og_diag *d;
  int depth; /* include nesting */
} og_tmpl_renderer;

/* An evaluated expression. Most results point into the context or the AST and are
 * borrowed; `owned`, when set, is what must be freed once `v` is no longer needed (a
 * filter result, or the container `v` was looked up in). v == NULL means undefined. */
typedef struct og_tmpl_val {
  const og_value *v;
  og_value *owned;
} og_tmpl_val;

static void og_tmpl_val_drop(og_tmpl_val *v) {
  og_value_free(v->owned);
  v->v = NULL;
  v->owned = NULL;
}

static og_tmpl_val og_tmpl_val_own(og_value *v) { return (og_tmpl_val){v, v}; }

static bool og_tmpl_eval(og_tmpl_renderer *r, const og_tmpl_expr *e, const og_tmpl_scope *s,
                         bool lenient, og_tmpl_val *out);

static bool og_tmpl_eval_name(og_tmpl_renderer *r, const og_tmpl_expr *e, const og_tmpl_scope *s,
                              bool lenient, og_tmpl_val *out) {
  for (; s; s = s->up)
    if (strcmp(s->name, e->name) == 0) {
      out->v = s->value;
      return true;
    }
  out->v = og_map_get(r->ctx, e->name);
  if (out->v || lenient) return true;
  og_diag_error(r->d, e->loc, "'%s' is undefined", e->name);
  return false;
}

/* obj[key] on a map, for both a.key and a["key"]; takes over obj. */
static bool og_tmpl_lookup_key(og_tmpl_renderer *r, const og_tmpl_expr *e, og_tmpl_val *obj,
                               const char *key, bool lenient, og_tmpl_val *out) {
  if (og_value_kind_of(obj->v) != OG_V_MAP) {
    og_diag_error(r->d, e->loc, "cannot look up '%s' in a %s (not a map)", key,
                  og_tmpl_kind_name(og_value_kind_of(obj->v)));
    og_tmpl_val_drop(obj);
    return false;
  }
  const og_value *v = og_map_get(obj->v, key);
  if (!v && !lenient) {
    og_diag_error(r->d, e->loc, "'%s' is undefined (no such key in the map)", key);
    og_tmpl_val_drop(obj);
    return false;
  }
  if (!v) {
    og_tmpl_val_drop(obj);
    return true;
  }
  out->v = v;
  out->owned = obj->owned;
  return true;
}

static bool og_tmpl_eval_index(og_tmpl_renderer *r, const og_tmpl_expr *e, const og_tmpl_scope *s,
                               bool lenient, og_tmpl_val *out) {
  og_tmpl_val obj = {0}, idx = {0};
  if (!og_tmpl_eval(r, e->a, s, lenient, &obj)) return false;
  if (!og_tmpl_eval(r, e->b, s, false, &idx)) {
    og_tmpl_val_drop(&obj);
    return false;
  }
  bool ok = true;
  if (!obj.v) {
    /* lenient and already undefined: stays undefined */
  } else if (og_value_kind_of(idx.v) == OG_V_STR) {
    ok = og_tmpl_lookup_key(r, e, &obj, og_value_as_str(idx.v), lenient, out);
    obj.owned = NULL; /* taken over */
  } else if (og_value_kind_of(idx.v) != OG_V_INT) {
    og_diag_error(r->d, e->loc, "index must be an int or a string, got %s",
                  og_tmpl_kind_name(og_value_kind_of(idx.v)));
    ok = false;
  } else if (og_value_kind_of(obj.v) != OG_V_LIST) {
    og_diag_error(r->d, e->loc, "cannot index a %s with an int (not a list)",
                  og_tmpl_kind_name(og_value_kind_of(obj.v)));
    ok = false;
  } else {
    int64_t i = og_value_as_int(idx.v), n = (int64_t)og_list_len(obj.v);
    int64_t at = i < 0 ? i + n : i; /* negative counts from the end, as in Python */
    if (at >= 0 && at < n) {
      out->v = og_list_at(obj.v, (size_t)at);
      out->owned = obj.owned;
      obj.owned = NULL;
    } else if (!lenient) {
      og_diag_error(r->d, e->loc, "list index %" PRId64 " out of range (length %" PRId64 ")", i, n);
      ok = false;
    }
  }
  og_tmpl_val_drop(&obj);
  og_tmpl_val_drop(&idx);
  return ok;
}

static bool og_tmpl_eval_filter(og_tmpl_renderer *r, const og_tmpl_expr *e,
                                const og_tmpl_scope *s, og_tmpl_val *out) {
  og_tmpl_val in = {0};
  if (!og_tmpl_eval(r, e->a, s, e->filter->lenient, &in)) return false;
  og_tmpl_val *args = og_xcalloc(e->nargs, sizeof *args);
  const og_value **argv = og_xcalloc(e->nargs, sizeof *argv);
  bool ok = true;
  for (size_t i = 0; ok && i < e->nargs; ++i) {
    ok = og_tmpl_eval(r, e->args[i], s, false, &args[i]);
    argv[i] = args[i].v;
  }
  if (ok) {
    og_tmpl_fcall call = {e->filter, in.v, argv, e->nargs, e->loc, r->d};
    og_value *res = e->filter->fn(&call);
    if (res) *out = og_tmpl_val_own(res);
    ok = res != NULL;
  }
  for (size_t i = 0; i < e->nargs; ++i) og_tmpl_val_drop(&args[i]);
  free(args);
  free(argv);
  og_tmpl_val_drop(&in);
  return ok;
}

/* *truth = the Jinja truthiness of e. */
static bool og_tmpl_eval_truth(og_tmpl_renderer *r, const og_tmpl_expr *e, const og_tmpl_scope *s,
                               bool *truth) {
  og_tmpl_val v = {0};
  if (!og_tmpl_eval(r, e, s, false, &v)) return false;
  *truth = og_value_as_bool(v.v);
  og_tmpl_val_drop(&v);
  return true;
}

/* == and !=: values of different kinds are unequal; containers are not comparable. */
static bool og_tmpl_eval_eq(og_tmpl_renderer *r, const og_tmpl_expr *e, const og_tmpl_scope *s,
                            bool *eq) {
  og_tmpl_val a = {0}, b = {0};
  if (!og_tmpl_eval(r, e->a, s, false, &a)) return false;
  if (!og_tmpl_eval(r, e->b, s, false, &b)) {
    og_tmpl_val_drop(&a);
    return false;
  }
  og_value_kind ka = og_value_kind_of(a.v), kb = og_value_kind_of(b.v);
  bool ok = true;
  if (ka == OG_V_LIST || ka == OG_V_MAP || kb == OG_V_LIST || kb == OG_V_MAP) {
    og_diag_error(r->d, e->loc, "cannot compare a %s with a %s", og_tmpl_kind_name(ka),
                  og_tmpl_kind_name(kb));
    ok = false;
  } else if (ka != kb) {
    *eq = false;
  } else if (ka == OG_V_STR) {
    *eq = strcmp(og_value_as_str(a.v), og_value_as_str(b.v)) == 0;
  } else {
    *eq = og_value_as_int(a.v) == og_value_as_int(b.v); /* null, bool, int */
  }
  og_tmpl_val_drop(&a);
  og_tmpl_val_drop(&b);
  return ok;
}

static bool og_tmpl_eval(og_tmpl_renderer *r, const og_tmpl_expr *e, const og_tmpl_scope *s,
                         bool lenient, og_tmpl_val *out) {
  *out = (og_tmpl_val){0};
  bool x, y;
  switch (e->kind) {
    case OG_TX_LIT:
      out->v = e->lit;
      return true;
    case OG_TX_NAME:
      return og_tmpl_eval_name(r, e, s, lenient, out);
    case OG_TX_ATTR: {
      og_tmpl_val obj = {0};
      if (!og_tmpl_eval(r, e->a, s, lenient, &obj)) return false;
      if (!obj.v) return true; /* lenient: undefined propagates */
      return og_tmpl_lookup_key(r, e, &obj, e->name, lenient, out);
    }
    case OG_TX_INDEX:
      return og_tmpl_eval_index(r, e, s, lenient, out);
    case OG_TX_FILTER:
      return og_tmpl_eval_filter(r, e, s, out);
    case OG_TX_NOT:
      if (!og_tmpl_eval_truth(r, e->a, s, &x)) return false;
      *out = og_tmpl_val_own(og_value_bool(!x));
      return true;
    case OG_TX_AND:
    case OG_TX_OR:
      if (!og_tmpl_eval_truth(r, e->a, s, &x)) return false;
      /* Short-circuit: the right side is not evaluated (nor checked) when a decides. */
      if (x == (e->kind == OG_TX_AND) && !og_tmpl_eval_truth(r, e->b, s, &x)) return false;
      *out = og_tmpl_val_own(og_value_bool(x));
      return true;
    case OG_TX_EQ:
    case OG_TX_NE:
      if (!og_tmpl_eval_eq(r, e, s, &y)) return false;
      *out = og_tmpl_val_own(og_value_bool(y == (e->kind == OG_TX_EQ)));
      return true;
  }
  return false;
}

static bool og_tmpl_render_nodes(og_tmpl_renderer *r, const og_tmpl_node *n,
                                 const og_tmpl_scope *s);

static bool og_tmpl_render_for(og_tmpl_renderer *r, const og_tmpl_node *n, const og_tmpl_scope *s) {
  og_tmpl_val list = {0};
  if (!og_tmpl_eval(r, n->expr, s, false, &list)) return false;
  if (og_value_kind_of(list.v) != OG_V_LIST) {
    og_diag_error(r->d, n->expr->loc, "cannot loop over a %s (not a list)",
                  og_tmpl_kind_name(og_value_kind_of(list.v)));
    og_tmpl_val_drop(&list);
    return false;
  }
  size_t len = og_list_len(list.v);
  bool ok = true;
  for (size_t i = 0; ok && i < len; ++i) {
    og_value *loop = og_value_map();
    og_map_set_int(loop, "index0", (int64_t)i);
    og_map_set_int(loop, "index", (int64_t)i + 1);
    og_map_set_bool(loop, "first", i == 0);
    og_map_set_bool(loop, "last", i + 1 == len);
    og_map_set_int(loop, "length", (int64_t)len);
    og_tmpl_scope loop_scope = {"loop", loop, s};
    og_tmpl_scope var_scope = {n->name, og_list_at(list.v, i), &loop_scope};
    ok = og_tmpl_render_nodes(r, n->body, &var_scope);
    og_value_free(loop);
  }
  og_tmpl_val_drop(&list);
  return ok;
}

static bool og_tmpl_render_include(og_tmpl_renderer *r, const og_tmpl_node *n,
                                   const og_tmpl_scope *s) {
  og_tmpl_val name = {0};
  if (!og_tmpl_eval(r, n->expr, s, false, &name)) return false;
  bool ok = false;
  const char *str = og_value_as_str(name.v);
  if (!str) {
    og_diag_error(r->d, n->expr->loc, "include needs a template name string, got %s",
                  og_tmpl_kind_name(og_value_kind_of(name.v)));
  } else if (r->depth >= OG_TMPL_MAX_INCLUDE_DEPTH) {
    og_diag_error(r->d, n->loc, "includes nested deeper than %d (recursive include of '%s'?)",
                  OG_TMPL_MAX_INCLUDE_DEPTH, str);
  } else {
    const og_tmpl_node *root = og_tmpl_env_get(r->env, str, r->d);
    if (!root) {
      og_diag_note(r->d, n->loc, "included from here");
    } else {
      r->depth++;
      ok = og_tmpl_render_nodes(r, root, s);
      r->depth--;
    }
  }
  og_tmpl_val_drop(&name);
  return ok;
}

static bool og_tmpl_render_node(og_tmpl_renderer *r, const og_tmpl_node *n, const og_tmpl_scope *s) {
  switch (n->kind) {
    case OG_TN_TEXT:
      og_buf_append(r->out, n->text, n->len);
      return true;
    case OG_TN_OUTPUT: {
      og_tmpl_val v = {0};
      if (!og_tmpl_eval(r, n->expr, s, false, &v)) return false;
      bool ok = og_tmpl_scalar_str(v.v, r->out);
      if (!ok)
        og_diag_error(r->d, n->expr->loc, "cannot print a %s",
                      og_tmpl_kind_name(og_value_kind_of(v.v)));
      og_tmpl_val_drop(&v);
      return ok;
    }
    case OG_TN_IF:
      for (size_t i = 0; i < n->nbranches; ++i) {
        bool take = true;
        if (n->branches[i].cond && !og_tmpl_eval_truth(r, n->branches[i].cond, s, &take))
          return false;
        if (take) return og_tmpl_render_nodes(r, n->branches[i].body, s);
      }
      return true;
    case OG_TN_FOR:
      return og_tmpl_render_for(r, n, s);
    case OG_TN_INCLUDE:
      return og_tmpl_render_include(r, n, s);
  }
  return false;
}

static bool og_tmpl_render_nodes(og_tmpl_renderer *r, const og_tmpl_node *n,
                                 const og_tmpl_scope *s) {
  for (; n; n = n->next)
    if (!og_tmpl_render_node(r, n, s)) return false;
  return true;
}

bool og_tmpl_render(og_tmpl_env *env, const char *name, const og_value *ctx, og_buf *out,
                    og_diag *d) {
  const og_tmpl_node *root = og_tmpl_env_get(env, name, d);
  if (!root) return false;
  og_tmpl_renderer r = {env, ctx, out, d, 0};
  return og_tmpl_render_nodes(&r, root, NULL);
}
