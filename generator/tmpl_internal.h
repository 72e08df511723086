/* Private to the template engine: tokens, the AST, and the filter table.
 *
 * Pipeline: tmpl_lex.c turns a template source into tokens (applying every whitespace
 * rule, so later stages never think about whitespace), tmpl_parse.c builds the AST by
 * recursive descent, tmpl_render.c walks it, tmpl_filters.c holds the filters.
 */
#ifndef OG_TMPL_INTERNAL_H
#define OG_TMPL_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "diag.h"
#include "tmpl.h"
#include "value.h"

/* ---- tokens ---------------------------------------------------------------------- */

typedef enum og_tmpl_tok_kind {
  OG_TK_TEXT,        /* literal text, whitespace rules already applied */
  OG_TK_OUT_BEGIN,   /* {{ */
  OG_TK_BLOCK_BEGIN, /* {% */
  OG_TK_TAG_END,     /* }} or %} */
  OG_TK_NAME,
  OG_TK_INT,
  OG_TK_STR,
  OG_TK_DOT,
  OG_TK_LBRACKET,
  OG_TK_RBRACKET,
  OG_TK_LPAREN,
  OG_TK_RPAREN,
  OG_TK_PIPE,
  OG_TK_COMMA,
  OG_TK_EQ,
  OG_TK_NE,
  OG_TK_EOF,
} og_tmpl_tok_kind;

typedef struct og_tmpl_tok {
  og_tmpl_tok_kind kind;
  og_loc loc;
  char *text;  /* TEXT: the text; NAME: the name; STR: the decoded string */
  size_t len;  /* bytes in text */
  int64_t ival; /* INT */
} og_tmpl_tok;

typedef struct og_tmpl_toks {
  og_tmpl_tok *items;
  size_t len, cap;
} og_tmpl_toks;

/* Tokenizes `src`; always ends with an OG_TK_EOF token. Reports the first error and
 * returns false. */
bool og_tmpl_lex(const og_source *src, og_tmpl_toks *out, og_diag *d);
void og_tmpl_toks_free(og_tmpl_toks *t);

/* ---- filters --------------------------------------------------------------------- */

typedef struct og_tmpl_filter og_tmpl_filter;

/* One filter application. `in` is NULL only for a filter whose `lenient` is set, and
 * then means "undefined". */
typedef struct og_tmpl_fcall {
  const og_tmpl_filter *filter;
  const og_value *in;
  const og_value *const *args;
  size_t nargs;
  og_loc loc; /* the filter's name, where its errors point */
  og_diag *d;
} og_tmpl_fcall;

/* Returns a new value the caller owns, or NULL after reporting an error. */
typedef og_value *(*og_tmpl_filter_fn)(const og_tmpl_fcall *c);

struct og_tmpl_filter {
  const char *name;
  int min_args, max_args;
  bool lenient; /* input may be undefined (only `default`) */
  og_tmpl_filter_fn fn;
};

const og_tmpl_filter *og_tmpl_filter_find(const char *name);

/* Appends the text of a scalar as {{ }} prints it (null prints nothing); returns false
 * for a list or map. */
bool og_tmpl_scalar_str(const og_value *v, og_buf *out);
const char *og_tmpl_kind_name(og_value_kind k);

/* ---- AST ------------------------------------------------------------------------- */

typedef enum og_tmpl_expr_kind {
  OG_TX_LIT,    /* lit: a literal, built at parse time */
  OG_TX_NAME,   /* name */
  OG_TX_ATTR,   /* a.name */
  OG_TX_INDEX,  /* a[b] */
  OG_TX_FILTER, /* a | filter(args) */
  OG_TX_NOT,    /* not a */
  OG_TX_AND,    /* a and b */
  OG_TX_OR,     /* a or b */
  OG_TX_EQ,     /* a == b */
  OG_TX_NE,     /* a != b */
} og_tmpl_expr_kind;

typedef struct og_tmpl_expr {
  og_tmpl_expr_kind kind;
  og_loc loc; /* where errors about this node point */
  og_value *lit;
  char *name;
  struct og_tmpl_expr *a, *b;
  const og_tmpl_filter *filter;
  struct og_tmpl_expr **args;
  size_t nargs;
} og_tmpl_expr;

typedef enum og_tmpl_node_kind {
  OG_TN_TEXT,    /* text, len */
  OG_TN_OUTPUT,  /* {{ expr }} */
  OG_TN_IF,      /* branches */
  OG_TN_FOR,     /* for name in expr: body */
  OG_TN_INCLUDE, /* include expr */
} og_tmpl_node_kind;

typedef struct og_tmpl_node og_tmpl_node;

typedef struct og_tmpl_branch {
  og_tmpl_expr *cond; /* NULL for else */
  og_tmpl_node *body;
} og_tmpl_branch;

struct og_tmpl_node {
  og_tmpl_node_kind kind;
  og_loc loc;
  og_tmpl_node *next;
  char *text;
  size_t len;
  og_tmpl_expr *expr;
  char *name;
  og_tmpl_node *body;
  og_tmpl_branch *branches;
  size_t nbranches;
};

/* Parses a whole template; NULL after reporting the first error. An empty template
 * parses to a single empty text node so NULL always means failure. */
og_tmpl_node *og_tmpl_parse(const og_source *src, og_diag *d);
void og_tmpl_node_free(og_tmpl_node *n);
void og_tmpl_expr_free(og_tmpl_expr *e);

/* ---- env (tmpl_env.c) ------------------------------------------------------------ */

/* The parsed template `name`, loading it from the env's dir on first use; the AST and
 * its source live as long as the env. NULL after reporting why (cannot read, parse
 * error); a failure is not cached, so a later call tries, and reports, again. */
const og_tmpl_node *og_tmpl_env_get(og_tmpl_env *env, const char *name, og_diag *d);

#endif /* OG_TMPL_INTERNAL_H */
