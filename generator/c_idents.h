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

#endif /* OG_C_IDENTS_H */
