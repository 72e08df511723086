#include "write/write.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "render/ctx.h"
#include "util/escape.h"
#include "write/fingerprint.h"

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

static bool og_mkdirs(const char *path, og_diag *d) {
  char *copy = og_xstrdup(path);
  for (char *p = copy + 1;; ++p) {
    if (*p != '/' && *p != '\0') continue;
    char saved = *p;
    *p = '\0';
    if (mkdir(copy, 0777) != 0 && errno != EEXIST) {
      og_buf_printf(&d->out, "%s: error: cannot create directory: %s\n", copy, strerror(errno));
      d->errors++;
      free(copy);
      return false;
    }
    *p = saved;
    if (!saved) break;
  }
  free(copy);
  return true;
}

int og_write_if_changed(const char *path, const og_buf *text, og_diag *d) {
  FILE *f = fopen(path, "rb");
  if (f) {
    og_buf old = {0};
    char chunk[8192];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) og_buf_append(&old, chunk, n);
    fclose(f);
    bool same = old.len == text->len && memcmp(og_buf_str(&old), og_buf_str(text), text->len) == 0;
    og_buf_free(&old);
    if (same) return 0;
  }
  og_buf tmp = {0};
  og_buf_printf(&tmp, "%s.tmp%ld", path, (long)getpid());
  f = fopen(og_buf_str(&tmp), "wb");
  bool ok = f && fwrite(og_buf_str(text), 1, text->len, f) == text->len;
  if (f && fclose(f) != 0) ok = false;
  if (ok && rename(og_buf_str(&tmp), path) != 0) ok = false;
  if (!ok) {
    og_buf_printf(&d->out, "%s: error: cannot write: %s\n", path, strerror(errno));
    d->errors++;
    remove(og_buf_str(&tmp));
  }
  og_buf_free(&tmp);
  return ok ? 1 : -1;
}

static bool og_render_file(og_tmpl_env *env, const char *tmpl, const og_value *ctx, const char *out_dir,
                           const char *rel, og_produced *produced, og_diag *d) {
  og_buf text = {0}, path = {0};
  og_buf_printf(&path, "%s/%s", out_dir, rel);
  bool ok = og_tmpl_render(env, tmpl, ctx, &text, d);
  if (ok) og_fix_line_markers(&text, og_buf_str(&path));
  og_grow((void **)&produced->paths, &produced->cap, produced->n + 1, sizeof *produced->paths);
  og_grow((void **)&produced->texts, &produced->tcap, produced->n + 1, sizeof *produced->texts);
  produced->paths[produced->n] = og_buf_take(&path);
  produced->texts[produced->n++] = text;
  return ok;
}

/* Verifying: every difference is an error, so a drift check lists all of them. */
static void og_report_drift(const char *path, const char *what, og_diag *d) {
  og_buf_printf(&d->out, "%s: error: %s\n", path, what);
  d->errors++;
}

/* Verifying: what `path` holds against `text`; returns false (reported) unless equal. */
static bool og_verify_file(const char *path, const og_buf *text, og_diag *d) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    og_report_drift(path, "is missing", d);
    return false;
  }
  og_buf old = {0};
  char chunk[8192];
  size_t n;
  while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) og_buf_append(&old, chunk, n);
  fclose(f);
  bool same = old.len == text->len && memcmp(og_buf_str(&old), og_buf_str(text), text->len) == 0;
  og_buf_free(&old);
  if (!same) og_report_drift(path, "differs from what the specs produce", d);
  return same;
}

/* Removes files under out_dir/ops that this run did not produce (verifying: reports
 * them). */
static void og_prune(const char *out_dir, const og_produced *produced, bool verify, og_emit_stats *stats, og_diag *d) {
  og_buf dir = {0};
  og_buf_printf(&dir, "%s/ops", out_dir);
  DIR *dp = opendir(og_buf_str(&dir));
  if (!dp) {
    og_buf_free(&dir);
    return;
  }
  struct dirent *e;
  while ((e = readdir(dp)) != NULL) {
    if (e->d_name[0] == '.') continue;
    og_buf path = {0};
    og_buf_printf(&path, "%s/%s", og_buf_str(&dir), e->d_name);
    bool keep = false;
    for (size_t i = 0; i < produced->n && !keep; ++i) keep = strcmp(produced->paths[i], og_buf_str(&path)) == 0;
    if (!keep && verify) {
      og_report_drift(og_buf_str(&path), "is stale: no spec produces it", d);
      stats->removed++;
    } else if (!keep && remove(og_buf_str(&path)) == 0) {
      stats->removed++;
    }
    og_buf_free(&path);
  }
  closedir(dp);
  og_buf_free(&dir);
}

static bool og_make_out_dirs(const char *out_dir, og_diag *d) {
  og_buf dir = {0};
  og_buf_printf(&dir, "%s/ops", out_dir);
  bool ok = og_mkdirs(og_buf_str(&dir), d);
  og_buf_clear(&dir);
  og_buf_printf(&dir, "%s/python", out_dir);
  ok = ok && og_mkdirs(og_buf_str(&dir), d);
  og_buf_free(&dir);
  return ok;
}

bool og_emit_all(og_tmpl_env *env, og_op *const *ops, size_t nops, const char *out_dir, const og_emit_opts *opts,
                 og_emit_stats *stats, og_diag *d) {
  memset(stats, 0, sizeof *stats);
  og_produced produced = {0};
  bool ok = og_emit_render(env, ops, nops, out_dir, opts->package, &produced, d);
  if (ok && opts->verify) {
    /* Compare everything, write nothing: the report lists every drifted file. */
    bool same = true;
    for (size_t i = 0; i < produced.n; ++i) {
      stats->files++;
      if (!og_verify_file(produced.paths[i], &produced.texts[i], d)) {
        stats->written++;
        same = false;
      }
    }
    og_prune(out_dir, &produced, true, stats, d);
    ok = same && stats->removed == 0;
  } else {
    /* Only now that everything rendered: the folders, then the files. */
    if (ok) ok = og_make_out_dirs(out_dir, d);
    for (size_t i = 0; ok && i < produced.n; ++i) {
      int w = og_write_if_changed(produced.paths[i], &produced.texts[i], d);
      ok = w >= 0;
      stats->files++;
      stats->written += w > 0;
    }
    if (ok) og_prune(out_dir, &produced, false, stats, d);
  }
  og_produced_free(&produced);
  return ok;
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

_Static_assert(sizeof((og_op *)0)->fingerprint == OG_FINGERPRINT_LEN + 1, "a fingerprint's hex and its NUL");

/* Sets op->fingerprint: the hash of every per-op file rendered with an empty
 * fingerprint (the FFI file carries it). Rendering errors are left to the real render. */
static void og_fingerprint_op(og_tmpl_env *env, og_op *op, const char *package) {
  enum { nfiles = sizeof og_op_files / sizeof *og_op_files };
  og_buf texts[nfiles] = {{0}};
  og_diag quiet = {0};
  op->fingerprint[0] = '\0';
  og_value *ctx = og_ctx_op(op);
  og_map_set_str(ctx, "package", package);
  for (size_t f = 0; f < nfiles; ++f) og_tmpl_render(env, og_op_files[f].tmpl, ctx, &texts[f], &quiet);
  og_value_free(ctx);
  snprintf(op->fingerprint, sizeof op->fingerprint, "%016llx", (unsigned long long)og_code_fingerprint(texts, nfiles));
  for (size_t f = 0; f < nfiles; ++f) og_buf_free(&texts[f]);
  og_diag_free(&quiet);
}

bool og_emit_render(og_tmpl_env *env, og_op *const *ops, size_t nops, const char *out_dir, const char *package,
                    og_produced *produced, og_diag *d) {
  bool ok = true;
  for (size_t i = 0; i < nops; ++i) {
    og_fingerprint_op(env, ops[i], package);
    og_value *ctx = og_ctx_op(ops[i]);
    og_map_set_str(ctx, "package", package);
    for (size_t f = 0; f < sizeof og_op_files / sizeof *og_op_files; ++f) {
      og_buf rel = {0};
      og_buf_printf(&rel, og_op_files[f].path, ops[i]->name);
      ok &= og_render_file(env, og_op_files[f].tmpl, ctx, out_dir, og_buf_str(&rel), produced, d);
      og_buf_free(&rel);
    }
    og_value_free(ctx);
  }
  og_value *lib = og_ctx_library(ops, nops);
  og_map_set_str(lib, "package", package);
  for (size_t f = 0; f < sizeof og_library_files / sizeof *og_library_files; ++f)
    ok &= og_render_file(env, og_library_files[f].tmpl, lib, out_dir, og_library_files[f].path, produced, d);
  og_value_free(lib);
  return ok;
}
