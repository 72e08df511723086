/* Rendering: the templates over the planned ops, into memory (render/render.c). */
#ifndef OG_RENDER_H
#define OG_RENDER_H

#include <stdbool.h>
#include <stddef.h>

#include "model/model.h"
#include "render/tmpl.h"
#include "util/buf.h"
#include "util/diag.h"

/* Every file of a run, rendered in memory before any is written: generation is
 * all-or-nothing, so a template error for the last op leaves the first op's files
 * untouched too. */
typedef struct og_produced {
  char **paths; /* out_dir/relative path */
  og_buf *texts;
  size_t n, cap, tcap;
} og_produced;

/* Renders every per-op and library template for `ops` of Python package `package` into
 * `produced` (paths under `out_dir`); writes nothing. Output depends only on the specs
 * and templates: ops are taken in name order. The fuzz target tests/fuzz/fuzz_spec.c
 * calls this too. */
bool og_render_all(og_tmpl_env *env, const og_op *const *ops, size_t nops, const char *out_dir, const char *package,
                   og_produced *produced, og_diag *d);
void og_produced_free(og_produced *produced);

/* Replaces each "#line __OPSPEC_LINE__" marker line (templates put one after every
 * block of user code) with a #line directive pointing back into `path` itself. */
void og_fix_line_markers(og_buf *text, const char *path);

#endif /* OG_RENDER_H */
