#include "plan/tiles.h"

#include <string.h>

#include "plan/lowp.h"
#include "plan/plan.h"
#include "util/c_tokens.h"

/* How the body names one array: at the launch index, and otherwise. */
typedef struct og_tile_uses {
  size_t at_i, other, reads_at_i; /* reads_at_i: an `a[i]` not stored to by a plain `=` */
  size_t stored_always;           /* `a[i] = v;` as a statement of its own, outside any block or `if` */
} og_tile_uses;

/* Whether tokens k.. are `[ i ]`. */
static bool og_tile_at_i(const og_tokens *t, size_t k, const char *index) {
  return og_token_is(t, k, "[") && og_token_is(t, k + 1, index) && og_token_is(t, k + 2, "]");
}

/* The array named by token k, as an index into `arrays`, or -1. */
static long og_tile_array(const og_array *const *arrays, size_t n, const og_tokens *t, size_t k) {
  for (size_t a = 0; a < n; ++a)
    if (!strcmp(arrays[a]->name, t->items[k].text)) return (long)a;
  return -1;
}

/* Counts the uses in `code`; false where it names the launch index, or opspec's own
 * loop state, other than as `a[i]` (in_loop false: the prologue, where `i` is not). */
static bool og_tile_scan(const char *code, bool in_loop, const og_array *const *arrays, size_t n, og_tile_uses *uses) {
  static const char *const loop_state[] = {"opspec_begin", "opspec_end", "opspec_args", "opspec_argp"};
  og_tokens t = {0};
  og_tokenize(code, true, &t);
  bool ok = true;
  int depth = 0; /* of braces */
  for (size_t k = 0; k < t.n && ok; ++k) {
    const char *w = t.items[k].text;
    depth += !strcmp(w, "{") - !strcmp(w, "}");
    /* A digraph (`<%` is a brace) or a trigraph would hide a block from the depth. */
    if (og_tokens_digraph(&t, k)) ok = false;
    /* A prologue runs once per tile: no loop in it. */
    if (!in_loop)
      ok = ok && strcmp(w, "for") != 0 && strcmp(w, "while") != 0 && strcmp(w, "do") != 0 && strcmp(w, "goto") != 0;
    if (w[0] == '#') ok = false; /* a macro could name anything */
    for (size_t s = 0; s < sizeof loop_state / sizeof loop_state[0]; ++s) ok = ok && strcmp(w, loop_state[s]) != 0;
    if (!strcmp(w, "i") && !og_token_is_member(&t, k))
      ok = ok && in_loop && k >= 2 && og_token_is(&t, k - 1, "[") && og_token_is(&t, k + 1, "]") &&
           og_tile_array(arrays, n, &t, k - 2) >= 0 && !og_token_is_member(&t, k - 2);
    long a = og_token_is_member(&t, k) ? -1 : og_tile_array(arrays, n, &t, k);
    if (a < 0) continue;
    if (in_loop && og_tile_at_i(&t, k + 1, "i")) {
      uses[a].at_i++;
      /* `a[i] = ` stores; `a[i] == ` and `a[i] += ` read */
      if (!og_token_is_assign(&t, k + 4)) uses[a].reads_at_i++;
      /* A statement that starts the body or follows one: it runs for every index. */
      else if (depth == 0 && (k == 0 || og_token_is(&t, k - 1, ";") || og_token_is(&t, k - 1, "}")))
        uses[a].stored_always++;
    } else {
      uses[a].other++;
    }
  }
  og_tokens_free(&t);
  return ok;
}

long long og_tile_fixed_size(const og_array *a) {
  long long size = 1;
  for (size_t d = 0; d < a->ndims; ++d) {
    if (a->dims[d].kind != OG_DIM_INT) return -1;
    size *= a->dims[d].value;
  }
  return a->has_ellipsis ? -1 : size;
}

/* The part array `arr` takes in the tiles, from its uses; `ok` false where it rules
 * tiles out. */
static og_tile_role og_tile_role_of(const og_op *op, const og_array *arr, const og_tile_uses *u, bool *ok) {
  bool input = arr->role == OG_INPUT;
  bool twobyte = arr->typevar >= 0 ? og_lowp_typevar(&op->types[arr->typevar])
                                   : !strcmp(arr->dtype, "float16") || !strcmp(arr->dtype, "bfloat16");
  if (twobyte && arr->typevar < 0) *ok = false; /* a fixed-dtype 2-byte array: no float32 twin */
  if (!u->at_i && !u->other) return OG_TILE_NONE;
  if (u->at_i && u->other) *ok = false; /* at i and elsewhere: a moved pointer would break the other uses */
  if (!twobyte) return u->at_i ? OG_TILE_SHIFT : OG_TILE_KEEP;
  if (u->at_i) {
    if (!input && u->reads_at_i) *ok = false; /* a float16 output read back */
    /* An element the body may leave unwritten keeps its bits in the loop (an output
     * that aliases an input keeps the input's); a tile would narrow a stale float. */
    if (!input && !u->stored_always) *ok = false;
    return input ? OG_TILE_WIDEN : OG_TILE_NARROW;
  }
  long long size = og_tile_fixed_size(arr);
  if (!input || size < 0 || size > OG_TILE_WHOLE_MAX) *ok = false;
  return OG_TILE_WHOLE;
}

/* An array's shape as written ("...", "n", "rows,cols"), into `out`. */
static void og_tile_shape(const og_array *a, og_buf *out) {
  for (size_t d = 0; d < a->ndims; ++d) og_buf_printf(out, "%s%s", d ? "," : "", a->dims[d].text);
}

/* The shape the launch runs over, as og_tile_shape writes it, where its one extent is a
 * symbol `n` (the shape [n]) or an array's `<name>_size` (that array's shape); false for
 * any other extent. An array read at `i` is widened a tile at a time whether or not the
 * body reads each element, and one of another dtype moved with the tile, so each must
 * have the launch's elements: its shape is written as the launch's. */
static bool og_tile_launch_shape(const og_op *op, const og_array *const *arrays, size_t n, og_buf *out) {
  const og_expr *e = op->launch.extents[0];
  if (!e || e->kind != OG_E_NAME) return false;
  size_t len = strlen(e->name);
  for (size_t a = 0; a < n; ++a)
    if (len == strlen(arrays[a]->name) + 5 && !strncmp(e->name, arrays[a]->name, len - 5) &&
        !strcmp(e->name + len - 5, "_size")) {
      og_tile_shape(arrays[a], out);
      return true;
    }
  og_buf_puts(out, e->name);
  return true;
}

bool og_tiles_plan(const og_op *op, const og_op_plan *plan, og_tiles *tiles) {
  memset(tiles, 0, sizeof *tiles);
  if (!plan->cpu_portable || !plan->cpu_simd || !plan->cpu_lowp || plan->rejects || op->launch.n != 1 || op->nscratch ||
      op->ninputs + op->noutputs > OPSPEC_MAX_INPUTS)
    return false;
  bool any_float16 = false;
  for (size_t t = 0; t < op->ntypes; ++t)
    for (size_t c = 0; c < op->types[t].nchoices; ++c) any_float16 |= !strcmp(op->types[t].choices[c], "float16");
  if (!any_float16) return false;

  const og_array *arrays[OPSPEC_MAX_INPUTS];
  size_t n = 0;
  for (size_t a = 0; a < op->ninputs; ++a) arrays[n++] = &op->inputs[a];
  for (size_t a = 0; a < op->noutputs; ++a) arrays[n++] = &op->outputs[a];
  og_tile_uses uses[OPSPEC_MAX_INPUTS] = {{0}};
  if (!og_tile_scan(op->kernel.text, true, arrays, n, uses)) return false;
  if (op->prologue.present && !og_tile_scan(op->prologue.text, false, arrays, n, uses)) return false;

  og_buf launch = {0}, shape = {0};
  bool ok = og_tile_launch_shape(op, arrays, n, &launch);
  size_t ntiles = 0; /* arrays with a tile on the stack */
  for (size_t a = 0; a < n && ok; ++a) {
    const og_array *arr = arrays[a];
    og_tile_role role = og_tile_role_of(op, arr, &uses[a], &ok);
    if (ok && (role == OG_TILE_WIDEN || role == OG_TILE_SHIFT)) {
      og_buf_clear(&shape);
      og_tile_shape(arr, &shape);
      ok = !strcmp(og_buf_str(&shape), og_buf_str(&launch));
    }
    ntiles += role == OG_TILE_WIDEN || role == OG_TILE_NARROW;
    if (arr->role == OG_INPUT)
      tiles->inputs[a] = role;
    else
      tiles->outputs[a - op->ninputs] = role;
  }
  og_buf_free(&launch);
  og_buf_free(&shape);
  return ok && ntiles <= OG_TILE_MAX_TILED;
}

bool og_tiles_variant(const og_op *op, const size_t *pick, size_t *twin) {
  bool float16 = false;
  for (size_t t = 0; t < op->ntypes; ++t) {
    const og_typevar *v = &op->types[t];
    twin[t] = pick[t];
    if (!og_lowp_typevar(v)) continue;
    if (strcmp(v->choices[pick[t]], "float16") != 0) return false;
    float16 = true;
    size_t c = 0;
    while (c < v->nchoices && strcmp(v->choices[c], "float32") != 0) ++c;
    if (c == v->nchoices) return false;
    twin[t] = c;
  }
  return float16;
}
