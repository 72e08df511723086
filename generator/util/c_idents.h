/* The identifiers a piece of C or CUDA code uses, for declaring only the names a body
 * needs (as Argument Clinic declares only the variables it uses).
 *
 * A light tokenizer, not a parser: it skips comments, string and character literals and
 * numbers (so the x in 0x1f or a name inside "..." does not count), and collects every
 * other identifier. A name that only appears inside a macro the body defines still
 * counts, which can only declare a name too many, never one too few.
 */
#ifndef OG_C_IDENTS_H
#define OG_C_IDENTS_H

#include <stdbool.h>
#include <stddef.h>

typedef struct og_idents {
  char **names; /* sorted, unique */
  size_t n, cap;
} og_idents;

/* Adds the identifiers of `code` to `set`. */
void og_idents_scan(og_idents *set, const char *code);
void og_idents_add(og_idents *set, const char *name);
bool og_idents_has(const og_idents *set, const char *name);
void og_idents_free(og_idents *set);

/* Calls `fn` for every identifier `code` appears to declare: one that follows a type
 * ("T acc", "int32_t p", "const float *y") and precedes '=', ';', ',', '[' or ')'.
 * Types are C's type words, names ending in _t, and `types` (type variables). A
 * heuristic (C cannot be parsed without knowing its types), used to refuse bodies that
 * would declare a local with a name the generated code declares around them. `line`
 * counts from 0 within `code`, `col` from 1. */
typedef void og_decl_fn(const char *name, int line, int col, void *ud);
void og_idents_scan_decls(const char *code, const og_idents *types, og_decl_fn *fn, void *ud);

/* Calls `found` for every `extern __shared__ TYPE NAME[];` declaration in `code` (a
 * CUDA body), with TYPE as written (its tokens joined by single spaces, alignment
 * attributes left out): the dynamic shared memory arrays the CUDA simulator must give
 * storage to. The same light tokenizer: a declaration it cannot read is skipped. */
void og_dynamic_shared_scan(const char *code, void (*found)(const char *type, const char *name, void *ud), void *ud);

#endif /* OG_C_IDENTS_H */
