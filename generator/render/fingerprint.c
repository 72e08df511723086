#include "render/fingerprint.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OG_FNV_OFFSET 0xcbf29ce484222325ULL
#define OG_FNV_PRIME  0x100000001b3ULL

static uint64_t og_fnv_byte(uint64_t h, unsigned char c) { return (h ^ c) * OG_FNV_PRIME; }

static int og_is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

/* Whether the line at `p` is a #line directive (white space allowed around the '#'). */
static int og_is_line_directive(const char *p) {
  while (*p == ' ' || *p == '\t') ++p;
  if (*p++ != '#') return 0;
  while (*p == ' ' || *p == '\t') ++p;
  return strncmp(p, "line", 4) == 0 && (p[4] == ' ' || p[4] == '\t');
}

/* Hashes one text, already spliced: every run of white space and every comment as one space, #line
 * directives as nothing; string and character literals exactly. */
static uint64_t og_fnv_tokens(uint64_t h, const char *p) {
  int pending_space = 0, at_line_start = 1;
  while (*p) {
    if (at_line_start && og_is_line_directive(p)) {
      while (*p && *p != '\n') ++p;
      continue;
    }
    at_line_start = 0;
    if (p[0] == '/' && p[1] == '/') {
      while (*p && *p != '\n' && *p != '\r') ++p;
      pending_space = 1;
      continue;
    }
    if (p[0] == '/' && p[1] == '*') {
      const char *end = strstr(p + 2, "*/");
      p = end ? end + 2 : p + strlen(p);
      pending_space = 1;
      continue;
    }
    if (og_is_space(*p)) {
      at_line_start = *p == '\n';
      ++p;
      pending_space = 1;
      continue;
    }
    if (pending_space) h = og_fnv_byte(h, ' ');
    pending_space = 0;
    if (*p == '"' || *p == '\'') { /* a literal: comment markers inside are text */
      const char quote = *p;
      h = og_fnv_byte(h, (unsigned char)*p++);
      while (*p && *p != quote && *p != '\n') {
        if (*p == '\\' && p[1]) h = og_fnv_byte(h, (unsigned char)*p++);
        h = og_fnv_byte(h, (unsigned char)*p++);
      }
      if (*p == quote) h = og_fnv_byte(h, (unsigned char)*p++);
      continue;
    }
    h = og_fnv_byte(h, (unsigned char)*p++);
  }
  return h;
}

/* The length of the line break at `p` (\r\n, \n or \r), or 0. */
static size_t og_newline_at(const char *p) { return p[0] == '\r' ? 1 + (p[1] == '\n') : p[0] == '\n'; }

/* `text` as the compiler's translation phases 1 and 2 leave it: every backslash that ends
 * a line removed with its line break, so a `//` comment ending in one swallows the next
 * line, as the compiler reads it. The compilers differ at the edges, so there are two
 * readings: the strict one (a backslash right before the line break), and GCC's with
 * -std=c11 (white space allowed between them, and the trigraph ??/ as a backslash; C++17,
 * which nvcc reads .cu files as, has no trigraphs). */
static void og_splice(og_buf *out, const char *p, bool gcc) {
  while (*p) {
    const char *q = p;
    size_t backslash = *q == '\\' ? 1 : gcc && q[0] == '?' && q[1] == '?' && q[2] == '/' ? 3 : 0;
    if (backslash) {
      q += backslash;
      while (gcc && (*q == ' ' || *q == '\t')) ++q;
      size_t nl = og_newline_at(q);
      if (nl) {
        p = q + nl;
        continue;
      }
    }
    og_buf_putc(out, *p++);
  }
}

/* Hashes one text as the compiler reads it; when the two readings of og_splice differ,
 * both, so that an edit either compiler sees changes the hash. */
static uint64_t og_fnv_code(uint64_t h, const char *text) {
  og_buf strict = {0}, gcc = {0};
  og_splice(&strict, text, false);
  og_splice(&gcc, text, true);
  h = og_fnv_tokens(h, og_buf_str(&strict));
  if (strict.len != gcc.len || strcmp(og_buf_str(&strict), og_buf_str(&gcc)) != 0) {
    h = og_fnv_byte(h, 1);
    h = og_fnv_tokens(h, og_buf_str(&gcc));
  }
  og_buf_free(&strict);
  og_buf_free(&gcc);
  return h;
}

uint64_t og_code_fingerprint(const og_buf *texts, size_t n) {
  uint64_t h = OG_FNV_OFFSET;
  for (size_t i = 0; i < n; ++i) {
    h = og_fnv_code(h, og_buf_str(&texts[i]));
    h = og_fnv_byte(h, 0); /* where one file ends: code moved between files counts */
  }
  return h;
}

/* `text` with OG_FINGERPRINT_LINE's placeholder replaced by `hex`. */
static void og_fingerprint_put(og_buf *out, const og_buf *text, const char *hex) {
  static const char line[] = OG_FINGERPRINT_LINE, placeholder[] = "__OPSPEC_FINGERPRINT__";
  const char *p = og_buf_str(text);
  const char *at = strstr(p, line);
  while (at && !((at == p || at[-1] == '\n') && (at[sizeof line - 1] == '\n' || at[sizeof line - 1] == '\0')))
    at = strstr(at + 1, line);
  if (!at) {
    og_buf_append(out, p, text->len);
    return;
  }
  const char *mark = strstr(at, placeholder);
  og_buf_append(out, p, (size_t)(mark - p));
  og_buf_puts(out, hex);
  og_buf_puts(out, mark + sizeof placeholder - 1);
}

void og_fingerprint_fill(og_buf *texts, size_t n, char hex[OG_FINGERPRINT_LEN + 1]) {
  og_buf *blank = og_xcalloc(n ? n : 1, sizeof *blank);
  for (size_t i = 0; i < n; ++i) og_fingerprint_put(&blank[i], &texts[i], "");
  snprintf(hex, OG_FINGERPRINT_LEN + 1, "%016llx", (unsigned long long)og_code_fingerprint(blank, n));
  for (size_t i = 0; i < n; ++i) {
    og_buf_free(&blank[i]);
    og_fingerprint_put(&blank[i], &texts[i], hex);
    og_buf_free(&texts[i]);
    texts[i] = blank[i];
  }
  free(blank);
}
