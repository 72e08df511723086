/* The loaders of each key group, a file each in load/, for load/load.c, which runs them
 * in the order the spec's keys depend on one another. Private to load/. */
#ifndef OG_LOADERS_H
#define OG_LOADERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "load/keys.h"
#include "model/model.h"

/* load/scalars.c: scalars every loader reads. */
og_loc og_scalar_text_loc(const og_ynode *n);
size_t og_capped(const og_ynode *n, size_t max, const char *what, og_diag *d);
bool og_parse_int64(const char *text, int64_t *out);
bool og_cut_at_comma(const og_ynode *n, const char *what, og_diag *d);
og_expr *og_load_expr(const og_ynode *n, const char *what, og_diag *d);
bool og_load_check_flag(const og_ynode *n, const char *what, og_diag *d);

/* load/arrays.c: inputs, outputs, scratch (with check), types, aliases. */
void og_load_types(og_op *op, const og_ynode *n, og_diag *d);
og_array *og_load_arrays(og_op *op, const og_ynode *n, og_array_role role, size_t *count, og_keys_log *log, og_diag *d);
void og_load_aliases(og_op *op, const og_ynode *m, og_diag *d);

/* load/attrs.c: attrs. */
void og_load_attrs(og_op *op, const og_ynode *n, og_keys_log *log, og_diag *d);

/* load/kernels.c: launch, threads_per_block, prologue, kernel, cpu, cuda. */
void og_load_launch(og_launch *l, const og_ynode *n, const char *what, og_diag *d);
void og_load_body(og_body *b, const og_ynode *n, const char *what, og_diag *d);
void og_load_cuda(og_op *op, const og_ynode *n, og_keys_log *log, og_diag *d);

/* load/transforms.c: vmap, reduce, independent. */
void og_load_vmap(og_op *op, const og_ynode *n, og_diag *d);
void og_load_reduce(og_op *op, const og_ynode *m, og_diag *d);
void og_load_independent(og_op *op, const og_ynode *list, og_diag *d);

/* load/require.c: require. */
void og_load_require(og_op *op, const og_ynode *n, og_diag *d);

/* load/halo.c: halo. */
void og_load_halo(og_op *op, const og_ynode *m, og_diag *d);

#endif /* OG_LOADERS_H */
