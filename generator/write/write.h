/* Writing: what reaches the disk (write/write.c).
 *
 * Files are written only when their text changed (so the build does not recompile
 * what did not change), through a temporary file and a rename (so an interrupted run
 * never leaves half a file). With --verify, nothing is written: every difference is
 * reported.
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

/* Writes `text` to `path` unless the file already holds exactly that. Returns 1 if
 * written, 0 if unchanged, -1 on error (reported). */
int og_write_if_changed(const char *path, const og_buf *text, og_diag *d);

#endif /* OG_WRITE_H */
