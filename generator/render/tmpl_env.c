/* Template environment: where templates come from, and the cache that keeps each
 * one's source and AST alive (error locations point into the source). */
#include <stdlib.h>
#include <string.h>

#include "render/tmpl_internal.h"

typedef struct og_tmpl_entry {
  char *name;
  og_source *src;
  og_tmpl_node *root; /* NULL until parsed without error */
} og_tmpl_entry;

struct og_tmpl_env {
  char *dir;
  /* By value: callers keep only the heap-allocated AST and source, never an entry, so
   * entries may move when the array grows during a nested include. */
  og_tmpl_entry *items;
  size_t len, cap;
};

og_tmpl_env *og_tmpl_env_new(const char *dir) {
  og_tmpl_env *env = og_xcalloc(1, sizeof *env);
  env->dir = og_xstrdup(dir);
  return env;
}

void og_tmpl_env_free(og_tmpl_env *env) {
  if (!env) return;
  for (size_t i = 0; i < env->len; ++i) {
    og_tmpl_node_free(env->items[i].root);
    og_source_free(env->items[i].src);
    free(env->items[i].name);
  }
  free(env->items);
  free(env->dir);
  free(env);
}

void og_tmpl_env_add(og_tmpl_env *env, const char *name, const char *path, const char *text) {
  og_grow((void **)&env->items, &env->cap, env->len + 1, sizeof *env->items);
  env->items[env->len++] = (og_tmpl_entry){og_xstrdup(name), og_source_from_string(path, text), NULL};
}

const og_tmpl_node *og_tmpl_env_get(og_tmpl_env *env, const char *name, og_diag *d) {
  og_tmpl_entry *e = NULL;
  for (size_t i = 0; i < env->len && !e; ++i)
    if (strcmp(env->items[i].name, name) == 0) e = &env->items[i];
  if (!e) {
    og_buf path = {0};
    og_buf_printf(&path, "%s/%s", env->dir, name);
    og_source *src = og_source_read(og_buf_str(&path), d);
    og_buf_free(&path);
    if (!src) return NULL;
    og_grow((void **)&env->items, &env->cap, env->len + 1, sizeof *env->items);
    e = &env->items[env->len++];
    *e = (og_tmpl_entry){og_xstrdup(name), src, NULL};
  }
  if (!e->root) e->root = og_tmpl_parse(e->src, d);
  return e->root;
}
