/* Template parser: recursive descent from tokens to the AST.
 *
 *   body    := (TEXT | '{{' expr '}}' | stmt)*
 *   stmt    := '{%' 'if' expr '%}' body ('{%' 'elif' expr '%}' body)*
 *                   ('{%' 'else' '%}' body)? '{%' 'endif' '%}'
 *            | '{%' 'for' NAME 'in' expr '%}' body '{%' 'endfor' '%}'
 *            | '{%' 'include' expr '%}'
 *   expr    := and ('or' and)*
 *   and     := not ('and' not)*
 *   not     := 'not' not | cmp
 *   cmp     := filtered (('==' | '!=') filtered)?
 *   filtered:= postfix ('|' NAME ('(' (expr (',' expr)*)? ')')?)*
 *   postfix := primary ('.' NAME | '[' expr ']')*
 *   primary := NAME | STR | INT | true | false | none | '(' expr ')'
 *
 * Filters are resolved here, so an unknown filter or a wrong argument count is caught
 * even in a branch that never renders. The first error stops the parse.
 */
#include <stdlib.h>
#include <string.h>

#include "tmpl_internal.h"

/* Templates are trusted, but a limit is cheap: no template (or fuzzer input) can nest
 * blocks, parentheses, `not`s or chains of `.x`, `[i]`, `| f`, `and`, `or` deeply enough
 * to exhaust the stack of the parser, the renderer or the freeing code, which all
 * recurse over the tree's depth. */
#define OG_TMPL_MAX_DEPTH 256

typedef struct og_tmpl_parser {
  const og_tmpl_tok *t; /* ends with OG_TK_EOF, so peeking never runs off */
  size_t pos;
  og_diag *d;
  int depth;   /* of the tree being built */
  bool failed; /* the depth error is out: report it once */
} og_tmpl_parser;

/* One level deeper at `tok`; reports (once) and returns false past the limit. The
 * caller undoes its levels with p->depth -= n when it returns. */
static bool og_tmpl_deeper(og_tmpl_parser *p, const og_tmpl_tok *tok) {
  if (++p->depth <= OG_TMPL_MAX_DEPTH) return true;
  if (!p->failed) og_diag_error(p->d, tok->loc, "template nested deeper than %d levels", OG_TMPL_MAX_DEPTH);
  p->failed = true;
  return false;
}

static const og_tmpl_tok *og_tmpl_peek(const og_tmpl_parser *p) { return &p->t[p->pos]; }

static const og_tmpl_tok *og_tmpl_next(og_tmpl_parser *p) {
  const og_tmpl_tok *tok = &p->t[p->pos];
  if (tok->kind != OG_TK_EOF) p->pos++;
  return tok;
}

static bool og_tmpl_is_kw(const og_tmpl_tok *tok, const char *kw) {
  return tok->kind == OG_TK_NAME && strcmp(tok->text, kw) == 0;
}

/* How a token reads in "expected X, got Y" messages. */
static const char *og_tmpl_tok_desc(const og_tmpl_tok *tok) {
  switch (tok->kind) {
    case OG_TK_TEXT: return "text";
    case OG_TK_OUT_BEGIN: return "'{{'";
    case OG_TK_BLOCK_BEGIN: return "'{%'";
    case OG_TK_TAG_END: return "end of tag";
    case OG_TK_NAME: return "name";
    case OG_TK_INT: return "integer";
    case OG_TK_STR: return "string";
    case OG_TK_DOT: return "'.'";
    case OG_TK_LBRACKET: return "'['";
    case OG_TK_RBRACKET: return "']'";
    case OG_TK_LPAREN: return "'('";
    case OG_TK_RPAREN: return "')'";
    case OG_TK_PIPE: return "'|'";
    case OG_TK_COMMA: return "','";
    case OG_TK_EQ: return "'=='";
    case OG_TK_NE: return "'!='";
    case OG_TK_EOF: return "end of template";
  }
  return "token";
}

/* Reports "expected WHAT, got ..." at the current token. */
static void og_tmpl_expected(og_tmpl_parser *p, const char *what) {
  const og_tmpl_tok *tok = og_tmpl_peek(p);
  if (tok->kind == OG_TK_NAME)
    og_diag_error(p->d, tok->loc, "expected %s, got '%s'", what, tok->text);
  else
    og_diag_error(p->d, tok->loc, "expected %s, got %s", what, og_tmpl_tok_desc(tok));
}

static bool og_tmpl_expect(og_tmpl_parser *p, og_tmpl_tok_kind kind, const char *what) {
  if (og_tmpl_peek(p)->kind != kind) {
    og_tmpl_expected(p, what);
    return false;
  }
  og_tmpl_next(p);
  return true;
}

/* ---- expressions ----------------------------------------------------------------- */

static og_tmpl_expr *og_tmpl_expr_new(og_tmpl_expr_kind kind, og_loc loc) {
  og_tmpl_expr *e = og_xcalloc(1, sizeof *e);
  e->kind = kind;
  e->loc = loc;
  return e;
}

void og_tmpl_expr_free(og_tmpl_expr *e) {
  if (!e) return;
  og_value_free(e->lit);
  free(e->name);
  og_tmpl_expr_free(e->a);
  og_tmpl_expr_free(e->b);
  for (size_t i = 0; i < e->nargs; ++i) og_tmpl_expr_free(e->args[i]);
  free(e->args);
  free(e);
}

static og_tmpl_expr *og_tmpl_parse_expr(og_tmpl_parser *p);

static og_tmpl_expr *og_tmpl_parse_primary(og_tmpl_parser *p) {
  const og_tmpl_tok *tok = og_tmpl_peek(p);
  og_tmpl_expr *e;
  switch (tok->kind) {
    case OG_TK_INT:
      e = og_tmpl_expr_new(OG_TX_LIT, tok->loc);
      e->lit = og_value_int(tok->ival);
      break;
    case OG_TK_STR:
      e = og_tmpl_expr_new(OG_TX_LIT, tok->loc);
      e->lit = og_value_str(tok->text);
      break;
    case OG_TK_NAME:
      e = og_tmpl_expr_new(OG_TX_LIT, tok->loc);
      if (strcmp(tok->text, "true") == 0) {
        e->lit = og_value_bool(true);
      } else if (strcmp(tok->text, "false") == 0) {
        e->lit = og_value_bool(false);
      } else if (strcmp(tok->text, "none") == 0) {
        e->lit = og_value_null();
      } else if (!strcmp(tok->text, "not") || !strcmp(tok->text, "and") ||
                 !strcmp(tok->text, "or") || !strcmp(tok->text, "in")) {
        og_diag_error(p->d, tok->loc, "expected an expression, got '%s'", tok->text);
        free(e);
        return NULL;
      } else {
        e->kind = OG_TX_NAME;
        e->name = og_xstrdup(tok->text);
      }
      break;
    case OG_TK_LPAREN:
      og_tmpl_next(p);
      e = og_tmpl_parse_expr(p);
      if (!e) return NULL;
      if (!og_tmpl_expect(p, OG_TK_RPAREN, "')'")) {
        og_tmpl_expr_free(e);
        return NULL;
      }
      return e;
    default:
      og_diag_error(p->d, tok->loc, "expected an expression, got %s", og_tmpl_tok_desc(tok));
      return NULL;
  }
  og_tmpl_next(p);
  return e;
}

static og_tmpl_expr *og_tmpl_parse_postfix(og_tmpl_parser *p) {
  int depth = p->depth;
  og_tmpl_expr *e = og_tmpl_parse_primary(p);
  while (e) {
    const og_tmpl_tok *tok = og_tmpl_peek(p);
    if ((tok->kind == OG_TK_DOT || tok->kind == OG_TK_LBRACKET) && !og_tmpl_deeper(p, tok)) {
      og_tmpl_expr_free(e);
      e = NULL;
      break;
    }
    if (tok->kind == OG_TK_DOT) {
      og_tmpl_next(p);
      const og_tmpl_tok *name = og_tmpl_peek(p);
      if (name->kind != OG_TK_NAME) {
        og_tmpl_expected(p, "an attribute name after '.'");
        og_tmpl_expr_free(e);
        return NULL;
      }
      og_tmpl_next(p);
      og_tmpl_expr *attr = og_tmpl_expr_new(OG_TX_ATTR, name->loc);
      attr->a = e;
      attr->name = og_xstrdup(name->text);
      e = attr;
    } else if (tok->kind == OG_TK_LBRACKET) {
      og_tmpl_next(p);
      og_tmpl_expr *idx = og_tmpl_parse_expr(p);
      if (!idx || !og_tmpl_expect(p, OG_TK_RBRACKET, "']'")) {
        og_tmpl_expr_free(idx);
        og_tmpl_expr_free(e);
        return NULL;
      }
      og_tmpl_expr *ix = og_tmpl_expr_new(OG_TX_INDEX, idx->loc);
      ix->a = e;
      ix->b = idx;
      e = ix;
    } else {
      break;
    }
  }
  p->depth = depth;
  return e;
}

/* Parses "(arg, ...)" after a filter name into e->args. */
static bool og_tmpl_parse_args(og_tmpl_parser *p, og_tmpl_expr *e) {
  size_t cap = 0;
  og_tmpl_next(p); /* '(' */
  if (og_tmpl_peek(p)->kind == OG_TK_RPAREN) {
    og_tmpl_next(p);
    return true;
  }
  for (;;) {
    og_tmpl_expr *arg = og_tmpl_parse_expr(p);
    if (!arg) return false;
    og_grow((void **)&e->args, &cap, e->nargs + 1, sizeof *e->args);
    e->args[e->nargs++] = arg;
    if (og_tmpl_peek(p)->kind == OG_TK_COMMA) {
      og_tmpl_next(p);
      continue;
    }
    return og_tmpl_expect(p, OG_TK_RPAREN, "',' or ')'");
  }
}

static og_tmpl_expr *og_tmpl_parse_filtered_from(og_tmpl_parser *p);

static og_tmpl_expr *og_tmpl_parse_filtered(og_tmpl_parser *p) {
  int depth = p->depth;
  og_tmpl_expr *e = og_tmpl_parse_filtered_from(p);
  p->depth = depth;
  return e;
}

static og_tmpl_expr *og_tmpl_parse_filtered_from(og_tmpl_parser *p) {
  og_tmpl_expr *e = og_tmpl_parse_postfix(p);
  while (e && og_tmpl_peek(p)->kind == OG_TK_PIPE) {
    if (!og_tmpl_deeper(p, og_tmpl_peek(p))) {
      og_tmpl_expr_free(e);
      return NULL;
    }
    og_tmpl_next(p);
    const og_tmpl_tok *name = og_tmpl_peek(p);
    if (name->kind != OG_TK_NAME) {
      og_tmpl_expected(p, "a filter name after '|'");
      og_tmpl_expr_free(e);
      return NULL;
    }
    og_tmpl_next(p);
    og_tmpl_expr *f = og_tmpl_expr_new(OG_TX_FILTER, name->loc);
    f->a = e;
    f->name = og_xstrdup(name->text);
    e = f;
    f->filter = og_tmpl_filter_find(name->text);
    if (!f->filter) {
      og_diag_error(p->d, name->loc, "unknown filter '%s'", name->text);
      og_tmpl_expr_free(e);
      return NULL;
    }
    if (og_tmpl_peek(p)->kind == OG_TK_LPAREN && !og_tmpl_parse_args(p, f)) {
      og_tmpl_expr_free(e);
      return NULL;
    }
    int n = (int)f->nargs;
    if (n < f->filter->min_args || n > f->filter->max_args) {
      if (f->filter->min_args == f->filter->max_args)
        og_diag_error(p->d, name->loc, "filter '%s' takes %d argument(s), got %d",
                      f->name, f->filter->min_args, n);
      else
        og_diag_error(p->d, name->loc, "filter '%s' takes %d to %d arguments, got %d",
                      f->name, f->filter->min_args, f->filter->max_args, n);
      og_tmpl_expr_free(e);
      return NULL;
    }
  }
  return e;
}

static og_tmpl_expr *og_tmpl_parse_cmp(og_tmpl_parser *p) {
  og_tmpl_expr *a = og_tmpl_parse_filtered(p);
  const og_tmpl_tok *op = og_tmpl_peek(p);
  if (!a || (op->kind != OG_TK_EQ && op->kind != OG_TK_NE)) return a;
  og_tmpl_next(p);
  og_tmpl_expr *b = og_tmpl_parse_filtered(p);
  if (!b) {
    og_tmpl_expr_free(a);
    return NULL;
  }
  og_tmpl_expr *e = og_tmpl_expr_new(op->kind == OG_TK_EQ ? OG_TX_EQ : OG_TX_NE, op->loc);
  e->a = a;
  e->b = b;
  return e;
}

static og_tmpl_expr *og_tmpl_parse_not(og_tmpl_parser *p) {
  const og_tmpl_tok *tok = og_tmpl_peek(p);
  if (!og_tmpl_is_kw(tok, "not")) return og_tmpl_parse_cmp(p);
  og_tmpl_next(p);
  if (!og_tmpl_deeper(p, tok)) return NULL;
  og_tmpl_expr *a = og_tmpl_parse_not(p);
  p->depth--;
  if (!a) return NULL;
  og_tmpl_expr *e = og_tmpl_expr_new(OG_TX_NOT, tok->loc);
  e->a = a;
  return e;
}

/* Left-associative `sub (kw sub)*` for `and` and `or`. */
static og_tmpl_expr *og_tmpl_parse_chain(og_tmpl_parser *p, const char *kw, og_tmpl_expr_kind kind,
                                         og_tmpl_expr *(*sub)(og_tmpl_parser *)) {
  int depth = p->depth;
  og_tmpl_expr *e = sub(p);
  while (e && og_tmpl_is_kw(og_tmpl_peek(p), kw)) {
    if (!og_tmpl_deeper(p, og_tmpl_peek(p))) {
      og_tmpl_expr_free(e);
      e = NULL;
      break;
    }
    og_loc loc = og_tmpl_next(p)->loc;
    og_tmpl_expr *b = sub(p);
    if (!b) {
      og_tmpl_expr_free(e);
      return NULL;
    }
    og_tmpl_expr *bin = og_tmpl_expr_new(kind, loc);
    bin->a = e;
    bin->b = b;
    e = bin;
  }
  p->depth = depth;
  return e;
}

static og_tmpl_expr *og_tmpl_parse_and(og_tmpl_parser *p) {
  return og_tmpl_parse_chain(p, "and", OG_TX_AND, og_tmpl_parse_not);
}

/* Parentheses, indexes and filter arguments recurse through here. */
static og_tmpl_expr *og_tmpl_parse_expr(og_tmpl_parser *p) {
  if (!og_tmpl_deeper(p, og_tmpl_peek(p))) return NULL;
  og_tmpl_expr *e = og_tmpl_parse_chain(p, "or", OG_TX_OR, og_tmpl_parse_and);
  p->depth--;
  return e;
}

/* An expression that must fill the rest of its tag. */
static og_tmpl_expr *og_tmpl_parse_tag_expr(og_tmpl_parser *p) {
  og_tmpl_expr *e = og_tmpl_parse_expr(p);
  if (e && !og_tmpl_expect(p, OG_TK_TAG_END, "end of tag")) {
    og_tmpl_expr_free(e);
    return NULL;
  }
  return e;
}

/* ---- statements ------------------------------------------------------------------ */

static og_tmpl_node *og_tmpl_node_new(og_tmpl_node_kind kind, og_loc loc) {
  og_tmpl_node *n = og_xcalloc(1, sizeof *n);
  n->kind = kind;
  n->loc = loc;
  return n;
}

void og_tmpl_node_free(og_tmpl_node *n) {
  while (n) {
    og_tmpl_node *next = n->next;
    free(n->text);
    og_tmpl_expr_free(n->expr);
    free(n->name);
    og_tmpl_node_free(n->body);
    for (size_t i = 0; i < n->nbranches; ++i) {
      og_tmpl_expr_free(n->branches[i].cond);
      og_tmpl_node_free(n->branches[i].body);
    }
    free(n->branches);
    free(n);
    n = next;
  }
}

/* Parses nodes until EOF or a `{% kw` with kw in `ends` (NULL-terminated). On such a
 * stop, the parser sits on kw and *stop is that token; on EOF *stop is NULL. */
static bool og_tmpl_parse_body(og_tmpl_parser *p, const char *const *ends, og_tmpl_node **body,
                               const og_tmpl_tok **stop);

static bool og_tmpl_parse_end_tag(og_tmpl_parser *p) {
  og_tmpl_next(p); /* the keyword */
  return og_tmpl_expect(p, OG_TK_TAG_END, "end of tag");
}

static void og_tmpl_unclosed(og_tmpl_parser *p, const og_tmpl_tok *kw, const char *end) {
  og_diag_error(p->d, kw->loc, "unclosed '%s' (missing '{%% %s %%}')", kw->text, end);
}

static og_tmpl_node *og_tmpl_parse_if(og_tmpl_parser *p, const og_tmpl_tok *kw) {
  static const char *const ends[] = {"elif", "else", "endif", NULL};
  static const char *const else_ends[] = {"endif", NULL};
  og_tmpl_node *n = og_tmpl_node_new(OG_TN_IF, kw->loc);
  size_t cap = 0;
  const og_tmpl_tok *stop = kw;
  /* Each pass parses one branch: `stop` is the if/elif/else keyword that opened it. */
  for (;;) {
    bool is_else = og_tmpl_is_kw(stop, "else");
    og_tmpl_next(p); /* if / elif / else */
    og_tmpl_expr *cond = NULL;
    if (is_else) {
      if (!og_tmpl_expect(p, OG_TK_TAG_END, "end of tag")) goto fail;
    } else if (!(cond = og_tmpl_parse_tag_expr(p))) {
      goto fail;
    }
    og_grow((void **)&n->branches, &cap, n->nbranches + 1, sizeof *n->branches);
    og_tmpl_branch *br = &n->branches[n->nbranches++];
    br->cond = cond;
    br->body = NULL;
    if (!og_tmpl_parse_body(p, is_else ? else_ends : ends, &br->body, &stop)) goto fail;
    if (!stop) {
      og_tmpl_unclosed(p, kw, "endif");
      goto fail;
    }
    if (og_tmpl_is_kw(stop, "endif")) {
      if (!og_tmpl_parse_end_tag(p)) goto fail;
      return n;
    }
  }
fail:
  og_tmpl_node_free(n);
  return NULL;
}

static og_tmpl_node *og_tmpl_parse_for(og_tmpl_parser *p, const og_tmpl_tok *kw) {
  static const char *const ends[] = {"endfor", NULL};
  og_tmpl_node *n = og_tmpl_node_new(OG_TN_FOR, kw->loc);
  og_tmpl_next(p); /* for */
  const og_tmpl_tok *var = og_tmpl_peek(p);
  if (var->kind != OG_TK_NAME) {
    og_tmpl_expected(p, "a loop variable name");
    goto fail;
  }
  og_tmpl_next(p);
  n->name = og_xstrdup(var->text);
  if (!og_tmpl_is_kw(og_tmpl_peek(p), "in")) {
    og_tmpl_expected(p, "'in'");
    goto fail;
  }
  og_tmpl_next(p);
  const og_tmpl_tok *stop;
  if (!(n->expr = og_tmpl_parse_tag_expr(p)) || !og_tmpl_parse_body(p, ends, &n->body, &stop))
    goto fail;
  if (!stop) {
    og_tmpl_unclosed(p, kw, "endfor");
    goto fail;
  }
  if (!og_tmpl_parse_end_tag(p)) goto fail;
  return n;
fail:
  og_tmpl_node_free(n);
  return NULL;
}

static og_tmpl_node *og_tmpl_parse_stmt(og_tmpl_parser *p) {
  const og_tmpl_tok *kw = og_tmpl_peek(p);
  if (kw->kind != OG_TK_NAME) {
    og_tmpl_expected(p, "a statement keyword");
    return NULL;
  }
  if (og_tmpl_is_kw(kw, "if") || og_tmpl_is_kw(kw, "for")) {
    if (!og_tmpl_deeper(p, kw)) return NULL;
    og_tmpl_node *n = og_tmpl_is_kw(kw, "if") ? og_tmpl_parse_if(p, kw) : og_tmpl_parse_for(p, kw);
    p->depth--;
    return n;
  }
  if (og_tmpl_is_kw(kw, "include")) {
    og_tmpl_next(p);
    og_tmpl_expr *e = og_tmpl_parse_tag_expr(p);
    if (!e) return NULL;
    og_tmpl_node *n = og_tmpl_node_new(OG_TN_INCLUDE, kw->loc);
    n->expr = e;
    return n;
  }
  static const char *const closers[] = {"elif", "else", "endif", "endfor"};
  for (size_t i = 0; i < sizeof closers / sizeof *closers; ++i)
    if (og_tmpl_is_kw(kw, closers[i])) {
      og_diag_error(p->d, kw->loc, "unexpected '%s' with no matching opening tag", kw->text);
      return NULL;
    }
  og_diag_error(p->d, kw->loc, "unknown statement '%s'", kw->text);
  return NULL;
}

static bool og_tmpl_parse_body(og_tmpl_parser *p, const char *const *ends, og_tmpl_node **body,
                               const og_tmpl_tok **stop) {
  og_tmpl_node **tail = body;
  *stop = NULL;
  for (;;) {
    const og_tmpl_tok *tok = og_tmpl_next(p);
    og_tmpl_node *n = NULL;
    switch (tok->kind) {
      case OG_TK_EOF:
        return true;
      case OG_TK_TEXT:
        n = og_tmpl_node_new(OG_TN_TEXT, tok->loc);
        n->text = og_xstrndup(tok->text, tok->len);
        n->len = tok->len;
        break;
      case OG_TK_OUT_BEGIN:
        n = og_tmpl_node_new(OG_TN_OUTPUT, tok->loc);
        if (!(n->expr = og_tmpl_parse_tag_expr(p))) {
          og_tmpl_node_free(n);
          return false;
        }
        break;
      case OG_TK_BLOCK_BEGIN: {
        const og_tmpl_tok *kw = og_tmpl_peek(p);
        for (size_t i = 0; ends && ends[i]; ++i)
          if (og_tmpl_is_kw(kw, ends[i])) {
            *stop = kw;
            return true;
          }
        if (!(n = og_tmpl_parse_stmt(p))) return false;
        break;
      }
      default: /* the lexer only puts expression tokens inside tags */
        og_diag_error(p->d, tok->loc, "unexpected %s", og_tmpl_tok_desc(tok));
        return false;
    }
    *tail = n;
    tail = &n->next;
  }
}

og_tmpl_node *og_tmpl_parse(const og_source *src, og_diag *d) {
  og_tmpl_toks toks = {0};
  og_tmpl_node *root = NULL;
  if (og_tmpl_lex(src, &toks, d)) {
    og_tmpl_parser p = {.t = toks.items, .d = d};
    const og_tmpl_tok *stop;
    if (og_tmpl_parse_body(&p, NULL, &root, &stop)) {
      if (!root) {
        root = og_tmpl_node_new(OG_TN_TEXT, (og_loc){src, 1, 1});
        root->text = og_xstrdup("");
      }
    } else {
      og_tmpl_node_free(root);
      root = NULL;
    }
  }
  og_tmpl_toks_free(&toks);
  return root;
}
