/* Huge pages for large fresh buffers (runtime/src/pages.c): which memory gets the
 * advice, read back from the kernel's own account (/proc/self/smaps: "hg" in a mapping's
 * VmFlags is MADV_HUGEPAGE). `test_pages` expects the advice where this machine's
 * transparent_hugepage setting is `madvise` and none elsewhere; `test_pages off` runs
 * with OPSPEC_HUGE_PAGES=" Off " (as 0, false or no) and expects none. */
#define _DEFAULT_SOURCE /* mmap's MAP_ANONYMOUS */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "check.h"
#include "opspec/pages.h"

/* Whether the mapping that holds `at` has MADV_HUGEPAGE ("hg" among its VmFlags); -1 where
 * smaps has no such mapping. */
static int advised(uintptr_t at) {
  FILE *f = fopen("/proc/self/smaps", "r");
  if (!f) return -1;
  char line[512];
  int inside = 0, found = -1;
  while (fgets(line, sizeof line, f)) {
    unsigned long long lo, hi;
    if (sscanf(line, "%llx-%llx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' ')) {
      inside = at >= lo && at < hi;
    } else if (inside && strncmp(line, "VmFlags:", 8) == 0) {
      found = strstr(line, " hg") != NULL;
      break;
    }
  }
  fclose(f);
  return found;
}

/* The enabled setting's bracketed word: "madvise", "always", "never", or "" unreadable. */
static const char *thp_mode(char *word, size_t n) {
  word[0] = 0;
  FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
  if (!f) return word;
  char line[256];
  if (fgets(line, sizeof line, f)) {
    const char *open = strchr(line, '['), *close = open ? strchr(open, ']') : NULL;
    if (open && close && (size_t)(close - open) < n) {
      memcpy(word, open + 1, (size_t)(close - open - 1));
      word[close - open - 1] = 0;
    }
  }
  fclose(f);
  return word;
}

int main(int argc, char **argv) {
  const int off = argc > 1 && strcmp(argv[1], "off") == 0;
  if (off) setenv("OPSPEC_HUGE_PAGES", " Off ", 1); /* before the first call, which reads it */
  char mode[32];
  const int expect = strcmp(thp_mode(mode, sizeof mode), "madvise") == 0 && !off;
  const size_t huge = opspec_huge_page_size();
  printf("transparent_hugepage: %s; OPSPEC_HUGE_PAGES %s; huge page size %zu\n", mode[0] ? mode : "(unreadable)",
         off ? "off" : "unset", huge);
  OG_CHECK(expect ? huge >= 4096 && (huge & (huge - 1)) == 0 : huge == 0);
  const size_t page = huge ? huge : (size_t)2 << 20;

  /* Six huge pages' worth, mapped fresh, so that five whole ones follow `first`; a buffer
   * from a quarter page past `first` to a quarter page past first + 3 pages holds two
   * whole huge pages, [first + page, first + 3 page). */
  const size_t span = 6 * page;
  char *map = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  OG_CHECK(map != MAP_FAILED);
  if (map == MAP_FAILED) return og_check_report("test_pages");
  const uintptr_t first = ((uintptr_t)map + page - 1) & ~(uintptr_t)(page - 1); /* 5 whole pages from here */
  char *buffer = (char *)first + page / 4;
  const size_t bytes = 3 * page;
  const uintptr_t inner = first + page;
  OG_CHECK(advised(inner) == 0); /* nothing asked yet */

  opspec_advise_huge_pages(buffer, page - 1); /* less than a huge page: no advice */
  OG_CHECK(advised(first + page / 2) == 0);
  OG_CHECK(advised(inner) == 0);

  for (size_t i = 0; i < bytes; i += 4096) buffer[i] = (char)(i >> 12 | 1); /* written before the advice */
  opspec_advise_huge_pages(buffer, bytes);
  OG_CHECK(advised(inner) == expect);
  OG_CHECK(advised(inner + 2 * page - 1) == expect);
  OG_CHECK(advised(first + page / 2) == 0); /* the partial page at its start is the neighbours' too */
  OG_CHECK(advised(first + 3 * page) == 0); /* and so is the one at its end */
  int same = 1;                             /* the advice keeps what was written (MADV_DONTNEED, say, would not) */
  for (size_t i = 0; i < bytes; i += 4096) same &= buffer[i] == (char)(i >> 12 | 1);
  OG_CHECK(same);

  opspec_advise_huge_pages(NULL, 0); /* nothing to advise */
  munmap(map, span);
  return og_check_report("test_pages");
}
