/* Loading `launch:`, `threads_per_block:`, `prologue:`, `kernel:`, `cpu:` and `cuda:`: the
 * bodies and how they launch (load/loaders.h). */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "load/loaders.h"
#include "model/dtype.h"

void og_load_launch(og_launch *l, const og_ynode *n, const char *what, og_diag *d) {
  l->loc = n->loc;
  /* A single extent may be written without brackets: `launch: n`. */
  if (n->kind == OG_Y_SCALAR) {
    l->extents[0] = og_load_expr(n, what, d);
    l->n = 1;
    return;
  }
  if (!og_want_kind(n, OG_Y_SEQ, what, d)) return;
  /* `[cdiv(n, 256), cdiv(m, 16)]` is four items to YAML: the quoting advice, not a count. */
  bool cut = false;
  for (size_t i = 0; i < n->n; ++i) cut |= og_cut_at_comma(n->items[i], what, d);
  if (cut) return;
  if (n->n < 1 || n->n > 3) {
    og_diag_error(d, n->loc, "%s must have 1 to 3 extents, got %zu", what, n->n);
    return;
  }
  for (size_t i = 0; i < n->n; ++i) l->extents[i] = og_load_expr(n->items[i], what, d);
  l->n = n->n;
}

void og_load_body(og_body *b, const og_ynode *n, const char *what, og_diag *d) {
  if (!og_want_kind(n, OG_Y_SCALAR, what, d)) return;
  b->loc = n->loc;
  b->line = n->content_line;
  b->text = og_xstrdup(n->text);
  b->present = true;
  b->quoted = n->style == OG_YS_SINGLE || n->style == OG_YS_DOUBLE;
  /* Generated code indents the body as the YAML block does, so with #line the
   * compiler's columns are the spec's columns too. */
  b->indent = 4;
  if (n->style == OG_YS_LITERAL || n->style == OG_YS_FOLDED) {
    size_t len;
    const char *p = og_source_line(n->loc.src, n->content_line, &len);
    size_t spaces = 0;
    while (p && spaces < len && p[spaces] == ' ') ++spaces;
    if (p && spaces < len) b->indent = (int)spaces;
  }
}

void og_load_cuda(og_op *op, const og_ynode *n, og_keys_log *log, og_diag *d) {
  if (!og_want_kind(n, OG_Y_SEQ, "'cuda'", d)) return;
  size_t count = og_capped(n, OPSPEC_MAX_CUDA_KERNELS, "cuda kernels", d);
  op->cuda = og_xcalloc(count ? count : 1, sizeof *op->cuda);
  for (size_t i = 0; i < count; ++i) {
    og_cuda_kernel *kern = &op->cuda[op->ncuda++];
    og_keys k;
    kern->loc = n->items[i]->loc;
    if (!og_keys_begin(&k, n->items[i], "cuda kernel", log, d)) continue;
    const og_ynode *name = og_keys_need(&k, "name", d);
    const og_ynode *body = og_keys_need(&k, "body", d);
    const og_ynode *launch = og_keys_take(&k, "launch");
    const og_ynode *grid = og_keys_take(&k, "grid");
    const og_ynode *block = og_keys_take(&k, "block");
    const og_ynode *threads = og_keys_take(&k, "threads_per_block");
    const og_ynode *shared = og_keys_take(&k, "shared_mem");
    og_keys_finish(&k, d);
    if (name && og_want_ident(name, "cuda kernel name", d)) {
      kern->name = og_xstrdup(name->text);
      kern->loc = name->loc;
    }
    if (body) og_load_body(&kern->body, body, "cuda kernel body", d);
    if (launch) og_load_launch(&kern->launch, launch, "'launch'", d);
    if (grid) og_load_launch(&kern->grid, grid, "'grid'", d);
    if (block) og_load_launch(&kern->block, block, "'block'", d);
    if (threads) og_load_launch(&kern->threads, threads, "'threads_per_block'", d);
    if (shared) kern->shared_mem = og_load_expr(shared, "'shared_mem'", d);
  }
}
