/* Loading: a spec's YAML to the op model, one key group at a time (load/load.c). */
#ifndef OG_LOAD_H
#define OG_LOAD_H

#include "load/keys.h"
#include "model/model.h"

/* Loads one spec and completes its model (symbols collected, type variables bound,
 * aliases resolved); does not check the rules that span keys (check/check.h). With a
 * `log`, records every mapping viewed and key taken (load/schema.c). On any error,
 * reports all it finds through `d` and returns NULL. The op owns `src` (freed with the
 * op, or here on error). */
og_op *og_load_spec(og_source *src, og_keys_log *log, og_diag *d);

#endif /* OG_LOAD_H */
