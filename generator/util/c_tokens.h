/* The light C tokenizer that the body scans share (c_jumps.h, c_lowp.h): identifiers,
 * numbers and single punctuation characters, with their positions; comments, string
 * and character literals and blanks skipped. Not a parser: `+=` is two tokens, `+` and
 * `=`, which a scan tells from `+ =` by their offsets. */
#ifndef OG_C_TOKENS_H
#define OG_C_TOKENS_H

#include <stdbool.h>
#include <stddef.h>

typedef struct og_token {
  char *text;
  int line, col;     /* line from 0 within the code, column from 1 */
  size_t start, end; /* byte offsets of the token in the code */
} og_token;

typedef struct og_tokens {
  og_token *items;
  size_t n, cap;
} og_tokens;

/* Tokenizes `code` into `out` (empty). A preprocessor directive is skipped, or, with
 * `directives`, kept as one token whose text is the whole directive (its continued lines too). */
void og_tokenize(const char *code, bool directives, og_tokens *out);
void og_tokens_free(og_tokens *t);
/* Whether items[i] is `text`; false past the end. */
bool og_token_is(const og_tokens *t, size_t i, const char *text);
/* Whether items[i] and items[i+1] touch (`+=` rather than `+ =`); false past the end. */
bool og_tokens_adjacent(const og_tokens *t, size_t i);
/* Whether items[i] is a plain assignment `=`, not the first of `==`. */
bool og_token_is_assign(const og_tokens *t, size_t i);
/* Whether items[i] is a member name (`.x`, `->x`) rather than a variable. */
bool og_token_is_member(const og_tokens *t, size_t i);
/* Whether items[i] starts a digraph (`<%` is a brace, `<:` a bracket) or a trigraph
 * (`??`): spellings a scan that counts braces or brackets would not see through. */
bool og_tokens_digraph(const og_tokens *t, size_t i);

#endif /* OG_C_TOKENS_H */
