/* Loading `halo:`: the radius each output element reads along a symbol, which lets a
 * sharding rule keep that dim split and exchange only the edges (load/loaders.h). Which
 * symbols may carry a halo is the checker's (check/halo.c). */
#include <stdlib.h>
#include <string.h>

#include "load/loaders.h"

/* A radius is a count of neighbours: beyond this, a shard would exchange more than most
 * blocks hold, and the number is a typo. */
#define OG_HALO_MAX_RADIUS 1000000

static bool og_load_radius(const og_ynode *n, int64_t *out, og_diag *d) {
  if (!og_want_kind(n, OG_Y_SCALAR, "a halo radius", d)) return false;
  if (!og_parse_int64(n->text, out) || *out < 0 || *out > OG_HALO_MAX_RADIUS) {
    og_diag_error(d, n->loc, "halo radius '%s' is not a whole number from 0 to %d", n->text, OG_HALO_MAX_RADIUS);
    return false;
  }
  return true;
}

/* `n: 1` (as many before as after) or `n: [lo, hi]`. */
static bool og_load_radii(const og_ynode *v, int64_t *lo, int64_t *hi, og_diag *d) {
  if (v->kind == OG_Y_SEQ) {
    if (v->n != 2) {
      og_diag_error(d, v->loc, "a halo is one radius or two, [before, after]; got %zu items", v->n);
      return false;
    }
    bool ok = og_load_radius(v->items[0], lo, d);
    return og_load_radius(v->items[1], hi, d) && ok;
  }
  if (!og_load_radius(v, lo, d)) return false;
  *hi = *lo;
  return true;
}

void og_load_halo(og_op *op, const og_ynode *m, og_diag *d) {
  op->halo = og_xcalloc(m->n ? m->n : 1, sizeof *op->halo);
  for (size_t i = 0; i < m->n; ++i) {
    const og_ynode *key = m->keys[i];
    if (!og_want_ident(key, "halo symbol", d)) continue;
    int64_t lo = 0, hi = 0;
    if (!og_load_radii(m->items[i], &lo, &hi, d)) continue;
    op->halo[op->nhalo++] = (og_halo){key->loc, og_xstrdup(key->text), lo, hi};
  }
}
