/* CPU execution policy shared by every CPU kernel.
 *
 * XLA runs its own thread pool and may call a handler from several of its threads at
 * once, so loops must not oversubscribe: a loop goes parallel only when its trip count
 * reaches a threshold, and never with more threads than the cap. Both are process-wide
 * settings (atomics, so concurrent handlers read them safely), set from Python with
 * opspec.set_cpu_threads() / opspec.set_parallel_threshold(). Portable kernels are run
 * in parallel by the handler (opspec/parallel.h); a raw `cpu:` body that writes its own
 * OpenMP loop asks opspec_cpu_parallel() and opspec_cpu_threads() the same questions.
 */
#ifndef OPSPEC_CPU_H
#define OPSPEC_CPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Threads a parallel loop may use, the calling thread included: the cap if set, else
 * OpenMP's default (the CPUs this process may run on). */
int opspec_cpu_threads(void);
/* True if a loop of `trips` iterations should run in parallel: at least the threshold,
 * more than one thread, and not already inside a parallel loop (a batch element on one
 * thread of a batched call, or a raw body's own OpenMP region). */
bool opspec_cpu_parallel(int64_t trips);

/* Sets `bytes` bytes at `data` to zero (nothing for 0 bytes, whatever `data` is). A
 * function, not memset, so that a body's own names (an array called `memset`) cannot
 * shadow it in generated kernels. */
void opspec_cpu_zero(void *data, size_t bytes);

void opspec_set_cpu_threads(int n);            /* 0: the default */
void opspec_set_parallel_threshold(int64_t n); /* trips at which loops go parallel */
int64_t opspec_parallel_threshold(void);

#ifdef __cplusplus
}
#endif

#endif /* OPSPEC_CPU_H */
