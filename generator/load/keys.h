/* Strict mapping access for the spec loader, after torchgen's "pop every key, reject
 * the rest": the loader takes each key it knows from a og_keys view, and og_keys_finish
 * reports every key nobody took as unknown, listing the ones that are allowed. */
#ifndef OG_LOAD_KEYS_H
#define OG_LOAD_KEYS_H

#include <stdbool.h>
#include <stdint.h>

#include "util/diag.h"
#include "load/yaml_tree.h"

/* The keys one view may ask for: the loader's widest mapping (the spec's top level) asks
 * for 21. A view that asks for more is a loader bug, which og_keys_take stops at, rather
 * than leave a key out of the "expected one of" message. */
#define OG_KEYS_MAX 32

/* Recording, for opspec-gen --schema (load/schema.c): given a log, each view begun and
 * each key taken is appended to it, so that the schema lists exactly the keys the
 * loader takes, wherever it takes them. A view's parent is the taken key whose value is
 * the mapping viewed, or a sequence that holds it. Strings point at the loader's own
 * literals; the nodes are compared, never read, after loading. */
typedef struct og_keys_event {
  const char *what;        /* the view's context: "spec", "input", ... */
  const char *key;         /* the key taken; NULL: the view began */
  bool required;           /* taken with og_keys_need */
  const og_ynode *node;    /* a view: its mapping; a key: its value (NULL: absent) */
  const char *parent_what; /* a view: the context and key it is the value of (NULL: none) */
  const char *parent_key;
  bool in_sequence; /* a view: an item of that key's sequence */
} og_keys_event;

typedef struct og_keys_log {
  og_keys_event *events;
  size_t n, cap;
} og_keys_log;

typedef struct og_keys {
  const og_ynode *map;
  const char *what; /* "op", "input", ... for messages */
  og_keys_log *log; /* where to record what is taken, or NULL */
  bool used[64];
  const char *known[OG_KEYS_MAX];
  int nknown;
  const char *missing[OG_KEYS_MAX]; /* required keys not found, reported by finish */
  int nmissing;
} og_keys;

/* Starts a view, recording into `log` unless NULL; reports and returns false if `node`
 * is not a mapping. */
bool og_keys_begin(og_keys *k, const og_ynode *node, const char *what, og_keys_log *log, og_diag *d);
/* The value of `key`, or NULL. */
const og_ynode *og_keys_take(og_keys *k, const char *key);
/* Like og_keys_take but a missing key is an error (reported by og_keys_finish, after
 * unknown keys: a misspelt key is the cause, the missing one its effect). */
const og_ynode *og_keys_need(og_keys *k, const char *key, og_diag *d);
/* Reports every key that was not taken, then every required key that was missing. */
void og_keys_finish(og_keys *k, og_diag *d);

/* Scalar helpers: report "<what> must be a <kind>" and return false on mismatch. */
bool og_want_kind(const og_ynode *n, og_ynode_kind kind, const char *what, og_diag *d);
bool og_want_ident(const og_ynode *n, const char *what, og_diag *d);
/* Reports a name longer than OPSPEC_MAX_NAME characters. */
bool og_want_name_length(const og_ynode *n, const char *what, og_diag *d);
bool og_want_int(const og_ynode *n, const char *what, int64_t *out, og_diag *d);
bool og_is_ident(const char *s);

#endif /* OG_LOAD_KEYS_H */
