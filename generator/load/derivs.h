/* The `derivatives:` section (docs/gradients.md): loading, checking, freeing. */
#ifndef OG_SPEC_DERIVS_H
#define OG_SPEC_DERIVS_H

#include "model/model.h"

/* Loads `derivatives:` (a mapping of input name -> {elementwise|jvp|transpose: ...})
 * into op->derivs, scanning each formula; needs the arrays loaded. */
void og_load_derivatives(og_op *op, const og_ynode *n, og_diag *d);
/* Resolves every name a formula reads (checker; needs the op complete). */
void og_check_derivatives(const og_op *op, og_diag *d);
void og_derivatives_free(og_op *op);

#endif /* OG_SPEC_DERIVS_H */
