/* Template renderer: walks the AST against a context value.
 *
 * Lookups are strict: an undefined name or a missing key is an error, never an empty
 * string, so a template and the context built for it cannot drift apart silently.
 * The first name of a path resolves through the loop variables in scope (innermost
 * first) and then the context map.
 */
#include <inttypes.h>
#include <string.h>

#include "render/tmpl_internal.h"

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

static const char *og_tmpl_kind_name(og_value_kind k) {
  switch (k) {
    case OG_V_NULL:
      return "null";
    case OG_V_BOOL:
      return "bool";
    case OG_V_INT:
      return "int";
    case OG_V_STR:
      return "string";
    case OG_V_LIST:
      return "list";
    case OG_V_MAP:
      return "map";
  }
  return "value";
}

/* Where errors about a whole path (printing it, looping over it) point: its last name,
 * the one that produced the value. */
static og_loc og_tmpl_path_loc(const og_tmpl_path *path) { return path->segs[path->len - 1].loc; }

/* The value at `path`; NULL after reporting why there is none. Values are borrowed
 * from the context, which outlives the render. */
static const og_value *og_tmpl_eval(og_tmpl_renderer *r, const og_tmpl_path *path, const og_tmpl_scope *s) {
  const og_tmpl_seg *seg = &path->segs[0];
  while (s && strcmp(s->name, seg->name) != 0) s = s->up;
  const og_value *v = s ? s->value : og_map_get(r->ctx, seg->name);
  if (!v) {
    /* `loop` is the one undefined name a Jinja habit produces. */
    og_diag_error(r->d, seg->loc, "'%s' is undefined%s", seg->name,
                  strcmp(seg->name, "loop") == 0 ? " (loop.* variables are not supported)" : "");
    return NULL;
  }
  for (size_t i = 1; i < path->len; ++i) {
    seg = &path->segs[i];
    if (og_value_kind_of(v) != OG_V_MAP) {
      og_diag_error(r->d, seg->loc, "cannot look up '%s' in a %s (not a map)", seg->name,
                    og_tmpl_kind_name(og_value_kind_of(v)));
      return NULL;
    }
    if (!(v = og_map_get(v, seg->name))) {
      og_diag_error(r->d, seg->loc, "'%s' is undefined (no such key in the map)", seg->name);
      return NULL;
    }
  }
  return v;
}

static bool og_tmpl_render_output(og_tmpl_renderer *r, const og_tmpl_node *n, const og_tmpl_scope *s) {
  const og_value *v = og_tmpl_eval(r, &n->path, s);
  if (!v) return false;
  switch (og_value_kind_of(v)) {
    case OG_V_NULL:
      return true;
    case OG_V_BOOL:
      og_buf_puts(r->out, og_value_as_bool(v) ? "true" : "false");
      return true;
    case OG_V_INT:
      og_buf_printf(r->out, "%" PRId64, og_value_as_int(v));
      return true;
    case OG_V_STR:
      og_buf_puts(r->out, og_value_as_str(v));
      return true;
    case OG_V_LIST:
    case OG_V_MAP:
      break;
  }
  og_diag_error(r->d, og_tmpl_path_loc(&n->path), "cannot print a %s", og_tmpl_kind_name(og_value_kind_of(v)));
  return false;
}

static bool og_tmpl_render_nodes(og_tmpl_renderer *r, const og_tmpl_node *n, const og_tmpl_scope *s);

static bool og_tmpl_render_for(og_tmpl_renderer *r, const og_tmpl_node *n, const og_tmpl_scope *s) {
  const og_value *list = og_tmpl_eval(r, &n->path, s);
  if (!list) return false;
  if (og_value_kind_of(list) != OG_V_LIST) {
    og_diag_error(r->d, og_tmpl_path_loc(&n->path), "cannot loop over a %s (not a list)",
                  og_tmpl_kind_name(og_value_kind_of(list)));
    return false;
  }
  for (size_t i = 0; i < og_list_len(list); ++i) {
    og_tmpl_scope var = {n->name, og_list_at(list, i), s};
    if (!og_tmpl_render_nodes(r, n->body, &var)) return false;
  }
  return true;
}

/* An if's test: a fact (bool), or whether a list or string has anything in it. */
static bool og_tmpl_render_if(og_tmpl_renderer *r, const og_tmpl_node *n, const og_tmpl_scope *s) {
  const og_value *v = og_tmpl_eval(r, &n->path, s);
  if (!v) return false;
  bool yes;
  switch (og_value_kind_of(v)) {
    case OG_V_BOOL:
      yes = og_value_as_bool(v);
      break;
    case OG_V_LIST:
      yes = og_list_len(v) > 0;
      break;
    case OG_V_STR:
      yes = og_value_as_str(v)[0] != '\0';
      break;
    default:
      og_diag_error(r->d, og_tmpl_path_loc(&n->path), "cannot test a %s (an if takes a bool, a list or a string)",
                    og_tmpl_kind_name(og_value_kind_of(v)));
      return false;
  }
  return og_tmpl_render_nodes(r, yes ? n->body : n->alt, s);
}

static bool og_tmpl_render_include(og_tmpl_renderer *r, const og_tmpl_node *n, const og_tmpl_scope *s) {
  if (r->depth >= OG_TMPL_MAX_INCLUDE_DEPTH) {
    og_diag_error(r->d, n->loc, "includes nested deeper than %d (recursive include of '%s'?)",
                  OG_TMPL_MAX_INCLUDE_DEPTH, n->text);
    return false;
  }
  const og_tmpl_node *root = og_tmpl_env_get(r->env, n->text, r->d);
  if (!root) {
    og_diag_note(r->d, n->loc, "included from here");
    return false;
  }
  r->depth++;
  bool ok = og_tmpl_render_nodes(r, root, s);
  r->depth--;
  return ok;
}

static bool og_tmpl_render_nodes(og_tmpl_renderer *r, const og_tmpl_node *n, const og_tmpl_scope *s) {
  for (; n; n = n->next) {
    bool ok = true;
    switch (n->kind) {
      case OG_TN_TEXT:
        og_buf_append(r->out, n->text, n->len);
        break;
      case OG_TN_OUTPUT:
        ok = og_tmpl_render_output(r, n, s);
        break;
      case OG_TN_FOR:
        ok = og_tmpl_render_for(r, n, s);
        break;
      case OG_TN_IF:
        ok = og_tmpl_render_if(r, n, s);
        break;
      case OG_TN_INCLUDE:
        ok = og_tmpl_render_include(r, n, s);
        break;
    }
    if (!ok) return false;
  }
  return true;
}

bool og_tmpl_render(og_tmpl_env *env, const char *name, const og_value *ctx, og_buf *out, og_diag *d) {
  const og_tmpl_node *root = og_tmpl_env_get(env, name, d);
  if (!root) return false;
  og_tmpl_renderer r = {env, ctx, out, d, 0};
  return og_tmpl_render_nodes(&r, root, NULL);
}
