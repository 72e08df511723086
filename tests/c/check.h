/* A minimal unit-test harness: each test file is one executable run by ctest.
 *
 *   OG_CHECK(cond)              records a failure with file:line and goes on
 *   OG_CHECK_STR(got, want)     string equality, printing both on failure
 *   OG_CHECK_CONTAINS(hay, needle)
 *   return og_check_report("name");   in main: prints "name: N passed, M failed"
 */
#ifndef OG_CHECK_H
#define OG_CHECK_H

#include <stdio.h>
#include <string.h>

static int og_check_passed, og_check_failed;

#define OG_CHECK(cond)                                                         \
  do {                                                                         \
    if (cond) {                                                                \
      og_check_passed++;                                                       \
    } else {                                                                   \
      og_check_failed++;                                                       \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
    }                                                                          \
  } while (0)

#define OG_CHECK_STR(got, want)                                                                                \
  do {                                                                                                         \
    const char *og_g_ = (got), *og_w_ = (want);                                                                \
    if (og_g_ && og_w_ && strcmp(og_g_, og_w_) == 0) {                                                         \
      og_check_passed++;                                                                                       \
    } else {                                                                                                   \
      og_check_failed++;                                                                                       \
      fprintf(stderr, "%s:%d: check failed: %s\n--- got:\n%s\n--- want:\n%s\n---\n", __FILE__, __LINE__, #got, \
              og_g_ ? og_g_ : "(null)", og_w_ ? og_w_ : "(null)");                                             \
    }                                                                                                          \
  } while (0)

#define OG_CHECK_CONTAINS(hay, needle)                                                                             \
  do {                                                                                                             \
    const char *og_h_ = (hay), *og_n_ = (needle);                                                                  \
    if (og_h_ && og_n_ && strstr(og_h_, og_n_)) {                                                                  \
      og_check_passed++;                                                                                           \
    } else {                                                                                                       \
      og_check_failed++;                                                                                           \
      fprintf(stderr, "%s:%d: check failed: %s does not contain \"%s\"\n--- text:\n%s\n---\n", __FILE__, __LINE__, \
              #hay, og_n_ ? og_n_ : "(null)", og_h_ ? og_h_ : "(null)");                                           \
    }                                                                                                              \
  } while (0)

static inline int og_check_report(const char *name) {
  printf("%s: %d passed, %d failed\n", name, og_check_passed, og_check_failed);
  return og_check_failed ? 1 : 0;
}

#endif /* OG_CHECK_H */
