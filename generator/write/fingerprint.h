/* The fingerprint of an op's generated code: what an exported computation records, so
 * that the handler refuses one exported before the op's kernel changed
 * (docs/transformations.md, "Export"). */
#ifndef OG_FINGERPRINT_H
#define OG_FINGERPRINT_H

#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"

/* Characters of a fingerprint in hex, without the terminating NUL. */
#define OG_FINGERPRINT_LEN 16

/* A 64-bit FNV-1a hash of the C and CUDA code in `texts`, read as tokens: comments,
 * `#line` directives and the amount of white space do not count, so neither does the
 * spec's path, a moved body or an edited comment; any change to the code does. */
uint64_t og_code_fingerprint(const og_buf *texts, size_t n);

#endif /* OG_FINGERPRINT_H */
