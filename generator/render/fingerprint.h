/* The fingerprint of an op's generated code: what an exported computation records, so
 * that the handler refuses one exported before the op's kernel changed
 * (docs/transformations.md, "Export"). Computed once per op from the files rendered for
 * it, in which the handler's descriptor holds OG_FINGERPRINT_LINE as a placeholder. */
#ifndef OG_FINGERPRINT_H
#define OG_FINGERPRINT_H

#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"

/* Characters of a fingerprint in hex, without the terminating NUL. */
#define OG_FINGERPRINT_LEN 16

/* The descriptor's line that carries the fingerprint, as templates/op_ffi.c.tmpl writes
 * it: a whole line, so no spec text can imitate it. */
#define OG_FINGERPRINT_LINE "    .fingerprint = \"__OPSPEC_FINGERPRINT__\","

/* A 64-bit FNV-1a hash of the C and CUDA code in `texts`, read as the compiler reads it
 * (lines ending in a backslash spliced to the next first, so a `//` comment ending in
 * one takes the next line with it) and as tokens: comments,
 * `#line` directives and the amount of white space do not count, so neither does the
 * spec's path, a moved body or an edited comment; any change to the code does. */
uint64_t og_code_fingerprint(const og_buf *texts, size_t n);

/* The fingerprint of an op's rendered files (`texts`, each holding OG_FINGERPRINT_LINE
 * at most once), hashed with that line's fingerprint empty, into `hex`; then writes it
 * into that line of `texts`. */
void og_fingerprint_fill(og_buf *texts, size_t n, char hex[OG_FINGERPRINT_LEN + 1]);

#endif /* OG_FINGERPRINT_H */
