#include "write/write.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

/* Whether the open file `f` holds exactly `text`; closes `f`. */
static bool og_file_holds(FILE *f, const og_buf *text) {
  og_buf old = {0};
  char chunk[8192];
  size_t n;
  while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) og_buf_append(&old, chunk, n);
  fclose(f);
  bool same = old.len == text->len && memcmp(og_buf_str(&old), og_buf_str(text), text->len) == 0;
  og_buf_free(&old);
  return same;
}

int og_write_if_changed(const char *path, const og_buf *text, og_diag *d) {
  FILE *f = fopen(path, "rb");
  if (f && og_file_holds(f, text)) return 0;
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
  bool same = og_file_holds(f, text);
  if (!same) og_report_drift(path, "differs from what the specs produce", d);
  return same;
}

/* Removes files under out_dir/ops that this run did not produce (verifying: reports
 * them). */
static void og_prune(const char *out_dir, const og_produced *produced, bool verify, og_write_stats *stats, og_diag *d) {
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

bool og_write_all(const og_produced *produced, const char *out_dir, bool verify, og_write_stats *stats, og_diag *d) {
  memset(stats, 0, sizeof *stats);
  bool ok = true;
  if (verify) {
    /* Compare everything, write nothing: the report lists every drifted file. */
    bool same = true;
    for (size_t i = 0; i < produced->n; ++i) {
      stats->files++;
      if (!og_verify_file(produced->paths[i], &produced->texts[i], d)) {
        stats->written++;
        same = false;
      }
    }
    og_prune(out_dir, produced, true, stats, d);
    ok = same && stats->removed == 0;
  } else {
    /* Only now that everything rendered: the folders, then the files. */
    if (ok) ok = og_make_out_dirs(out_dir, d);
    for (size_t i = 0; ok && i < produced->n; ++i) {
      int w = og_write_if_changed(produced->paths[i], &produced->texts[i], d);
      ok = w >= 0;
      stats->files++;
      stats->written += w > 0;
    }
    if (ok) og_prune(out_dir, produced, false, stats, d);
  }
  return ok;
}
