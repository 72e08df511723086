/* opspec-gen: YAML op specs in, C/CUDA/Python bindings out.
 *
 *   opspec-gen [--check | --verify] [--out DIR] [--package NAME] [--templates DIR]
 *              [--max-errors N] SPEC.yaml...
 *   opspec-gen --schema [--check] [--out FILE]
 *
 * The stages, in order (each in its folder): every spec is loaded (load/) and checked
 * (check/); if any has an error, all errors are printed and nothing is written. Then
 * every op is planned (plan/) and every template rendered for it in memory (render/),
 * and only then are the files written into DIR (write/, default: generated), only
 * those whose text changed. The templates are built into opspec-gen unless --templates
 * names a folder.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "check/check.h"
#include "load/load.h"
#include "load/schema.h"
#include "plan/lowp.h"
#include "render/render.h"
#include "render/tmpl.h"
#include "render/tmpl_embedded.h"
#include "util/py_names.h"
#include "write/write.h"

#ifndef OPSPEC_GEN_VERSION
#define OPSPEC_GEN_VERSION "unknown"
#endif

static void og_usage(FILE *f) {
  fputs(
      "usage: opspec-gen [--check | --verify] [--out DIR] [--package NAME] [--templates DIR] [--max-errors N]\n"
      "                  [--quiet] SPEC.yaml...\n"
      "       opspec-gen --schema [--check] [--out FILE]\n"
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
      "                   changed; with --check too: fail unless FILE holds it), made from the keys\n"
      "                   this opspec-gen's loader takes\n"
      "  --version        print opspec-gen's version\n",
      f);
}

/* A package name becomes a Python import name, a C string and the prefix of FFI target
 * names: a Python identifier of ASCII letters, digits and '_', not starting with a
 * digit, is all three. Returns why `name` cannot be one, or NULL. A keyword cannot be
 * imported, and a standard-library name would shadow that module for every program of
 * the environment the package is installed in (`opspec new` refuses the same, and a
 * module installed there too: util/py_names.h). */
static const char *og_package_problem(const char *name) {
  size_t len = strlen(name);
  if (len == 0 || len > 64 || isdigit((unsigned char)name[0]))
    return "is not a Python package name (ASCII letters, digits and '_', not starting with a digit, at most 64)";
  for (size_t i = 0; i < len; ++i)
    if (!isalnum((unsigned char)name[i]) && name[i] != '_')
      return "is not a Python package name (ASCII letters, digits and '_', not starting with a digit, at most 64)";
  if (og_py_is_keyword(name)) return "is a Python keyword: no import can name it; pick another";
  if (og_py_is_stdlib(name))
    return "is a module of Python's standard library: a package of that name would shadow it; pick another";
  return NULL;
}

/* --schema: to stdout, or to `path` unless it already holds exactly that text (so that a
 * build that depends on it does not rerun); with --check (or --verify), only compared
 * with `path`: 1 unless it holds that text. */
static int og_write_schema(const char *path, size_t npaths, bool compare) {
  if (npaths) {
    fprintf(stderr, "opspec-gen: error: --schema takes no specs\n");
    return 2;
  }
  if (compare && !path) {
    fprintf(stderr, "opspec-gen: error: --schema --check compares the schema with a file: name it with --out FILE\n");
    return 2;
  }
  og_buf schema = {0};
  og_spec_schema(&schema);
  og_diag d = {0};
  int status = 0;
  if (!path) {
    fputs(og_buf_str(&schema), stdout);
  } else if (compare) {
    int holds = og_file_holds(path, &schema, &d);
    if (holds == 0) og_buf_printf(&d.out, "%s: error: is not the schema this opspec-gen makes; regenerate it\n", path);
    status = holds == 1 ? 0 : 1;
  } else {
    status = og_write_if_changed(path, &schema, &d) < 0;
  }
  fputs(og_buf_str(&d.out), stderr);
  og_diag_free(&d);
  og_buf_free(&schema);
  return status;
}

/* The command line. */
typedef struct og_options {
  const char *out_dir, *template_dir, *package;
  bool check_only, quiet, verify, schema, out_given;
  int max_errors;
  const char **paths;
  size_t npaths;
} og_options;

/* Parses the command line into `o`; returns -1 to go on, else the exit status. */
static int og_parse_options(int argc, char **argv, og_options *o) {
  *o = (og_options){.out_dir = "generated", .package = "opspec", .max_errors = 20};
  o->paths = calloc((size_t)argc, sizeof *o->paths);
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--check") == 0) {
      o->check_only = true;
    } else if (strcmp(argv[i], "--verify") == 0) {
      o->verify = true;
    } else if (strcmp(argv[i], "--quiet") == 0) {
      o->quiet = true;
    } else if (strcmp(argv[i], "--schema") == 0) {
      o->schema = true;
    } else if ((strcmp(argv[i], "--out") == 0 || strcmp(argv[i], "--templates") == 0) && i + 1 < argc) {
      *(argv[i][2] == 'o' ? &o->out_dir : &o->template_dir) = argv[i + 1];
      o->out_given |= argv[i][2] == 'o';
      ++i;
    } else if (strcmp(argv[i], "--package") == 0 && i + 1 < argc) {
      o->package = argv[++i];
      const char *problem = og_package_problem(o->package);
      if (problem) {
        fprintf(stderr, "opspec-gen: error: --package '%s' %s\n", o->package, problem);
        return 2;
      }
    } else if (strcmp(argv[i], "--version") == 0) {
      printf("opspec-gen %s\n", OPSPEC_GEN_VERSION);
      return 0;
    } else if (strcmp(argv[i], "--max-errors") == 0 && i + 1 < argc) {
      char *end;
      long v = strtol(argv[++i], &end, 10);
      if (argv[i][0] == '\0' || *end != '\0' || v < 0 || v > 1000000) {
        fprintf(stderr, "opspec-gen: error: --max-errors needs a count, got '%s'\n", argv[i]);
        return 2;
      }
      o->max_errors = (int)v;
    } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      og_usage(stdout);
      return 0;
    } else if (argv[i][0] == '-') {
      fprintf(stderr, "opspec-gen: error: unknown option '%s'\n", argv[i]);
      og_usage(stderr);
      return 2;
    } else {
      o->paths[o->npaths++] = argv[i];
    }
  }
  if (!o->schema && o->npaths == 0) {
    og_usage(stderr);
    return 2;
  }
  return -1;
}

/* Reports an op whose name another op has, or has but for case. */
static void og_check_unique(og_op *const *ops, size_t nops, const og_op *op, og_diag *d) {
  for (size_t j = 0; j < nops; ++j)
    if (strcasecmp(ops[j]->name, op->name) == 0) {
      /* Names differing only in case would share an include guard, and their files
       * would collide on case-insensitive file systems. */
      if (strcmp(ops[j]->name, op->name) == 0)
        og_diag_error(d, op->loc, "op '%s' is defined twice", op->name);
      else
        og_diag_error(d, op->loc, "op '%s' differs from op '%s' only in case", op->name, ops[j]->name);
      og_diag_note(d, ops[j]->loc, "'%s' is defined here", ops[j]->name);
    }
}

/* Load, then check, every spec; the ops that loaded go to `ops` (errors in `d`). */
static size_t og_load_and_check(const og_options *o, og_op **ops, og_diag *d) {
  size_t nops = 0;
  for (size_t i = 0; i < o->npaths; ++i) {
    og_source *src = og_source_read(o->paths[i], d);
    og_op *op = src ? og_load_spec(src, NULL, d) : NULL;
    if (!op) continue;
    int before = d->errors;
    og_spec_check(op, d);
    if (d->errors != before) {
      og_op_free(op);
      continue;
    }
    og_check_unique(ops, nops, op, d);
    og_lowp_note(op, d);
    ops[nops++] = op;
  }
  return nops;
}

static void og_report_errors(og_diag *d) {
  int hidden = og_diag_hidden(d);
  fprintf(stderr, "%s%d error%s", og_buf_str(&d->out), d->errors, d->errors == 1 ? "" : "s");
  if (hidden) fprintf(stderr, " (%d not shown; --max-errors 0 shows all)", hidden);
  fprintf(stderr, "; nothing was written\n");
}

/* The built-in templates unless a folder is named: opspec-gen then works from any
 * folder, installed or not, and generates what the runtime it ships with expects. */
static og_tmpl_env *og_templates(const char *template_dir) {
  og_tmpl_env *env = og_tmpl_env_new(template_dir ? template_dir : "templates");
  if (!template_dir)
    for (const og_embedded_template *t = og_embedded_templates; t->name; ++t) {
      og_buf path = {0};
      og_buf_printf(&path, "templates/%s", t->name); /* where it came from, for messages */
      og_tmpl_env_add(env, t->name, og_buf_str(&path), t->text);
      og_buf_free(&path);
    }
  return env;
}

/* Plan and render every op and the library, then write (or verify) it all. */
static int og_generate(const og_options *o, const og_op *const *ops, size_t nops, og_diag *d) {
  og_tmpl_env *env = og_templates(o->template_dir);
  og_produced produced = {0};
  og_write_stats stats = {0};
  bool ok = og_render_all(env, ops, nops, o->out_dir, o->package, &produced, d) &&
            og_write_all(&produced, o->out_dir, o->verify, &stats, d);
  og_produced_free(&produced);
  og_tmpl_env_free(env);
  if (!ok) {
    fprintf(stderr, "%s", og_buf_str(&d->out));
    if (o->verify)
      fprintf(stderr, "opspec-gen: %s is out of date: %d of %d files differ or are missing, %d stale; regenerate it\n",
              o->out_dir, stats.written, stats.files, stats.removed);
    return 1;
  }
  if (o->quiet) return 0;
  if (o->verify)
    printf("opspec-gen: %s is up to date (%zu op%s, %d files)\n", o->out_dir, nops, nops == 1 ? "" : "s", stats.files);
  else
    printf("opspec-gen: %zu op%s, %d files (%d changed, %d stale removed) in %s\n", nops, nops == 1 ? "" : "s",
           stats.files, stats.written, stats.removed, o->out_dir);
  return 0;
}

int main(int argc, char **argv) {
  og_options o;
  int status = og_parse_options(argc, argv, &o);
  if (status < 0 && o.schema)
    status = og_write_schema(o.out_given ? o.out_dir : NULL, o.npaths, o.check_only || o.verify);
  if (status >= 0) {
    free(o.paths);
    return status;
  }
  og_diag d = {.max_shown = o.max_errors};
  og_op **ops = calloc(o.npaths, sizeof *ops);
  size_t nops = og_load_and_check(&o, ops, &d);
  if (d.errors) {
    og_report_errors(&d);
    status = 1;
  } else if (!o.check_only) {
    fputs(og_buf_str(&d.out), stderr); /* notes (plan/lowp.h) */
    og_buf_clear(&d.out);
    status = og_generate(&o, (const og_op *const *)ops, nops, &d);
  } else {
    fputs(og_buf_str(&d.out), stderr); /* notes (plan/lowp.h) */
    if (!o.quiet) printf("opspec-gen: %zu spec%s OK\n", nops, nops == 1 ? "" : "s");
    status = 0;
  }
  for (size_t i = 0; i < nops; ++i) og_op_free(ops[i]);
  free(ops);
  free(o.paths);
  og_diag_free(&d);
  return status;
}
