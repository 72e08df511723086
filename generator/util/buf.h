/* og_buf: a growable, always NUL-terminated byte buffer.
 *
 * Every module of opspec-gen builds text through this one type. Allocation failure
 * aborts with a message: the generator is a short-lived tool and has nothing useful
 * to do without memory.
 */
#ifndef OG_BUF_H
#define OG_BUF_H

#include <stdarg.h>
#include <stddef.h>

typedef struct og_buf {
  char *data; /* NUL-terminated; NULL until the first append */
  size_t len; /* bytes in use, not counting the NUL */
  size_t cap;
} og_buf;

void og_buf_append(og_buf *b, const char *s, size_t n);
void og_buf_puts(og_buf *b, const char *s);
void og_buf_putc(og_buf *b, char c);
void og_buf_printf(og_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void og_buf_vprintf(og_buf *b, const char *fmt, va_list ap);
/* Returns the text ("" if empty); the buffer keeps ownership. */
const char *og_buf_str(const og_buf *b);
/* Hands the text to the caller (malloc'd, never NULL) and empties the buffer. */
char *og_buf_take(og_buf *b);
void og_buf_clear(og_buf *b);
void og_buf_free(og_buf *b);

/* Allocation helpers that abort on failure. */
void *og_xmalloc(size_t n);
void *og_xcalloc(size_t count, size_t size);
void *og_xrealloc(void *p, size_t n);
char *og_xstrdup(const char *s);
char *og_xstrndup(const char *s, size_t n);

/* Grow a dynamic array `*items` (of `*cap` elements of `size` bytes) to hold `need`. */
void og_grow(void **items, size_t *cap, size_t need, size_t size);

#endif /* OG_BUF_H */
