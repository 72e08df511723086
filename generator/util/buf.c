#include "util/buf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void og_oom(void) {
  fputs("opspec-gen: out of memory\n", stderr);
  abort();
}

void *og_xmalloc(size_t n) {
  void *p = malloc(n ? n : 1);
  if (!p) og_oom();
  return p;
}

void *og_xcalloc(size_t count, size_t size) {
  void *p = calloc(count ? count : 1, size ? size : 1);
  if (!p) og_oom();
  return p;
}

void *og_xrealloc(void *p, size_t n) {
  void *q = realloc(p, n ? n : 1);
  if (!q) og_oom();
  return q;
}

char *og_xstrdup(const char *s) { return og_xstrndup(s, strlen(s)); }

char *og_xstrndup(const char *s, size_t n) {
  char *p = og_xmalloc(n + 1);
  memcpy(p, s, n);
  p[n] = '\0';
  return p;
}

void og_grow(void **items, size_t *cap, size_t need, size_t size) {
  if (need <= *cap) return;
  size_t ncap = *cap ? *cap * 2 : 8;
  while (ncap < need) ncap *= 2;
  *items = og_xrealloc(*items, ncap * size);
  *cap = ncap;
}

static void og_buf_reserve(og_buf *b, size_t extra) {
  size_t need = b->len + extra + 1;
  if (need <= b->cap) return;
  size_t ncap = b->cap ? b->cap * 2 : 64;
  while (ncap < need) ncap *= 2;
  b->data = og_xrealloc(b->data, ncap);
  b->cap = ncap;
}

void og_buf_append(og_buf *b, const char *s, size_t n) {
  og_buf_reserve(b, n);
  if (n) memcpy(b->data + b->len, s, n);
  b->len += n;
  b->data[b->len] = '\0';
}

void og_buf_puts(og_buf *b, const char *s) { og_buf_append(b, s, strlen(s)); }

void og_buf_putc(og_buf *b, char c) { og_buf_append(b, &c, 1); }

void og_buf_vprintf(og_buf *b, const char *fmt, va_list ap) {
  va_list copy;
  va_copy(copy, ap);
  int n = vsnprintf(NULL, 0, fmt, copy);
  va_end(copy);
  if (n < 0) return;
  og_buf_reserve(b, (size_t)n);
  vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
  b->len += (size_t)n;
}

void og_buf_printf(og_buf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  og_buf_vprintf(b, fmt, ap);
  va_end(ap);
}

const char *og_buf_str(const og_buf *b) { return b->data ? b->data : ""; }

char *og_buf_take(og_buf *b) {
  char *s = b->data ? b->data : og_xstrdup("");
  b->data = NULL;
  b->len = b->cap = 0;
  return s;
}

void og_buf_clear(og_buf *b) {
  b->len = 0;
  if (b->data) b->data[0] = '\0';
}

void og_buf_free(og_buf *b) {
  free(b->data);
  b->data = NULL;
  b->len = b->cap = 0;
}
