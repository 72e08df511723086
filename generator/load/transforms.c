/* Loading `vmap:`, `reduce:` and `independent:`: what JAX's transformations (batching,
 * sharding) may do with the op (load/loaders.h). */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "load/loaders.h"
#include "model/dtype.h"

void og_load_vmap(og_op *op, const og_ynode *n, og_diag *d) {
  for (int m = 0; m < OG_VMAP_NMETHODS; ++m)
    if (strcmp(og_vmap_names[m], n->text) == 0) {
      op->vmap = (og_vmap)m;
      return;
    }
  og_buf expected = {0};
  og_vocab_list(&expected, og_vmap_names, OG_VMAP_NMETHODS, ", ");
  og_diag_error(d, n->loc, "unknown vmap method '%s' (expected one of %s)", n->text, og_buf_str(&expected));
  og_buf_free(&expected);
}

/* `reduce: {symbol: sum}`; the checker says which symbols may be reduced. */
void og_load_reduce(og_op *op, const og_ynode *m, og_diag *d) {
  op->reduce = og_xcalloc(m->n ? m->n : 1, sizeof *op->reduce);
  for (size_t i = 0; i < m->n; ++i) {
    const og_ynode *key = m->keys[i], *how = m->items[i];
    if (strcmp(key->text, "...") != 0 && !og_want_ident(key, "reduced symbol", d)) continue;
    if (!og_want_kind(how, OG_Y_SCALAR, "a reduction", d)) continue;
    int found = -1;
    for (int h = 0; h < OG_REDUCE_NHOWS; ++h)
      if (strcmp(og_reduce_names[h], how->text) == 0) found = h;
    if (found < 0) {
      og_buf expected = {0};
      og_vocab_list(&expected, og_reduce_names, OG_REDUCE_NHOWS, ", ");
      og_diag_error(d, how->loc, "unknown reduction '%s' (expected one of %s)", how->text, og_buf_str(&expected));
      og_buf_free(&expected);
      continue;
    }
    op->reduce[op->nreduce++] = (og_reduction){key->loc, og_xstrdup(key->text), (og_reduce_how)found};
  }
}

/* `independent: [n, ...]`; the checker says which symbols may be declared. */
void og_load_independent(og_op *op, const og_ynode *list, og_diag *d) {
  op->independent = og_xcalloc(list->n ? list->n : 1, sizeof *op->independent);
  for (size_t i = 0; i < list->n; ++i) {
    const og_ynode *item = list->items[i];
    if (!og_want_kind(item, OG_Y_SCALAR, "an independent symbol", d)) continue;
    if (strcmp(item->text, "...") != 0 && !og_want_ident(item, "independent symbol", d)) continue;
    bool twice = false;
    for (size_t j = 0; j < op->nindependent; ++j) twice |= strcmp(op->independent[j].symbol, item->text) == 0;
    if (twice) {
      og_diag_error(d, item->loc, "'%s' is listed twice in 'independent'", item->text);
      continue;
    }
    op->independent[op->nindependent++] = (og_independent){item->loc, og_xstrdup(item->text)};
  }
}
