/* Template environment: where templates come from, and the cache that keeps each
 * one's source and AST alive (error locations point into the source). */
#include <stdlib.h>
#include <string.h>

#include "tmpl_internal.h"

typedef struct og_tmpl_entry {
  char *name;
  og_source *src;
  og_tmpl_node *root; /* NULL until first parsed */
} og_tmpl_entry;

struct og_tmpl_env {
  char *dir; /* NULL: only templates added with og_tmpl_env_add */
  /* Pointers, so entries stay put when the array grows during a nested include. */
  og_tmpl_entry **items;
  size_t len, cap;
};

og_tmpl_env *og_tmpl_env_new(const char *dir) {
  og_tmpl_env *env = og_xcalloc(1, sizeof *env);
  env->dir = dir ? og_xstrdup(dir) : NULL;
  return env;
}

static og_tmpl_entry *og_tmpl_env_find(og_tmpl_env *env, const char *name) {
  for (size_t i = 0; i < env->len; ++i)
    if (strcmp(env->items[i]->name, name) == 0) return env->items[i];
  return NULL;
}

static og_tmpl_entry *og_tmpl_env_insert(og_tmpl_env *env, const char *name, og_source *src) {
  og_tmpl_entry *e = og_xcalloc(1, sizeof *e);
  e->name = og_xstrdup(name);
  e->src = src;
  og_grow((void **)&env->items, &env->cap, env->len + 1, sizeof *env->items);
  env->items[env->len++] = e;
  return e;
}

void og_tmpl_env_add(og_tmpl_env *env, const char *name, const char *text) {
  og_source *src = og_source_from_string(name, text);
  og_tmpl_entry *e = og_tmpl_env_find(env, name);
  if (!e) {
    og_tmpl_env_insert(env, name, src);
    return;
  }
  og_tmpl_node_free(e->root);
  og_source_free(e->src);
  e->root = NULL;
  e->src = src;
}

void og_tmpl_env_free(og_tmpl_env *env) {
  if (!env) return;
  for (size_t i = 0; i < env->len; ++i) {
    og_tmpl_node_free(env->items[i]->root);
    og_source_free(env->items[i]->src);
    free(env->items[i]->name);
    free(env->items[i]);
  }
  free(env->items);
  free(env->dir);
  free(env);
}

const og_tmpl_node *og_tmpl_env_get(og_tmpl_env *env, const char *name, og_diag *d) {
  og_tmpl_entry *e = og_tmpl_env_find(env, name);
  if (!e) {
    if (!env->dir) {
      og_diag_error(d, (og_loc){0}, "unknown template '%s'", name);
      return NULL;
    }
    og_buf path = {0};
    og_buf_printf(&path, "%s/%s", env->dir, name);
    og_source *src = og_source_read(og_buf_str(&path), d);
    og_buf_free(&path);
    if (!src) return NULL;
    e = og_tmpl_env_insert(env, name, src);
  }
  if (!e->root) e->root = og_tmpl_parse(e->src, d);
  return e->root;
}
