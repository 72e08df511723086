/* The JSON Schema of a spec (opspec-gen --schema), for editors (yaml-language-server) and
 * for checking specs before a build. It is not written by hand: the loader itself runs
 * over a probe spec with a key log (load/keys.h), so every key any og_keys_take or
 * og_keys_need asks for is in it, in its context, required where the loader needs it;
 * a key added to the loader is in the next schema. Values the loader checks against a
 * table (dtypes, vmap methods, attribute types, reductions, derivative kinds) get that
 * table as an enum; other values are left to the loader, which reports them with a
 * line and column. */
#ifndef OG_LOAD_SCHEMA_H
#define OG_LOAD_SCHEMA_H

#include "util/buf.h"

/* Appends the schema (JSON, draft-07, ending in a newline) to `out`. */
void og_spec_schema(og_buf *out);

#endif /* OG_LOAD_SCHEMA_H */
