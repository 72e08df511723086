#include "util/diag.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

og_source *og_source_read(const char *path, og_diag *d) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    og_buf_printf(&d->out, "%s: error: cannot read: %s\n", path, strerror(errno));
    d->errors++;
    return NULL;
  }
  og_buf text = {0};
  char chunk[8192];
  size_t n;
  while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) og_buf_append(&text, chunk, n);
  int failed = ferror(f);
  fclose(f);
  if (failed) {
    og_buf_printf(&d->out, "%s: error: read failed\n", path);
    d->errors++;
    og_buf_free(&text);
    return NULL;
  }
  og_source *src = og_xcalloc(1, sizeof *src);
  src->path = og_xstrdup(path);
  src->len = text.len;
  src->text = og_buf_take(&text);
  return src;
}

og_source *og_source_from_string(const char *path, const char *text) {
  og_source *src = og_xcalloc(1, sizeof *src);
  src->path = og_xstrdup(path);
  src->text = og_xstrdup(text);
  src->len = strlen(text);
  return src;
}

void og_source_free(og_source *src) {
  if (!src) return;
  free(src->path);
  free(src->text);
  free(src);
}

og_loc og_loc_advance(og_loc loc, size_t offset) {
  loc.col += (int)offset;
  return loc;
}

size_t og_line_break(const char *p, const char *end) {
  if (p >= end) return 0;
  if (*p == '\n') return 1;
  if (*p == '\r') return p + 1 < end && p[1] == '\n' ? 2 : 1;
  const unsigned char *u = (const unsigned char *)p;
  if (end - p >= 2 && u[0] == 0xC2 && u[1] == 0x85) return 2;                                   /* NEL */
  if (end - p >= 3 && u[0] == 0xE2 && u[1] == 0x80 && (u[2] == 0xA8 || u[2] == 0xA9)) return 3; /* LS, PS */
  return 0;
}

const char *og_source_line(const og_source *src, int line, size_t *len) {
  if (!src || line < 1) return NULL;
  const char *p = src->text, *end = src->text + src->len;
  for (int at = 1; at < line; ++at) {
    size_t brk = 0;
    while (p < end && !(brk = og_line_break(p, end))) ++p;
    if (p >= end) return NULL;
    p += brk;
  }
  if (p >= end && line > 1) return NULL; /* past the last line break: nothing to show */
  const char *eol = p;
  while (eol < end && !og_line_break(eol, end)) ++eol;
  *len = (size_t)(eol - p);
  return p;
}

/* Appends the quoted source line and a caret under `loc.col`. */
static void og_diag_quote(og_buf *out, og_loc loc) {
  size_t len;
  const char *p = og_source_line(loc.src, loc.line, &len);
  if (!p) return;
  const char *eol = p + len;
  int width = snprintf(NULL, 0, "%d", loc.line);
  og_buf_printf(out, " %d | %.*s\n", loc.line, (int)(eol - p), p);
  og_buf_printf(out, " %*s | ", width, "");
  /* Reproduce tabs so the caret lines up whatever the terminal's tab width. */
  for (int c = 1; c < loc.col && p + c - 1 < eol; ++c) og_buf_putc(out, p[c - 1] == '\t' ? '\t' : ' ');
  og_buf_puts(out, "^\n");
}

static void og_diag_emit(og_diag *d, og_loc loc, const char *kind, const char *fmt, va_list ap) {
  if (loc.src)
    og_buf_printf(&d->out, "%s:%d:%d: %s: ", loc.src->path, loc.line, loc.col, kind);
  else
    og_buf_printf(&d->out, "opspec-gen: %s: ", kind);
  og_buf_vprintf(&d->out, fmt, ap);
  og_buf_putc(&d->out, '\n');
  og_diag_quote(&d->out, loc);
}

void og_diag_error(og_diag *d, og_loc loc, const char *fmt, ...) {
  d->errors++;
  d->dropping = d->max_shown > 0 && d->errors > d->max_shown;
  if (d->dropping) return;
  va_list ap;
  va_start(ap, fmt);
  og_diag_emit(d, loc, "error", fmt, ap);
  va_end(ap);
}

int og_diag_hidden(const og_diag *d) {
  return d->max_shown > 0 && d->errors > d->max_shown ? d->errors - d->max_shown : 0;
}

void og_diag_note(og_diag *d, og_loc loc, const char *fmt, ...) {
  if (d->dropping) return;
  va_list ap;
  va_start(ap, fmt);
  og_diag_emit(d, loc, "note", fmt, ap);
  va_end(ap);
}

void og_diag_free(og_diag *d) { og_buf_free(&d->out); }
