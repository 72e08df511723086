/* Checking: the rules that span keys (names, bindings, bodies, derivatives) of a loaded
 * op; reports, never changes the model. */
#ifndef OG_CHECK_CHECK_H
#define OG_CHECK_CHECK_H

#include "model/model.h"

void og_spec_check(const og_op *op, og_diag *d);

/* Loading then checking, for a caller that wants a checked op or nothing (the driver,
 * the tests, the fuzz target): on any error, reports all it finds and returns NULL. */
og_op *og_spec_load(const char *path, og_diag *d);
/* The same for a source already read; the op owns it (freed with the op, or here). */
og_op *og_spec_load_source(og_source *src, og_diag *d);

#endif /* OG_CHECK_CHECK_H */
