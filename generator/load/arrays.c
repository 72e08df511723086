/* Loading `inputs:`, `outputs:`, `scratch:` (with `check:`), `types:` and `aliases:`: the
 * arrays and their dtypes (load/loaders.h). */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "load/loaders.h"
#include "model/dtype.h"

static void og_report_bad_dtype(const og_op *op, const og_ynode *n, og_diag *d) {
  og_buf expected = {0};
  if (op->ntypes) {
    og_buf_puts(&expected, "a type variable (");
    for (size_t i = 0; i < op->ntypes; ++i) og_buf_printf(&expected, "%s%s", i ? ", " : "", op->types[i].name);
    og_buf_puts(&expected, ") or ");
  }
  og_buf_puts(&expected, "one of ");
  for (int i = 0; i < OG_NDTYPES; ++i) og_buf_printf(&expected, "%s%s", i ? ", " : "", og_dtypes[i].name);
  og_diag_error(d, n->loc, "unknown dtype '%s' (expected %s)", n->text, og_buf_str(&expected));
  og_buf_free(&expected);
}

void og_load_types(og_op *op, const og_ynode *n, og_diag *d) {
  if (!og_want_kind(n, OG_Y_MAP, "'types'", d)) return;
  size_t count = og_capped(n, OPSPEC_MAX_TYPEVARS, "type variables", d);
  op->types = og_xcalloc(count ? count : 1, sizeof *op->types);
  for (size_t i = 0; i < count; ++i) {
    const og_ynode *key = n->keys[i], *choices = n->items[i];
    if (!og_want_ident(key, "type variable name", d)) continue;
    og_typevar *tv = &op->types[op->ntypes++];
    tv->loc = key->loc;
    tv->name = og_xstrdup(key->text);
    tv->bound_by = -1;
    if (!og_want_kind(choices, OG_Y_SEQ, "type variable choices", d)) continue;
    if (choices->n == 0) og_diag_error(d, choices->loc, "type variable '%s' has no choices", tv->name);
    /* Each dtype at most once, so no more choices than dtypes. */
    size_t nchoices = og_capped(choices, OG_NDTYPES, "choices (one per dtype)", d);
    tv->choices = og_xcalloc(nchoices ? nchoices : 1, sizeof *tv->choices);
    tv->choice_locs = og_xcalloc(nchoices ? nchoices : 1, sizeof *tv->choice_locs);
    for (size_t c = 0; c < nchoices; ++c) {
      const og_ynode *ch = choices->items[c];
      if (!og_want_kind(ch, OG_Y_SCALAR, "type variable choice", d)) continue;
      if (og_dtype_find(ch->text) == OG_DT_NONE) {
        og_op tmp = {0}; /* choices are concrete dtypes only: no type variables listed */
        og_report_bad_dtype(&tmp, ch, d);
        continue;
      }
      for (size_t p = 0; p < tv->nchoices; ++p)
        if (strcmp(tv->choices[p], ch->text) == 0)
          og_diag_error(d, ch->loc, "dtype '%s' listed twice for type variable '%s'", ch->text, tv->name);
      tv->choice_locs[tv->nchoices] = ch->loc;
      tv->choices[tv->nchoices++] = og_xstrdup(ch->text);
    }
  }
}

static void og_load_dim(og_dim *dim, const og_ynode *n, og_array_role role, og_diag *d) {
  dim->loc = n->loc;
  dim->text = og_xstrdup(n->kind == OG_Y_SCALAR ? n->text : "?");
  if (!og_want_kind(n, OG_Y_SCALAR, "a shape dim", d)) return;
  if (strcmp(n->text, "...") == 0) {
    dim->kind = OG_DIM_ELLIPSIS;
    return;
  }
  if (role == OG_INPUT) {
    /* Input dims bind symbols, so they must be plain: a symbol or a number. */
    if (og_is_ident(n->text)) {
      if (!og_want_name_length(n, "shape symbol", d)) return;
      dim->kind = OG_DIM_SYM;
      dim->name = og_xstrdup(n->text);
      return;
    }
    int64_t v;
    if (og_parse_int64(n->text, &v) && v >= 0) {
      dim->kind = OG_DIM_INT;
      dim->value = v;
      return;
    }
    if (n->text[0] && strspn(n->text, "0123456789") == strlen(n->text)) {
      og_diag_error(d, n->loc, "input dim '%s' is larger than the largest int64 (9223372036854775807)", n->text);
      return;
    }
    og_diag_error(d, n->loc,
                  "input dims must be a non-negative integer, a symbol or '...', got '%s' "
                  "(expressions belong in output shapes)",
                  n->text);
    return;
  }
  dim->kind = OG_DIM_EXPR;
  dim->expr = og_load_expr(n, "a shape dim", d);
}

/* `check: {min: EXPR, max: EXPR, sorted: true, in_kernel: true}`: what an input's
 * contents must satisfy, and whether the CPU body checks it itself. */
static void og_load_check(og_array *a, const og_ynode *n, og_keys_log *log, og_diag *d) {
  og_keys k;
  a->check.loc = n->loc;
  if (!og_keys_begin(&k, n, "check", log, d)) return;
  const og_ynode *min = og_keys_take(&k, "min");
  const og_ynode *max = og_keys_take(&k, "max");
  const og_ynode *sorted = og_keys_take(&k, "sorted");
  const og_ynode *in_kernel = og_keys_take(&k, "in_kernel");
  og_keys_finish(&k, d);
  a->check.present = true;
  if (min) a->check.min = og_load_expr(min, "check 'min'", d);
  if (max) a->check.max = og_load_expr(max, "check 'max'", d);
  a->check.sorted = og_load_check_flag(sorted, "check 'sorted'", d);
  a->check.in_kernel = og_load_check_flag(in_kernel, "check 'in_kernel'", d);
  if (in_kernel) a->check.in_kernel_loc = in_kernel->loc;
  if (!min && !max && !sorted) og_diag_error(d, n->loc, "check needs at least one of min, max, sorted");
}

static void og_load_array(og_op *op, og_array *a, const og_ynode *n, og_array_role role, og_keys_log *log, og_diag *d) {
  static const char *const what[] = {"input", "output", "scratch buffer"};
  og_keys k;
  a->role = role;
  a->typevar = -1;
  a->alias_of = -1;
  a->loc = n->loc;
  if (!og_keys_begin(&k, n, what[role], log, d)) return;
  const og_ynode *name = og_keys_need(&k, "name", d);
  const og_ynode *dtype = og_keys_need(&k, "dtype", d);
  const og_ynode *shape = og_keys_need(&k, "shape", d);
  /* Only inputs have contents to check. */
  const og_ynode *check = role == OG_INPUT ? og_keys_take(&k, "check") : NULL;
  og_keys_finish(&k, d);
  if (name && og_want_ident(name, "array name", d)) {
    a->name = og_xstrdup(name->text);
    a->loc = name->loc;
  }
  if (dtype && og_want_kind(dtype, OG_Y_SCALAR, "dtype", d)) {
    a->dtype_loc = dtype->loc;
    a->dtype = og_xstrdup(dtype->text);
    for (size_t t = 0; t < op->ntypes; ++t)
      if (strcmp(op->types[t].name, dtype->text) == 0) a->typevar = (int)t;
    if (a->typevar < 0 && og_dtype_find(dtype->text) == OG_DT_NONE)
      og_report_bad_dtype(op, dtype, d);
    else if (a->typevar < 0 && strcmp(dtype->text, "bfloat16") == 0)
      og_diag_error(d, dtype->loc,
                    "dtype bfloat16 goes through a type variable (types: {T: [bfloat16, ...]}): the CPU runs a "
                    "type variable's bfloat16 choice in float");
  }
  if (check) og_load_check(a, check, log, d);
  if (shape && og_want_kind(shape, OG_Y_SEQ, "shape", d)) {
    size_t rank = og_capped(shape, OPSPEC_MAX_RANK, "dims", d);
    a->dims = og_xcalloc(rank ? rank : 1, sizeof *a->dims);
    for (size_t i = 0; i < rank; ++i) {
      og_load_dim(&a->dims[i], shape->items[i], role, d);
      a->ndims++;
      if (a->dims[i].kind != OG_DIM_ELLIPSIS) continue;
      if (i != 0) og_diag_error(d, shape->items[i]->loc, "'...' may only be the first dim");
      a->has_ellipsis = true;
    }
  }
}

og_array *og_load_arrays(og_op *op, const og_ynode *n, og_array_role role, size_t *count, og_keys_log *log,
                         og_diag *d) {
  static const char *const what[] = {"'inputs'", "'outputs'", "'scratch'"};
  static const char *const plural[] = {"inputs", "outputs", "scratch buffers"};
  static const size_t max[] = {OPSPEC_MAX_INPUTS, OPSPEC_MAX_OUTPUTS, OPSPEC_MAX_SCRATCH};
  if (!og_want_kind(n, OG_Y_SEQ, what[role], d)) return NULL;
  size_t loaded = og_capped(n, max[role], plural[role], d);
  og_array *arrays = og_xcalloc(loaded ? loaded : 1, sizeof *arrays);
  for (size_t i = 0; i < loaded; ++i) {
    arrays[i].index = i;
    og_load_array(op, &arrays[i], n->items[i], role, log, d);
  }
  *count = loaded;
  return arrays;
}

static og_array *og_find_array(og_array *arrays, size_t n, const char *name) {
  for (size_t i = 0; i < n; ++i)
    if (arrays[i].name && strcmp(arrays[i].name, name) == 0) return &arrays[i];
  return NULL;
}

static bool og_same_shape(const og_array *x, const og_array *y) {
  if (x->ndims != y->ndims || !x->dtype || !y->dtype || strcmp(x->dtype, y->dtype) != 0) return false;
  for (size_t i = 0; i < x->ndims; ++i)
    if (strcmp(x->dims[i].text, y->dims[i].text) != 0) return false;
  return true;
}

/* `aliases: {out: in}`: resolved here to out->alias_of and in->aliased. */
void og_load_aliases(og_op *op, const og_ynode *m, og_diag *d) {
  for (size_t i = 0; i < m->n; ++i) {
    const og_ynode *out = m->keys[i], *in = m->items[i];
    og_array *oa = og_find_array(op->outputs, op->noutputs, out->text);
    if (!oa) {
      og_diag_error(d, out->loc, "alias '%s' is not an output", out->text);
      continue;
    }
    og_array *ia = in->kind == OG_Y_SCALAR ? og_find_array(op->inputs, op->ninputs, in->text) : NULL;
    if (!ia) {
      og_diag_error(d, in->loc, "output '%s' aliases '%s', which is not an input", out->text,
                    in->kind == OG_Y_SCALAR ? in->text : "?");
      continue;
    }
    if (ia->aliased) {
      og_diag_error(d, in->loc, "input '%s' is aliased by more than one output", ia->name);
      continue;
    }
    if (!og_same_shape(ia, oa)) {
      og_diag_error(d, in->loc, "output '%s' (%s) aliases input '%s' (%s), but their dtypes or shapes differ", oa->name,
                    oa->dtype ? oa->dtype : "?", ia->name, ia->dtype ? ia->dtype : "?");
      continue;
    }
    ia->aliased = true;
    oa->alias_of = (int)ia->index;
  }
}
