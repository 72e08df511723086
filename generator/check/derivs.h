/* The checking half of `derivatives:` (docs/gradients.md); load/derivs.h loads it. */
#ifndef OG_CHECK_DERIVS_H
#define OG_CHECK_DERIVS_H

#include "model/model.h"

/* Resolves every name a formula reads (needs the op complete). */
void og_check_derivatives(const og_op *op, og_diag *d);

#endif /* OG_CHECK_DERIVS_H */
