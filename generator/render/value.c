#include "render/value.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"

/* One struct for every kind keeps the API free of casts; the unused fields cost a few
 * bytes per node, which is nothing next to the size of an op model. */
struct og_value {
  og_value_kind kind;
  bool b;
  int64_t i;
  char *s;          /* OG_V_STR */
  og_value **items; /* OG_V_LIST elements, OG_V_MAP values */
  char **keys;      /* OG_V_MAP keys, parallel to items */
  size_t len, cap, key_cap;
};

/* Writing into the wrong kind is a bug in the caller, not bad input: fail loudly. */
static void og_value_misuse(const char *fn, const char *what) {
  fprintf(stderr, "opspec-gen: internal error: %s: %s\n", fn, what);
  abort();
}

static og_value *og_value_new(og_value_kind kind) {
  og_value *v = og_xcalloc(1, sizeof *v);
  v->kind = kind;
  return v;
}

og_value *og_value_null(void) { return og_value_new(OG_V_NULL); }

og_value *og_value_bool(bool b) {
  og_value *v = og_value_new(OG_V_BOOL);
  v->b = b;
  return v;
}

og_value *og_value_int(int64_t i) {
  og_value *v = og_value_new(OG_V_INT);
  v->i = i;
  return v;
}

og_value *og_value_str(const char *s) { return og_value_str_take(og_xstrdup(s)); }

og_value *og_value_str_take(char *s) {
  og_value *v = og_value_new(OG_V_STR);
  v->s = s;
  return v;
}

og_value *og_value_list(void) { return og_value_new(OG_V_LIST); }
og_value *og_value_map(void) { return og_value_new(OG_V_MAP); }

void og_value_free(og_value *v) {
  if (!v) return;
  for (size_t i = 0; i < v->len; ++i) {
    og_value_free(v->items[i]);
    if (v->keys) free(v->keys[i]);
  }
  free(v->items);
  free(v->keys);
  free(v->s);
  free(v);
}

og_value_kind og_value_kind_of(const og_value *v) { return v ? v->kind : OG_V_NULL; }

bool og_value_as_bool(const og_value *v) { return v && v->kind == OG_V_BOOL && v->b; }

int64_t og_value_as_int(const og_value *v) { return v && v->kind == OG_V_INT ? v->i : 0; }

const char *og_value_as_str(const og_value *v) { return v && v->kind == OG_V_STR ? v->s : NULL; }

void og_list_push(og_value *list, og_value *item) {
  if (!list || list->kind != OG_V_LIST) og_value_misuse("og_list_push", "not a list");
  if (!item) og_value_misuse("og_list_push", "NULL item");
  og_grow((void **)&list->items, &list->cap, list->len + 1, sizeof *list->items);
  list->items[list->len++] = item;
}

size_t og_list_len(const og_value *list) { return list && list->kind == OG_V_LIST ? list->len : 0; }

const og_value *og_list_at(const og_value *list, size_t i) {
  return list && list->kind == OG_V_LIST && i < list->len ? list->items[i] : NULL;
}

/* Linear search: the maps of an op model hold tens of keys, so a hash table would buy
 * nothing. */
static size_t og_map_find(const og_value *map, const char *key) {
  for (size_t i = 0; i < map->len; ++i)
    if (strcmp(map->keys[i], key) == 0) return i;
  return map->len;
}

void og_map_set(og_value *map, const char *key, og_value *v) {
  if (!map || map->kind != OG_V_MAP) og_value_misuse("og_map_set", "not a map");
  if (!key || !v) og_value_misuse("og_map_set", "NULL key or value");
  size_t i = og_map_find(map, key);
  if (i < map->len) {
    og_value_free(map->items[i]);
    map->items[i] = v;
    return;
  }
  og_grow((void **)&map->items, &map->cap, map->len + 1, sizeof *map->items);
  og_grow((void **)&map->keys, &map->key_cap, map->len + 1, sizeof *map->keys);
  map->keys[map->len] = og_xstrdup(key);
  map->items[map->len++] = v;
}

og_value *og_map_take(og_value *map, const char *key) {
  if (!map || map->kind != OG_V_MAP) return NULL;
  size_t i = og_map_find(map, key);
  if (i == map->len) return NULL;
  og_value *v = map->items[i];
  free(map->keys[i]);
  map->len--;
  memmove(&map->items[i], &map->items[i + 1], (map->len - i) * sizeof *map->items);
  memmove(&map->keys[i], &map->keys[i + 1], (map->len - i) * sizeof *map->keys);
  return v;
}

const og_value *og_map_get(const og_value *map, const char *key) {
  if (!map || map->kind != OG_V_MAP) return NULL;
  size_t i = og_map_find(map, key);
  return i < map->len ? map->items[i] : NULL;
}

void og_map_set_str(og_value *map, const char *key, const char *s) { og_map_set(map, key, og_value_str(s)); }

void og_map_set_int(og_value *map, const char *key, int64_t i) { og_map_set(map, key, og_value_int(i)); }

void og_map_set_bool(og_value *map, const char *key, bool b) { og_map_set(map, key, og_value_bool(b)); }
