/* The CPU handlers' parallel loops (runtime/src/parallel.c): every chunk runs exactly
 * once, on a worker number no other running chunk holds, for every pool, thread count
 * and chunk count; a loop inside a chunk runs alone; loops from several threads at
 * once; loops in a child after fork(); many loops in a row (helpers that go to sleep
 * and are woken). Run under ASan + UBSan by ./run sanitize. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "opspec/parallel.h"

#define MAX_CHUNKS  5000
#define MAX_WORKERS 8

typedef struct loop {
  atomic_int runs[MAX_CHUNKS];
  atomic_int in_use[MAX_WORKERS]; /* a chunk is running on this worker number */
  atomic_int bad_worker, shared_worker, outside_loop, nested_bad, helped;
  int threads;
  bool nest;
} loop;

static void nested_chunk(void *ctx, int64_t c, int worker) {
  loop *l = ctx;
  (void)c;
  if (worker != 0 || !opspec_in_parallel_loop()) atomic_fetch_add(&l->nested_bad, 1);
}

static void chunk(void *ctx, int64_t c, int worker) {
  loop *l = ctx;
  if (worker < 0 || worker >= l->threads || worker >= MAX_WORKERS) {
    atomic_fetch_add(&l->bad_worker, 1);
    return;
  }
  if (atomic_exchange(&l->in_use[worker], 1)) atomic_fetch_add(&l->shared_worker, 1);
  if (!opspec_in_parallel_loop()) atomic_fetch_add(&l->outside_loop, 1);
  atomic_fetch_add(&l->runs[c], 1);
  if (worker > 0) atomic_fetch_add(&l->helped, 1);
  volatile double x = 0; /* some work, so that helpers get to join */
  for (int i = 0; i < 200; ++i) x = x + i;
  if (l->nest) opspec_parallel_run(NULL, 3, l->threads, nested_chunk, l);
  atomic_store(&l->in_use[worker], 0);
}

static atomic_int helped_chunks; /* chunks that ran on a helper, over every loop */

/* Runs one loop and reports whether every chunk ran once and nothing else went wrong. */
static bool run_loop(int64_t nchunks, int threads, bool nest) {
  loop *l = calloc(1, sizeof *l);
  l->threads = threads;
  l->nest = nest;
  opspec_parallel_run(NULL, nchunks, threads, chunk, l);
  bool ok = !l->bad_worker && !l->shared_worker && !l->outside_loop && !l->nested_bad && !opspec_in_parallel_loop();
  for (int64_t c = 0; c < nchunks; ++c) ok = ok && atomic_load(&l->runs[c]) == 1;
  for (int64_t c = nchunks; c < MAX_CHUNKS; ++c) ok = ok && atomic_load(&l->runs[c]) == 0;
  atomic_fetch_add(&helped_chunks, atomic_load(&l->helped));
  free(l);
  return ok;
}

static void test_every_pool_threads_and_chunks(void) {
  const int pools[] = {OPSPEC_POOL_OPSPEC, OPSPEC_POOL_XLA, OPSPEC_POOL_OPENMP};
  const int64_t counts[] = {0, 1, 2, 3, 7, 64, 1000, MAX_CHUNKS};
  for (size_t p = 0; p < 3; ++p) {
    OG_CHECK(opspec_set_cpu_pool(pools[p]));
    OG_CHECK(opspec_cpu_pool() == pools[p]);
    for (int threads = 1; threads <= 4; ++threads)
      for (size_t n = 0; n < sizeof counts / sizeof counts[0]; ++n) {
        bool ok = run_loop(counts[n], threads, false);
        if (!ok) fprintf(stderr, "pool %d, %d threads, %lld chunks\n", pools[p], threads, (long long)counts[n]);
        OG_CHECK(ok);
      }
    OG_CHECK(run_loop(100, 3, true)); /* a loop in a chunk runs alone, as worker 0 */
  }
  OG_CHECK(!opspec_set_cpu_pool(7));
  OG_CHECK(opspec_cpu_pool() == OPSPEC_POOL_OPENMP);
  opspec_set_cpu_pool(OPSPEC_POOL_OPSPEC);
}

/* Helpers that went to sleep are woken by the next loop. */
static void test_loops_after_helpers_sleep(void) {
  bool ok = true;
  for (int round = 0; round < 3; ++round) {
    struct timespec pause = {0, 2000000}; /* 2 ms, far past the helpers' spin */
    nanosleep(&pause, NULL);
    for (int i = 0; i < 50; ++i) ok = ok && run_loop(40, 2, false);
  }
  OG_CHECK(ok);
}

/* The helpers do take part: over many loops, some chunks run on them (a test that would
 * pass if the caller ran everything alone could not tell the pool works). */
static void test_helpers_take_chunks(void) {
  const int pools[] = {OPSPEC_POOL_OPSPEC, OPSPEC_POOL_OPENMP};
  for (size_t p = 0; p < 2; ++p) {
    opspec_set_cpu_pool(pools[p]);
    atomic_store(&helped_chunks, 0);
    /* Up to 10 s of loops: on a loaded machine a helper may wait long to be scheduled. */
    time_t until = time(NULL) + 10;
    while (atomic_load(&helped_chunks) == 0 && time(NULL) < until) run_loop(MAX_CHUNKS, 2, false);
    OG_CHECK(atomic_load(&helped_chunks) > 0);
  }
  opspec_set_cpu_pool(OPSPEC_POOL_OPSPEC);
}

static void *caller(void *arg) {
  (void)arg;
  bool ok = true;
  for (int i = 0; i < 100; ++i) ok = ok && run_loop(1 + i % 50, 2 + i % 3, false);
  return ok ? (void *)1 : NULL;
}

/* Loops from four threads at once: one gets the helpers, the others run alone. */
static void test_concurrent_callers(void) {
  pthread_t t[4];
  for (int i = 0; i < 4; ++i) OG_CHECK(pthread_create(&t[i], NULL, caller, NULL) == 0);
  for (int i = 0; i < 4; ++i) {
    void *ok = NULL;
    pthread_join(t[i], &ok);
    OG_CHECK(ok != NULL);
  }
}

/* A child of fork() has no helper threads: its loops start its own. */
static void test_fork(void) {
  OG_CHECK(run_loop(100, 2, false)); /* the parent's helpers exist */
  pid_t pid = fork();
  if (pid == 0) _exit(run_loop(100, 2, false) && run_loop(1000, 3, false) ? 0 : 1);
  int status = 0;
  OG_CHECK(waitpid(pid, &status, 0) == pid);
  OG_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

int main(void) {
  test_every_pool_threads_and_chunks();
  test_loops_after_helpers_sleep();
  test_helpers_take_chunks();
  test_concurrent_callers();
  test_fork();
  return og_check_report("test_parallel");
}
