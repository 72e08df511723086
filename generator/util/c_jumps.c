#include "util/c_jumps.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"
#include "util/c_tokens.h"

/* A statement the scan is inside: a braced block or the single statement of an
 * unbraced loop or switch. */
typedef struct og_frame {
  char kind; /* 'L' a loop, 'D' a do loop, 'S' a switch, 'B' another block */
  bool braced;
  int depth; /* braces open outside it */
} og_frame;

typedef struct og_scan {
  og_frame *frames;
  size_t n, cap;
  int depth;
  bool do_while; /* a do loop just ended: its `while (...)` follows */
} og_scan;

static void og_push(og_scan *s, char kind, bool braced) {
  og_grow((void **)&s->frames, &s->cap, s->n + 1, sizeof *s->frames);
  s->frames[s->n++] = (og_frame){kind, braced, s->depth};
}

static void og_pop(og_scan *s) { s->do_while = s->frames[--s->n].kind == 'D'; }

/* A statement ended at the current depth: so do the unbraced loops it was the body of,
 * unless an `else` follows (the statement was an if's, and the loop goes on). */
static void og_statement_ends(og_scan *s, const og_tokens *t, size_t next) {
  if (next < t->n && strcmp(t->items[next].text, "else") == 0) return;
  while (s->n && !s->frames[s->n - 1].braced && s->frames[s->n - 1].depth == s->depth) {
    og_pop(s);
    if (s->do_while) return; /* a do's statement goes on to its `while (...);` */
  }
}

static bool og_inside(const og_scan *s, bool switch_counts) {
  for (size_t i = 0; i < s->n; ++i)
    if (s->frames[i].kind == 'L' || s->frames[i].kind == 'D' || (switch_counts && s->frames[i].kind == 'S'))
      return true;
  return false;
}

/* Past the parenthesised group at items[i] (a loop's or switch's head): its last index. */
static size_t og_skip_head(const og_tokens *t, size_t i) {
  if (i >= t->n || strcmp(t->items[i].text, "(") != 0) return i - 1;
  int depth = 0;
  for (; i < t->n; ++i) {
    if (strcmp(t->items[i].text, "(") == 0) depth++;
    if (strcmp(t->items[i].text, ")") == 0 && --depth == 0) return i;
  }
  return t->n - 1;
}

void og_body_jumps(const char *code, og_jump_fn *fn, void *ud) {
  og_tokens t = {0};
  og_tokenize(code, false, &t);
  og_scan s = {0};
  char pending = 0; /* a loop or switch head was read; its body comes next */
  for (size_t i = 0; i < t.n; ++i) {
    const char *w = t.items[i].text;
    bool loop_word = !strcmp(w, "for") || !strcmp(w, "while") || !strcmp(w, "switch");
    if (!strcmp(w, "while") && s.do_while) { /* the tail of `do ... while (c);` */
      s.do_while = false;
      i = og_skip_head(&t, i + 1);
      continue;
    }
    s.do_while = false;
    if (loop_word || !strcmp(w, "do")) {
      pending = w[0] == 's' ? 'S' : w[0] == 'd' ? 'D' : 'L';
      if (loop_word) i = og_skip_head(&t, i + 1);
      continue;
    }
    if (pending) {
      og_push(&s, pending, !strcmp(w, "{"));
      pending = 0;
      if (!strcmp(w, "{")) {
        s.depth++;
        continue;
      }
    }
    if (!strcmp(w, "{")) {
      og_push(&s, 'B', true);
      s.depth++;
    } else if (!strcmp(w, "}")) {
      s.depth--;
      while (s.n && s.frames[s.n - 1].depth > s.depth) og_pop(&s); /* unbraced ones inside */
      if (s.n && s.frames[s.n - 1].braced) og_pop(&s);
      if (!s.do_while) og_statement_ends(&s, &t, i + 1);
    } else if (!strcmp(w, ";")) {
      og_statement_ends(&s, &t, i + 1);
    } else if (!strcmp(w, "return") || !strcmp(w, "goto") || (!strcmp(w, "break") && !og_inside(&s, true)) ||
               (!strcmp(w, "continue") && !og_inside(&s, false))) {
      fn(w, t.items[i].line, t.items[i].col, ud);
    }
  }
  og_tokens_free(&t);
  free(s.frames);
}
