#include "write/write.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void og_write_error(og_diag *d, const char *path, const char *what, const char *why) {
  og_buf_printf(&d->out, "%s: error: %s%s%s\n", path, what, why ? ": " : "", why ? why : "");
  d->errors++;
}

static bool og_mkdirs(const char *path, og_diag *d) {
  char *copy = og_xstrdup(path);
  for (char *p = copy + 1;; ++p) {
    if (*p != '/' && *p != '\0') continue;
    char saved = *p;
    *p = '\0';
    if (mkdir(copy, 0777) != 0 && errno != EEXIST) {
      og_write_error(d, copy, "cannot create directory", strerror(errno));
      free(copy);
      return false;
    }
    *p = saved;
    if (!saved) break;
  }
  free(copy);
  return true;
}

/* What a file that is not a regular one is, for the message. */
static const char *og_file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

/* opspec-gen writes only regular files: reading a FIFO would wait for a writer forever,
 * /dev/zero never ends, and writing either is no output anyone wants. */
static void og_refuse_kind(const char *path, mode_t mode, og_diag *d) {
  og_buf what = {0};
  og_buf_printf(&what, "is %s, not a regular file: opspec-gen writes only regular files", og_file_kind(mode));
  og_write_error(d, path, og_buf_str(&what), NULL);
  og_buf_free(&what);
}

/* Reads at most one byte more than `text`, and opens without waiting (a FIFO put there
 * after the check is refused too). */
int og_file_holds(const char *path, const og_buf *text, og_diag *d) {
  struct stat st;
  if (stat(path, &st) != 0) {
    if (errno == ENOENT) return 0;
    og_write_error(d, path, "cannot read", strerror(errno));
    return -1;
  }
  if (!S_ISREG(st.st_mode)) {
    og_refuse_kind(path, st.st_mode, d);
    return -1;
  }
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    if (fd >= 0 && !S_ISREG(st.st_mode))
      og_refuse_kind(path, st.st_mode, d);
    else
      og_write_error(d, path, "cannot read", strerror(errno));
    if (fd >= 0) close(fd);
    return -1;
  }
  const char *want = og_buf_str(text);
  size_t at = 0, limit = text->len + 1;
  bool same = true;
  char chunk[8192];
  while (same && at < limit) {
    size_t ask = limit - at < sizeof chunk ? limit - at : sizeof chunk;
    ssize_t n = read(fd, chunk, ask);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      og_write_error(d, path, "cannot read", strerror(errno));
      close(fd);
      return -1;
    }
    if (n == 0) break;
    same = at + (size_t)n <= text->len && memcmp(chunk, want + at, (size_t)n) == 0;
    at += (size_t)n;
  }
  close(fd);
  return same && at == text->len;
}

/* Writes all of `text` to a new file `path` (which must not exist). */
static bool og_write_new(const char *path, const og_buf *text, og_diag *d) {
  int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) {
    og_write_error(d, path, "cannot write", strerror(errno));
    return false;
  }
  const char *p = og_buf_str(text);
  size_t left = text->len;
  while (left) {
    ssize_t n = write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    p += n;
    left -= (size_t)n;
  }
  int saved = left ? (errno ? errno : EIO) : 0;
  if (close(fd) != 0 && !saved) saved = errno;
  if (saved) {
    og_write_error(d, path, "cannot write", strerror(saved));
    unlink(path);
  }
  return !saved;
}

/* One file of a set being written: its new text goes to `tmp` first; `backup` is a hard
 * link to the file it replaces, so that the set can be put back. */
typedef struct og_staged {
  const char *path;
  char *tmp, *backup;
  bool existed, replaced;
} og_staged;

static void og_staged_free(og_staged *s) {
  if (s->tmp) unlink(s->tmp);
  if (s->backup) unlink(s->backup);
  free(s->tmp);
  free(s->backup);
}

/* Puts back what the renames already done replaced, newest first. */
static void og_unwind(og_staged *staged, size_t n) {
  for (size_t i = n; i-- > 0;) {
    og_staged *s = &staged[i];
    if (!s->replaced) continue;
    if (s->backup && rename(s->backup, s->path) == 0) {
      free(s->backup);
      s->backup = NULL;
    } else if (!s->existed) {
      unlink(s->path);
    }
  }
}

static char *og_sibling(const char *path, const char *what) {
  og_buf b = {0};
  og_buf_printf(&b, "%s.%s%ld", path, what, (long)getpid());
  return og_buf_take(&b);
}

/* Writes every changed file to its temporary sibling; false (reported) at the first
 * that cannot be, or that is not a regular file. Nothing at any `path` changes here. */
static bool og_stage(og_staged *staged, size_t *nstaged, char *const *paths, const og_buf *texts, size_t n,
                     og_diag *d) {
  for (size_t i = 0; i < n; ++i) {
    int holds = og_file_holds(paths[i], &texts[i], d);
    if (holds < 0) return false;
    if (holds) continue;
    og_staged *s = &staged[(*nstaged)++];
    *s = (og_staged){.path = paths[i], .tmp = og_sibling(paths[i], "tmp")};
    unlink(s->tmp); /* a crashed run's, with the same process id */
    if (!og_write_new(s->tmp, &texts[i], d)) return false;
    s->existed = access(paths[i], F_OK) == 0;
    if (s->existed) {
      s->backup = og_sibling(paths[i], "old");
      unlink(s->backup);
      if (link(paths[i], s->backup) != 0) { /* a file system without hard links: no way back */
        free(s->backup);
        s->backup = NULL;
      }
    }
  }
  return true;
}

/* Writes each text to its path unless the file already holds exactly that text: all of
 * them or, if any cannot be written, none. Returns how many were written, or -1. */
int og_write_files(char *const *paths, const og_buf *texts, size_t n, og_diag *d) {
  og_staged *staged = og_xcalloc(n ? n : 1, sizeof *staged);
  size_t nstaged = 0;
  bool ok = og_stage(staged, &nstaged, paths, texts, n, d);
  for (size_t i = 0; ok && i < nstaged; ++i) {
    og_staged *s = &staged[i];
    if (rename(s->tmp, s->path) != 0) {
      og_write_error(d, s->path, "cannot write", strerror(errno));
      ok = false;
      break;
    }
    s->replaced = true;
    free(s->tmp);
    s->tmp = NULL;
  }
  if (!ok) og_unwind(staged, nstaged);
  for (size_t i = 0; i < nstaged; ++i) og_staged_free(&staged[i]);
  free(staged);
  return ok ? (int)nstaged : -1;
}

int og_write_if_changed(const char *path, const og_buf *text, og_diag *d) {
  char *paths[] = {(char *)path};
  return og_write_files(paths, text, 1, d);
}

/* Verifying: every difference is an error, so a drift check lists all of them. */
static void og_report_drift(const char *path, const char *what, og_diag *d) { og_write_error(d, path, what, NULL); }

/* Verifying: what `path` holds against `text`; returns false (reported) unless equal. */
static bool og_verify_file(const char *path, const og_buf *text, og_diag *d) {
  if (access(path, F_OK) != 0) {
    og_report_drift(path, "is missing", d);
    return false;
  }
  int holds = og_file_holds(path, text, d);
  if (holds == 0) og_report_drift(path, "differs from what the specs produce", d);
  return holds == 1;
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

/* Makes `out_dir`/ops and `out_dir`/python; `made` records which of the three this run
 * created, for og_unmake_out_dirs. */
static bool og_make_out_dirs(const char *out_dir, bool made[3], og_diag *d) {
  struct stat st;
  if (stat(out_dir, &st) == 0 && !S_ISDIR(st.st_mode)) {
    og_buf what = {0};
    og_buf_printf(&what, "is %s, not a directory: --out names the folder generated files go to",
                  S_ISREG(st.st_mode) ? "a regular file" : og_file_kind(st.st_mode));
    og_write_error(d, out_dir, og_buf_str(&what), NULL);
    og_buf_free(&what);
    return false;
  }
  og_buf dirs[3] = {{0}};
  og_buf_puts(&dirs[0], out_dir);
  og_buf_printf(&dirs[1], "%s/ops", out_dir);
  og_buf_printf(&dirs[2], "%s/python", out_dir);
  bool ok = true;
  for (int i = 0; i < 3; ++i) {
    made[i] = access(og_buf_str(&dirs[i]), F_OK) != 0;
    ok = ok && og_mkdirs(og_buf_str(&dirs[i]), d);
  }
  for (int i = 0; i < 3; ++i) og_buf_free(&dirs[i]);
  return ok;
}

/* After a failed write: removes the (empty) folders this run created. */
static void og_unmake_out_dirs(const char *out_dir, const bool made[3]) {
  og_buf dir = {0};
  for (int i = 2; i >= 0; --i) {
    if (!made[i]) continue;
    og_buf_clear(&dir);
    og_buf_printf(&dir, i == 0 ? "%s" : i == 1 ? "%s/ops" : "%s/python", out_dir);
    rmdir(og_buf_str(&dir));
  }
  og_buf_free(&dir);
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
    /* Only now that everything rendered: the folders, then the files, all or none. */
    bool made[3] = {false, false, false};
    ok = og_make_out_dirs(out_dir, made, d);
    int written = ok ? og_write_files(produced->paths, produced->texts, produced->n, d) : -1;
    ok = written >= 0;
    if (!ok) og_unmake_out_dirs(out_dir, made);
    stats->files = (int)produced->n;
    stats->written = ok ? written : 0;
    if (ok) og_prune(out_dir, produced, false, stats, d);
  }
  return ok;
}
