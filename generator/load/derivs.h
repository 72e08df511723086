/* The loading half of `derivatives:` (docs/gradients.md); check/derivs.h checks it. */
#ifndef OG_LOAD_DERIVS_H
#define OG_LOAD_DERIVS_H

#include "model/model.h"

/* Loads `derivatives:` (a mapping of input name -> {elementwise|jvp|transpose: ...})
 * into op->derivs, scanning each formula; needs the arrays loaded. */
void og_load_derivatives(og_op *op, const og_ynode *n, og_diag *d);

#endif /* OG_LOAD_DERIVS_H */
