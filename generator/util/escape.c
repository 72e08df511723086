#include "util/escape.h"

void og_escape_c_string(og_buf *out, const char *text) {
  for (const unsigned char *p = (const unsigned char *)text; *p; ++p) {
    if (*p == '\\' || *p == '"')
      og_buf_printf(out, "\\%c", *p);
    else if (*p == '\n')
      og_buf_puts(out, "\\n");
    else if (*p == '\t')
      og_buf_puts(out, "\\t");
    else if (*p == '?' && p[1] == '?')
      og_buf_puts(out, "?\\"); /* "??(" would be a trigraph */
    else if (*p < 0x20 || *p >= 0x7f)
      og_buf_printf(out, "\\%03o", *p); /* octal: stops after 3 digits */
    else
      og_buf_putc(out, (char)*p);
  }
}

void og_escape_c_comment(og_buf *out, const char *text) {
  for (const unsigned char *p = (const unsigned char *)text; *p; ++p) {
    if (*p == '*' && p[1] == '/')
      og_buf_puts(out, "* ");
    else if (*p == '?' && p[1] == '?')
      og_buf_puts(out, "? "); /* C11 trigraphs: "??/" splices lines */
    else if (*p < 0x20 && *p != '\n' && *p != '\t')
      og_buf_putc(out, '?');
    else
      og_buf_putc(out, (char)*p);
  }
}

void og_escape_py_string(og_buf *out, const char *text) {
  for (const unsigned char *p = (const unsigned char *)text; *p; ++p) {
    if (*p == '\\' || *p == '"')
      og_buf_printf(out, "\\%c", *p);
    else if ((*p < 0x20 && *p != '\n' && *p != '\t') || *p == 0x7f)
      og_buf_printf(out, "\\x%02x", *p);
    else
      og_buf_putc(out, (char)*p); /* UTF-8 passes through: Python source is UTF-8 */
  }
}
