/* og_ynode trees from libyaml's event stream (see yaml_tree.h for what is rejected).
 *
 * Errors come in two kinds. libyaml's own (syntax, encoding) end the parse: the parser
 * cannot go on after them. Ours (duplicate keys, anchors, aliases, tags, non-scalar
 * keys) are counted and the parse goes on, so one run reports every one of them in
 * the file; the tree is then freed and NULL returned.
 *
 * Positions: libyaml marks are 0-based and count columns in characters; og_loc is
 * 1-based and counts bytes (so carets line up in diag.c's quoting), hence the
 * conversion through a table of line starts.
 */
#include "load/yaml_tree.h"

#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "util/buf.h"

/* Far beyond any real spec, and low enough that the recursive builder (and
 * og_ynode_free) cannot exhaust the C stack on a hostile "[[[[[[...". */
#define OG_YAML_MAX_DEPTH 256

typedef struct og_yloader {
  yaml_parser_t parser;
  const og_source *src;
  og_diag *d;
  size_t *line_starts; /* byte offset of each line, lines broken as libyaml does */
  size_t nlines;
  int errors; /* our own errors so far; they do not stop the parse */
} og_yloader;

static void og_yl_index_lines(og_yloader *l) {
  size_t cap = 0;
  const char *text = l->src->text;
  og_grow((void **)&l->line_starts, &cap, 1, sizeof *l->line_starts);
  l->line_starts[l->nlines++] = 0;
  const char *end = text + l->src->len;
  for (size_t i = 0; i < l->src->len;) {
    size_t brk = og_line_break(text + i, end);
    if (!brk) {
      ++i;
      continue;
    }
    i += brk;
    og_grow((void **)&l->line_starts, &cap, l->nlines + 1, sizeof *l->line_starts);
    l->line_starts[l->nlines++] = i;
  }
}

/* The og_loc of a libyaml mark: `column` counts characters, so walk that many UTF-8
 * sequences along the line to find the byte column. */
static og_loc og_yl_loc(const og_yloader *l, yaml_mark_t mark) {
  og_loc loc = {l->src, (int)mark.line + 1, (int)mark.column + 1};
  if (mark.line >= l->nlines) return loc;
  const unsigned char *text = (const unsigned char *)l->src->text;
  size_t start = l->line_starts[mark.line];
  size_t end = mark.line + 1 < l->nlines ? l->line_starts[mark.line + 1] : l->src->len;
  size_t p = start;
  /* libyaml consumes a UTF-8 byte order mark without counting it as a column. */
  if (mark.line == 0 && end - start >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0) p += 3;
  size_t chars = 0;
  for (; chars < mark.column && p < end; ++chars) {
    p++;
    while (p < end && (text[p] & 0xC0) == 0x80) p++;
  }
  /* Past the end of the line (should not happen) the remaining characters count as
   * one byte each. */
  loc.col = (int)(p - start + (mark.column - chars)) + 1;
  return loc;
}

/* The og_loc of a byte offset (libyaml's reader errors give only that). */
static og_loc og_yl_loc_of_offset(const og_yloader *l, size_t offset) {
  size_t lo = 0, hi = l->nlines; /* find the last line starting at or before offset */
  while (hi - lo > 1) {
    size_t mid = lo + (hi - lo) / 2;
    if (l->line_starts[mid] <= offset)
      lo = mid;
    else
      hi = mid;
  }
  return (og_loc){l->src, (int)lo + 1, (int)(offset - l->line_starts[lo]) + 1};
}

static void og_yl_error(og_yloader *l, og_loc loc, const char *msg) {
  og_diag_error(l->d, loc, "%s", msg);
  l->errors++;
}

/* Reports libyaml's error after yaml_parser_parse failed. */
static void og_yl_parser_error(og_yloader *l) {
  const yaml_parser_t *p = &l->parser;
  const char *problem = p->problem ? p->problem : "syntax error";
  switch (p->error) {
    case YAML_MEMORY_ERROR:
      og_diag_error(l->d, (og_loc){l->src, 1, 1}, "libyaml ran out of memory");
      return;
    case YAML_READER_ERROR:
      /* Encoding problems: libyaml gives a byte offset and the offending value, not a
     * mark. */
      if (p->problem_value >= 0)
        og_diag_error(l->d, og_yl_loc_of_offset(l, p->problem_offset), "%s (0x%02X)", problem,
                      (unsigned)p->problem_value);
      else
        og_diag_error(l->d, og_yl_loc_of_offset(l, p->problem_offset), "%s", problem);
      return;
    default:
      break;
  }
  og_loc at = og_yl_loc(l, p->problem_mark);
  if (!p->context) {
    og_diag_error(l->d, at, "%s", problem);
    return;
  }
  og_diag_error(l->d, at, "%s: %s", p->context, problem);
  /* Point at where the construct libyaml was inside of began ("while parsing a flow
   * sequence" -> "the flow sequence started here"), unless that is the same place. */
  og_loc ctx = og_yl_loc(l, p->context_mark);
  if (ctx.line == at.line && ctx.col == at.col) return;
  const char *what = p->context;
  static const char *const prefixes[] = {"while parsing ", "while scanning ", "a ", "an "};
  for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; ++i) {
    size_t n = strlen(prefixes[i]);
    if (strncmp(what, prefixes[i], n) == 0) what += n;
  }
  og_diag_note(l->d, ctx, "the %s started here", what);
}

static bool og_yl_next(og_yloader *l, yaml_event_t *ev) {
  if (yaml_parser_parse(&l->parser, ev)) return true;
  og_yl_parser_error(l);
  return false;
}

/* Anchors and tags: both are node properties, reported at the node's start (libyaml's
 * start mark for a node with properties is that of its first property). */
static void og_yl_check_props(og_yloader *l, og_loc loc, const yaml_char_t *anchor, const yaml_char_t *tag) {
  if (anchor) og_yl_error(l, loc, "anchors and aliases are not supported in specs");
  if (tag) {
    /* Tags are rejected rather than ignored: "!!str 3" asks for a meaning the spec
     * loader would not honour. Show the tag as it was most likely written. */
    static const char yaml_prefix[] = "tag:yaml.org,2002:";
    const char *t = (const char *)tag;
    bool core = strncmp(t, yaml_prefix, sizeof yaml_prefix - 1) == 0;
    og_diag_error(l->d, loc, "tags are not supported in specs ('%s%s')", core ? "!!" : "",
                  core ? t + sizeof yaml_prefix - 1 : t);
    l->errors++;
  }
}

static og_ynode *og_ynode_new(og_ynode_kind kind, og_loc loc) {
  og_ynode *n = og_xcalloc(1, sizeof *n);
  n->kind = kind;
  n->loc = loc;
  n->content_line = loc.line;
  return n;
}

static og_ynode *og_yl_node(og_yloader *l, yaml_event_t *ev, int depth);

static og_ynode *og_yl_scalar(og_yloader *l, yaml_event_t *ev) {
  og_loc loc = og_yl_loc(l, ev->start_mark);
  og_yl_check_props(l, loc, ev->data.scalar.anchor, ev->data.scalar.tag);
  og_ynode *n = og_ynode_new(OG_Y_SCALAR, loc);
  n->len = ev->data.scalar.length;
  n->text = og_xstrndup((const char *)ev->data.scalar.value, n->len);
  switch (ev->data.scalar.style) {
    case YAML_SINGLE_QUOTED_SCALAR_STYLE:
      n->style = OG_YS_SINGLE;
      break;
    case YAML_DOUBLE_QUOTED_SCALAR_STYLE:
      n->style = OG_YS_DOUBLE;
      break;
    case YAML_LITERAL_SCALAR_STYLE:
      n->style = OG_YS_LITERAL;
      break;
    case YAML_FOLDED_SCALAR_STYLE:
      n->style = OG_YS_FOLDED;
      break;
    default:
      n->style = OG_YS_PLAIN;
      break;
  }
  /* A block scalar's start mark is its '|' or '>' indicator (checked in
   * test_yaml_tree.c); the content begins on the next line, and line k of the
   * literal text (counting from 0) is source line content_line + k, blank leading
   * lines included. */
  if (n->style == OG_YS_LITERAL || n->style == OG_YS_FOLDED) n->content_line = loc.line + 1;
  yaml_event_delete(ev);
  return n;
}

static og_ynode *og_yl_seq(og_yloader *l, yaml_event_t *ev, int depth) {
  og_loc loc = og_yl_loc(l, ev->start_mark);
  og_yl_check_props(l, loc, ev->data.sequence_start.anchor, ev->data.sequence_start.tag);
  yaml_event_delete(ev);
  og_ynode *seq = og_ynode_new(OG_Y_SEQ, loc);
  size_t cap = 0;
  for (;;) {
    if (!og_yl_next(l, ev)) goto fail;
    if (ev->type == YAML_SEQUENCE_END_EVENT) {
      yaml_event_delete(ev);
      return seq;
    }
    og_ynode *item = og_yl_node(l, ev, depth + 1);
    if (!item) goto fail;
    og_grow((void **)&seq->items, &cap, seq->n + 1, sizeof *seq->items);
    seq->items[seq->n++] = item;
  }
fail:
  og_ynode_free(seq);
  return NULL;
}

static og_ynode *og_yl_find_key(const og_ynode *map, const og_ynode *key) {
  for (size_t i = 0; i < map->n; ++i)
    if (map->keys[i]->len == key->len && memcmp(map->keys[i]->text, key->text, key->len) == 0) return map->keys[i];
  return NULL;
}

/* No spec mapping needs more keys; the cap keeps the duplicate-key search (linear per
 * key) from turning a huge mapping quadratic. */
#define OG_YAML_MAX_KEYS 256

static og_ynode *og_yl_map(og_yloader *l, yaml_event_t *ev, int depth) {
  og_loc loc = og_yl_loc(l, ev->start_mark);
  og_yl_check_props(l, loc, ev->data.mapping_start.anchor, ev->data.mapping_start.tag);
  yaml_event_delete(ev);
  og_ynode *map = og_ynode_new(OG_Y_MAP, loc);
  size_t kcap = 0, icap = 0;
  bool too_many = false;
  for (;;) {
    if (!og_yl_next(l, ev)) goto fail;
    if (ev->type == YAML_MAPPING_END_EVENT) {
      yaml_event_delete(ev);
      return map;
    }
    bool key_is_alias = ev->type == YAML_ALIAS_EVENT;
    og_ynode *key = og_yl_node(l, ev, depth + 1);
    if (!key) goto fail;
    /* A bad key is reported before anything in its value, keeping messages in file
     * order; the pair is then dropped but its value still parsed and checked. */
    bool keep = !key_is_alias; /* the alias error is already out */
    if (keep && key->kind != OG_Y_SCALAR) {
      og_diag_error(l->d, key->loc, "mapping keys must be scalars, got a %s", og_ynode_kind_name(key->kind));
      l->errors++;
      keep = false;
    }
    if (keep && map->n == OG_YAML_MAX_KEYS) {
      if (!too_many) {
        og_diag_error(l->d, key->loc, "a mapping may have at most %d keys", OG_YAML_MAX_KEYS);
        l->errors++;
      }
      too_many = true;
      keep = false;
    }
    if (keep) {
      const og_ynode *first = og_yl_find_key(map, key);
      if (first) {
        og_diag_error(l->d, key->loc, "duplicate key '%s'", key->text);
        og_diag_note(l->d, first->loc, "first defined here");
        l->errors++;
        keep = false;
      }
    }
    og_ynode *value = og_yl_next(l, ev) ? og_yl_node(l, ev, depth + 1) : NULL;
    if (!value) {
      og_ynode_free(key);
      goto fail;
    }
    if (!keep) {
      og_ynode_free(key);
      og_ynode_free(value);
      continue;
    }
    og_grow((void **)&map->keys, &kcap, map->n + 1, sizeof *map->keys);
    og_grow((void **)&map->items, &icap, map->n + 1, sizeof *map->items);
    map->keys[map->n] = key;
    map->items[map->n] = value;
    map->n++;
  }
fail:
  og_ynode_free(map);
  return NULL;
}

/* Builds the node that starts with `ev` (whose contents it takes over and deletes).
 * Returns NULL only when parsing cannot go on (a libyaml error or runaway nesting),
 * having reported why. */
static og_ynode *og_yl_node(og_yloader *l, yaml_event_t *ev, int depth) {
  og_loc loc = og_yl_loc(l, ev->start_mark);
  if (depth > OG_YAML_MAX_DEPTH) {
    og_yl_error(l, loc, "nesting too deep");
    yaml_event_delete(ev);
    return NULL;
  }
  switch (ev->type) {
    case YAML_SCALAR_EVENT:
      return og_yl_scalar(l, ev);
    case YAML_SEQUENCE_START_EVENT:
      return og_yl_seq(l, ev, depth);
    case YAML_MAPPING_START_EVENT:
      return og_yl_map(l, ev, depth);
    case YAML_ALIAS_EVENT: {
      og_yl_error(l, loc, "anchors and aliases are not supported in specs");
      yaml_event_delete(ev);
      /* A stand-in keeps the tree's shape so the parse can go on to find more errors;
     * the tree is never returned. */
      og_ynode *stub = og_ynode_new(OG_Y_SCALAR, loc);
      stub->text = og_xstrdup("");
      return stub;
    }
    default:
      /* libyaml only emits node events here. */
      og_yl_error(l, loc, "unexpected YAML event");
      yaml_event_delete(ev);
      return NULL;
  }
}

/* Parses the stream: exactly one document, which is not empty. */
static og_ynode *og_yl_stream(og_yloader *l) {
  yaml_event_t ev;
  if (!og_yl_next(l, &ev)) return NULL; /* STREAM-START */
  yaml_event_delete(&ev);
  if (!og_yl_next(l, &ev)) return NULL;
  if (ev.type == YAML_STREAM_END_EVENT) {
    /* Nothing but blanks and comments. */
    yaml_event_delete(&ev);
    og_yl_error(l, (og_loc){l->src, 1, 1}, "empty spec");
    return NULL;
  }
  og_loc doc = og_yl_loc(l, ev.start_mark); /* DOCUMENT-START */
  yaml_event_delete(&ev);
  if (!og_yl_next(l, &ev)) return NULL;
  og_ynode *root = og_yl_node(l, &ev, 0);
  if (!root) return NULL;
  /* "---" alone parses as one empty plain scalar (YAML's null). */
  if (root->kind == OG_Y_SCALAR && root->style == OG_YS_PLAIN && root->len == 0) {
    og_yl_error(l, doc, "empty spec");
    og_ynode_free(root);
    return NULL;
  }
  bool ok = og_yl_next(l, &ev); /* DOCUMENT-END */
  if (ok) {
    yaml_event_delete(&ev);
    ok = og_yl_next(l, &ev);
  }
  if (ok) {
    if (ev.type == YAML_DOCUMENT_START_EVENT) {
      og_yl_error(l, og_yl_loc(l, ev.start_mark), "a spec must be a single YAML document; found a second one");
      ok = false;
    }
    yaml_event_delete(&ev);
  }
  if (!ok) {
    og_ynode_free(root);
    return NULL;
  }
  return root;
}

og_ynode *og_yaml_load(const og_source *src, og_diag *d) {
  og_yloader l = {.src = src, .d = d};
  if (!yaml_parser_initialize(&l.parser)) {
    og_diag_error(d, (og_loc){src, 1, 1}, "libyaml ran out of memory");
    return NULL;
  }
  og_yl_index_lines(&l);
  yaml_parser_set_input_string(&l.parser, (const unsigned char *)src->text, src->len);
  og_ynode *root = og_yl_stream(&l);
  yaml_parser_delete(&l.parser);
  free(l.line_starts);
  if (root && l.errors) {
    og_ynode_free(root);
    root = NULL;
  }
  return root;
}

void og_ynode_free(og_ynode *node) {
  if (!node) return;
  for (size_t i = 0; i < node->n; ++i) {
    if (node->keys) og_ynode_free(node->keys[i]);
    og_ynode_free(node->items[i]);
  }
  free(node->keys);
  free(node->items);
  free(node->text);
  free(node);
}

og_ynode *og_ynode_get(const og_ynode *map, const char *key) {
  if (!map || map->kind != OG_Y_MAP || !key) return NULL;
  size_t len = strlen(key);
  for (size_t i = 0; i < map->n; ++i)
    if (map->keys[i]->len == len && memcmp(map->keys[i]->text, key, len) == 0) return map->items[i];
  return NULL;
}

const char *og_ynode_kind_name(og_ynode_kind kind) {
  switch (kind) {
    case OG_Y_SCALAR:
      return "scalar";
    case OG_Y_SEQ:
      return "sequence";
    case OG_Y_MAP:
      return "mapping";
  }
  return "node";
}
