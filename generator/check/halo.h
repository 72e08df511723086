/* Checking `halo:` (docs/spec.md): which symbols may carry a halo. */
#ifndef OG_CHECK_HALO_H
#define OG_CHECK_HALO_H

#include "model/model.h"

void og_check_halo(const og_op *op, og_diag *d);

#endif /* OG_CHECK_HALO_H */
