/* opspec-gen --schema; see load/schema.h. */
#include "load/schema.h"

#include <stdlib.h>
#include <string.h>

#include "load/keys.h"
#include "load/load.h"
#include "model/dtype.h"

/* A spec with every mapping the loader views (each array role, a check, an attribute, a
 * CUDA kernel), so that every og_keys view runs once. Whether it is a valid op does not
 * matter: the loader takes its keys before it judges their values. */
static const char og_schema_probe[] =
    "op: probe\n"
    "inputs:\n"
    "  - {name: x, dtype: float32, shape: [n], check: {min: 0}}\n"
    "outputs:\n"
    "  - {name: y, dtype: float32, shape: [n]}\n"
    "scratch:\n"
    "  - {name: s, dtype: float32, shape: [n]}\n"
    "attrs:\n"
    "  - {name: a, type: float64}\n"
    "cuda:\n"
    "  - {name: k, body: ';'}\n";

static void og_json_enum(og_buf *out, const char *const *names, size_t n) {
  og_buf_puts(out, "{\"enum\": [");
  for (size_t i = 0; i < n; ++i) og_buf_printf(out, "%s\"%s\"", i ? ", " : "", names[i]);
  og_buf_puts(out, "]}");
}

/* A context's name as a definition: "scratch buffer" -> "scratch_buffer". */
static void og_json_def_name(og_buf *out, const char *what) {
  for (const char *c = what; *c; ++c) og_buf_putc(out, *c == ' ' ? '_' : *c);
}

/* The values the loader checks against one of its tables, by key. */
static bool og_schema_table_value(og_buf *out, const char *key) {
  const char *dtypes[OG_NDTYPES];
  for (int t = 0; t < OG_NDTYPES; ++t) dtypes[t] = og_dtypes[t].name;
  if (strcmp(key, "types") == 0) {
    og_buf_puts(out, "{\"type\": \"object\", \"additionalProperties\": {\"type\": \"array\", \"items\": ");
    og_json_enum(out, dtypes, OG_NDTYPES);
    og_buf_puts(out, "}}");
  } else if (strcmp(key, "dtype") == 0) { /* a dtype, or a type variable */
    og_buf_puts(out, "{\"anyOf\": [");
    og_json_enum(out, dtypes, OG_NDTYPES);
    og_buf_puts(out, ", {\"type\": \"string\", \"pattern\": \"^[A-Za-z_][A-Za-z0-9_]*$\"}]}");
  } else if (strcmp(key, "vmap") == 0) {
    og_json_enum(out, og_vmap_names, OG_VMAP_NMETHODS);
  } else if (strcmp(key, "type") == 0) {
    const char *names[OG_ATTR_NTYPES];
    for (int t = 0; t < OG_ATTR_NTYPES; ++t) names[t] = og_attr_types[t].name;
    og_json_enum(out, names, OG_ATTR_NTYPES);
  } else if (strcmp(key, "reduce") == 0) {
    og_buf_puts(out, "{\"type\": \"object\", \"additionalProperties\": ");
    og_json_enum(out, og_reduce_names, OG_REDUCE_NHOWS);
    og_buf_puts(out, "}");
  } else if (strcmp(key, "halo") == 0) { /* symbol -> radius, or [before, after] */
    og_buf_puts(out,
                "{\"type\": \"object\", \"additionalProperties\": {\"anyOf\": [{\"type\": \"integer\", "
                "\"minimum\": 0}, {\"type\": \"array\", \"items\": {\"type\": \"integer\", \"minimum\": 0}, "
                "\"minItems\": 2, \"maxItems\": 2}]}}");
  } else if (strcmp(key, "derivatives") == 0) { /* input name -> exactly one kind */
    og_buf_puts(
        out,
        "{\"type\": \"object\", \"properties\": {\"let\": {\"type\": \"object\", "
        "\"additionalProperties\": {\"type\": [\"string\", \"number\"]}}}, \"additionalProperties\": {\"type\": "
        "\"object\", \"properties\": {");
    for (int k = 0; k < OG_DERIV_NKINDS; ++k)
      og_buf_printf(out, "%s\"%s\": %s", k ? ", " : "", og_deriv_kind_names[k],
                    k == OG_DERIV_LINEAR ? "{\"const\": \"halo\"}" : "{}");
    og_buf_puts(out, "}, \"minProperties\": 1, \"maxProperties\": 1, \"additionalProperties\": false}}");
  } else {
    return false;
  }
  return true;
}

static bool og_same(const char *a, const char *b) { return a && b && strcmp(a, b) == 0; }

/* The schema of `key`'s value in context `what`: a view of its own (or a sequence of
 * them), a table's values, or anything (the loader judges it). */
static void og_schema_value(og_buf *out, const og_keys_log *log, const char *what, const char *key) {
  for (size_t i = 0; i < log->n; ++i) {
    const og_keys_event *e = &log->events[i];
    if (e->key || !og_same(e->parent_what, what) || !og_same(e->parent_key, key)) continue;
    og_buf_puts(out, e->in_sequence ? "{\"type\": \"array\", \"items\": {\"$ref\": \"#/definitions/"
                                    : "{\"$ref\": \"#/definitions/");
    og_json_def_name(out, e->what);
    og_buf_puts(out, e->in_sequence ? "\"}}" : "\"}");
    return;
  }
  if (!og_schema_table_value(out, key)) og_buf_puts(out, "{}");
}

/* "type", "properties", "required", "additionalProperties" of context `what`, each key
 * once, in the order the loader takes them. */
static void og_schema_object(og_buf *out, const og_keys_log *log, const char *what, const char *indent) {
  og_buf_printf(out, "%s\"type\": \"object\",\n%s\"properties\": {", indent, indent);
  og_buf required = {0};
  int nkeys = 0, nrequired = 0;
  for (size_t i = 0; i < log->n; ++i) {
    const og_keys_event *e = &log->events[i];
    if (!e->key || !og_same(e->what, what)) continue;
    bool seen = false, need = false;
    for (size_t j = 0; j < log->n; ++j) {
      const og_keys_event *f = &log->events[j];
      if (!f->key || !og_same(f->what, what) || !og_same(f->key, e->key)) continue;
      if (j < i) seen = true;
      need |= f->required;
    }
    if (seen) continue;
    og_buf_printf(out, "%s\n%s  \"%s\": ", nkeys++ ? "," : "", indent, e->key);
    og_schema_value(out, log, what, e->key);
    if (need) og_buf_printf(&required, "%s\"%s\"", nrequired++ ? ", " : "", e->key);
  }
  og_buf_printf(out, "\n%s},\n", indent);
  if (nrequired) og_buf_printf(out, "%s\"required\": [%s],\n", indent, og_buf_str(&required));
  og_buf_printf(out, "%s\"additionalProperties\": false", indent);
  og_buf_free(&required);
}

void og_spec_schema(og_buf *out) {
  og_keys_log log = {0};
  og_diag d = {.max_shown = 1};
  og_op_free(og_load_spec(og_source_from_string("<schema probe>", og_schema_probe), &log, &d));
  og_diag_free(&d);

  og_buf_puts(out,
              "{\n"
              "  \"$schema\": \"http://json-schema.org/draft-07/schema#\",\n"
              "  \"title\": \"opspec op spec\",\n"
              "  \"description\": \"The keys of an opspec op spec (docs/spec.md) as opspec-gen loads them "
              "(opspec-gen --schema)\",\n");
  const char *root = log.n ? log.events[0].what : "spec";
  og_schema_object(out, &log, root, "  ");
  og_buf_puts(out, ",\n  \"definitions\": {");
  int ndefs = 0;
  for (size_t i = 0; i < log.n; ++i) {
    const og_keys_event *e = &log.events[i];
    if (e->key || og_same(e->what, root)) continue;
    bool seen = false;
    for (size_t j = 0; j < i && !seen; ++j) seen = !log.events[j].key && og_same(log.events[j].what, e->what);
    if (seen) continue;
    og_buf_puts(out, ndefs++ ? ",\n    \"" : "\n    \"");
    og_json_def_name(out, e->what);
    og_buf_puts(out, "\": {\n");
    og_schema_object(out, &log, e->what, "      ");
    og_buf_puts(out, "\n    }");
  }
  og_buf_puts(out, "\n  }\n}\n");
  free(log.events);
}
