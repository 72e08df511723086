/* og_value: the dynamic values templates are rendered against.
 *
 * The renderers (render/ctx*.c) turn the op model into a tree of these (maps, lists,
 * strings, ints, bools); templates only read it. A container owns what is put into it, so freeing the
 * root frees the tree.
 */
#ifndef OG_VALUE_H
#define OG_VALUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum og_value_kind {
  OG_V_NULL,
  OG_V_BOOL,
  OG_V_INT,
  OG_V_STR,
  OG_V_LIST,
  OG_V_MAP,
} og_value_kind;

typedef struct og_value og_value;

og_value *og_value_null(void);
og_value *og_value_bool(bool b);
og_value *og_value_int(int64_t i);
og_value *og_value_str(const char *s); /* copies s */
og_value *og_value_str_take(char *s);  /* takes a malloc'd s */
og_value *og_value_list(void);
og_value *og_value_map(void);
void og_value_free(og_value *v);

og_value_kind og_value_kind_of(const og_value *v); /* NULL reads as OG_V_NULL */
bool og_value_as_bool(const og_value *v);          /* false unless OG_V_BOOL */
int64_t og_value_as_int(const og_value *v);        /* 0 unless OG_V_INT */
const char *og_value_as_str(const og_value *v);    /* NULL unless OG_V_STR */

/* Lists: append takes ownership. */
void og_list_push(og_value *list, og_value *item);
size_t og_list_len(const og_value *list);
const og_value *og_list_at(const og_value *list, size_t i);

/* Maps: set takes ownership and replaces an existing key. */
void og_map_set(og_value *map, const char *key, og_value *v);
const og_value *og_map_get(const og_value *map, const char *key); /* NULL if absent */
/* Removes `key` and hands its value to the caller (NULL if absent). */
og_value *og_map_take(og_value *map, const char *key);
/* Shorthands that build and set in one step. */
void og_map_set_str(og_value *map, const char *key, const char *s);
void og_map_set_int(og_value *map, const char *key, int64_t i);
void og_map_set_bool(og_value *map, const char *key, bool b);

#endif /* OG_VALUE_H */
