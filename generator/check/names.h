/* Which names a spec may not use, and why: the one table the checker consults.
 *
 * Every identifier the generated C, CUDA and Python declare next to user names starts
 * with a reserved prefix (opspec_ / OPSPEC_ in C, _ in the Python module), so users
 * and generated code can never collide there. What remains reserved is what the
 * languages and their headers own (keywords, macros, types, CUDA's built-in
 * variables) and the few names opspec gives a meaning to (the launch indices i, j, k).
 * docs/spec.md ("Names") lists exactly these rules.
 */
#ifndef OG_NAMES_H
#define OG_NAMES_H

/* Why `name` is reserved (a phrase such as "a C++ keyword"), or NULL if it is free. */
const char *og_reserved_why(const char *name);

#endif /* OG_NAMES_H */
