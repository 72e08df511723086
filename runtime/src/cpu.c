#include "opspec/cpu.h"

#include <stdatomic.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "opspec/parallel.h"

/* 2^18 trips, when `python -m opspec tune` saved no value for this machine and
 * OPSPEC_PARALLEL_THRESHOLD is unset (opspec/_tune.py). Measured on the 2-core CI machine
 * (docs/performance.md, bench/bench_threads.py): with opspec's pool two threads win from
 * 16k-64k elements of `add` on a quiet machine, but under load a loop of some 20 us
 * still pays for waking a helper (a futex wake, the helper's scheduling): 1.8-2x one
 * thread at 64k in one run. From 2^18 (~50 us of `add`) they were 0.8-1.03x one thread
 * under load and 0.64-0.83x on a quiet machine. It was 2^20 while loops ran as OpenMP
 * regions, which under load waited a scheduler slice (~5 ms) for their second thread at
 * any size (bench_threads: 100-1300x at 16k-256k). */
#define OPSPEC_DEFAULT_PARALLEL_THRESHOLD (INT64_C(1) << 18)

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
  /* The threshold first: it is what decides a small call, and costs one load. */
  if (trips < atomic_load_explicit(&opspec_threshold, memory_order_relaxed)) return false;
  if (opspec_in_parallel_loop()) return false; /* a batch element on one thread of a batched call */
#ifdef _OPENMP
  if (omp_in_parallel()) return false; /* inside a raw body's own OpenMP region */
#endif
  return opspec_cpu_threads() > 1;
}

void opspec_set_cpu_threads(int n) { atomic_store(&opspec_thread_cap, n > 0 ? n : 0); }

void opspec_set_parallel_threshold(int64_t n) { atomic_store(&opspec_threshold, (long long)(n > 1 ? n : 1)); }

int64_t opspec_parallel_threshold(void) { return atomic_load(&opspec_threshold); }

void opspec_cpu_zero(void *data, size_t bytes) {
  if (bytes) memset(data, 0, bytes);
}

/* As GCC's resolver of target_clones chooses (its generated resolver, GCC 12: the
 * highest priority clone whose test passes, the ISA levels highest first, each tested
 * by __builtin_cpu_supports of its name, which also asks whether the OS saves the AVX
 * state). clang 14's resolver runs the default form everywhere (opspec/cpu.h). */
const char *opspec_cpu_form(void) {
#if defined(OPSPEC_NO_CPU_CLONES)
  return "native";
#elif OPSPEC_CPU_FORMS == 1
  return "default";
#elif defined(__clang__)
  return "x86-64";
#else
#if OPSPEC_CPU_FORMS >= 3
  if (__builtin_cpu_supports("x86-64-v4")) return "x86-64-v4";
#endif
  if (__builtin_cpu_supports("x86-64-v3")) return "x86-64-v3";
  return "x86-64";
#endif
}

const char *opspec_cpu_forms(void) {
#if defined(OPSPEC_NO_CPU_CLONES)
  return "native";
#elif OPSPEC_CPU_FORMS == 3
  return "x86-64,x86-64-v3,x86-64-v4";
#elif OPSPEC_CPU_FORMS == 2
  return "x86-64,x86-64-v3";
#else
  return "default";
#endif
}
