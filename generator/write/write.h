/* Emitting: render every template for every op and write the results.
 *
 * Files are written only when their text changed (so the build does not recompile
 * what did not change), through a temporary file and a rename (so an interrupted run
 * never leaves half a file). Output depends only on the specs and templates: ops are
 * sorted, paths are the relative ones given on the command line.
 */
#ifndef OG_EMIT_H
#define OG_EMIT_H

#include <stdbool.h>
#include <stddef.h>

#include "util/diag.h"
#include "model/model.h"
#include "render/tmpl.h"

typedef struct og_emit_stats {
  int files;   /* files produced */
  int written; /* of which changed on disk (with verify: differ from what is on disk) */
  int removed; /* stale files pruned (with verify: stale files found) */
} og_emit_stats;

typedef struct og_emit_opts {
  const char *package; /* the Python package the ops belong to; templates see it as `package` */
  bool verify;         /* write nothing: report every file that differs, is missing or is stale */
} og_emit_opts;

/* Every file of a run, rendered in memory before any is written: generation is
 * all-or-nothing, so a template error for the last op leaves the first op's files
 * untouched too. */
typedef struct og_produced {
  char **paths; /* out_dir/relative path */
  og_buf *texts;
  size_t n, cap, tcap;
} og_produced;

/* Renders every per-op and library template for `ops` of Python package `package` into
 * `produced` (paths under `out_dir`); writes nothing. The fuzz target
 * tests/fuzz/fuzz_spec.c calls this too. */
bool og_emit_render(og_tmpl_env *env, og_op *const *ops, size_t nops, const char *out_dir, const char *package,
                    og_produced *produced, og_diag *d);
void og_produced_free(og_produced *produced);

/* Renders all per-op and library templates for `ops` into `out_dir`, then removes files
 * in `out_dir`/ops that no op produced (a deleted spec leaves nothing behind). With
 * opts->verify, compares instead and returns false if `out_dir` is not exactly what
 * would be written (each difference reported in `d`). */
bool og_emit_all(og_tmpl_env *env, og_op *const *ops, size_t nops, const char *out_dir, const og_emit_opts *opts,
                 og_emit_stats *stats, og_diag *d);

/* Replaces each "#line __OPSPEC_LINE__" marker line (templates put one after every
 * block of user code) with a #line directive pointing back into `path` itself. */
void og_fix_line_markers(og_buf *text, const char *path);

/* Writes `text` to `path` unless the file already holds exactly that. Returns 1 if
 * written, 0 if unchanged, -1 on error (reported). */
int og_write_if_changed(const char *path, const og_buf *text, og_diag *d);

#endif /* OG_EMIT_H */
