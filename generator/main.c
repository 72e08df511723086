/* opspec-gen: YAML op specs in, C/CUDA/Python bindings out.
 *
 *   opspec-gen [--check] [--out DIR] [--templates DIR] SPEC.yaml...
 *
 * Every spec is loaded and validated first; if any has an error, all errors are printed
 * and nothing is written. Then every template is rendered for every op into DIR
 * (default: generated), writing only files whose text changed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emit.h"
#include "model.h"
#include "tmpl.h"

static void og_usage(FILE *f) {
  fputs("usage: opspec-gen [--check] [--out DIR] [--templates DIR] [--quiet] SPEC.yaml...\n"
        "  --check          validate the specs, write nothing\n"
        "  --out DIR        where generated files go (default: generated)\n"
        "  --templates DIR  where templates are read from (default: templates)\n"
        "  --quiet          print nothing but errors\n",
        f);
}

int main(int argc, char **argv) {
  const char *out_dir = "generated", *template_dir = "templates";
  bool check_only = false, quiet = false;
  const char **paths = calloc((size_t)argc, sizeof *paths);
  size_t npaths = 0;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--check") == 0) {
      check_only = true;
    } else if (strcmp(argv[i], "--quiet") == 0) {
      quiet = true;
    } else if ((strcmp(argv[i], "--out") == 0 || strcmp(argv[i], "--templates") == 0) && i + 1 < argc) {
      *(argv[i][2] == 'o' ? &out_dir : &template_dir) = argv[i + 1];
      ++i;
    } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      og_usage(stdout);
      free(paths);
      return 0;
    } else if (argv[i][0] == '-') {
      fprintf(stderr, "opspec-gen: error: unknown option '%s'\n", argv[i]);
      og_usage(stderr);
      free(paths);
      return 2;
    } else {
      paths[npaths++] = argv[i];
    }
  }
  if (npaths == 0) {
    og_usage(stderr);
    free(paths);
    return 2;
  }

  og_diag d = {0};
  og_op **ops = calloc(npaths, sizeof *ops);
  size_t nops = 0;
  for (size_t i = 0; i < npaths; ++i) {
    og_op *op = og_spec_load(paths[i], &d);
    if (!op) continue;
    for (size_t j = 0; j < nops; ++j)
      if (strcmp(ops[j]->name, op->name) == 0) {
        og_diag_error(&d, op->loc, "op '%s' is defined twice", op->name);
        og_diag_note(&d, ops[j]->loc, "first defined here");
      }
    ops[nops++] = op;
  }

  int status = 0;
  if (d.errors) {
    fprintf(stderr, "%s%d error%s; nothing was written\n", og_buf_str(&d.out), d.errors, d.errors == 1 ? "" : "s");
    status = 1;
  } else if (!check_only) {
    og_tmpl_env *env = og_tmpl_env_new(template_dir);
    og_emit_stats stats;
    if (!og_emit_all(env, ops, nops, out_dir, &stats, &d)) {
      fprintf(stderr, "%s", og_buf_str(&d.out));
      status = 1;
    } else if (!quiet) {
      printf("opspec-gen: %zu ops, %d files (%d changed, %d stale removed) in %s\n", nops, stats.files, stats.written,
             stats.removed, out_dir);
    }
    og_tmpl_env_free(env);
  } else if (!quiet) {
    printf("opspec-gen: %zu spec%s OK\n", nops, nops == 1 ? "" : "s");
  }
  for (size_t i = 0; i < nops; ++i) og_op_free(ops[i]);
  free(ops);
  free(paths);
  og_diag_free(&d);
  return status;
}
