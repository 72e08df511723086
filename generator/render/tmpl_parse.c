/* Template parser: recursive descent from tokens to the AST.
 *
 *   body    := (TEXT | '{{' path '}}' | for | if | include)*
 *   for     := '{%' 'for' NAME 'in' path '%}' body '{%' 'endfor' '%}'
 *   if      := '{%' 'if' path '%}' body ('{%' 'elif' path '%}' body)*
 *              ('{%' 'else' '%}' body)? '{%' 'endif' '%}'
 *   include := '{%' 'include' STR '%}'
 *   path    := NAME ('.' NAME)*
 *
 * The first error stops the parse. Where that error is a piece of Jinja the engine
 * dropped (if, a filter, an index, an operator), the message names the construct
 * instead of saying what token was expected.
 */
#include <stdlib.h>
#include <string.h>

#include "render/tmpl_internal.h"

/* Templates are trusted, but a limit is cheap: no template (or fuzzer input) can nest
 * for-blocks deeply enough to exhaust the stack of the parser, the renderer or the
 * freeing code, which all recurse over the blocks' depth. Paths are arrays, so their
 * length needs no limit. */
#define OG_TMPL_MAX_DEPTH 256

typedef struct og_tmpl_parser {
  const og_tmpl_tok *t; /* ends with OG_TK_EOF, so peeking never runs off */
  size_t pos;
  og_diag *d;
  int depth; /* of the for- and if-blocks being parsed */
} og_tmpl_parser;

static const og_tmpl_tok *og_tmpl_peek(const og_tmpl_parser *p) { return &p->t[p->pos]; }

static const og_tmpl_tok *og_tmpl_next(og_tmpl_parser *p) {
  const og_tmpl_tok *tok = &p->t[p->pos];
  if (tok->kind != OG_TK_EOF) p->pos++;
  return tok;
}

static bool og_tmpl_is_kw(const og_tmpl_tok *tok, const char *kw) {
  return tok->kind == OG_TK_NAME && strcmp(tok->text, kw) == 0;
}

static bool og_tmpl_is_any(const og_tmpl_tok *tok, const char *const *words) {
  for (; *words; ++words)
    if (og_tmpl_is_kw(tok, *words)) return true;
  return false;
}

/* Jinja's operator and literal keywords: not names, so a template still written for
 * the old engine gets an error at the word rather than "'not' is undefined". */
static const char *const og_tmpl_operators[] = {"and", "or", "not", "in", "is", NULL};
static const char *const og_tmpl_literals[] = {"true", "false", "none", NULL};

static bool og_tmpl_is_reserved(const og_tmpl_tok *tok) {
  return og_tmpl_is_any(tok, og_tmpl_operators) || og_tmpl_is_any(tok, og_tmpl_literals);
}

/* How a token reads in "expected X, got Y" messages. */
static void og_tmpl_tok_desc(const og_tmpl_tok *tok, og_buf *out) {
  switch (tok->kind) {
    case OG_TK_TEXT:
      og_buf_puts(out, "text");
      return;
    case OG_TK_OUT_BEGIN:
      og_buf_puts(out, "'{{'");
      return;
    case OG_TK_BLOCK_BEGIN:
      og_buf_puts(out, "'{%'");
      return;
    case OG_TK_TAG_END:
      og_buf_puts(out, "end of tag");
      return;
    case OG_TK_NAME:
      og_buf_printf(out, "%s'%s'", og_tmpl_is_any(tok, og_tmpl_literals) ? "literal " : "", tok->text);
      return;
    case OG_TK_STR:
      og_buf_puts(out, "string");
      return;
    case OG_TK_DOT:
      og_buf_puts(out, "'.'");
      return;
    case OG_TK_UNSUPPORTED:
      if (tok->text[0] >= '0' && tok->text[0] <= '9')
        og_buf_printf(out, "number %s", tok->text);
      else
        og_buf_printf(out, "'%s'", tok->text);
      return;
    case OG_TK_EOF:
      og_buf_puts(out, "end of template");
      return;
  }
  og_buf_puts(out, "token");
}

/* Reports the current token as unexpected where WHAT should be: a removed construct by
 * its name ("filters are not supported"), anything else as "expected WHAT, got ...". */
static void og_tmpl_expected(og_tmpl_parser *p, const char *what) {
  const og_tmpl_tok *tok = og_tmpl_peek(p);
  char c = tok->kind == OG_TK_UNSUPPORTED ? tok->text[0] : 0;
  if (c == '|') {
    og_diag_error(p->d, tok->loc, "filters are not supported");
  } else if (c == '[' || c == ']') {
    og_diag_error(p->d, tok->loc, "indexing is not supported (a path is dotted names: a.b.c)");
  } else if (c == '(' || c == ')') {
    og_diag_error(p->d, tok->loc, "parentheses are not supported");
  } else if ((c && strchr("=!<>+-*/~", c)) || og_tmpl_is_any(tok, og_tmpl_operators)) {
    og_diag_error(p->d, tok->loc, "operator '%s' is not supported", tok->text);
  } else {
    og_buf got = {0};
    og_tmpl_tok_desc(tok, &got);
    og_diag_error(p->d, tok->loc, "expected %s, got %s", what, og_buf_str(&got));
    og_buf_free(&got);
  }
}

static bool og_tmpl_expect(og_tmpl_parser *p, og_tmpl_tok_kind kind, const char *what) {
  if (og_tmpl_peek(p)->kind != kind) {
    og_tmpl_expected(p, what);
    return false;
  }
  og_tmpl_next(p);
  return true;
}

/* A path that fills the rest of its tag, into *path (which the caller frees, also on
 * failure). */
static bool og_tmpl_parse_path(og_tmpl_parser *p, og_tmpl_path *path) {
  for (;;) {
    const og_tmpl_tok *tok = og_tmpl_peek(p);
    /* Keys after a '.' may be any name: they only ever meet map keys. */
    if (tok->kind != OG_TK_NAME || (path->len == 0 && og_tmpl_is_reserved(tok))) {
      og_tmpl_expected(p, path->len ? "a key name after '.'" : "a name path");
      return false;
    }
    og_tmpl_next(p);
    og_grow((void **)&path->segs, &path->cap, path->len + 1, sizeof *path->segs);
    path->segs[path->len++] = (og_tmpl_seg){og_xstrdup(tok->text), tok->loc};
    if (og_tmpl_peek(p)->kind != OG_TK_DOT) return og_tmpl_expect(p, OG_TK_TAG_END, "end of tag");
    og_tmpl_next(p);
  }
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
    for (size_t i = 0; i < n->path.len; ++i) free(n->path.segs[i].name);
    free(n->path.segs);
    free(n->name);
    og_tmpl_node_free(n->body);
    og_tmpl_node_free(n->alt);
    free(n);
    n = next;
  }
}

/* The keywords that end a block's body. */
static const char *const og_tmpl_block_ends[] = {"endfor", "elif", "else", "endif", NULL};

/* Parses nodes until EOF or a block's end (`{% endfor`, `elif`, `else`, `endif`). At an
 * end the parser sits on the keyword and *stop is it; on EOF *stop is NULL. */
static bool og_tmpl_parse_body(og_tmpl_parser *p, og_tmpl_node **body, const og_tmpl_tok **stop);

static og_tmpl_node *og_tmpl_parse_for(og_tmpl_parser *p, const og_tmpl_tok *kw) {
  og_tmpl_node *n = og_tmpl_node_new(OG_TN_FOR, kw->loc);
  og_tmpl_next(p); /* for */
  const og_tmpl_tok *var = og_tmpl_peek(p), *stop;
  if (var->kind != OG_TK_NAME || og_tmpl_is_reserved(var)) {
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
  if (!og_tmpl_parse_path(p, &n->path) || !og_tmpl_parse_body(p, &n->body, &stop)) goto fail;
  if (!stop) {
    og_diag_error(p->d, kw->loc, "unclosed 'for' (missing '{%% endfor %%}')");
    goto fail;
  }
  if (!og_tmpl_is_kw(stop, "endfor")) {
    og_diag_error(p->d, stop->loc, "unexpected '%s' inside 'for' (expected '{%% endfor %%}')", stop->text);
    goto fail;
  }
  og_tmpl_next(p); /* endfor */
  if (og_tmpl_expect(p, OG_TK_TAG_END, "end of tag")) return n;
fail:
  og_tmpl_node_free(n);
  return NULL;
}

/* `kw` is `if` or `elif`: an elif parses as an if that its predecessor's alt holds, up
 * to and including the shared endif. */
static og_tmpl_node *og_tmpl_parse_if(og_tmpl_parser *p, const og_tmpl_tok *kw) {
  og_tmpl_node *n = og_tmpl_node_new(OG_TN_IF, kw->loc);
  og_tmpl_next(p); /* if, elif */
  const og_tmpl_tok *stop;
  if (!og_tmpl_parse_path(p, &n->path) || !og_tmpl_parse_body(p, &n->body, &stop)) goto fail;
  if (stop && og_tmpl_is_kw(stop, "elif")) {
    /* An elif nests in its predecessor: it counts toward the depth limit. */
    if (++p->depth > OG_TMPL_MAX_DEPTH) {
      og_diag_error(p->d, stop->loc, "template nested deeper than %d levels", OG_TMPL_MAX_DEPTH);
      goto fail;
    }
    n->alt = og_tmpl_parse_if(p, stop);
    p->depth--;
    if (!n->alt) goto fail;
    return n;
  }
  if (stop && og_tmpl_is_kw(stop, "else")) {
    og_tmpl_next(p); /* else */
    if (!og_tmpl_expect(p, OG_TK_TAG_END, "end of tag") || !og_tmpl_parse_body(p, &n->alt, &stop)) goto fail;
    if (stop && !og_tmpl_is_kw(stop, "endif")) {
      og_diag_error(p->d, stop->loc, "unexpected '%s' after 'else' (expected '{%% endif %%}')", stop->text);
      goto fail;
    }
  }
  if (!stop) {
    og_diag_error(p->d, kw->loc, "unclosed '%s' (missing '{%% endif %%}')", kw->text);
    goto fail;
  }
  if (!og_tmpl_is_kw(stop, "endif")) {
    og_diag_error(p->d, stop->loc, "unexpected '%s' inside 'if' (expected '{%% endif %%}')", stop->text);
    goto fail;
  }
  og_tmpl_next(p); /* endif */
  if (og_tmpl_expect(p, OG_TK_TAG_END, "end of tag")) return n;
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
  if (og_tmpl_is_kw(kw, "for") || og_tmpl_is_kw(kw, "if")) {
    if (++p->depth > OG_TMPL_MAX_DEPTH) {
      og_diag_error(p->d, kw->loc, "template nested deeper than %d levels", OG_TMPL_MAX_DEPTH);
      return NULL;
    }
    og_tmpl_node *n = og_tmpl_is_kw(kw, "for") ? og_tmpl_parse_for(p, kw) : og_tmpl_parse_if(p, kw);
    p->depth--;
    return n;
  }
  if (og_tmpl_is_kw(kw, "include")) {
    og_tmpl_next(p);
    const og_tmpl_tok *name = og_tmpl_peek(p);
    if (name->kind != OG_TK_STR) {
      og_tmpl_expected(p, "a template name string");
      return NULL;
    }
    og_tmpl_next(p);
    if (!og_tmpl_expect(p, OG_TK_TAG_END, "end of tag")) return NULL;
    og_tmpl_node *n = og_tmpl_node_new(OG_TN_INCLUDE, kw->loc);
    n->text = og_xstrndup(name->text, name->len);
    n->len = name->len;
    return n;
  }
  if (og_tmpl_is_any(kw, og_tmpl_block_ends)) {
    og_diag_error(p->d, kw->loc, "unexpected '%s' with no matching opening tag", kw->text);
    return NULL;
  }
  og_diag_error(p->d, kw->loc, "unknown statement '%s' (templates support for, if, include)", kw->text);
  return NULL;
}

static bool og_tmpl_parse_body(og_tmpl_parser *p, og_tmpl_node **body, const og_tmpl_tok **stop) {
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
        if (!og_tmpl_parse_path(p, &n->path)) {
          og_tmpl_node_free(n);
          return false;
        }
        break;
      case OG_TK_BLOCK_BEGIN:
        /* Only inside a block: at the top, a block's end is reported by parse_stmt. */
        if (p->depth > 0 && og_tmpl_is_any(og_tmpl_peek(p), og_tmpl_block_ends)) {
          *stop = og_tmpl_peek(p);
          return true;
        }
        if (!(n = og_tmpl_parse_stmt(p))) return false;
        break;
      default: { /* unreachable: every statement consumes its tag up to the end */
        og_buf got = {0};
        og_tmpl_tok_desc(tok, &got);
        og_diag_error(p->d, tok->loc, "unexpected %s", og_buf_str(&got));
        og_buf_free(&got);
        return false;
      }
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
    if (og_tmpl_parse_body(&p, &root, &stop)) {
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
