/* The generated float32 CPU kernels of a few shipped ops, timed outside XLA on one
 * thread (best of 30 runs), to compare the CPU forms opspec/cpu.h builds: compile this
 * driver with the ops' generated <op>_cpu.c once per form, clones off
 * (docs/performance.md, "CPU forms"):
 *
 *   for m in x86-64 x86-64-v3; do
 *     gcc -std=c11 -O3 -fno-math-errno -fno-trapping-math -fopenmp -DOPSPEC_LIBMVEC \
 *         -DOPSPEC_NO_CPU_CLONES -march=$m -Iruntime/include -Igenerated -I<jaxlib>/include \
 *         bench/native/forms.c generated/ops/{add,sigmoid,leaky_relu,exp_trace,lif,matvec,hadamard,stdp_update}_cpu.c \
 *         runtime/src/lowp_vector.c runtime/src/lowp_f16c.c -lmvec -lm -o /tmp/forms-$m
 *
 * (lowp_*.c: the float16 variants' conversions, which add's and sigmoid's kernels call.)
 *   done
 *
 * Prints ns per element at 65,536 elements (in cache: the arithmetic) and 4,194,304
 * (48-64 MB: the memory). */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "ops/add.h"
#include "ops/exp_trace.h"
#include "ops/hadamard.h"
#include "ops/leaky_relu.h"
#include "ops/lif.h"
#include "ops/matvec.h"
#include "ops/sigmoid.h"
#ifndef FORMS_BEFORE_STDP /* the kernels before stdp_update was shipped, for a before/after */
#include "ops/stdp_update.h"
#endif

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

static float *fill(int64_t n, float lo, float hi) {
  float *p = malloc((size_t)n * sizeof *p);
  for (int64_t i = 0; i < n; ++i) p[i] = lo + (hi - lo) * (float)rand() / (float)RAND_MAX;
  return p;
}

static opspec_array arr(float *p, int64_t n) {
  opspec_array a = {p, n, {n, 1, 1, 1, 1, 1, 1, 1}};
  return a;
}

static void time_kernel(const char *name, opspec_cpu_range_kernel *k, const void *args, int64_t trips,
                        int64_t elements) {
  double best = 1e30;
  for (int r = 0; r < 30; ++r) {
    const double t0 = now();
    k(args, 0, trips);
    const double t = now() - t0;
    if (t < best) best = t;
  }
  printf("%-12s %9lld elements %8.3f ns/element\n", name, (long long)elements, best / (double)elements * 1e9);
}

int main(void) {
  const int64_t sizes[] = {65536, 4194304};
  for (int s = 0; s < 2; ++s) {
    const int64_t n = sizes[s];
    float *x = fill(n, -3, 3), *y = fill(n, -3, 3), *out = fill(n, 0, 1), *one = fill(1, 0.05f, 0.05f);
    float *v = fill(n, -75, -50), *th = fill(1, -55, -55), *rest = fill(1, -70, -70), *dt = fill(1, 0.1f, 0.1f);
    int32_t *spikes = malloc((size_t)n * sizeof *spikes);
    opspec_add_args add = {arr(x, n), arr(y, n), arr(out, n)};
    time_kernel("add", opspec_add_cpu_variants[0], &add, n, n);
    opspec_sigmoid_args sig = {arr(x, n), arr(out, n)};
    time_kernel("sigmoid", opspec_sigmoid_cpu_variants[0], &sig, n, n);
    opspec_leaky_relu_args lr = {arr(x, n), arr(out, n), 0.1};
    time_kernel("leaky_relu", opspec_leaky_relu_cpu_variants[0], &lr, n, n);
    opspec_exp_trace_args et = {arr(y, n), arr(x, n), arr(one, 1), arr(out, n), n};
    time_kernel("exp_trace", opspec_exp_trace_cpu_variants[0], &et, n, n);
    opspec_lif_args lif = {arr(v, n),
                           arr(x, n),
                           arr(one, 1),
                           arr(th, 1),
                           arr(rest, 1),
                           arr(dt, 1),
                           arr(out, n),
                           {spikes, n, {n, 1, 1, 1, 1, 1, 1, 1}},
                           n};
    time_kernel("lif", opspec_lif_cpu_variants[0], &lif, n, n);
    opspec_matvec_args mv = {arr(x, n), arr(y, 64), arr(out, n / 64), n / 64, 64};
    time_kernel("matvec", opspec_matvec_cpu_variants[0], &mv, n / 64, n);
    opspec_hadamard_args hd = {arr(x, n), arr(y, n), arr(out, n), n / 7, 7};
    time_kernel("hadamard", opspec_hadamard_cpu_variants[0], &hd, n / 7, n / 7 * 7);
#ifndef FORMS_BEFORE_STDP
    opspec_stdp_update_args st = {arr(out, n),
                                  arr(x, n / 1024),
                                  arr(y, n / 1024),
                                  arr(x, 1024),
                                  arr(y, 1024),
                                  arr(out, n),
                                  n / 1024,
                                  1024,
                                  0.01,
                                  0.012,
                                  0.0,
                                  1.0};
    time_kernel("stdp_update", opspec_stdp_update_cpu_variants[0], &st, n / 1024, n);
#endif
    free(x), free(y), free(out), free(one), free(v), free(th), free(rest), free(dt), free(spikes);
  }
  return 0;
}
