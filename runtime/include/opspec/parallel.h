/* Parallel loops of the CPU handlers: a loop cut into chunks, run by the calling thread
 * and helpers.
 *
 * The calling thread never waits for a helper to start. It publishes the loop, wakes
 * the helpers and claims chunks itself, one at a time, from a shared counter; a helper
 * that arrives late finds none left and goes back to sleep. At the end the caller waits
 * only for helpers that are running a chunk. So a helper that the operating system has
 * not scheduled (a loaded machine, XLA's own threads busy) costs nothing but the chunks
 * the caller runs instead: the loop is never much slower than on one thread, where an
 * OpenMP region waits at its end for every thread of its team, started or not
 * (docs/performance.md has the measurements).
 *
 * Where the helpers come from is a process-wide setting (opspec_set_cpu_pool):
 *   OPSPEC_POOL_OPSPEC  opspec's own threads (the default): they spin briefly after a
 *                       loop, then sleep on a futex until the next one;
 *   OPSPEC_POOL_XLA     tasks on XLA's intra-op thread pool (XLA_FFI_ThreadPool_Schedule),
 *                       where the XLA in use gives the call one; opspec's threads otherwise;
 *   OPSPEC_POOL_OPENMP  an OpenMP team with a static schedule, which waits for every
 *                       thread: how opspec's kernels ran before, kept for comparison.
 * One loop runs at a time on the helpers: a call that finds them busy (another XLA
 * thread's call) runs its loop alone rather than oversubscribe the machine.
 */
#ifndef OPSPEC_PARALLEL_H
#define OPSPEC_PARALLEL_H

#include <stdbool.h>
#include <stdint.h>

#include "opspec/ffi.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { OPSPEC_POOL_OPSPEC = 0, OPSPEC_POOL_XLA = 1, OPSPEC_POOL_OPENMP = 2 };

/* Runs one chunk of a loop. `worker` is 0 on the calling thread and 1 .. threads - 1 on
 * helpers, each at most once per loop at a time: a slot for per-thread state. */
typedef void opspec_chunk_fn(void *ctx, int64_t chunk, int worker);

/* Calls fn(ctx, c, worker) for every c in [0, nchunks), on the calling thread and at most
 * threads - 1 helpers, and returns when all have returned. `cf` is the call whose
 * loop this is (XLA's thread pool belongs to it); NULL outside a handler. */
void opspec_parallel_run(XLA_FFI_CallFrame *cf, int64_t nchunks, int threads, opspec_chunk_fn *fn, void *ctx);

/* How many loops, and how many chunks in all, opspec_parallel_run was given for more
 * than one thread since the process started: the handlers' decisions to go parallel
 * (a loop that then finds the helpers busy and runs alone counts too). For tests and
 * debugging: Python reads it as <package>._opspec.parallel_stats(). */
void opspec_parallel_stats(int64_t *loops, int64_t *chunks);
/* The work of the last call of a portable kernel (runtime/src/handler.c), for tests:
 * out[0], out[1] its `bytes:` and `flops:` (-1 where the spec gives none), out[2] the
 * work that decided its threads, out[3] the work counted without the formulas; -2 in
 * each where no such call ran since the last read, which clears them. Calls record
 * their work only after the first read (a call stores nothing until something asks).
 * Python reads it as <package>._opspec.last_work(). */
void opspec_last_work(int64_t out[4]);

/* Whether the calling thread is running a chunk of a parallel loop: a loop inside it
 * (a raw `cpu:` body's own OpenMP loop on a batch element) must then stay serial. */
bool opspec_in_parallel_loop(void);

/* Where helpers come from (OPSPEC_POOL_*); returns false for an unknown value. */
bool opspec_set_cpu_pool(int pool);
int opspec_cpu_pool(void);

#ifdef __cplusplus
}
#endif

#endif /* OPSPEC_PARALLEL_H */
