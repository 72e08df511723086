/* Diagnostics in the compiler's format:
 *
 *   specs/x.yaml:12:5: error: unknown key 'shpae' in input
 *     12 |   - {name: x, shpae: [n]}
 *        |               ^
 *
 * Every model object carries an og_loc, so every error points at the YAML (or template)
 * text it is about. Diagnostics are collected in an og_diag so tests can read them;
 * the CLI prints them to stderr.
 */
#ifndef OG_DIAG_H
#define OG_DIAG_H

#include <stdbool.h>
#include <stddef.h>

#include "util/buf.h"

/* A loaded text file: the path as given (used verbatim in messages and #line) and its
 * bytes, NUL-terminated. */
typedef struct og_source {
  char *path;
  char *text;
  size_t len;
} og_source;

/* A position in a source: 1-based line and column (columns count bytes). */
typedef struct og_loc {
  const og_source *src; /* NULL for "no location" */
  int line;
  int col;
} og_loc;

typedef struct og_diag {
  og_buf out;    /* every message shown, in order */
  int errors;    /* every error, shown or not */
  int max_shown; /* errors past this many are counted, not shown (0: show all), as
                     compilers' -fmax-errors does: 20,000 messages help nobody */
  bool dropping; /* the last error was not shown, so neither are its notes */
} og_diag;

/* Reads a whole file; on failure reports "path: error: cannot read: reason" and returns
 * NULL. */
og_source *og_source_read(const char *path, og_diag *d);
/* Wraps text that did not come from a file (tests, generated snippets). */
og_source *og_source_from_string(const char *path, const char *text);
void og_source_free(og_source *src);

/* The length of the line break at `p` (before `end`) as libyaml counts lines: "\r\n",
 * a lone "\r", "\n", and the UTF-8 NEL, LS and PS; 0 when `p` is not at one. Every
 * place that maps an og_loc's line to text counts lines with it, so a spec with any
 * kind of line end gets the same lines libyaml's marks name. */
size_t og_line_break(const char *p, const char *end);
/* The start of 1-based line `line` of `src` and, in *len, its length without the line
 * break; NULL when the source has fewer lines (or the line is the empty one after a
 * final line break). */
const char *og_source_line(const og_source *src, int line, size_t *len);

/* The location `offset` bytes into the single-line text that starts at `loc`. */
og_loc og_loc_advance(og_loc loc, size_t offset);

void og_diag_error(og_diag *d, og_loc loc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* A note attached to the previous error ("first defined here"); not counted. */
void og_diag_note(og_diag *d, og_loc loc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void og_diag_free(og_diag *d);
/* How many errors were counted but not shown. */
int og_diag_hidden(const og_diag *d);

#endif /* OG_DIAG_H */
