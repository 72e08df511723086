/* CPU execution policy shared by every generated CPU kernel.
 *
 * XLA runs its own thread pool and may call a handler from several of its threads at
 * once, so OpenMP must not oversubscribe: a loop goes parallel only when its trip count
 * reaches a threshold, and never with more threads than the cap. Both are process-wide
 * settings (atomics, so concurrent handlers read them safely), set from Python with
 * opspec.set_cpu_threads() / opspec.set_parallel_threshold().
 */
#ifndef OPSPEC_CPU_H
#define OPSPEC_CPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Threads a parallel loop may use: the cap if set, else OpenMP's default. */
int opspec_cpu_threads(void);
/* True if a loop of `trips` iterations should run in parallel. */
bool opspec_cpu_parallel(int64_t trips);

/* opspec_cpu_parallel for a collapsed loop nest of n0 x n1 x n2 trips. The product
 * saturates: extents are checked one by one, their product is not. */
bool opspec_cpu_parallel_nest(int64_t n0, int64_t n1, int64_t n2);

/* Sets `bytes` bytes at `data` to zero (nothing for 0 bytes, whatever `data` is). A
 * function, not memset, so that a body's own names (an array called `memset`) cannot
 * shadow it in generated kernels. */
void opspec_cpu_zero(void *data, size_t bytes);

void opspec_set_cpu_threads(int n);            /* 0: OpenMP's default */
void opspec_set_parallel_threshold(int64_t n); /* trips at which loops go parallel */
int64_t opspec_parallel_threshold(void);

#ifdef __cplusplus
}
#endif

#endif /* OPSPEC_CPU_H */
