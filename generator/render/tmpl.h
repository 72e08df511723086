/* The template engine: text with values substituted, lists iterated and facts tested,
 * nothing more.
 *
 * Templates only print what the planner decided (plan/) and the renderers spelt into
 * the context (render/ctx*.c); any decision, formatting or type mapping belongs there,
 * in C, where it can be tested and reported against the spec. The syntax is a subset of Jinja's.
 *
 * Syntax
 *   {{ path }}                        prints a value
 *   {% for x in path %} ... {% endfor %}
 *                                     renders the body once per item of a list, with x
 *                                     bound to the item (x shadows a context name of the
 *                                     same name, and is unbound again after endfor)
 *   {% if path %} ... {% elif path %} ... {% else %} ... {% endif %}
 *                                     renders the first body whose path is true (a bool
 *                                     true, a non-empty list or string), or the else
 *                                     body; elif and else are optional
 *   {% include "name" %}              renders another template of the same env here, with
 *                                     the same context and loop variables in scope
 *   {# comment #}                     renders nothing; may span lines
 *   everything else is text, copied as is
 *
 *   path: `name` or `name.key.key...`: a loop variable or a key of the context map, then
 *   keys of maps. Names and keys are [A-Za-z_][A-Za-z0-9_]*; the first name may not be
 *   and, or, not, is, in, true, false or none. The include name is a "..." or '...'
 *   string without backslashes.
 *   Inside a tag, spaces, tabs and newlines between tokens are ignored.
 *
 * Printing: a string as is, an integer in decimal, a boolean as `true` / `false`, null
 * as nothing. A list or a map is an error.
 *
 * Whitespace: like Jinja with trim_blocks and lstrip_blocks, a block tag ({% %} or
 * {# #}) alone on its line leaves no trace: the indentation before it and the newline
 * after it are dropped. {{ }} tags are never trimmed implicitly.
 * Precisely: spaces/tabs between the start of a line and a {% or {# are dropped; one
 * newline (\n or \r\n) right after %} or #} is dropped, even when the tag ends a line
 * of content (so write `{% endfor +%}` where that newline must stay); `{%+` / `{#+`
 * keep the indentation, `+%}` / `+#}` keep the newline. `{%-` `{{-` `{#-` strip all
 * whitespace (newlines included) before the tag, `-%}` `-}}` `-#}` all whitespace after
 * it. The template's final newline is kept (unlike Jinja's default
 * keep_trailing_newline=False).
 *
 * Limits: for- and if-blocks nest at most 256 deep in one template, includes at most
 * 32 deep.
 *
 * Errors (an undefined name, a missing key, a key looked up in a non-map, a for over a
 * non-list, an if on an int or a map, printing a list or map, an unterminated tag, an
 * unbalanced block, and any Jinja syntax beyond the above: tests other than a path,
 * filters, indexing, operators, literals, loop.*) are
 * reported as "templates/x.tmpl:LINE:COL: error: ..." through og_diag, and rendering
 * fails. A template is parsed whole before it renders, so a syntax error fails it even
 * where it sits in a for over an empty list.
 */
#ifndef OG_TMPL_H
#define OG_TMPL_H

#include <stdbool.h>

#include "util/buf.h"
#include "util/diag.h"
#include "render/value.h"

typedef struct og_tmpl_env og_tmpl_env;

/* Templates are loaded from `dir` by name ("cpu_kernel.c.tmpl") on first use and
 * cached for the env's lifetime; messages name them "dir/name". */
og_tmpl_env *og_tmpl_env_new(const char *dir);
void og_tmpl_env_free(og_tmpl_env *env);

/* Adds template `name` from memory (opspec-gen's built-in templates); it is found
 * before `dir` is read, and messages name it `path`. */
void og_tmpl_env_add(og_tmpl_env *env, const char *name, const char *path, const char *text);

/* Renders template `name` with `ctx` (a map; NULL behaves as an empty one) appended to
 * `out`. Returns false and reports through `d` on error; `out` then holds partial
 * output. */
bool og_tmpl_render(og_tmpl_env *env, const char *name, const og_value *ctx, og_buf *out, og_diag *d);

#endif /* OG_TMPL_H */
