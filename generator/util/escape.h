/* Escaping, in one place: every spec-supplied text that lands inside generated C or
 * Python (paths, docs, expression texts) passes through one of these, so no text can
 * end a string literal, a comment or a docstring early. Names never need escaping:
 * the loader admits only identifiers as names. */
#ifndef OG_ESCAPE_H
#define OG_ESCAPE_H

#include "util/buf.h"

/* The body of a C string literal ("..."): backslash, quote, control and non-ASCII bytes
 * become escapes; "??" is broken up so no trigraph can form. */
void og_escape_c_string(og_buf *out, const char *text);
/* Text safe inside a C block comment: "*" "/" cannot close it (it becomes "* /"), nor can a
 * trigraph form ("??" becomes "? ?"), and
 * control characters other than newline and tab become '?'. */
void og_escape_c_comment(og_buf *out, const char *text);
/* The body of a Python triple-quoted (""") string literal: backslashes and quotes are
 * escaped, so neither '"""' nor '\N{...}' nor a trailing quote can end or change it;
 * control characters other than newline and tab become \xNN escapes. */
void og_escape_py_string(og_buf *out, const char *text);

#endif /* OG_ESCAPE_H */
