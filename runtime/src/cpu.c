#include "opspec/cpu.h"

#include <stdatomic.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

/* 2^20 trips, when `python -m opspec tune` saved no value for this machine and
 * OPSPEC_PARALLEL_THRESHOLD is unset (opspec/_tune.py). Measured on the 2-core CI machine
 * (docs/performance.md): two threads won 1.25x at 64k elements of `add` and 1.5-1.7x at
 * 1M on a quiet machine, but lost at every size up to 4M when other jobs ran (each call
 * then waits a scheduler slice, ~5 ms, for the second thread). 32768, the old default,
 * left small loops exposed to that; above 2^20 a loop costs ~0.5 ms or more, so the
 * risk is bounded in relative terms. */
#define OPSPEC_DEFAULT_PARALLEL_THRESHOLD (INT64_C(1) << 20)

static atomic_int opspec_thread_cap = 0;
static atomic_llong opspec_threshold = OPSPEC_DEFAULT_PARALLEL_THRESHOLD;

int opspec_cpu_threads(void) {
  int cap = atomic_load_explicit(&opspec_thread_cap, memory_order_relaxed);
#ifdef _OPENMP
  int max = omp_get_max_threads();
  return cap > 0 && cap < max ? cap : max;
#else
  return cap > 0 ? cap : 1;
#endif
}

bool opspec_cpu_parallel(int64_t trips) {
#ifdef _OPENMP
  if (omp_in_parallel()) return false; /* a batch element on one thread of a batched call */
#endif
  return trips >= atomic_load_explicit(&opspec_threshold, memory_order_relaxed) && opspec_cpu_threads() > 1;
}

bool opspec_cpu_parallel_nest(int64_t n0, int64_t n1, int64_t n2) {
  int64_t trips;
  if (__builtin_mul_overflow(n0, n1, &trips) || __builtin_mul_overflow(trips, n2, &trips)) trips = INT64_MAX;
  return opspec_cpu_parallel(trips);
}

void opspec_set_cpu_threads(int n) { atomic_store(&opspec_thread_cap, n > 0 ? n : 0); }

void opspec_set_parallel_threshold(int64_t n) { atomic_store(&opspec_threshold, (long long)(n > 1 ? n : 1)); }

int64_t opspec_parallel_threshold(void) { return atomic_load(&opspec_threshold); }

void opspec_cpu_zero(void *data, size_t bytes) {
  if (bytes) memset(data, 0, bytes);
}
