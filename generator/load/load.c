/* Spec loading: YAML tree -> op model, one key at a time.
 *
 * Each og_load_* function takes what it knows from a mapping and reports the rest as
 * unknown (load/keys.h). Errors never stop loading early: a spec with three mistakes
 * gets three messages. Loading ends by completing the model (og_complete): symbols
 * collected, type variables bound, aliases resolved. Rules that span keys (unique
 * names, what expressions may use, bodies) are the checker's.
 */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "load/load.h"

#include "load/derivs.h"
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

/* The location of a scalar's first character of content (past an opening quote). */
static og_loc og_scalar_text_loc(const og_ynode *n) {
  og_loc loc = n->loc;
  if (n->style == OG_YS_SINGLE || n->style == OG_YS_DOUBLE) loc.col += 1;
  return loc;
}

/* How many of a sequence's (or mapping's) items to load: all of them up to `max`; past
 * it, one error at the first item too many. Loading stops there, so a spec with 200,000
 * inputs costs no more than one with `max`. */
static size_t og_capped(const og_ynode *n, size_t max, const char *what, og_diag *d) {
  if (n->n <= max) return n->n;
  const og_ynode *first_extra = n->kind == OG_Y_MAP ? n->keys[max] : n->items[max];
  og_diag_error(d, first_extra->loc, "at most %zu %s are supported, got %zu", max, what, n->n);
  return max;
}

/* Parses a decimal int64, rejecting anything else, and values past INT64_MAX rather
 * than clamping them. */
static bool og_parse_int64(const char *text, int64_t *out) {
  char *end;
  errno = 0;
  long long v = strtoll(text, &end, 10);
  if (text[0] == '\0' || *end != '\0' || errno == ERANGE) return false;
  *out = (int64_t)v;
  return true;
}

/* `shape: [max(n, m)]` is, to YAML, the two items "max(n" and "m)": a comma ends an item
 * of a flow sequence. Says so once, at the first piece, with the expression to quote, and
 * returns true for every piece. */
static bool og_cut_at_comma(const og_ynode *n, const char *what, og_diag *d) {
  if (n->style != OG_YS_PLAIN || !n->loc.src) return false;
  int depth = 0;
  for (const char *c = n->text; *c; ++c) depth += (*c == '(') - (*c == ')');
  if (depth == 0) return false;
  const char *line = n->loc.src->text;
  for (int l = 1; l < n->loc.line && *line; ++line)
    if (*line == '\n') ++l;
  const char *start = line + n->loc.col - 1, *end = start + n->len;
  if (depth < 0) { /* a later piece: silent when an earlier one on the line opened a '(' */
    const char *p = start;
    while (p > line && p[-1] == ' ') --p;
    if (p == line || p[-1] != ',') return false;
    int open = 0;
    for (--p; p > line && p[-1] != '['; --p) open += (p[-1] == '(') - (p[-1] == ')');
    if (open > 0) return true;
    og_diag_error(d, n->loc,
                  "%s has an unmatched ')': YAML ends an item of a flow sequence [...] at a comma, so this one is "
                  "'%s'; quote an expression that has commas",
                  what, n->text);
    return true;
  }
  const char *after = end;
  while (*after == ' ') ++after;
  if (*after != ',') return false;
  const char *close = NULL; /* the ')' that closes the piece's first '(' */
  int level = 0;
  for (const char *p = start; *p && *p != '\n' && !close; ++p) {
    level += (*p == '(') - (*p == ')');
    if (*p == ')' && level == 0) close = p;
  }
  og_buf quoted = {0};
  if (close) og_buf_printf(&quoted, ": \"%.*s\"", (int)(close + 1 - start), start);
  og_diag_error(d, n->loc,
                "%s is cut at a comma: YAML ends an item of a flow sequence [...] at a comma, so this one is '%s'; "
                "quote the expression%s",
                what, n->text, og_buf_str(&quoted));
  og_buf_free(&quoted);
  return true;
}

static og_expr *og_load_expr(const og_ynode *n, const char *what, og_diag *d) {
  if (!og_want_kind(n, OG_Y_SCALAR, what, d)) return NULL;
  if (n->style == OG_YS_LITERAL || n->style == OG_YS_FOLDED || strchr(n->text, '\n')) {
    og_diag_error(d, n->loc, "%s must be a one-line expression", what);
    return NULL;
  }
  if (og_cut_at_comma(n, what, d)) return NULL;
  return og_expr_parse(n->text, og_scalar_text_loc(n), d);
}

static void og_load_types(og_op *op, const og_ynode *n, og_diag *d) {
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

/* A `true` / `false` key of a check, or an error; false when absent. */
static bool og_load_check_flag(const og_ynode *n, const char *what, og_diag *d) {
  if (!n || !og_want_kind(n, OG_Y_SCALAR, what, d)) return false;
  if (strcmp(n->text, "true") == 0) return true;
  if (strcmp(n->text, "false") != 0) og_diag_error(d, n->loc, "%s must be true or false, got '%s'", what, n->text);
  return false;
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

static og_array *og_load_arrays(og_op *op, const og_ynode *n, og_array_role role, size_t *count, og_keys_log *log,
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

/* Renders an attribute default as a Python literal, checking it fits the type. */
static char *og_attr_default(const og_attr *a, const og_ynode *n, og_diag *d) {
  if (!og_want_kind(n, OG_Y_SCALAR, "attribute default", d)) return NULL;
  const char *t = n->text;
  const char *type = og_attr_types[a->type].name;
  if (a->type == OG_ATTR_BOOL) {
    if (strcmp(t, "true") == 0 || strcmp(t, "True") == 0) return og_xstrdup("True");
    if (strcmp(t, "false") == 0 || strcmp(t, "False") == 0) return og_xstrdup("False");
    og_diag_error(d, n->loc, "default of bool attribute '%s' must be true or false, got '%s'", a->name, t);
    return NULL;
  }
  char *end;
  if (og_attr_types[a->type].integer) {
    int64_t v = 0;
    bool parsed = og_parse_int64(t, &v);
    bool fits = parsed && (a->type == OG_ATTR_INT64 || (v >= INT32_MIN && v <= INT32_MAX));
    if (!fits) {
      og_diag_error(d, n->loc, "default of %s attribute '%s' must be an integer in range, got '%s'", type, a->name, t);
      return NULL;
    }
    og_buf b = {0};
    og_buf_printf(&b, "%lld", (long long)v);
    return og_buf_take(&b);
  }
  double v = strtod(t, &end);
  /* A float32 default must survive the conversion to float32 too. */
  bool finite = isfinite(v) && (a->type != OG_ATTR_FLOAT32 || fabs(v) <= FLT_MAX);
  if (!*t || *end || !finite) {
    og_diag_error(d, n->loc, "default of %s attribute '%s' must be a finite number, got '%s'", type, a->name, t);
    return NULL;
  }
  og_buf b = {0};
  og_buf_printf(&b, "%.17g", v);
  /* Keep it a float literal in Python ("1" would be an int). */
  if (!strpbrk(og_buf_str(&b), ".e")) og_buf_puts(&b, ".0");
  return og_buf_take(&b);
}

static void og_load_attrs(og_op *op, const og_ynode *n, og_keys_log *log, og_diag *d) {
  if (!og_want_kind(n, OG_Y_SEQ, "'attrs'", d)) return;
  size_t count = og_capped(n, OPSPEC_MAX_ATTRS, "attributes", d);
  op->attrs = og_xcalloc(count ? count : 1, sizeof *op->attrs);
  for (size_t i = 0; i < count; ++i) {
    og_attr *a = &op->attrs[op->nattrs++];
    og_keys k;
    a->loc = n->items[i]->loc;
    if (!og_keys_begin(&k, n->items[i], "attribute", log, d)) continue;
    const og_ynode *name = og_keys_need(&k, "name", d);
    const og_ynode *type = og_keys_need(&k, "type", d);
    const og_ynode *def = og_keys_take(&k, "default");
    const og_ynode *doc = og_keys_take(&k, "doc");
    og_keys_finish(&k, d);
    if (name && og_want_ident(name, "attribute name", d)) {
      a->name = og_xstrdup(name->text);
      a->loc = name->loc;
    }
    if (doc && og_want_kind(doc, OG_Y_SCALAR, "attribute doc", d)) a->doc = og_xstrdup(doc->text);
    if (!type || !og_want_kind(type, OG_Y_SCALAR, "attribute type", d)) continue;
    for (int t = 0; t < OG_ATTR_NTYPES && !a->has_type; ++t)
      if (strcmp(og_attr_types[t].name, type->text) == 0) {
        a->type = (og_attr_type)t;
        a->has_type = true;
      }
    if (!a->has_type) {
      const char *names[OG_ATTR_NTYPES];
      for (int t = 0; t < OG_ATTR_NTYPES; ++t) names[t] = og_attr_types[t].name;
      og_buf expected = {0};
      og_vocab_list(&expected, names, OG_ATTR_NTYPES, ", ");
      og_diag_error(d, type->loc, "unknown attribute type '%s' (expected one of %s)", type->text,
                    og_buf_str(&expected));
      og_buf_free(&expected);
      continue;
    }
    if (def && a->name) {
      a->default_py = og_attr_default(a, def, d);
      a->has_default = a->default_py != NULL;
    }
  }
}

static void og_load_launch(og_launch *l, const og_ynode *n, const char *what, og_diag *d) {
  l->loc = n->loc;
  /* A single extent may be written without brackets: `launch: n`. */
  if (n->kind == OG_Y_SCALAR) {
    l->extents[0] = og_load_expr(n, what, d);
    l->n = 1;
    return;
  }
  if (!og_want_kind(n, OG_Y_SEQ, what, d)) return;
  if (n->n < 1 || n->n > 3) {
    og_diag_error(d, n->loc, "%s must have 1 to 3 extents, got %zu", what, n->n);
    return;
  }
  for (size_t i = 0; i < n->n; ++i) l->extents[i] = og_load_expr(n->items[i], what, d);
  l->n = n->n;
}

static void og_load_body(og_body *b, const og_ynode *n, const char *what, og_diag *d) {
  if (!og_want_kind(n, OG_Y_SCALAR, what, d)) return;
  b->loc = n->loc;
  b->line = n->content_line;
  b->text = og_xstrdup(n->text);
  b->present = true;
  /* Generated code indents the body as the YAML block does, so with #line the
   * compiler's columns are the spec's columns too. */
  b->indent = 4;
  if (n->style == OG_YS_LITERAL || n->style == OG_YS_FOLDED) {
    const char *p = n->loc.src->text;
    for (int line = 1; line < n->content_line && *p; ++p)
      if (*p == '\n') ++line;
    int spaces = 0;
    while (p[spaces] == ' ') ++spaces;
    if (p[spaces] != '\n' && p[spaces] != '\0') b->indent = spaces;
  }
}

static void og_load_cuda(og_op *op, const og_ynode *n, og_keys_log *log, og_diag *d) {
  if (!og_want_kind(n, OG_Y_SEQ, "'cuda'", d)) return;
  size_t count = og_capped(n, OPSPEC_MAX_CUDA_KERNELS, "cuda kernels", d);
  op->cuda = og_xcalloc(count ? count : 1, sizeof *op->cuda);
  for (size_t i = 0; i < count; ++i) {
    og_cuda_kernel *kern = &op->cuda[op->ncuda++];
    og_keys k;
    kern->loc = n->items[i]->loc;
    if (!og_keys_begin(&k, n->items[i], "cuda kernel", log, d)) continue;
    const og_ynode *name = og_keys_need(&k, "name", d);
    const og_ynode *body = og_keys_need(&k, "body", d);
    const og_ynode *launch = og_keys_take(&k, "launch");
    const og_ynode *grid = og_keys_take(&k, "grid");
    const og_ynode *block = og_keys_take(&k, "block");
    const og_ynode *threads = og_keys_take(&k, "threads_per_block");
    const og_ynode *shared = og_keys_take(&k, "shared_mem");
    og_keys_finish(&k, d);
    if (name && og_want_ident(name, "cuda kernel name", d)) {
      kern->name = og_xstrdup(name->text);
      kern->loc = name->loc;
    }
    if (body) og_load_body(&kern->body, body, "cuda kernel body", d);
    if (launch) og_load_launch(&kern->launch, launch, "'launch'", d);
    if (grid) og_load_launch(&kern->grid, grid, "'grid'", d);
    if (block) og_load_launch(&kern->block, block, "'block'", d);
    if (threads) og_load_launch(&kern->threads, threads, "'threads_per_block'", d);
    if (shared) kern->shared_mem = og_load_expr(shared, "'shared_mem'", d);
  }
}

static void og_load_vmap(og_op *op, const og_ynode *n, og_diag *d) {
  for (int m = 0; m < OG_VMAP_NMETHODS; ++m)
    if (strcmp(og_vmap_names[m], n->text) == 0) {
      op->vmap = (og_vmap)m;
      return;
    }
  og_buf expected = {0};
  og_vocab_list(&expected, og_vmap_names, OG_VMAP_NMETHODS, ", ");
  og_diag_error(d, n->loc, "unknown vmap method '%s' (expected one of %s)", n->text, og_buf_str(&expected));
  og_buf_free(&expected);
}

/* `reduce: {symbol: sum}`; the checker says which symbols may be reduced. */
static void og_load_reduce(og_op *op, const og_ynode *m, og_diag *d) {
  op->reduce = og_xcalloc(m->n ? m->n : 1, sizeof *op->reduce);
  for (size_t i = 0; i < m->n; ++i) {
    const og_ynode *key = m->keys[i], *how = m->items[i];
    if (strcmp(key->text, "...") != 0 && !og_want_ident(key, "reduced symbol", d)) continue;
    if (!og_want_kind(how, OG_Y_SCALAR, "a reduction", d)) continue;
    int found = -1;
    for (int h = 0; h < OG_REDUCE_NHOWS; ++h)
      if (strcmp(og_reduce_names[h], how->text) == 0) found = h;
    if (found < 0) {
      og_buf expected = {0};
      og_vocab_list(&expected, og_reduce_names, OG_REDUCE_NHOWS, ", ");
      og_diag_error(d, how->loc, "unknown reduction '%s' (expected one of %s)", how->text, og_buf_str(&expected));
      og_buf_free(&expected);
      continue;
    }
    op->reduce[op->nreduce++] = (og_reduction){key->loc, og_xstrdup(key->text), (og_reduce_how)found};
  }
}

/* `independent: [n, ...]`; the checker says which symbols may be declared. */
static void og_load_independent(og_op *op, const og_ynode *list, og_diag *d) {
  op->independent = og_xcalloc(list->n ? list->n : 1, sizeof *op->independent);
  for (size_t i = 0; i < list->n; ++i) {
    const og_ynode *item = list->items[i];
    if (!og_want_kind(item, OG_Y_SCALAR, "an independent symbol", d)) continue;
    if (strcmp(item->text, "...") != 0 && !og_want_ident(item, "independent symbol", d)) continue;
    bool twice = false;
    for (size_t j = 0; j < op->nindependent; ++j) twice |= strcmp(op->independent[j].symbol, item->text) == 0;
    if (twice) {
      og_diag_error(d, item->loc, "'%s' is listed twice in 'independent'", item->text);
      continue;
    }
    op->independent[op->nindependent++] = (og_independent){item->loc, og_xstrdup(item->text)};
  }
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
static void og_load_aliases(og_op *op, const og_ynode *m, og_diag *d) {
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

/* Shape symbols in order of first appearance in the inputs; each type variable's
 * binding input (the first with that dtype). */
static void og_complete(og_op *op) {
  size_t cap = 0;
  for (size_t i = 0; i < op->ninputs; ++i) {
    const og_array *a = &op->inputs[i];
    for (size_t j = 0; j < a->ndims; ++j) {
      if (a->dims[j].kind != OG_DIM_SYM || og_op_symbol(op, a->dims[j].name) >= 0) continue;
      og_grow((void **)&op->symbols, &cap, op->nsymbols + 1, sizeof *op->symbols);
      op->symbols[op->nsymbols++] = og_xstrdup(a->dims[j].name);
    }
  }
  for (size_t t = 0; t < op->ntypes; ++t)
    for (size_t i = 0; i < op->ninputs && op->types[t].bound_by < 0; ++i)
      if (op->inputs[i].typevar == (int)t) op->types[t].bound_by = (int)i;
}

static void og_load_op(og_op *op, og_keys_log *log, og_diag *d) {
  og_keys k;
  if (!og_keys_begin(&k, op->tree, "spec", log, d)) return;
  const og_ynode *name = og_keys_need(&k, "op", d);
  const og_ynode *doc = og_keys_take(&k, "doc");
  const og_ynode *types = og_keys_take(&k, "types");
  const og_ynode *inputs = og_keys_take(&k, "inputs");
  const og_ynode *outputs = og_keys_need(&k, "outputs", d);
  const og_ynode *attrs = og_keys_take(&k, "attrs");
  const og_ynode *vmap = og_keys_take(&k, "vmap");
  const og_ynode *aliases = og_keys_take(&k, "aliases");
  const og_ynode *launch = og_keys_take(&k, "launch");
  const og_ynode *threads = og_keys_take(&k, "threads_per_block");
  const og_ynode *prologue = og_keys_take(&k, "prologue");
  const og_ynode *kernel = og_keys_take(&k, "kernel");
  const og_ynode *cpu = og_keys_take(&k, "cpu");
  const og_ynode *cuda = og_keys_take(&k, "cuda");
  const og_ynode *scratch = og_keys_take(&k, "scratch");
  const og_ynode *derivs = og_keys_take(&k, "derivatives");
  const og_ynode *bytes = og_keys_take(&k, "bytes");
  const og_ynode *flops = og_keys_take(&k, "flops");
  const og_ynode *reduce = og_keys_take(&k, "reduce");
  const og_ynode *independent = og_keys_take(&k, "independent");
  const og_ynode *fastmath = og_keys_take(&k, "fastmath");
  og_keys_finish(&k, d);

  if (name && og_want_ident(name, "op name", d)) {
    op->name = og_xstrdup(name->text);
    op->loc = name->loc;
  }
  op->doc = og_xstrdup(doc && og_want_kind(doc, OG_Y_SCALAR, "'doc'", d) ? doc->text : "");
  if (types) og_load_types(op, types, d);
  if (inputs) op->inputs = og_load_arrays(op, inputs, OG_INPUT, &op->ninputs, log, d);
  if (outputs) op->outputs = og_load_arrays(op, outputs, OG_OUTPUT, &op->noutputs, log, d);
  if (scratch) op->scratch = og_load_arrays(op, scratch, OG_SCRATCH, &op->nscratch, log, d);
  if (attrs) og_load_attrs(op, attrs, log, d);
  op->vmap = OG_VMAP_NATIVE;
  if (vmap && og_want_kind(vmap, OG_Y_SCALAR, "'vmap'", d)) og_load_vmap(op, vmap, d);
  if (aliases && og_want_kind(aliases, OG_Y_MAP, "'aliases'", d)) og_load_aliases(op, aliases, d);
  if (launch) og_load_launch(&op->launch, launch, "'launch'", d);
  if (threads) og_load_launch(&op->threads, threads, "'threads_per_block'", d);
  if (prologue) og_load_body(&op->prologue, prologue, "'prologue'", d);
  if (kernel) og_load_body(&op->kernel, kernel, "'kernel'", d);
  if (cpu) og_load_body(&op->cpu, cpu, "'cpu'", d);
  if (cuda) og_load_cuda(op, cuda, log, d);
  if (derivs) og_load_derivatives(op, derivs, d);
  if (bytes) op->bytes = og_load_expr(bytes, "'bytes'", d);
  if (flops) op->flops = og_load_expr(flops, "'flops'", d);
  if (reduce && og_want_kind(reduce, OG_Y_MAP, "'reduce'", d)) og_load_reduce(op, reduce, d);
  if (independent && og_want_kind(independent, OG_Y_SEQ, "'independent'", d)) og_load_independent(op, independent, d);
  op->fastmath = og_load_check_flag(fastmath, "'fastmath'", d);
}

/* libyaml keeps a "\0" escape as a NUL inside the scalar; every later use of the text
 * as a C string would silently cut it there. */
static void og_reject_nuls(const og_ynode *n, og_diag *d) {
  if (!n) return;
  if (n->kind == OG_Y_SCALAR && strlen(n->text) != n->len)
    og_diag_error(d, n->loc, "text contains a NUL character (\\0), which C and Python strings cannot carry");
  for (size_t i = 0; i < n->n; ++i) {
    if (n->kind == OG_Y_MAP) og_reject_nuls(n->keys[i], d);
    og_reject_nuls(n->items[i], d);
  }
}

og_op *og_load_spec(og_source *src, og_keys_log *log, og_diag *d) {
  int before = d->errors;
  og_op *op = og_xcalloc(1, sizeof *op);
  op->src = src;
  op->loc = (og_loc){src, 1, 1};
  op->tree = og_yaml_load(src, d);
  og_reject_nuls(op->tree, d);
  if (op->tree && d->errors == before) og_load_op(op, log, d);
  if (op->tree && d->errors == before) og_complete(op);
  if (d->errors != before) {
    og_op_free(op);
    return NULL;
  }
  return op;
}
