/* Huge pages for large fresh buffers.
 *
 * A fresh output that XLA's allocator took from the kernel (glibc's malloc maps every
 * block above its mmap threshold, at most 32 MiB, afresh) is untouched memory: the
 * first write to each 4 KiB page faults, and the kernel zeroes the page. At 16M float32
 * elements those 16,384 faults cost more than the loop; with huge pages one fault maps
 * and zeroes 2 MiB (docs/performance.md, "Huge pages for fresh outputs", measures both).
 * Where Linux gives transparent huge pages only on request (`madvise` in
 * /sys/kernel/mm/transparent_hugepage/enabled, as on this project's machines), the CPU
 * handler asks for them on each large output that is not an input's memory, on large
 * scratch buffers and on the float copies of widened bfloat16 arrays
 * (runtime/src/bfloat16.c), before anything writes them. `always` needs no request and
 * `never` refuses it: there, as off Linux, this does nothing. OPSPEC_HUGE_PAGES=0 (or
 * false, off, no) in the environment turns it off: read once, when the package is
 * imported (runtime/src/module.c), or at the first call by code without the module.
 */
#define _DEFAULT_SOURCE /* madvise, MADV_HUGEPAGE */
#include "opspec/pages.h"

#include <ctype.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h> /* strncasecmp */

#if defined(__linux__)
#include <sys/mman.h>
#endif

#if defined(__linux__) && defined(MADV_HUGEPAGE)
/* The first line of a sysfs file, at most `n` - 1 bytes; false where it cannot be read. */
static int opspec_read_line(const char *path, char *line, size_t n) {
  FILE *f = fopen(path, "r");
  if (!f) return 0;
  int ok = fgets(line, (int)n, f) != NULL;
  fclose(f);
  return ok;
}

/* Whether an environment value says off: 0, false, off or no, in any case, with spaces
 * around (as OPSPEC_CHECKS, runtime/python/opspec/_face.py). */
static int opspec_env_off(const char *value) {
  static const char *const off[] = {"0", "false", "off", "no"};
  while (isspace((unsigned char)*value)) ++value;
  size_t n = strlen(value);
  while (n > 0 && isspace((unsigned char)value[n - 1])) --n;
  for (size_t i = 0; i < sizeof off / sizeof off[0]; ++i)
    if (n == strlen(off[i]) && strncasecmp(value, off[i], n) == 0) return 1;
  return 0;
}

/* The size to advise in, or 0 for no advice. */
static size_t opspec_find_huge_page_size(void) {
  const char *env = getenv("OPSPEC_HUGE_PAGES");
  if (env && opspec_env_off(env)) return 0;
  char line[256];
  if (!opspec_read_line("/sys/kernel/mm/transparent_hugepage/enabled", line, sizeof line) || !strstr(line, "[madvise]"))
    return 0;
  if (!opspec_read_line("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size", line, sizeof line)) return 0;
  unsigned long long size = strtoull(line, NULL, 10);
  /* a power of two of at least a page, as the kernel's is */
  return size >= 4096 && (size & (size - 1)) == 0 && size <= SIZE_MAX ? (size_t)size : 0;
}

static atomic_size_t opspec_huge_size = SIZE_MAX; /* SIZE_MAX: not read yet */

size_t opspec_huge_page_size(void) {
  size_t size = atomic_load_explicit(&opspec_huge_size, memory_order_relaxed);
  if (size == SIZE_MAX) { /* two threads may both read it: the same value */
    size = opspec_find_huge_page_size();
    atomic_store_explicit(&opspec_huge_size, size, memory_order_relaxed);
  }
  return size;
}

void opspec_advise_huge_pages(void *data, size_t bytes) {
  size_t huge = opspec_huge_page_size();
  if (huge == 0 || bytes < huge) return;
  uintptr_t start = (uintptr_t)data, mask = (uintptr_t)huge - 1;
  if (start > UINTPTR_MAX - bytes) return;
  uintptr_t begin = (start + mask) & ~mask, end = (start + bytes) & ~mask;
  /* Whole huge pages only: a page shared with other memory is left as it is. */
  if (end > begin) (void)madvise((void *)begin, end - begin, MADV_HUGEPAGE);
}
#else
size_t opspec_huge_page_size(void) { return 0; }

void opspec_advise_huge_pages(void *data, size_t bytes) {
  (void)data;
  (void)bytes;
}
#endif
