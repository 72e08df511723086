/* og_ynode: a YAML document as a tree with source positions, built with libyaml.
 *
 * libyaml's document API drops nothing we need but accepts duplicate mapping keys
 * silently and resolves aliases; this loader works from the event stream instead and
 * rejects, with file:line:col errors:
 *   - duplicate keys in a mapping (error at the second, note at the first),
 *   - anchors and aliases (specs are meant to be read top to bottom),
 *   - non-scalar mapping keys,
 *   - more than one document, or an empty file,
 *   - libyaml's own syntax errors (its problem/context text and mark).
 */
#ifndef OG_YAML_TREE_H
#define OG_YAML_TREE_H

#include <stdbool.h>
#include <stddef.h>

#include "util/diag.h"

typedef enum og_ynode_kind { OG_Y_SCALAR, OG_Y_SEQ, OG_Y_MAP } og_ynode_kind;

typedef enum og_yscalar_style {
  OG_YS_PLAIN,
  OG_YS_SINGLE,  /* 'quoted' */
  OG_YS_DOUBLE,  /* "quoted" */
  OG_YS_LITERAL, /* | block */
  OG_YS_FOLDED,  /* > block */
} og_yscalar_style;

typedef struct og_ynode og_ynode;

struct og_ynode {
  og_ynode_kind kind;
  og_loc loc; /* the node's first character (for blocks: the | or >) */
  /* OG_Y_SCALAR */
  char *text; /* NUL-terminated value (may contain NULs: see len) */
  size_t len;
  og_yscalar_style style;
  int content_line; /* 1-based line of the first content character: for block
                             scalars the line after the indicator, else loc.line */
  /* OG_Y_SEQ: items[0..n); OG_Y_MAP: keys[0..n) (scalars) and items[0..n) values */
  og_ynode **keys;
  og_ynode **items;
  size_t n;
};

/* Parses the single document in `src`. On error reports through `d` and returns NULL. */
og_ynode *og_yaml_load(const og_source *src, og_diag *d);
void og_ynode_free(og_ynode *node);

/* Mapping lookup by key (NULL if absent or not a map). */
og_ynode *og_ynode_get(const og_ynode *map, const char *key);

/* "mapping", "sequence", "scalar": for messages like "expected a mapping, got a sequence". */
const char *og_ynode_kind_name(og_ynode_kind kind);

#endif /* OG_YAML_TREE_H */
