#include "load/keys.h"

#include "opspec/limits.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static og_keys_event *og_keys_log_add(og_keys_log *log, const char *what, const char *key, const og_ynode *node) {
  og_grow((void **)&log->events, &log->cap, log->n + 1, sizeof *log->events);
  og_keys_event *e = &log->events[log->n++];
  *e = (og_keys_event){.what = what, .key = key, .node = node};
  return e;
}

/* A view begins: its parent is the latest key taken whose value is this mapping or a
 * sequence holding it. */
static void og_keys_log_begin(og_keys_log *log, const og_ynode *node, const char *what) {
  og_keys_event *view = og_keys_log_add(log, what, NULL, node);
  for (size_t i = log->n - 1; i-- > 0;) {
    const og_keys_event *e = &log->events[i];
    if (!e->key || !e->node) continue;
    bool item = false;
    if (e->node->kind == OG_Y_SEQ)
      for (size_t j = 0; j < e->node->n && !item; ++j) item = e->node->items[j] == node;
    if (e->node != node && !item) continue;
    view->parent_what = e->what;
    view->parent_key = e->key;
    view->in_sequence = item;
    return;
  }
}

bool og_keys_begin(og_keys *k, const og_ynode *node, const char *what, og_keys_log *log, og_diag *d) {
  memset(k, 0, sizeof *k);
  k->log = log;
  k->map = node;
  k->what = what;
  if (!og_want_kind(node, OG_Y_MAP, what, d)) {
    k->map = NULL;
    return false;
  }
  if (node->n > sizeof k->used / sizeof k->used[0]) {
    og_diag_error(d, node->loc, "%s has too many keys (%zu)", what, node->n);
    k->map = NULL;
    return false;
  }
  if (log) og_keys_log_begin(log, node, what);
  return true;
}

static void og_keys_remember(og_keys *k, const char *key) {
  for (int i = 0; i < k->nknown; ++i)
    if (strcmp(k->known[i], key) == 0) return;
  if (k->nknown == OG_KEYS_MAX) {
    fprintf(stderr, "opspec-gen: internal error: the loader asks a %s for more than %d keys (OG_KEYS_MAX)\n", k->what,
            OG_KEYS_MAX);
    abort();
  }
  k->known[k->nknown++] = key;
}

static const og_ynode *og_keys_find(og_keys *k, const char *key) {
  og_keys_remember(k, key);
  if (!k->map) return NULL;
  for (size_t i = 0; i < k->map->n; ++i) {
    if (strcmp(k->map->keys[i]->text, key) == 0) {
      k->used[i] = true;
      return k->map->items[i];
    }
  }
  return NULL;
}

static const og_ynode *og_keys_lookup(og_keys *k, const char *key, bool required) {
  const og_ynode *v = og_keys_find(k, key);
  if (k->log && k->map) og_keys_log_add(k->log, k->what, key, v)->required = required;
  return v;
}

const og_ynode *og_keys_take(og_keys *k, const char *key) { return og_keys_lookup(k, key, false); }

const og_ynode *og_keys_need(og_keys *k, const char *key, og_diag *d) {
  (void)d;
  const og_ynode *v = og_keys_lookup(k, key, true);
  if (!v && k->map && k->nmissing < OG_KEYS_MAX) k->missing[k->nmissing++] = key;
  return v;
}

void og_keys_finish(og_keys *k, og_diag *d) {
  if (!k->map) return;
  for (size_t i = 0; i < k->map->n; ++i) {
    if (k->used[i]) continue;
    og_buf allowed = {0};
    for (int j = 0; j < k->nknown; ++j) og_buf_printf(&allowed, "%s%s", j ? ", " : "", k->known[j]);
    og_diag_error(d, k->map->keys[i]->loc, "unknown key '%s' in %s (expected one of: %s)", k->map->keys[i]->text,
                  k->what, og_buf_str(&allowed));
    og_buf_free(&allowed);
  }
  for (int i = 0; i < k->nmissing; ++i)
    og_diag_error(d, k->map->loc, "%s is missing required key '%s'", k->what, k->missing[i]);
}

bool og_want_kind(const og_ynode *n, og_ynode_kind kind, const char *what, og_diag *d) {
  if (n->kind == kind) return true;
  og_diag_error(d, n->loc, "%s must be a %s, got a %s", what, og_ynode_kind_name(kind), og_ynode_kind_name(n->kind));
  return false;
}

bool og_is_ident(const char *s) {
  if (!(isalpha((unsigned char)*s) || *s == '_')) return false;
  for (++s; *s; ++s)
    if (!(isalnum((unsigned char)*s) || *s == '_')) return false;
  return true;
}

bool og_want_name_length(const og_ynode *n, const char *what, og_diag *d) {
  size_t len = strlen(n->text);
  if (len <= OPSPEC_MAX_NAME) return true;
  og_diag_error(d, n->loc, "%s is %zu characters long; at most %d are allowed", what, len, OPSPEC_MAX_NAME);
  return false;
}

bool og_want_ident(const og_ynode *n, const char *what, og_diag *d) {
  if (!og_want_kind(n, OG_Y_SCALAR, what, d)) return false;
  if (og_is_ident(n->text)) return og_want_name_length(n, what, d);
  og_diag_error(d, n->loc, "%s must be an identifier ([A-Za-z_][A-Za-z0-9_]*), got '%s'", what, n->text);
  return false;
}

bool og_want_int(const og_ynode *n, const char *what, int64_t *out, og_diag *d) {
  if (!og_want_kind(n, OG_Y_SCALAR, what, d)) return false;
  char *end;
  errno = 0;
  long long v = strtoll(n->text, &end, 10);
  if (n->text[0] == '\0' || *end != '\0' || errno == ERANGE) {
    og_diag_error(d, n->loc, "%s must be an integer, got '%s'", what, n->text);
    return false;
  }
  *out = (int64_t)v;
  return true;
}
