/* opspec-gen: YAML op specs in, C/CUDA/Python bindings out.
 *
 *   opspec-gen [--check | --verify] [--out DIR] [--package NAME] [--templates DIR]
 *              [--max-errors N] SPEC.yaml...
 *   opspec-gen --schema [--out FILE]
 *
 * Every spec is loaded and validated first; if any has an error, all errors are printed
 * and nothing is written. Then every template is rendered for every op into DIR
 * (default: generated), writing only files whose text changed. The templates are built
 * into opspec-gen unless --templates names a folder.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "write/write.h"
#include "check/check.h"
#include "load/schema.h"
#include "render/tmpl.h"
#include "render/tmpl_embedded.h"

#ifndef OPSPEC_GEN_VERSION
#define OPSPEC_GEN_VERSION "unknown"
#endif

static void og_usage(FILE *f) {
  fputs(
      "usage: opspec-gen [--check | --verify] [--out DIR] [--package NAME] [--templates DIR] [--max-errors N]\n"
      "                  [--quiet] SPEC.yaml...\n"
      "       opspec-gen --schema [--out FILE]\n"
      "  --check          validate the specs, write nothing\n"
      "  --verify         write nothing; fail, listing each file, unless DIR already holds exactly\n"
      "                   what would be written (the drift check for a committed DIR)\n"
      "  --out DIR        where generated files go (default: generated)\n"
      "  --package NAME   the Python package the ops belong to; FFI targets are NAME_<op>\n"
      "                   (default: opspec)\n"
      "  --templates DIR  read the templates from DIR (default: the ones built into opspec-gen)\n"
      "  --max-errors N   show at most N errors, count the rest (default: 20; 0: show all)\n"
      "  --quiet          print nothing but errors\n"
      "  --schema         print the JSON Schema of a spec (with --out FILE: write it there when it\n"
      "                   changed), made from the keys this opspec-gen's loader takes\n"
      "  --version        print opspec-gen's version\n",
      f);
}

/* A package name becomes a Python import name, a C string and the prefix of FFI target
 * names: a Python identifier of ASCII letters, digits and '_', not starting with a
 * digit, is all three. */
static bool og_valid_package(const char *name) {
  size_t len = strlen(name);
  if (len == 0 || len > 64 || isdigit((unsigned char)name[0])) return false;
  for (size_t i = 0; i < len; ++i)
    if (!isalnum((unsigned char)name[i]) && name[i] != '_') return false;
  return true;
}

/* --schema: to stdout, or to `path` unless it already holds exactly that text (so that a
 * build that depends on it does not rerun). */
static int og_write_schema(const char *path, size_t npaths) {
  if (npaths) {
    fprintf(stderr, "opspec-gen: error: --schema takes no specs\n");
    return 2;
  }
  og_buf schema = {0};
  og_spec_schema(&schema);
  int status = 0;
  if (!path) {
    fputs(og_buf_str(&schema), stdout);
  } else {
    og_diag d = {0};
    og_source *old = og_source_read(path, &d); /* a missing file is simply written */
    if (!old || strcmp(old->text, og_buf_str(&schema)) != 0) {
      FILE *f = fopen(path, "w");
      if (!f || fputs(og_buf_str(&schema), f) < 0 || fclose(f) != 0) {
        fprintf(stderr, "opspec-gen: error: cannot write %s\n", path);
        status = 1;
      }
    }
    og_source_free(old);
    og_diag_free(&d);
  }
  og_buf_free(&schema);
  return status;
}

int main(int argc, char **argv) {
  const char *out_dir = "generated", *template_dir = NULL, *package = "opspec";
  bool check_only = false, quiet = false, verify = false, schema = false, out_given = false;
  int max_errors = 20;
  const char **paths = calloc((size_t)argc, sizeof *paths);
  size_t npaths = 0;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--check") == 0) {
      check_only = true;
    } else if (strcmp(argv[i], "--verify") == 0) {
      verify = true;
    } else if (strcmp(argv[i], "--quiet") == 0) {
      quiet = true;
    } else if (strcmp(argv[i], "--schema") == 0) {
      schema = true;
    } else if ((strcmp(argv[i], "--out") == 0 || strcmp(argv[i], "--templates") == 0) && i + 1 < argc) {
      *(argv[i][2] == 'o' ? &out_dir : &template_dir) = argv[i + 1];
      out_given |= argv[i][2] == 'o';
      ++i;
    } else if (strcmp(argv[i], "--package") == 0 && i + 1 < argc) {
      package = argv[++i];
      if (!og_valid_package(package)) {
        fprintf(stderr,
                "opspec-gen: error: --package '%s' is not a Python package name (ASCII letters, digits and '_', "
                "not starting with a digit, at most 64)\n",
                package);
        free(paths);
        return 2;
      }
    } else if (strcmp(argv[i], "--version") == 0) {
      printf("opspec-gen %s\n", OPSPEC_GEN_VERSION);
      free(paths);
      return 0;
    } else if (strcmp(argv[i], "--max-errors") == 0 && i + 1 < argc) {
      char *end;
      long v = strtol(argv[++i], &end, 10);
      if (argv[i][0] == '\0' || *end != '\0' || v < 0 || v > 1000000) {
        fprintf(stderr, "opspec-gen: error: --max-errors needs a count, got '%s'\n", argv[i]);
        free(paths);
        return 2;
      }
      max_errors = (int)v;
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
  if (schema) {
    free(paths);
    return og_write_schema(out_given ? out_dir : NULL, npaths);
  }
  if (npaths == 0) {
    og_usage(stderr);
    free(paths);
    return 2;
  }

  og_diag d = {.max_shown = max_errors};
  og_op **ops = calloc(npaths, sizeof *ops);
  size_t nops = 0;
  for (size_t i = 0; i < npaths; ++i) {
    og_op *op = og_spec_load(paths[i], &d);
    if (!op) continue;
    for (size_t j = 0; j < nops; ++j)
      if (strcasecmp(ops[j]->name, op->name) == 0) {
        /* Names differing only in case would share an include guard, and their files
         * would collide on case-insensitive file systems. */
        if (strcmp(ops[j]->name, op->name) == 0)
          og_diag_error(&d, op->loc, "op '%s' is defined twice", op->name);
        else
          og_diag_error(&d, op->loc, "op '%s' differs from op '%s' only in case", op->name, ops[j]->name);
        og_diag_note(&d, ops[j]->loc, "'%s' is defined here", ops[j]->name);
      }
    ops[nops++] = op;
  }

  int status = 0;
  if (d.errors) {
    int hidden = og_diag_hidden(&d);
    fprintf(stderr, "%s%d error%s", og_buf_str(&d.out), d.errors, d.errors == 1 ? "" : "s");
    if (hidden) fprintf(stderr, " (%d not shown; --max-errors 0 shows all)", hidden);
    fprintf(stderr, "; nothing was written\n");
    status = 1;
  } else if (!check_only) {
    /* The built-in templates unless a folder is named: opspec-gen then works from any
     * folder, installed or not, and generates what the runtime it ships with expects. */
    og_tmpl_env *env = og_tmpl_env_new(template_dir ? template_dir : "templates");
    if (!template_dir)
      for (const og_embedded_template *t = og_embedded_templates; t->name; ++t) {
        og_buf path = {0};
        og_buf_printf(&path, "templates/%s", t->name); /* where it came from, for messages */
        og_tmpl_env_add(env, t->name, og_buf_str(&path), t->text);
        og_buf_free(&path);
      }
    og_emit_stats stats;
    og_emit_opts opts = {.package = package, .verify = verify};
    if (!og_emit_all(env, ops, nops, out_dir, &opts, &stats, &d)) {
      fprintf(stderr, "%s", og_buf_str(&d.out));
      if (verify)
        fprintf(stderr,
                "opspec-gen: %s is out of date: %d of %d files differ or are missing, %d stale; regenerate it\n",
                out_dir, stats.written, stats.files, stats.removed);
      status = 1;
    } else if (verify) {
      if (!quiet)
        printf("opspec-gen: %s is up to date (%zu op%s, %d files)\n", out_dir, nops, nops == 1 ? "" : "s", stats.files);
    } else if (!quiet) {
      printf("opspec-gen: %zu op%s, %d files (%d changed, %d stale removed) in %s\n", nops, nops == 1 ? "" : "s",
             stats.files, stats.written, stats.removed, out_dir);
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
