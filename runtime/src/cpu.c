#include "opspec/cpu.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "opspec/ffi.h"
#include "opspec/parallel.h"
#include "opspec/registry.h" /* the entry type only: module.c hands over the package's table */

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

/* The own threshold of the op whose raw `cpu:` body runs on this thread, 0 for none
 * (opspec_cpu_enter_op): what that body's opspec_cpu_parallel(trips) compares with. */
static _Thread_local int64_t opspec_running_op_threshold;

int64_t opspec_cpu_enter_op(int64_t own) {
  int64_t outer = opspec_running_op_threshold;
  opspec_running_op_threshold = own;
  return outer;
}

bool opspec_cpu_parallel(int64_t trips) {
  int64_t own = opspec_running_op_threshold;
  return opspec_cpu_parallel_at(trips, own > 0 ? own : atomic_load_explicit(&opspec_threshold, memory_order_relaxed));
}

bool opspec_cpu_parallel_at(int64_t trips, int64_t threshold) {
  /* The threshold first: it is what decides a small call. */
  if (trips < threshold) return false;
  if (opspec_in_parallel_loop()) return false; /* a batch element on one thread of a batched call */
#ifdef _OPENMP
  if (omp_in_parallel()) return false; /* inside a raw body's own OpenMP region */
#endif
  return opspec_cpu_threads() > 1;
}

void opspec_set_cpu_threads(int n) { atomic_store(&opspec_thread_cap, n > 0 ? n : 0); }

void opspec_set_parallel_threshold(int64_t n) { atomic_store(&opspec_threshold, (long long)(n > 1 ? n : 1)); }

int64_t opspec_parallel_threshold(void) { return atomic_load(&opspec_threshold); }

/* ---- per-op thresholds ------------------------------------------------------------
 *
 * A side table beside the generated registry (which stays constant): one value per
 * op, by its position in opspec_op_table, 0 where the op follows the package's
 * threshold. A call finds its op's position from its descriptor's address through a
 * small open-addressed map, filled the first time each op runs after a value was set
 * (by name: the descriptor is static in the op's _ffi.c). Until some op has a value of
 * its own the table does not exist, and a call pays one load more for asking. */

typedef struct opspec_op_slot {
  _Atomic(const opspec_op_desc *) op; /* NULL: free */
  int32_t index;                      /* in opspec_op_table; -1 for an op not in it */
} opspec_op_slot;

typedef struct opspec_op_thresholds {
  const opspec_op_entry *ops; /* the package's registry, as module.c handed it */
  size_t count;
  size_t mask;           /* slots - 1 (a power of two, at least twice the ops) */
  opspec_op_slot *slots; /* after `values` in the same allocation */
  atomic_flag filling;   /* held while a slot is filled */
  _Atomic int64_t values[];
} opspec_op_thresholds;

static _Atomic(opspec_op_thresholds *) opspec_op_table_thresholds;

/* The table, made on first use. Made once and kept for the process (its ops are). */
static opspec_op_thresholds *opspec_thresholds_table(const opspec_op_entry *ops, size_t count) {
  opspec_op_thresholds *t = atomic_load_explicit(&opspec_op_table_thresholds, memory_order_acquire);
  if (t) return t;
  size_t slots = 4;
  while (slots < 2 * count + 2) slots *= 2;
  size_t values = sizeof(opspec_op_thresholds) + count * sizeof(_Atomic int64_t);
  values = (values + _Alignof(opspec_op_slot) - 1) / _Alignof(opspec_op_slot) * _Alignof(opspec_op_slot);
  char *memory = calloc(1, values + slots * sizeof(opspec_op_slot));
  if (!memory) return NULL;
  opspec_op_thresholds *made = (opspec_op_thresholds *)(void *)memory;
  made->ops = ops;
  made->count = count;
  made->mask = slots - 1;
  made->slots = (opspec_op_slot *)(void *)(memory + values);
  atomic_flag_clear(&made->filling);
  if (!atomic_compare_exchange_strong(&opspec_op_table_thresholds, &t, made)) {
    free(memory); /* another thread made it first: `t` is that one */
    return t;
  }
  return made;
}

int64_t opspec_op_position(const opspec_op_entry *ops, size_t count, const char *name) {
  for (size_t i = 0; i < count; ++i)
    if (strcmp(ops[i].name, name) == 0) return (int64_t)i;
  return -1;
}

static size_t opspec_op_hash(const opspec_op_desc *op, size_t mask) {
  return (size_t)(((uintptr_t)op >> 3) * UINT64_C(0x9E3779B97F4A7C15) >> 32) & mask;
}

/* `op`'s position in the registry, learnt by name the first time it is asked for. */
static int32_t opspec_op_slot_index(opspec_op_thresholds *t, const opspec_op_desc *op) {
  size_t h = opspec_op_hash(op, t->mask);
  for (size_t probes = 0; probes <= t->mask; ++probes, h = (h + 1) & t->mask) {
    const opspec_op_desc *at = atomic_load_explicit(&t->slots[h].op, memory_order_acquire);
    if (at == op) return t->slots[h].index;
    if (at) continue;
    while (atomic_flag_test_and_set_explicit(&t->filling, memory_order_acquire)) {
    }
    at = atomic_load_explicit(&t->slots[h].op, memory_order_relaxed);
    if (!at) {
      t->slots[h].index = (int32_t)opspec_op_position(t->ops, t->count, op->name);
      atomic_store_explicit(&t->slots[h].op, op, memory_order_release);
    }
    atomic_flag_clear_explicit(&t->filling, memory_order_release);
    if (!at || at == op) return t->slots[h].index; /* filled here or just before */
  }
  return -1; /* full: more descriptors than twice the ops, which no package has */
}

int64_t opspec_op_own_threshold(const opspec_op_desc *op) {
  opspec_op_thresholds *t = atomic_load_explicit(&opspec_op_table_thresholds, memory_order_acquire);
  if (!t) return 0;
  int32_t i = opspec_op_slot_index(t, op);
  return i >= 0 ? atomic_load_explicit(&t->values[i], memory_order_relaxed) : 0;
}

int64_t opspec_op_parallel_threshold(const opspec_op_desc *op) {
  int64_t own = opspec_op_own_threshold(op);
  return own > 0 ? own : atomic_load_explicit(&opspec_threshold, memory_order_relaxed);
}

bool opspec_set_op_threshold(const opspec_op_entry *ops, size_t count, size_t index, int64_t n) {
  opspec_op_thresholds *t = index < count ? opspec_thresholds_table(ops, count) : NULL;
  if (!t) return false;
  atomic_store(&t->values[index], n > 0 ? n : 0);
  return true;
}

int64_t opspec_op_threshold_at(size_t index) {
  opspec_op_thresholds *t = atomic_load_explicit(&opspec_op_table_thresholds, memory_order_acquire);
  if (!t || index >= t->count) return 0;
  return atomic_load(&t->values[index]);
}

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
