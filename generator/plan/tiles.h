/* float16 tiles: whether an op's float16 variants run its float32 kernel on tiles that
 * F16C widens and narrows (runtime/include/opspec/lowp.h, OPSPEC_CPU_TILE), instead of
 * converting each element in the loop with a call (plan/lowp.h). A call of a vector
 * conversion saves every live vector register around it; a tile converts 8 or 16
 * elements an instruction, outside the loop, and leaves the float32 loop as it is.
 *
 * The tile run computes the float32 kernel's values, rounded once to float16, where
 * the kernel's body touches its arrays only at the launch index: a 1-D launch, a body
 * that vectorises (plan.h's cpu_simd: no loop, jump or reject of its own), `i` used only
 * as `a[i]` of an input or output, each float16 array read only as `x[i]` or stored
 * only as `y[i] = v` (never read back, which in the loop would see the rounded float16),
 * or, for a float16 input of a few fixed elements (`s: [1]`), read anywhere, widened
 * whole once. Each float16 output must be stored by a statement that runs for every
 * index (at the body's top level, not under an `if` or in a block): an element the loop
 * leaves unwritten keeps its bits, which a tile cannot know. Arrays of other dtypes
 * indexed at `i` are moved with the tile. Every array at `i` has the launch's shape (a
 * tile widens all its elements, whether the body reads them or not); the prologue, run
 * once per tile, has no loop; at most OG_TILE_MAX_TILED arrays take a tile. Anything
 * else keeps the in-loop conversions. */
#ifndef OG_PLAN_TILES_H
#define OG_PLAN_TILES_H

#include <stdbool.h>

#include "model/model.h"

struct og_op_plan; /* plan/plan.h, which holds an og_tiles */

typedef enum og_tile_role {
  OG_TILE_NONE,   /* not moved: the call's own pointer (an array the body does not name) */
  OG_TILE_WIDEN,  /* a float16 input read as x[i]: each tile widened before the float kernel */
  OG_TILE_NARROW, /* a float16 output stored as y[i] = v: each tile narrowed after it */
  OG_TILE_WHOLE,  /* a float16 input of at most OG_TILE_WHOLE_MAX fixed elements: widened whole, once */
  OG_TILE_SHIFT,  /* an array of another dtype at a[i]: its pointer moved to the tile's start */
  OG_TILE_KEEP,   /* an array of another dtype named but never at i: the call's own pointer */
} og_tile_role;

#define OG_TILE_WHOLE_MAX 64
#define OG_TILE_MAX_TILED 8 /* widened and narrowed arrays: 2 KiB of stack each */

typedef struct og_tiles {
  og_tile_role inputs[OPSPEC_MAX_INPUTS], outputs[OPSPEC_MAX_OUTPUTS];
} og_tiles;

/* Whether `op`'s float16 variants run on tiles (each array's role in `tiles`); false
 * where they convert in the loop. Reads the plan's other CPU facts. */
bool og_tiles_plan(const og_op *op, const struct og_op_plan *plan, og_tiles *tiles);

/* The elements of an array whose dims are all fixed (an OG_TILE_WHOLE input's), or -1. */
long long og_tile_fixed_size(const og_array *a);

/* Whether variant `pick` (a choice per type variable) runs on tiles, given that the op
 * does: every type variable that may be 2-byte is float16 there, and a float32 twin
 * exists (its choice per variable in `twin`). */
bool og_tiles_variant(const og_op *op, const size_t *pick, size_t *twin);

#endif /* OG_PLAN_TILES_H */
