/* Template lexer: splits a template into text and tag tokens.
 *
 * All whitespace control happens here, on the raw source, so the parser and renderer
 * see text exactly as it will be printed:
 *   - `{%-` `{{-` `{#-` strip all whitespace (newlines included) before the tag;
 *     `-%}` `-}}` `-#}` strip all whitespace after it.
 *   - lstrip_blocks: a `{%` or `{#` preceded on its line only by spaces/tabs takes that
 *     indentation away (`{%+` / `{#+` opt out).
 *   - trim_blocks: one newline right after `%}` or `#}` is dropped (`+%}` opts out).
 * `{{ }}` is never trimmed implicitly. Comments produce no tokens.
 */
#include <stdlib.h>
#include <string.h>

#include "render/tmpl_internal.h"

typedef struct og_tmpl_lexer {
  const og_source *src;
  const char *s; /* src->text, NUL-terminated, so peeking one past a char is safe */
  size_t n;
  size_t pos;
  /* A cursor that turns offsets into line:col; offsets are asked for in increasing
   * order, so the whole file is scanned once. */
  size_t cur;
  int line, col;
  og_tmpl_toks *out;
  og_diag *d;
} og_tmpl_lexer;

/* What the previous tag asks of the text that follows it. */
typedef enum og_tmpl_after { OG_AFTER_NONE, OG_AFTER_STRIP, OG_AFTER_TRIM } og_tmpl_after;

static og_loc og_tmpl_lex_loc(og_tmpl_lexer *lx, size_t off) {
  if (off < lx->cur) { /* never happens in order; restart rather than mis-number */
    lx->cur = 0;
    lx->line = lx->col = 1;
  }
  for (; lx->cur < off; ++lx->cur) {
    if (lx->s[lx->cur] == '\n') {
      lx->line++;
      lx->col = 1;
    } else {
      lx->col++;
    }
  }
  return (og_loc){lx->src, lx->line, lx->col};
}

static og_tmpl_tok *og_tmpl_lex_push(og_tmpl_lexer *lx, og_tmpl_tok_kind kind, size_t off) {
  og_tmpl_toks *t = lx->out;
  og_grow((void **)&t->items, &t->cap, t->len + 1, sizeof *t->items);
  og_tmpl_tok *tok = &t->items[t->len++];
  memset(tok, 0, sizeof *tok);
  tok->kind = kind;
  tok->loc = og_tmpl_lex_loc(lx, off);
  return tok;
}

static bool og_tmpl_is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}
static bool og_tmpl_is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
static bool og_tmpl_is_digit(char c) { return c >= '0' && c <= '9'; }

/* Offset of the next "{{", "{%" or "{#" at or after `from`, or n. */
static size_t og_tmpl_find_open(const og_tmpl_lexer *lx, size_t from) {
  for (size_t i = from; i + 1 < lx->n; ++i)
    if (lx->s[i] == '{' && (lx->s[i + 1] == '{' || lx->s[i + 1] == '%' || lx->s[i + 1] == '#')) return i;
  return lx->n;
}

static void og_tmpl_lex_text(og_tmpl_lexer *lx, size_t start, size_t end) {
  if (end <= start) return;
  og_tmpl_tok *tok = og_tmpl_lex_push(lx, OG_TK_TEXT, start);
  tok->text = og_xstrndup(lx->s + start, end - start);
  tok->len = end - start;
}

/* A "..." or '...' string: only include names are strings, and a file name needs no
 * escapes, so a backslash is refused rather than given a meaning. */
static bool og_tmpl_lex_string(og_tmpl_lexer *lx) {
  size_t open = lx->pos;
  char quote = lx->s[open];
  size_t i = open + 1;
  for (; i < lx->n && lx->s[i] != quote; ++i)
    if (lx->s[i] == '\\') {
      og_diag_error(lx->d, og_tmpl_lex_loc(lx, i), "escape sequences are not supported in strings");
      return false;
    }
  if (i >= lx->n) {
    og_diag_error(lx->d, og_tmpl_lex_loc(lx, open), "unterminated string literal");
    return false;
  }
  og_tmpl_tok *tok = og_tmpl_lex_push(lx, OG_TK_STR, open);
  tok->text = og_xstrndup(lx->s + open + 1, i - open - 1);
  tok->len = i - open - 1;
  lx->pos = i + 1;
  return true;
}

/* One token inside a tag. */
static bool og_tmpl_lex_token(og_tmpl_lexer *lx) {
  const char *s = lx->s;
  size_t p = lx->pos, e = p + 1;
  char c = s[p];
  og_tmpl_tok_kind kind = OG_TK_UNSUPPORTED;
  if (og_tmpl_is_alpha(c) || og_tmpl_is_digit(c)) {
    /* A number runs on through letters too, so `0x1f` is one token to complain about. */
    while (og_tmpl_is_alpha(s[e]) || og_tmpl_is_digit(s[e])) ++e;
    if (og_tmpl_is_alpha(c)) kind = OG_TK_NAME;
  } else if (c == '"' || c == '\'') {
    return og_tmpl_lex_string(lx);
  } else if (c == '.') {
    kind = OG_TK_DOT;
  } else if (c != '\0' && strchr("=!<>", c) && s[p + 1] == '=') {
    e = p + 2;
  } else if (c == '\0' || !strchr("|[](),=<>+-*/~", c)) { /* strchr finds the NUL too */
    if (c > ' ' && c < 0x7f)
      og_diag_error(lx->d, og_tmpl_lex_loc(lx, p), "unexpected character '%c' in tag", c);
    else
      og_diag_error(lx->d, og_tmpl_lex_loc(lx, p), "unexpected byte 0x%02x in tag", (unsigned char)c);
    return false;
  }
  og_tmpl_tok *tok = og_tmpl_lex_push(lx, kind, p);
  tok->text = og_xstrndup(s + p, e - p);
  tok->len = e - p;
  lx->pos = e;
  return true;
}

/* Lexes the inside of a {{ }} or {% %} tag whose opener is at `open` (body starts at
 * lx->pos) up to and including its closer; sets *after for the text that follows. */
static bool og_tmpl_lex_tag(og_tmpl_lexer *lx, size_t open, og_tmpl_after *after) {
  bool block = lx->s[open + 1] == '%';
  char closer = block ? '%' : '}';
  og_loc open_loc = og_tmpl_lex_loc(lx, open);
  og_tmpl_lex_push(lx, block ? OG_TK_BLOCK_BEGIN : OG_TK_OUT_BEGIN, open);
  for (;;) {
    const char *s = lx->s;
    while (lx->pos < lx->n && og_tmpl_is_space(s[lx->pos])) lx->pos++;
    size_t p = lx->pos;
    if (p >= lx->n) {
      og_diag_error(lx->d, open_loc, "unterminated '%s' tag (missing '%s')", block ? "{%" : "{{", block ? "%}" : "}}");
      return false;
    }
    char mod = 0;
    if ((s[p] == '-' || (block && s[p] == '+')) && s[p + 1] == closer && s[p + 2] == '}') mod = s[p];
    if (mod || (s[p] == closer && s[p + 1] == '}')) {
      og_tmpl_lex_push(lx, OG_TK_TAG_END, p);
      lx->pos = p + (mod ? 3 : 2);
      *after = mod == '-' ? OG_AFTER_STRIP : block && mod != '+' ? OG_AFTER_TRIM : OG_AFTER_NONE;
      return true;
    }
    if (!og_tmpl_lex_token(lx)) return false;
  }
}

bool og_tmpl_lex(const og_source *src, og_tmpl_toks *out, og_diag *d) {
  og_tmpl_lexer lx = {src, src->text, src->len, 0, 0, 1, 1, out, d};
  const char *s = src->text;
  og_tmpl_after after = OG_AFTER_NONE;
  for (;;) {
    size_t open = og_tmpl_find_open(&lx, lx.pos);
    size_t start = lx.pos, end = open;
    if (after == OG_AFTER_STRIP) {
      while (start < end && og_tmpl_is_space(s[start])) ++start;
    } else if (after == OG_AFTER_TRIM) {
      if (start < end && s[start] == '\n')
        start += 1;
      else if (start + 1 < end && s[start] == '\r' && s[start + 1] == '\n')
        start += 2;
    }
    if (open == lx.n) {
      og_tmpl_lex_text(&lx, start, end);
      break;
    }
    char kind = s[open + 1], mod = s[open + 2];
    if (mod == '-') {
      while (end > start && og_tmpl_is_space(s[end - 1])) --end;
    } else if (kind != '{' && mod != '+') {
      /* lstrip_blocks: only when nothing but blanks precede the tag on its line. */
      size_t ls = open;
      while (ls > 0 && (s[ls - 1] == ' ' || s[ls - 1] == '\t')) --ls;
      if (ls == 0 || s[ls - 1] == '\n') end = ls > start ? ls : start;
    }
    og_tmpl_lex_text(&lx, start, end);
    lx.pos = open + 2 + (mod == '-' || (mod == '+' && kind != '{'));
    if (kind == '#') {
      const char *close = strstr(s + lx.pos, "#}");
      if (!close) {
        og_diag_error(d, og_tmpl_lex_loc(&lx, open), "unterminated comment (missing '#}')");
        return false;
      }
      size_t c = (size_t)(close - s);
      char cmod = c > lx.pos ? s[c - 1] : 0;
      after = cmod == '-' ? OG_AFTER_STRIP : cmod == '+' ? OG_AFTER_NONE : OG_AFTER_TRIM;
      lx.pos = c + 2;
    } else if (!og_tmpl_lex_tag(&lx, open, &after)) {
      return false;
    }
  }
  og_tmpl_lex_push(&lx, OG_TK_EOF, lx.n);
  return true;
}

void og_tmpl_toks_free(og_tmpl_toks *t) {
  for (size_t i = 0; i < t->len; ++i) free(t->items[i].text);
  free(t->items);
  t->items = NULL;
  t->len = t->cap = 0;
}
