#include "plan/spans.h"

#include <stdlib.h>
#include <string.h>

#include "plan/lowp.h"
#include "plan/plan.h"
#include "util/c_idents.h"
#include "util/c_tokens.h"

typedef struct og_span_scan {
  const og_op *op;
  const char *code;
  og_tokens t;
  const og_array *arrays[OPSPEC_MAX_INPUTS + OPSPEC_MAX_OUTPUTS];
  bool float16[OPSPEC_MAX_INPUTS + OPSPEC_MAX_OUTPUTS]; /* a type variable that may be float16 */
  size_t n;
  og_idents names; /* what a base may name: i, shape symbols, integer attributes, sizes, leading constants */
  size_t constants[OG_SPAN_MAX_SLICES]; /* the token that each leading constant's declaration names */
  size_t nconstants;
} og_span_scan;

static bool og_span_ident(const char *w) {
  return w[0] == '_' || (w[0] >= 'a' && w[0] <= 'z') || (w[0] >= 'A' && w[0] <= 'Z');
}
static bool og_span_number(const char *w) { return w[0] >= '0' && w[0] <= '9' && !strchr(w, '.'); }

/* The array token k names, or -1. */
static long og_span_array(const og_span_scan *s, size_t k) {
  if (og_token_is_member(&s->t, k)) return -1;
  for (size_t a = 0; a < s->n; ++a)
    if (!strcmp(s->arrays[a]->name, s->t.items[k].text)) return (long)a;
  return -1;
}

/* Whether tokens [a, b) are an integer expression of known names: identifiers from
 * `names`, integer literals, `+ - * / %` and balanced parentheses, ending in an operand. */
static bool og_span_expr(const og_span_scan *s, size_t a, size_t b) {
  if (a >= b) return false;
  int depth = 0;
  for (size_t k = a; k < b; ++k) {
    const char *w = s->t.items[k].text;
    if (og_span_ident(w)) {
      if (!og_idents_has(&s->names, w) || og_token_is_member(&s->t, k)) return false;
    } else if (!og_span_number(w)) {
      if (!w[0] || w[1] || !strchr("+-*/%()", w[0])) return false;
      if ((w[0] == '+' || w[0] == '-') && og_token_is(&s->t, k + 1, w) && og_tokens_adjacent(&s->t, k)) return false;
      depth += (w[0] == '(') - (w[0] == ')');
      if (depth < 0) return false;
    }
  }
  const char *last = s->t.items[b - 1].text;
  return depth == 0 && (og_span_ident(last) || og_span_number(last) || !strcmp(last, ")"));
}

/* Tokens [a, b) written as clang-format writes them (the generated code is checked
 * against .clang-format): binary operators spaced, unary ones and parentheses tight. */
static void og_span_write_expr(const og_span_scan *s, size_t a, size_t b, og_buf *out) {
  bool operand = false; /* whether the last token ends an operand (a `+` after it is binary) */
  for (size_t k = a; k < b; ++k) {
    const char *w = s->t.items[k].text;
    bool op = !w[1] && strchr("+-*/%", w[0]);
    if (op && operand)
      og_buf_printf(out, " %s ", w);
    else
      og_buf_puts(out, w);
    operand = !op && strcmp(w, "(") != 0;
  }
}

/* Whether the leading statement at token k is `const int64_t NAME = EXPR;` (or int) of
 * known names: then NAME joins them and *next is the token after its `;`. */
static bool og_span_constant(og_span_scan *s, size_t k, size_t *next) {
  const og_tokens *t = &s->t;
  if (!og_token_is(t, k, "const") || !(og_token_is(t, k + 1, "int64_t") || og_token_is(t, k + 1, "int"))) return false;
  if (k + 3 >= t->n || !og_span_ident(t->items[k + 2].text) || !og_token_is(t, k + 3, "=") ||
      og_token_is(t, k + 4, "="))
    return false;
  size_t end = k + 4;
  while (end < t->n && !og_token_is(t, end, ";")) ++end;
  if (end == t->n || !og_span_expr(s, k + 4, end) || s->nconstants == OG_SPAN_MAX_SLICES) return false;
  og_idents_add(&s->names, t->items[k + 2].text);
  s->constants[s->nconstants++] = k + 2;
  *next = end + 1;
  return true;
}

/* Whether token k (a known name) is assigned or stepped: `k = `, `k += `, `k++`, `--k`. */
static bool og_span_assigned(const og_tokens *t, size_t k) {
  const char *n1 = k + 1 < t->n ? t->items[k + 1].text : "";
  if (!strcmp(n1, "=")) return og_token_is_assign(t, k + 1);
  if (n1[0] && !n1[1] && strchr("+-*/%&|^<>", n1[0]) && og_tokens_adjacent(t, k + 1)) {
    if (og_token_is(t, k + 2, "=")) return true;                                  /* +=  */
    if ((n1[0] == '+' || n1[0] == '-') && og_token_is(t, k + 2, n1)) return true; /* ++  */
    if ((n1[0] == '<' || n1[0] == '>') && og_token_is(t, k + 2, n1) && og_token_is(t, k + 3, "=")) return true;
  }
  return k >= 2 && (og_token_is(t, k - 1, "+") || og_token_is(t, k - 1, "-")) &&
         og_token_is(t, k - 2, t->items[k - 1].text) && og_tokens_adjacent(t, k - 2);
}

/* Whether the body has no branch (and nothing the scan cannot see through): no `if`,
 * `else`, `?`, `&&`, `||`, block, directive, digraph or trigraph, and no opspec_ name. */
static bool og_span_straight(const og_tokens *t) {
  static const char *const stops[] = {"if", "else", "?", "{", "}", "switch", "case", "default"};
  for (size_t k = 0; k < t->n; ++k) {
    const char *w = t->items[k].text;
    if (w[0] == '#' || !strncmp(w, "opspec_", 7)) return false;
    for (size_t s = 0; s < sizeof stops / sizeof stops[0]; ++s)
      if (!strcmp(w, stops[s])) return false;
    if (og_tokens_digraph(t, k)) return false;
    if (og_tokens_adjacent(t, k)) {
      const char *v = t->items[k + 1].text;
      if ((!strcmp(w, "&") && !strcmp(v, "&")) || (!strcmp(w, "|") && !strcmp(v, "|"))) return false;
    }
  }
  return true;
}

/* The slice of `a[E]` whose `[` is token k: its base into `base` (a `P` from `P + j`
 * or `j + P`, "0" for `j`). *close is E's `]`. */
static bool og_span_index(const og_span_scan *s, size_t k, size_t *close, og_buf *base) {
  const og_tokens *t = &s->t;
  size_t c = k + 1;
  int depth = 1;
  for (; c < t->n; ++c) {
    const char *w = t->items[c].text;
    depth += (!strcmp(w, "[") || !strcmp(w, "(")) - (!strcmp(w, "]") || !strcmp(w, ")"));
    if (depth == 0) break;
  }
  if (c == t->n || !og_token_is(t, c, "]")) return false;
  *close = c;
  if (c == k + 2 && og_token_is(t, k + 1, "j")) {
    og_buf_puts(base, "0");
    return true;
  }
  size_t a, b; /* P's tokens */
  if (c >= k + 4 && og_token_is(t, c - 1, "j") && og_token_is(t, c - 2, "+")) {
    a = k + 1, b = c - 2;
  } else if (og_token_is(t, k + 1, "j") && og_token_is(t, k + 2, "+")) {
    a = k + 3, b = c;
  } else {
    return false;
  }
  for (size_t p = a; p < b; ++p)
    if (og_token_is(t, p, "j")) return false;
  if (!og_span_expr(s, a, b)) return false;
  og_span_write_expr(s, a, b, base);
  return true;
}

static bool og_span_add(og_span_slice *slices, size_t *n, size_t array, og_buf *base, bool dedupe) {
  if (dedupe)
    for (size_t s = 0; s < *n; ++s)
      if (slices[s].array == array && !strcmp(slices[s].base, og_buf_str(base))) return true;
  if (*n == OG_SPAN_MAX_SLICES) return false;
  slices[*n].array = array;
  slices[*n].base = og_buf_take(base);
  ++*n;
  return true;
}

/* Scans the body after its leading constants (from token k): fills the slices. */
static bool og_span_uses(og_span_scan *s, size_t first, og_spans *spans) {
  const og_tokens *t = &s->t;
  bool ok = true;
  for (size_t k = first; k < t->n && ok; ++k) {
    const char *w = t->items[k].text;
    if (og_idents_has(&s->names, w) && !og_token_is_member(t, k) && og_span_assigned(t, k)) return false;
    long a = og_span_array(s, k);
    if (a < 0 || !s->float16[a]) continue;
    size_t close;
    og_buf base = {0};
    if (!og_token_is(t, k + 1, "[") || !og_span_index(s, k + 1, &close, &base)) {
      og_buf_free(&base);
      return false;
    }
    bool stored = og_token_is_assign(t, close + 1);
    if (s->arrays[a]->role == OG_INPUT) {
      /* a read: not assigned, stepped, or its address taken */
      ok = !stored && !og_span_assigned(t, close) && !(k >= 1 && og_token_is(t, k - 1, "&")) &&
           og_span_add(spans->reads, &spans->nreads, (size_t)a, &base, true);
    } else {
      /* only a statement `y[P + j] = v;` of its own */
      ok = stored && (k == first || og_token_is(t, k - 1, ";")) &&
           og_span_add(spans->writes, &spans->nwrites, (size_t)a, &base, false);
    }
    og_buf_free(&base);
    k = close;
  }
  return ok;
}

/* Whether `name` is read by a base or by a leading constant (tokens [0, first) other than
 * a declaration's own name). */
static bool og_span_read_name(const og_span_scan *s, const og_spans *spans, size_t first, const char *name) {
  for (size_t l = 0; l < 2; ++l)
    for (size_t k = 0; k < (l ? spans->nwrites : spans->nreads); ++k) {
      og_idents used = {0};
      og_idents_scan(&used, l ? spans->writes[k].base : spans->reads[k].base);
      bool found = og_idents_has(&used, name);
      og_idents_free(&used);
      if (found) return true;
    }
  for (size_t k = 0; k < first; ++k) {
    bool declared = false;
    for (size_t c = 0; c < s->nconstants; ++c) declared |= s->constants[c] == k;
    if (!declared && !strcmp(s->t.items[k].text, name)) return true;
  }
  return false;
}

/* The body for the spans: the leading constants left out (their lines kept, so the
 * spec's line numbers hold; the kernel declares them before the loop), and every
 * `a[E]` of a float16 array read from, or stored to, its span. */
static void og_span_body(const og_span_scan *s, og_spans *spans) {
  for (size_t c = 0; c < spans->hoisted_end; ++c)
    if (s->code[c] == '\n') og_buf_putc(&spans->body, '\n');
  size_t cursor = spans->hoisted_end;
  for (size_t k = 0; k < s->t.n; ++k) {
    if (s->t.items[k].start < spans->hoisted_end) continue;
    long a = og_span_array(s, k);
    if (a < 0 || !s->float16[a]) continue;
    size_t close = k + 1;
    int depth = 0;
    for (; close < s->t.n; ++close) {
      const char *w = s->t.items[close].text;
      depth += (!strcmp(w, "[") || !strcmp(w, "(")) - (!strcmp(w, "]") || !strcmp(w, ")"));
      if (depth == 0) break;
    }
    const char *name = s->arrays[a]->name;
    og_buf_append(&spans->body, s->code + cursor, s->t.items[k].start - cursor);
    og_buf_printf(&spans->body, "opspec_%s_span[", name);
    og_buf_append(&spans->body, s->code + s->t.items[k + 2].start, s->t.items[close].start - s->t.items[k + 2].start);
    og_buf_printf(&spans->body, " - opspec_%s_at.lo]", name);
    cursor = s->t.items[close].end;
    k = close;
  }
  og_buf_puts(&spans->body, s->code + cursor);
}

bool og_spans_plan(const og_op *op, const og_op_plan *plan, og_spans *spans) {
  memset(spans, 0, sizeof *spans);
  if (!plan->cpu_portable || !plan->cpu_simd || !plan->cpu_lowp || plan->rejects || op->launch.n != 2 || op->nscratch ||
      op->prologue.present || op->ninputs + op->noutputs > OPSPEC_MAX_INPUTS + OPSPEC_MAX_OUTPUTS)
    return false;
  bool any_float16 = false;
  for (size_t t = 0; t < op->ntypes; ++t)
    for (size_t c = 0; c < op->types[t].nchoices; ++c) any_float16 |= !strcmp(op->types[t].choices[c], "float16");
  if (!any_float16) return false;

  og_span_scan s = {.op = op, .code = op->kernel.text};
  for (size_t a = 0; a < op->ninputs + op->noutputs; ++a) {
    const og_array *arr = a < op->ninputs ? &op->inputs[a] : &op->outputs[a - op->ninputs];
    if (arr->alias_of >= 0 || arr->aliased) return false; /* an in-place pair: spans would read what others write */
    if (arr->typevar < 0 && (!strcmp(arr->dtype, "float16") || !strcmp(arr->dtype, "bfloat16"))) return false;
    s.arrays[s.n] = arr;
    s.float16[s.n++] = arr->typevar >= 0 && og_lowp_typevar(&op->types[arr->typevar]);
  }
  og_idents_add(&s.names, "i");
  for (size_t k = 0; k < op->nsymbols; ++k) og_idents_add(&s.names, op->symbols[k]);
  for (size_t k = 0; k < op->nattrs; ++k)
    if (og_attr_types[op->attrs[k].type].integer) og_idents_add(&s.names, op->attrs[k].name);
  og_buf size = {0};
  for (size_t a = 0; a < s.n; ++a) {
    og_buf_clear(&size);
    og_buf_printf(&size, "%s_size", s.arrays[a]->name);
    og_idents_add(&s.names, og_buf_str(&size));
  }
  og_buf_free(&size);

  og_tokenize(s.code, true, &s.t);
  bool ok = og_span_straight(&s.t);
  size_t first = 0;
  while (ok && og_span_constant(&s, first, &first)) spans->hoisted_end = s.t.items[first - 1].end;
  ok = ok && og_span_uses(&s, first, spans);
  for (size_t a = 0; a < s.n && ok; ++a) {
    bool named = false;
    for (size_t r = 0; r < spans->nreads; ++r) named |= spans->reads[r].array == a;
    for (size_t w = 0; w < spans->nwrites; ++w) named |= spans->writes[w].array == a;
    if (!named) continue;
    if (spans->narrays == OG_SPAN_MAX_ARRAYS)
      ok = false;
    else
      spans->arrays[spans->narrays++] = a;
  }
  ok = ok && spans->narrays > 0;
  if (ok) og_span_body(&s, spans);

  /* The pass over a block declares `i` and the leading constants for the bases, which
   * may read none of them. */
  for (size_t c = 0; c <= s.nconstants && ok; ++c) {
    const char *name = c < s.nconstants ? s.t.items[s.constants[c]].text : "i";
    if (!og_span_read_name(&s, spans, first, name)) spans->unread[spans->nunread++] = og_xstrdup(name);
  }
  og_tokens_free(&s.t);
  og_idents_free(&s.names);
  if (!ok) og_spans_free(spans);
  return ok;
}

void og_spans_free(og_spans *spans) {
  for (size_t r = 0; r < spans->nreads; ++r) free(spans->reads[r].base);
  for (size_t w = 0; w < spans->nwrites; ++w) free(spans->writes[w].base);
  for (size_t u = 0; u < spans->nunread; ++u) free(spans->unread[u]);

  og_buf_free(&spans->body);
  memset(spans, 0, sizeof *spans);
}

bool og_spans_variant(const og_op *op, const size_t *pick) {
  bool float16 = false;
  for (size_t t = 0; t < op->ntypes; ++t) {
    const og_typevar *v = &op->types[t];
    if (!og_lowp_typevar(v)) continue;
    if (strcmp(v->choices[pick[t]], "float16") != 0) return false;
    float16 = true;
  }
  return float16;
}
