/* Private to the template engine: tokens and the AST.
 *
 * Pipeline: tmpl_lex.c turns a template source into tokens (applying every whitespace
 * rule, so later stages never think about whitespace), tmpl_parse.c builds the AST by
 * recursive descent over for- and if-blocks, tmpl_render.c walks it, tmpl_env.c loads and
 * caches templates.
 */
#ifndef OG_TMPL_INTERNAL_H
#define OG_TMPL_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "util/buf.h"
#include "util/diag.h"
#include "render/tmpl.h"
#include "render/value.h"

/* ---- tokens ---------------------------------------------------------------------- */

typedef enum og_tmpl_tok_kind {
  OG_TK_TEXT,        /* literal text, whitespace rules already applied */
  OG_TK_OUT_BEGIN,   /* {{ */
  OG_TK_BLOCK_BEGIN, /* {% */
  OG_TK_TAG_END,     /* }} or %} */
  OG_TK_NAME,
  OG_TK_STR,
  OG_TK_DOT,
  /* Jinja syntax the engine does not support: a number or one of | [ ] ( ) , and the
   * operators = == != < <= > >= + - * / ~. Lexed rather than rejected, so the parser
   * reports the first problem in reading order, in words that name the construct. */
  OG_TK_UNSUPPORTED,
  OG_TK_EOF,
} og_tmpl_tok_kind;

typedef struct og_tmpl_tok {
  og_tmpl_tok_kind kind;
  og_loc loc;
  char *text; /* TEXT: the text; NAME, UNSUPPORTED: as written; STR: the contents */
  size_t len; /* bytes in text */
} og_tmpl_tok;

typedef struct og_tmpl_toks {
  og_tmpl_tok *items;
  size_t len, cap;
} og_tmpl_toks;

/* Tokenizes `src`; always ends with an OG_TK_EOF token. Reports the first error and
 * returns false. */
bool og_tmpl_lex(const og_source *src, og_tmpl_toks *out, og_diag *d);
void og_tmpl_toks_free(og_tmpl_toks *t);

/* ---- AST ------------------------------------------------------------------------- */

/* One name of a path, with where errors about looking it up point. */
typedef struct og_tmpl_seg {
  char *name;
  og_loc loc;
} og_tmpl_seg;

/* name.key.key: an array rather than a tree, so a path of any length is parsed,
 * evaluated and freed without recursion. */
typedef struct og_tmpl_path {
  og_tmpl_seg *segs;
  size_t len, cap;
} og_tmpl_path;

typedef enum og_tmpl_node_kind {
  OG_TN_TEXT,    /* text, len */
  OG_TN_OUTPUT,  /* {{ path }} */
  OG_TN_FOR,     /* for name in path: body */
  OG_TN_IF,      /* if path: body, else alt (an elif is an alt holding one OG_TN_IF) */
  OG_TN_INCLUDE, /* include "text" */
} og_tmpl_node_kind;

typedef struct og_tmpl_node og_tmpl_node;

struct og_tmpl_node {
  og_tmpl_node_kind kind;
  og_loc loc;
  og_tmpl_node *next;
  char *text; /* TEXT: the text; INCLUDE: the template name */
  size_t len;
  og_tmpl_path path;
  char *name; /* FOR: the loop variable */
  og_tmpl_node *body;
  og_tmpl_node *alt; /* IF: what renders when the path's value is false (NULL: nothing) */
};

/* Parses a whole template; NULL after reporting the first error. An empty template
 * parses to a single empty text node so NULL always means failure. */
og_tmpl_node *og_tmpl_parse(const og_source *src, og_diag *d);
void og_tmpl_node_free(og_tmpl_node *n);

/* ---- env (tmpl_env.c) ------------------------------------------------------------ */

/* The parsed template `name`, loading it from the env's dir on first use; the AST and
 * its source live as long as the env. NULL after reporting why (cannot read, parse
 * error); a failure is not cached, so a later call tries, and reports, again. */
const og_tmpl_node *og_tmpl_env_get(og_tmpl_env *env, const char *name, og_diag *d);

#endif /* OG_TMPL_INTERNAL_H */
