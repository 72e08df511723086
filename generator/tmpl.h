/* The template engine: a small, strict subset of Jinja.
 *
 * Syntax
 *   {{ expr }}                       output; expr is a path (a.b.c, a[0]), a string or
 *                                    integer literal, optionally piped through filters:
 *                                    {{ x | upper }}, {{ names | join(", ") }}
 *   {% if e %} {% elif e %} {% else %} {% endif %}
 *                                    e: expr, `not e`, `e and e`, `e or e`, `e == e`,
 *                                    `e != e`, parentheses
 *   {% for x in list %} ... {% endfor %}   with loop.index0, loop.index, loop.first,
 *                                    loop.last, loop.length
 *   {% include "name" %}             renders another template with the same context
 *   {# comment #}
 *   {%- ... -%}, {{- ... -}}, {#- -#}  strip whitespace (incl. newlines) on that side
 *
 * Whitespace: like Jinja with trim_blocks and lstrip_blocks, a block tag ({% %} or
 * {# #}) alone on its line leaves no trace: the indentation before it and the newline
 * after it are dropped. {{ }} tags are never trimmed implicitly.
 * Precisely: spaces/tabs between the start of a line and a {% or {# are dropped; one
 * newline (\n or \r\n) right after %} or #} is dropped, even when the tag ends a line
 * of content (so write `{% endif +%}` where that newline must stay); `{%+` / `{#+`
 * keep the indentation, `+%}` / `+#}` keep the newline. The template's final newline
 * is kept (unlike Jinja's default keep_trailing_newline=False).
 *
 * Literals: "str" / 'str' (escapes \" \' \\ \n \t), integers, true, false, none.
 * Indexing: a[0], a[-1] (from the end), a["key"], a[expr].
 * Filters: upper, lower, join(sep=""), length, default(v=""), indent(width=4), ctype,
 * cutype, xla_dtype, np_dtype, cstring, pystring, replace(old, new). `default` is the
 * only place an undefined name, missing key or out-of-range index is not an error.
 *
 * Errors (undefined variable, unknown filter, attribute of a non-map, loop over a
 * non-list, unterminated tag, unbalanced block) are reported as
 * "templates/x.tmpl:LINE:COL: error: ..." through og_diag, and rendering fails.
 */
#ifndef OG_TMPL_H
#define OG_TMPL_H

#include <stdbool.h>

#include "buf.h"
#include "diag.h"
#include "value.h"

typedef struct og_tmpl_env og_tmpl_env;

/* Templates are loaded from `dir` by name ("cpu_kernel.c.tmpl") and cached. */
og_tmpl_env *og_tmpl_env_new(const char *dir);
/* Registers an in-memory template (used by tests and for overriding). */
void og_tmpl_env_add(og_tmpl_env *env, const char *name, const char *text);
void og_tmpl_env_free(og_tmpl_env *env);

/* Renders template `name` with `ctx` (a map) appended to `out`. Returns false and
 * reports through `d` on error; `out` then holds partial output. */
bool og_tmpl_render(og_tmpl_env *env, const char *name, const og_value *ctx, og_buf *out,
                    og_diag *d);

#endif /* OG_TMPL_H */
