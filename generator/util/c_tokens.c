#include "util/c_tokens.h"

#include <stdlib.h>
#include <string.h>

#include "util/buf.h"

static bool og_word_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
static bool og_word_char(char c) { return og_word_start(c) || (c >= '0' && c <= '9'); }

static void og_tokens_push(og_tokens *t, const char *code, const char *start, size_t len, int line, int col) {
  og_grow((void **)&t->items, &t->cap, t->n + 1, sizeof *t->items);
  size_t at = (size_t)(start - code);
  t->items[t->n++] = (og_token){og_xstrndup(start, len), line, col, at, at + len};
}

void og_tokenize(const char *code, bool directives, og_tokens *out) {
  int line = 0;
  const char *line_start = code;
  bool line_blank = true; /* only blanks so far on this line: a '#' starts a directive */
  for (const char *p = code; *p;) {
    const char *start = p;
    if (*p == '\n') {
      ++line;
      line_start = ++p;
      line_blank = true;
      continue;
    }
    if (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\f' || *p == '\v') {
      ++p;
      continue;
    }
    if ((*p == '#' && line_blank) || (p[0] == '/' && p[1] == '/')) {
      /* To the end of the line; a directive goes on past a backslash-newline. */
      bool directive = *p == '#';
      int first_line = line, col = (int)(start - line_start) + 1;
      while (*p && *p != '\n') {
        if (directive && *p == '\\' && p[1] == '\n') {
          ++line;
          line_start = p + 2;
          ++p;
        }
        ++p;
      }
      if (directive && directives) og_tokens_push(out, code, start, (size_t)(p - start), first_line, col);
      continue;
    }
    line_blank = false;
    if (p[0] == '/' && p[1] == '*') {
      const char *end = strstr(p + 2, "*/");
      const char *stop = end ? end + 2 : p + strlen(p);
      for (; p < stop; ++p)
        if (*p == '\n') {
          ++line;
          line_start = p + 1;
        }
    } else if (*p == '"' || *p == '\'') {
      char quote = *p++;
      while (*p && *p != quote && *p != '\n') p += (*p == '\\' && p[1]) ? 2 : 1;
      if (*p == quote) ++p;
    } else if (og_word_char(*p)) {
      bool number = !og_word_start(*p);
      while (og_word_char(*p) || (number && *p == '.')) ++p;
      og_tokens_push(out, code, start, (size_t)(p - start), line, (int)(start - line_start) + 1);
    } else {
      og_tokens_push(out, code, start, 1, line, (int)(start - line_start) + 1);
      ++p;
    }
  }
}

void og_tokens_free(og_tokens *t) {
  for (size_t i = 0; i < t->n; ++i) free(t->items[i].text);
  free(t->items);
  *t = (og_tokens){0};
}

bool og_token_is(const og_tokens *t, size_t i, const char *text) {
  return i < t->n && strcmp(t->items[i].text, text) == 0;
}

bool og_tokens_adjacent(const og_tokens *t, size_t i) {
  return i + 1 < t->n && t->items[i].end == t->items[i + 1].start;
}

bool og_token_is_assign(const og_tokens *t, size_t i) {
  return og_token_is(t, i, "=") && !(og_token_is(t, i + 1, "=") && og_tokens_adjacent(t, i));
}

bool og_token_is_member(const og_tokens *t, size_t i) {
  if (i >= 1 && og_token_is(t, i - 1, ".")) return true;
  return i >= 2 && og_token_is(t, i - 1, ">") && og_token_is(t, i - 2, "-") && og_tokens_adjacent(t, i - 2);
}

bool og_tokens_digraph(const og_tokens *t, size_t i) {
  if (!og_tokens_adjacent(t, i)) return false;
  const char *w = t->items[i].text, *v = t->items[i + 1].text;
  return (!strcmp(w, "<") && (!strcmp(v, "%") || !strcmp(v, ":"))) ||
         (!strcmp(w, "%") && (!strcmp(v, ">") || !strcmp(v, ":"))) || (!strcmp(w, ":") && !strcmp(v, ">")) ||
         (!strcmp(w, "?") && !strcmp(v, "?"));
}
