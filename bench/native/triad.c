/* STREAM-like triad, a[i] = b[i] + s * c[i], with OpenMP, for the machine's bandwidth in
 * the same run as the benchmarks (bench/bench_roofline.py). Arrays are allocated and
 * first touched by the threads that use them; the timed calls write into them again,
 * so no page faults are counted. Not part of the wheel. */
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#ifdef _OPENMP
#include <omp.h>
#endif

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Best-of-`reps` triad bandwidth in GB/s (24 bytes per element: two reads, one write)
 * over n doubles with `threads` threads; 0 if memory is short. */
double triad_gbs(int64_t n, int reps, int threads) {
  double *a = malloc((size_t)n * sizeof *a), *b = malloc((size_t)n * sizeof *b), *c = malloc((size_t)n * sizeof *c);
  if (!a || !b || !c) {
    free(a);
    free(b);
    free(c);
    return 0;
  }
#pragma omp parallel for num_threads(threads) schedule(static)
  for (int64_t i = 0; i < n; ++i) {
    a[i] = 0;
    b[i] = 1;
    c[i] = 2;
  }
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    double t0 = now();
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int64_t i = 0; i < n; ++i) a[i] = b[i] + 3.0 * c[i];
    double t = now() - t0;
    if (t < best) best = t;
  }
  volatile double sink = a[n / 2];
  (void)sink;
  free(a);
  free(b);
  free(c);
  return 24.0 * (double)n / best / 1e9;
}
