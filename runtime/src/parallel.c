/* Parallel loops of the CPU handlers; see opspec/parallel.h for the scheme.
 *
 * One loop at a time is published in opspec_loop. Its protocol, all atomics sequentially
 * consistent unless marked:
 *   caller: waits until no helper is active; writes the loop; sets `open`; wakes the
 *           helpers; claims chunks until none is left; clears `open`; waits until no
 *           helper is active again.
 *   helper: increments `active`; if `open`, takes a worker number and claims chunks
 *           until none is left; decrements `active`.
 * A helper that increments `active` after the caller last saw it at 0 then reads `open`
 * false (the caller cleared it before looking), so it never touches a loop that has
 * returned, nor one that is being written. The loop lives in static storage, so a
 * helper that starts arbitrarily late (a task XLA runs after the call has returned) only
 * ever reads memory that exists.
 */
#define _GNU_SOURCE /* syscall() */
#include "opspec/parallel.h"

#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#ifdef __linux__
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

#ifdef _OPENMP
#include <omp.h>
#endif

/* How long a helper keeps looking for the next loop before it sleeps: a loop that comes
 * sooner (the next op of a jitted computation) finds it awake, without a system call to
 * wake it. Short, so that idle helpers do not take a loaded machine's cores for long. */
#define OPSPEC_HELPER_SPIN_NS 50000

static _Thread_local bool opspec_in_loop;
static atomic_int opspec_pool_kind = OPSPEC_POOL_OPSPEC;

static struct {
  atomic_flag busy;       /* held by the caller whose loop this is */
  _Atomic uint32_t epoch; /* bumped for every loop opspec's helpers run: their futex word */
  atomic_bool open;       /* helpers may join; the fields below are the current loop's */
  atomic_int active;      /* helpers between joining and leaving */
  atomic_int joined;      /* helpers that joined this loop, for their worker numbers */
  atomic_llong next;      /* the next chunk to claim */
  atomic_int sleeping;    /* helpers waiting on `epoch` in the kernel */
  opspec_chunk_fn *fn;    /* the loop: written only while no helper is active and */
  void *ctx;              /* `open` is false */
  int64_t nchunks;
  int workers;
  pthread_mutex_t start_lock; /* guards `started` */
  int started;                /* opspec's own helper threads */
} opspec_loop = {.busy = ATOMIC_FLAG_INIT, .start_lock = PTHREAD_MUTEX_INITIALIZER};

static atomic_llong opspec_loops_run, opspec_chunks_run; /* opspec_parallel_stats */

bool opspec_in_parallel_loop(void) { return opspec_in_loop; }

void opspec_parallel_stats(int64_t *loops, int64_t *chunks) {
  *loops = atomic_load_explicit(&opspec_loops_run, memory_order_relaxed);
  *chunks = atomic_load_explicit(&opspec_chunks_run, memory_order_relaxed);
}

bool opspec_set_cpu_pool(int pool) {
  if (pool != OPSPEC_POOL_OPSPEC && pool != OPSPEC_POOL_XLA && pool != OPSPEC_POOL_OPENMP) return false;
  atomic_store(&opspec_pool_kind, pool);
  return true;
}

int opspec_cpu_pool(void) { return atomic_load(&opspec_pool_kind); }

static void opspec_pause(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

/* Claims and runs chunks of the current loop as `worker` until none is left. */
static void opspec_claim_chunks(int worker) {
  opspec_chunk_fn *fn = opspec_loop.fn;
  void *ctx = opspec_loop.ctx;
  int64_t n = opspec_loop.nchunks;
  bool outer = opspec_in_loop;
  opspec_in_loop = true;
  for (int64_t c; (c = atomic_fetch_add(&opspec_loop.next, 1)) < n;) fn(ctx, c, worker);
  opspec_in_loop = outer;
}

/* A helper's part in whatever loop is open, if any. */
static void opspec_join(void) {
  atomic_fetch_add(&opspec_loop.active, 1);
  if (atomic_load(&opspec_loop.open)) {
    int worker = 1 + atomic_fetch_add(&opspec_loop.joined, 1);
    if (worker < opspec_loop.workers) opspec_claim_chunks(worker);
  }
  atomic_fetch_sub(&opspec_loop.active, 1);
}

/* ---- opspec's own helpers ------------------------------------------------------- */

static int64_t opspec_now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static void opspec_futex_wait(_Atomic uint32_t *word, uint32_t value) {
#ifdef __linux__
  syscall(SYS_futex, (uint32_t *)word, FUTEX_WAIT_PRIVATE, value, NULL, NULL, 0);
#else
  (void)word, (void)value;
  sched_yield();
#endif
}

static void opspec_futex_wake_all(_Atomic uint32_t *word) {
#ifdef __linux__
  syscall(SYS_futex, (uint32_t *)word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
#else
  (void)word;
#endif
}

/* Waits until `epoch` differs from `seen`: a while awake, then asleep. */
static uint32_t opspec_next_epoch(uint32_t seen) {
  int64_t until = opspec_now_ns() + OPSPEC_HELPER_SPIN_NS;
  for (int spin = 0;; ++spin) {
    uint32_t now = atomic_load_explicit(&opspec_loop.epoch, memory_order_acquire);
    if (now != seen) return now;
    if ((spin & 63) == 63 && opspec_now_ns() > until) break;
    opspec_pause();
  }
  atomic_fetch_add(&opspec_loop.sleeping, 1);
  uint32_t now;
  while ((now = atomic_load(&opspec_loop.epoch)) == seen) opspec_futex_wait(&opspec_loop.epoch, seen);
  atomic_fetch_sub(&opspec_loop.sleeping, 1);
  return now;
}

static void *opspec_helper_main(void *arg) {
  uint32_t seen = (uint32_t)(uintptr_t)arg;
  for (;;) {
    seen = opspec_next_epoch(seen);
    opspec_join();
  }
  return NULL;
}

/* A child of fork() has none of its parent's helpers, and nothing of its loops. */
static void opspec_after_fork_in_child(void) {
  opspec_loop.started = 0;
  atomic_flag_clear(&opspec_loop.busy);
  atomic_store(&opspec_loop.open, false);
  atomic_store(&opspec_loop.active, 0);
  atomic_store(&opspec_loop.sleeping, 0);
  pthread_mutex_init(&opspec_loop.start_lock, NULL);
}

/* Starts helpers until there are `n` (fewer if the system refuses threads). Called by
 * the caller that holds `busy`, before it publishes its loop. */
static void opspec_start_helpers(int n) {
  if (opspec_loop.started >= n) return;
  pthread_mutex_lock(&opspec_loop.start_lock);
  static bool registered;
  if (!registered) registered = pthread_atfork(NULL, NULL, opspec_after_fork_in_child) == 0;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  uintptr_t epoch = atomic_load(&opspec_loop.epoch);
  while (opspec_loop.started < n) {
    pthread_t t;
    if (pthread_create(&t, &attr, opspec_helper_main, (void *)epoch) != 0) break;
    opspec_loop.started++;
  }
  pthread_attr_destroy(&attr);
  pthread_mutex_unlock(&opspec_loop.start_lock);
}

/* ---- XLA's thread pool ----------------------------------------------------------- */

static void opspec_xla_task(void *data) {
  (void)data; /* the loop is in opspec_loop: a task that runs late finds it closed */
  opspec_join();
}

/* XLA_FFI_ThreadPool_Schedule of the call's XLA, or NULL where its table ends before it. */
static XLA_FFI_ThreadPool_Schedule *opspec_xla_schedule(XLA_FFI_CallFrame *cf) {
  if (!cf || cf->api->struct_size < offsetof(XLA_FFI_Api, XLA_FFI_ThreadPool_Schedule) + sizeof(void *)) return NULL;
  return cf->api->XLA_FFI_ThreadPool_Schedule;
}

/* Hands `tasks` helper tasks to XLA's pool; false if it has none for this call. */
static bool opspec_schedule_on_xla(XLA_FFI_CallFrame *cf, int tasks) {
  XLA_FFI_ThreadPool_Schedule *schedule = opspec_xla_schedule(cf);
  if (!schedule) return false;
  for (int t = 0; t < tasks; ++t) {
    XLA_FFI_ThreadPool_Schedule_Args args;
    memset(&args, 0, sizeof args);
    args.struct_size = XLA_FFI_ThreadPool_Schedule_Args_STRUCT_SIZE;
    args.ctx = cf->ctx;
    args.task = opspec_xla_task;
    XLA_FFI_Error *err = schedule(&args);
    if (err) { /* no pool for this call: nobody needs to read why */
      XLA_FFI_Error_Destroy_Args destroy;
      memset(&destroy, 0, sizeof destroy);
      destroy.struct_size = XLA_FFI_Error_Destroy_Args_STRUCT_SIZE;
      destroy.error = err;
      cf->api->XLA_FFI_Error_Destroy(&destroy);
      return t > 0;
    }
  }
  return true;
}

/* ---- the loop ------------------------------------------------------------------- */

static void opspec_run_alone(int64_t nchunks, opspec_chunk_fn *fn, void *ctx) {
  bool outer = opspec_in_loop;
  opspec_in_loop = true;
  for (int64_t c = 0; c < nchunks; ++c) fn(ctx, c, 0);
  opspec_in_loop = outer;
}

static void opspec_run_openmp(int64_t nchunks, int threads, opspec_chunk_fn *fn, void *ctx) {
#ifdef _OPENMP
#pragma omp parallel num_threads(threads)
  {
    bool outer = opspec_in_loop;
    opspec_in_loop = true;
    int worker = omp_get_thread_num();
#pragma omp for schedule(static)
    for (int64_t c = 0; c < nchunks; ++c) fn(ctx, c, worker);
    opspec_in_loop = outer;
  }
#else
  (void)threads;
  opspec_run_alone(nchunks, fn, ctx);
#endif
}

void opspec_parallel_run(XLA_FFI_CallFrame *cf, int64_t nchunks, int threads, opspec_chunk_fn *fn, void *ctx) {
  int pool = opspec_cpu_pool();
  if (threads <= 1 || nchunks <= 1 || opspec_in_loop) {
    opspec_run_alone(nchunks, fn, ctx);
    return;
  }
  atomic_fetch_add_explicit(&opspec_loops_run, 1, memory_order_relaxed);
  atomic_fetch_add_explicit(&opspec_chunks_run, nchunks, memory_order_relaxed);
  if (pool == OPSPEC_POOL_OPENMP) {
    opspec_run_openmp(nchunks, threads, fn, ctx);
    return;
  }
  /* Another thread's loop has the helpers: this one runs alone rather than add threads. */
  if (atomic_flag_test_and_set(&opspec_loop.busy)) {
    opspec_run_alone(nchunks, fn, ctx);
    return;
  }
  bool on_xla = pool == OPSPEC_POOL_XLA && opspec_xla_schedule(cf);
  if (!on_xla) opspec_start_helpers(threads - 1);
  while (atomic_load(&opspec_loop.active)) opspec_pause(); /* a late helper of the last loop, leaving */
  opspec_loop.fn = fn;
  opspec_loop.ctx = ctx;
  opspec_loop.nchunks = nchunks;
  opspec_loop.workers = threads;
  atomic_store(&opspec_loop.next, 0);
  atomic_store(&opspec_loop.joined, 0);
  atomic_store(&opspec_loop.open, true);
  if (!on_xla || !opspec_schedule_on_xla(cf, threads - 1)) {
    if (on_xla) opspec_start_helpers(threads - 1); /* XLA has no pool for this call */
    atomic_fetch_add(&opspec_loop.epoch, 1);
    if (atomic_load(&opspec_loop.sleeping)) opspec_futex_wake_all(&opspec_loop.epoch);
  }
  opspec_claim_chunks(0);
  atomic_store(&opspec_loop.open, false);
  /* Only helpers in the middle of a chunk are left to wait for. */
  for (int spin = 0; atomic_load(&opspec_loop.active); ++spin)
    if (spin < 1000)
      opspec_pause();
    else
      sched_yield();
  atomic_flag_clear(&opspec_loop.busy);
}
