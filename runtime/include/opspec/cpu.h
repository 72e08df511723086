/* CPU execution policy shared by every CPU kernel.
 *
 * XLA runs its own thread pool and may call a handler from several of its threads at
 * once, so loops must not oversubscribe: a loop goes parallel only when its trip count
 * reaches a threshold, and never with more threads than the cap. Both are process-wide
 * settings (atomics, so concurrent handlers read them safely), set from Python with
 * opspec.set_cpu_threads() / opspec.set_parallel_threshold(); an op may have a threshold
 * of its own. Portable kernels are run in parallel by the handler (opspec/parallel.h); a
 * raw `cpu:` body that writes its own OpenMP loop asks opspec_cpu_parallel() and
 * opspec_cpu_threads() the same questions.
 */
#ifndef OPSPEC_CPU_H
#define OPSPEC_CPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* `fastmath: true` in a spec puts this in the op's <op>_cpu.c right after this header,
 * before the other opspec headers (GCC inlines no function compiled with other
 * optimisation options, so their inline helpers must be under it too): the kernels below may reassociate floating-point arithmetic (a reduction in a loop then
 * vectorises), contract a*b+c into FMAs, ignore the sign of zero and assume no NaN and
 * no infinity, as -ffast-math's parts do (docs/spec.md, "fastmath"). Clang has a pragma
 * for the reassociation only. */
/* _Pragma takes one string literal: clang-format must not split it. */
/* clang-format off */
#if defined(__clang__)
#define OPSPEC_FASTMATH _Pragma("clang fp reassociate(on) contract(fast)")
#elif defined(__GNUC__)
#define OPSPEC_FASTMATH _Pragma("GCC optimize(\"associative-math\", \"no-signed-zeros\", \"finite-math-only\", \"no-trapping-math\", \"fp-contract=fast\")")
#else
#define OPSPEC_FASTMATH
#endif
/* clang-format on */

/* Each CPU kernel in several forms, the one for the CPU chosen when the extension loads
 * (target_clones: an ifunc): baseline x86-64 (SSE2), x86-64-v3 (AVX2, FMA, F16C;
 * Haswell and Zen on), which ran the shipped kernels 1.3-4x faster in cache on the
 * project's machine, and x86-64-v4 (AVX-512F/BW/CD/DQ/VL: Skylake-SP, Ice Lake, Zen 4
 * on; docs/performance.md, "CPU forms"). Only on x86-64 ELF (ifuncs) with GCC 12+ or
 * clang 14+ (which know the x86-64-v3 name), and not where the build targets one CPU
 * already (OPSPEC_NATIVE defines OPSPEC_NO_CPU_CLONES). The x86-64-v4 form with GCC
 * only, and not under OPSPEC_NO_CPU_V4 (CMake: -DOPSPEC_CPU_V4=OFF): clang 14's
 * resolver of `arch=` clones compares the CPU's vendor with none (its IR shows it), so
 * it runs the default form on every CPU, and drops a third clone. OPSPEC_CPU_FORMS: how
 * many forms each kernel has. */
#if defined(__x86_64__) && defined(__ELF__) && !defined(OPSPEC_NO_CPU_CLONES) && \
    ((defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 12) || (defined(__clang__) && __clang_major__ >= 14))
#define OPSPEC_CPU_CLONES_NO_V4 __attribute__((target_clones("default", "arch=x86-64-v3")))
#define OPSPEC_CPU_FORMS_NO_V4  2
#else
#define OPSPEC_CPU_CLONES_NO_V4
#define OPSPEC_CPU_FORMS_NO_V4 1
#endif
#if defined(__x86_64__) && defined(__ELF__) && !defined(OPSPEC_NO_CPU_CLONES) && defined(__GNUC__) && \
    !defined(__clang__) && __GNUC__ >= 12 && !defined(OPSPEC_NO_CPU_V4)
#define OPSPEC_CPU_CLONES __attribute__((target_clones("default", "arch=x86-64-v3", "arch=x86-64-v4")))
#define OPSPEC_CPU_FORMS  3
#else
#define OPSPEC_CPU_CLONES OPSPEC_CPU_CLONES_NO_V4
#define OPSPEC_CPU_FORMS  OPSPEC_CPU_FORMS_NO_V4
#endif
/* A kernel whose body calls erf is declared OPSPEC_CPU_CLONES_NO_V4: libmvec's AVX-512
 * erff (the x86-64-v4 form's) is 4 ulp off where XLA:CPU's budget is 2, and its AVX2
 * form 2 (tests/c/test_vmath.c), so such a kernel runs its x86-64-v3 form on an
 * x86-64-v4 CPU. */

#ifdef __cplusplus
extern "C" {
#endif

/* Threads a parallel loop may use, the calling thread included: the cap if set, else
 * OpenMP's default (the CPUs this process may run on). */
int opspec_cpu_threads(void);
/* True if a loop of `trips` iterations (or, for the handler's portable loops, elements
 * of work: runtime/src/handler.c) should run in parallel: at least the threshold,
 * more than one thread, and not already inside a parallel loop (a batch element on one
 * thread of a batched call, or a raw body's own OpenMP region). */
bool opspec_cpu_parallel(int64_t trips);
/* The same against `threshold` (the handler's portable loops: their op's threshold,
 * opspec_op_parallel_threshold). */
bool opspec_cpu_parallel_at(int64_t trips, int64_t threshold);

/* Sets `bytes` bytes at `data` to zero (nothing for 0 bytes, whatever `data` is). A
 * function, not memset, so that a body's own names (an array called `memset`) cannot
 * shadow it in generated kernels. */
void opspec_cpu_zero(void *data, size_t bytes);

/* The form of the kernels that runs on this CPU, as the clones' resolver chooses it:
 * "x86-64-v4", "x86-64-v3" or "x86-64" (the default form); "native" where the build
 * compiled one form for its machine (OPSPEC_NATIVE), "default" where it made no clones. */
const char *opspec_cpu_form(void);
/* The forms the build made, best last, separated by commas: "x86-64,x86-64-v3,x86-64-v4". */
const char *opspec_cpu_forms(void);

void opspec_set_cpu_threads(int n);            /* 0: the default */
void opspec_set_parallel_threshold(int64_t n); /* work at which loops go parallel (docs/performance.md) */
int64_t opspec_parallel_threshold(void);

/* Per-op thresholds: an op with its own value compares its calls' work with it instead
 * of the package's threshold (opspec.set_parallel_threshold(work, op=...),
 * docs/performance.md, "The threshold"). Kept beside the generated registry, by the
 * op's position in opspec_op_table. */
struct opspec_op_desc;
struct opspec_op_entry;
/* The position of the op called `name` in the registry `ops` (`count` entries), or -1. */
int64_t opspec_op_position(const struct opspec_op_entry *ops, size_t count, const char *name);
/* Sets the own threshold of the op at `index` of the package's registry `ops` (`count`
 * entries: module.c hands over opspec_op_table, the same every time; n < 1: none, the op
 * follows the package's); false for an index out of range or no memory for the table. */
bool opspec_set_op_threshold(const struct opspec_op_entry *ops, size_t count, size_t index, int64_t n);
/* The own threshold of the op at `index`, 0 for none. */
int64_t opspec_op_threshold_at(size_t index);
/* A call's: the own threshold of the op `op` describes (0 for none; one load while no
 * op has one), and the threshold its work is compared with (its own, else the
 * package's). */
int64_t opspec_op_own_threshold(const struct opspec_op_desc *op);
int64_t opspec_op_parallel_threshold(const struct opspec_op_desc *op);
/* Around a raw `cpu:` body: its op's own threshold (0 for none) is what the body's
 * opspec_cpu_parallel(trips) compares with on this thread; returns the value it
 * replaces, which the handler puts back after the body. */
int64_t opspec_cpu_enter_op(int64_t own);

#ifdef __cplusplus
}
#endif

#endif /* OPSPEC_CPU_H */
