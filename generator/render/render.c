/* Rendering: every template for every op, and the library's, into memory. Each op is
 * planned once, its context built once, each of its files rendered once; its
 * fingerprint is then computed from those texts and written into them, and its context
 * joins the library's. Nothing here writes a file (write/write.h). */
#include "render/render.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan/plan.h"
#include "render/ctx.h"
#include "render/fingerprint.h"
#include "util/escape.h"

#define OG_LINE_MARKER "#line __OPSPEC_LINE__"

/* The files of one op, by template; "%s" is the op's name. */
static const struct {
  const char *tmpl, *path;
} og_op_files[] = {
    {"op.h.tmpl", "ops/%s.h"},         {"op_body.inc.tmpl", "ops/%s_body.inc"}, {"op_cpu.c.tmpl", "ops/%s_cpu.c"},
    {"op_ffi.c.tmpl", "ops/%s_ffi.c"}, {"op_cuda.cu.tmpl", "ops/%s_cuda.cu"},
};

/* The files of the whole library. */
static const struct {
  const char *tmpl, *path;
} og_library_files[] = {
    {"registry.c.tmpl", "registry.c"},
    {"ops.py.tmpl", "python/ops.py"},
    {"ops.pyi.tmpl", "python/ops.pyi"},
    {"tables.py.tmpl", "python/_tables.py"},
};

void og_fix_line_markers(og_buf *text, const char *path) {
  og_buf out = {0};
  const char *p = og_buf_str(text);
  int line = 1;
  size_t marker_len = strlen(OG_LINE_MARKER);
  while (*p) {
    const char *eol = strchr(p, '\n');
    size_t len = eol ? (size_t)(eol - p) : strlen(p);
    if (len == marker_len && strncmp(p, OG_LINE_MARKER, marker_len) == 0) {
      og_buf_printf(&out, "#line %d \"", line + 1); /* the line after this one */
      og_escape_c_string(&out, path);
      og_buf_putc(&out, '"');
    } else
      og_buf_append(&out, p, len);
    if (!eol) break;
    og_buf_putc(&out, '\n');
    p = eol + 1;
    ++line;
  }
  og_buf_free(text);
  *text = out;
}

void og_produced_free(og_produced *produced) {
  for (size_t i = 0; i < produced->n; ++i) {
    og_buf_free(&produced->texts[i]);
    free(produced->paths[i]);
  }
  free(produced->texts);
  free(produced->paths);
  memset(produced, 0, sizeof *produced);
}

/* Adds `text` as the file `out_dir`/`rel` to `produced`. */
static void og_produce(og_produced *produced, const char *out_dir, const char *rel, og_buf *text) {
  og_buf path = {0};
  og_buf_printf(&path, "%s/%s", out_dir, rel);
  og_fix_line_markers(text, og_buf_str(&path));
  og_grow((void **)&produced->paths, &produced->cap, produced->n + 1, sizeof *produced->paths);
  og_grow((void **)&produced->texts, &produced->tcap, produced->n + 1, sizeof *produced->texts);
  produced->paths[produced->n] = og_buf_take(&path);
  produced->texts[produced->n++] = *text;
  *text = (og_buf){0};
}

enum { OG_NOP_FILES = sizeof og_op_files / sizeof *og_op_files };

/* Renders the files of one op; returns its context's op map (with its fingerprint and
 * Python parts added) for the library. */
static og_value *og_render_op(og_tmpl_env *env, const og_op *op, const char *out_dir, const char *package,
                              og_produced *produced, bool *ok, og_diag *d) {
  og_op_plan plan;
  og_plan_op(op, &plan);
  og_value *ctx = og_value_map();
  og_map_set(ctx, "op", og_ctx_op(op, &plan));
  og_map_set_str(ctx, "package", package);
  og_buf texts[OG_NOP_FILES] = {{0}};
  for (size_t f = 0; f < OG_NOP_FILES; ++f) *ok &= og_tmpl_render(env, og_op_files[f].tmpl, ctx, &texts[f], d);
  char fingerprint[OG_FINGERPRINT_LEN + 1];
  og_fingerprint_fill(texts, OG_NOP_FILES, fingerprint);
  for (size_t f = 0; f < OG_NOP_FILES; ++f) {
    og_buf rel = {0};
    og_buf_printf(&rel, og_op_files[f].path, op->name);
    og_produce(produced, out_dir, og_buf_str(&rel), &texts[f]);
    og_buf_free(&rel);
  }
  og_value *map = og_map_take(ctx, "op");
  og_value_free(ctx);
  og_ctx_op_python(map, op, fingerprint);
  return map;
}

static int og_op_cmp(const void *x, const void *y) {
  return strcmp((*(const og_op *const *)x)->name, (*(const og_op *const *)y)->name);
}

bool og_render_all(og_tmpl_env *env, const og_op *const *ops, size_t nops, const char *out_dir, const char *package,
                   og_produced *produced, og_diag *d) {
  /* The library lists its ops by name; each op's files come in the same order. */
  const og_op **sorted = og_xcalloc(nops ? nops : 1, sizeof *sorted);
  memcpy(sorted, ops, nops * sizeof *sorted);
  qsort(sorted, nops, sizeof *sorted, og_op_cmp);
  bool ok = true;
  og_value *maps = og_value_list();
  for (size_t i = 0; i < nops; ++i)
    og_list_push(maps, og_render_op(env, sorted[i], out_dir, package, produced, &ok, d));
  free(sorted);
  og_value *lib = og_ctx_library(maps);
  og_map_set_str(lib, "package", package);
  for (size_t f = 0; f < sizeof og_library_files / sizeof *og_library_files; ++f) {
    og_buf text = {0};
    ok &= og_tmpl_render(env, og_library_files[f].tmpl, lib, &text, d);
    og_produce(produced, out_dir, og_library_files[f].path, &text);
  }
  og_value_free(lib);
  return ok;
}
