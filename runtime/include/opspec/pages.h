/* Huge pages for the large fresh buffers a CPU call writes (runtime/src/pages.c;
 * docs/performance.md, "Huge pages for fresh outputs"). */
#ifndef OPSPEC_PAGES_H
#define OPSPEC_PAGES_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Asks Linux for transparent huge pages on the whole huge pages inside `bytes` bytes at
 * `data`, memory the call is about to write: where the kernel gives them only on
 * request (`transparent_hugepage/enabled` is `madvise`) and OPSPEC_HUGE_PAGES is not 0
 * (or false, off, no).
 * Nothing elsewhere, or for a buffer holding no whole huge page. A hint only: a failed
 * madvise changes nothing. */
void opspec_advise_huge_pages(void *data, size_t bytes);

/* The huge page size opspec_advise_huge_pages uses, 0 where it gives no advice. */
size_t opspec_huge_page_size(void);

#ifdef __cplusplus
}
#endif

#endif /* OPSPEC_PAGES_H */
