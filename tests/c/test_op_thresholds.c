/* Ops' own parallel thresholds (runtime/src/cpu.c): the table beside the registry and
 * the map from a descriptor to its registry position, which calls on many threads fill
 * at once; the thread-local value a raw body's opspec_cpu_parallel compares with. Run
 * under ASan + UBSan by ./run sanitize. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

#include "check.h"
#include "opspec/cpu.h"
#include "opspec/ffi.h"
#include "opspec/registry.h"

#define OPS     40
#define THREADS 8
#define ROUNDS  2000

static char names[OPS][16];      /* the registry's names */
static char desc_names[OPS][16]; /* the descriptors': equal text, other pointers */
static opspec_op_entry table[OPS];
static opspec_op_desc descs[OPS + 1]; /* the last is in no registry */
static atomic_int wrong;

static int64_t expected(int i, int64_t global) { return i < OPS && i % 3 == 0 ? 1000 + i : global; }

static void *caller(void *arg) {
  unsigned seed = (unsigned)(size_t)arg;
  for (int r = 0; r < ROUNDS; ++r) {
    seed = seed * 1103515245u + 12345u;
    int i = (int)(seed >> 8) % (OPS + 1);
    if (opspec_op_parallel_threshold(&descs[i]) != expected(i, opspec_parallel_threshold()))
      atomic_fetch_add(&wrong, 1);
  }
  return NULL;
}

int main(void) {
  for (int i = 0; i < OPS; ++i) {
    snprintf(names[i], sizeof names[i], "op_%d", i);
    snprintf(desc_names[i], sizeof desc_names[i], "op_%d", i);
    table[i].name = names[i];
    descs[i].name = desc_names[i];
  }
  descs[OPS].name = "not_an_op";
  opspec_set_parallel_threshold(777);
  /* No op has a value yet: every call reads the package's. */
  OG_CHECK(opspec_op_own_threshold(&descs[0]) == 0 && opspec_op_parallel_threshold(&descs[0]) == 777);
  OG_CHECK(opspec_op_threshold_at(0) == 0);
  for (int i = 0; i < OPS; i += 3) OG_CHECK(opspec_set_op_threshold(table, OPS, (size_t)i, 1000 + i));
  OG_CHECK(!opspec_set_op_threshold(table, OPS, OPS, 5)); /* past the registry */
  OG_CHECK(opspec_op_threshold_at(3) == 1003 && opspec_op_threshold_at(4) == 0 && opspec_op_threshold_at(OPS) == 0);

  pthread_t threads[THREADS];
  for (size_t t = 0; t < THREADS; ++t) pthread_create(&threads[t], NULL, caller, (void *)(t + 1));
  for (size_t t = 0; t < THREADS; ++t) pthread_join(threads[t], NULL);
  OG_CHECK(atomic_load(&wrong) == 0);
  for (int i = 0; i <= OPS; ++i) OG_CHECK(opspec_op_parallel_threshold(&descs[i]) == expected(i, 777));

  /* Removed (n < 1), an op follows the package's threshold again, whatever it becomes. */
  OG_CHECK(opspec_set_op_threshold(table, OPS, 3, 0));
  opspec_set_parallel_threshold(50);
  OG_CHECK(opspec_op_parallel_threshold(&descs[3]) == 50 && opspec_op_parallel_threshold(&descs[6]) == 1006);

  /* A raw body's opspec_cpu_parallel compares with its op's own value while it runs. */
  int64_t outer = opspec_cpu_enter_op(1000);
  OG_CHECK(outer == 0);
  OG_CHECK(!opspec_cpu_parallel(999));
  OG_CHECK(opspec_cpu_parallel(1000) == (opspec_cpu_threads() > 1));
  opspec_cpu_enter_op(outer);
  OG_CHECK(!opspec_cpu_parallel(49) && opspec_cpu_parallel(50) == (opspec_cpu_threads() > 1));
  OG_CHECK(!opspec_cpu_parallel_at(10, 11) && opspec_cpu_parallel_at(11, 11) == (opspec_cpu_threads() > 1));
  return og_check_report("test_op_thresholds");
}
