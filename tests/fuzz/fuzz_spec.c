/* libFuzzer target: the bytes are one YAML op spec, taken through everything
 * opspec-gen does with a spec: the YAML tree, the loader, the checker, the template
 * contexts and every template, rendered into memory.
 *
 * Besides the sanitizers' findings (crash, leak, UB) it aborts on two broken promises:
 *   - og_spec_load returned NULL without reporting an error (a silent rejection);
 *   - a spec the checker accepted fails to render (opspec-gen --check would pass it,
 *     and the build would then fail in a template instead of at the YAML line).
 *
 * The loader reads a path, and requires op `X` to live in `X.yaml`; so each input is
 * written to a per-process directory under $TMPDIR (default /tmp), named after its
 * `op:` line when that is a plain identifier, and removed after loading. Nothing else
 * touches the disk. OPSPEC_FUZZ_VERBOSE=1 prints every input's diagnostics (handy
 * when replaying a corpus file by hand).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

#include "render/render.h"
#include "check/check.h"
#include "render/tmpl.h"

#ifndef OPSPEC_FUZZ_TEMPLATES_DIR
#error "define OPSPEC_FUZZ_TEMPLATES_DIR as the absolute templates/ path (tests/fuzz/CMakeLists.txt does)"
#endif

/* Longest op name used as a file name; longer ones fall back to the default name
 * (the loader rejects them anyway: OPSPEC_MAX_NAME is far below this). */
#define OPSPEC_FUZZ_MAX_NAME 128

static og_tmpl_env *opspec_fuzz_env;
static char opspec_fuzz_dir[4096];
static bool opspec_fuzz_verbose;

static void opspec_fuzz_cleanup(void) {
  og_tmpl_env_free(opspec_fuzz_env);
  opspec_fuzz_env = NULL;
  if (opspec_fuzz_dir[0]) rmdir(opspec_fuzz_dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  const char *tmp = getenv("TMPDIR");
  snprintf(opspec_fuzz_dir, sizeof opspec_fuzz_dir, "%s/opspec-fuzz-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(opspec_fuzz_dir)) {
    perror("fuzz_spec: mkdtemp");
    abort();
  }
  /* Created once: the env caches every template's parse, as one opspec-gen run does. */
  opspec_fuzz_env = og_tmpl_env_new(OPSPEC_FUZZ_TEMPLATES_DIR);
  opspec_fuzz_verbose = getenv("OPSPEC_FUZZ_VERBOSE") != NULL;
  atexit(opspec_fuzz_cleanup);
  return 0;
}

static bool opspec_fuzz_is_name_char(char c, bool first) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (!first && c >= '0' && c <= '9');
}

/* Finds a block-style `op: NAME` line (optionally quoted, optionally followed by a
 * comment) and copies NAME to `name`. A cheap guess, not a YAML parser: when it
 * misses, the input is named "input.yaml" and the checker rejects the file name,
 * after the loader has still been exercised. */
static bool opspec_fuzz_op_name(const uint8_t *data, size_t size, char name[OPSPEC_FUZZ_MAX_NAME + 1]) {
  const char *p = (const char *)data, *end = p + size;
  for (const char *line = p; line < end;) {
    const char *eol = memchr(line, '\n', (size_t)(end - line));
    if (!eol) eol = end;
    const char *q = line;
    if (eol - q > 3 && memcmp(q, "op:", 3) == 0) {
      q += 3;
      while (q < eol && (*q == ' ' || *q == '\t')) ++q;
      char quote = q < eol && (*q == '"' || *q == '\'') ? *q++ : '\0';
      const char *start = q;
      while (q < eol && q - start < OPSPEC_FUZZ_MAX_NAME && opspec_fuzz_is_name_char(*q, q == start)) ++q;
      size_t len = (size_t)(q - start);
      if (quote && q < eol && *q == quote) ++q;
      while (q < eol && (*q == ' ' || *q == '\t' || *q == '\r')) ++q;
      if (len > 0 && (q == eol || *q == '#')) {
        memcpy(name, start, len);
        name[len] = '\0';
        return true;
      }
    }
    if (eol == end) break;
    line = eol + 1;
  }
  return false;
}

static bool opspec_fuzz_write(const char *path, const uint8_t *data, size_t size) {
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (fd < 0) return false;
  bool ok = true;
  while (ok && size > 0) {
    ssize_t n = write(fd, data, size);
    ok = n > 0;
    if (ok) {
      data += n;
      size -= (size_t)n;
    }
  }
  return close(fd) == 0 && ok;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char name[OPSPEC_FUZZ_MAX_NAME + 1];
  if (!opspec_fuzz_op_name(data, size, name)) strcpy(name, "input");
  og_buf path = {0};
  og_buf_printf(&path, "%s/%s.yaml", opspec_fuzz_dir, name);
  if (!opspec_fuzz_write(og_buf_str(&path), data, size)) {
    perror("fuzz_spec: cannot write the input file");
    abort();
  }

  og_diag d = {0};
  og_op *op = og_spec_load(og_buf_str(&path), &d);
  unlink(og_buf_str(&path));
  og_buf_free(&path);
  if (opspec_fuzz_verbose) fprintf(stderr, "%s", og_buf_str(&d.out));
  if (!op && d.errors == 0) {
    fprintf(stderr, "fuzz_spec: the loader rejected the spec without reporting an error\n");
    abort();
  }

  if (op) {
    /* Every file opspec-gen would write, rendered into memory by the renderer itself. */
    og_produced produced = {0};
    og_diag rd = {0};
    const og_op *ops[] = {op};
    if (!og_render_all(opspec_fuzz_env, ops, 1, "generated", "opspec", &produced, &rd)) {
      fprintf(stderr, "fuzz_spec: a spec the checker accepted does not render:\n%s", og_buf_str(&rd.out));
      abort();
    }
    og_produced_free(&produced);
    og_diag_free(&rd);
    og_op_free(op);
  }
  og_diag_free(&d);
  return 0;
}
