/* Writing: what reaches the disk (write/write.c).
 *
 * Files are written only when their text changed (so the build does not recompile
 * what did not change), and only regular files: a FIFO, a device or a directory where a
 * file goes is refused by name. A set of files is written all or none: each changed
 * text goes to a temporary file beside its target first, and only when every one is
 * written are they renamed into place (a rename that fails puts back those already
 * done), so a failed or interrupted run leaves the tree as it was. An old file is read
 * only as far as the new text's length plus one byte. With --verify, nothing is
 * written: every difference is reported.
 */
#ifndef OG_WRITE_H
#define OG_WRITE_H

#include <stdbool.h>

#include "render/render.h"
#include "util/diag.h"

typedef struct og_write_stats {
  int files;   /* files produced */
  int written; /* of which changed on disk (with verify: differ from what is on disk) */
  int removed; /* stale files pruned (with verify: stale files found) */
} og_write_stats;

/* Writes every file of `produced`, then removes files in `out_dir`/ops that it does not
 * hold (a deleted spec leaves nothing behind). With `verify`, compares instead and
 * returns false if `out_dir` is not exactly what would be written (each difference
 * reported in `d`). */
bool og_write_all(const og_produced *produced, const char *out_dir, bool verify, og_write_stats *stats, og_diag *d);

/* Writes each of `texts` to its path of `paths` unless the file already holds exactly
 * that: all of them, or none if any cannot be written. Returns how many were written, or
 * -1 on error (reported). */
int og_write_files(char *const *paths, const og_buf *texts, size_t n, og_diag *d);
/* The same for one file: 1 if written, 0 if unchanged, -1 on error (reported). */
int og_write_if_changed(const char *path, const og_buf *text, og_diag *d);
/* Whether `path` holds exactly `text`: 1 if so, 0 if it differs or is missing, -1 if it
 * is not a regular file or cannot be read (reported). */
int og_file_holds(const char *path, const og_buf *text, og_diag *d);

#endif /* OG_WRITE_H */
