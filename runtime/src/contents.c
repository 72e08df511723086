/* The content checks a spec's `check:` asks for (opspec_check_values in opspec/ffi.h):
 * a scan of an integer input for the first element out of bounds or out of order, run
 * on the CPU handler's pool when the input is large, and the error that names it. */
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "opspec/cpu.h"
#include "opspec/dtypes.h"
#include "opspec/ffi.h"
#include "opspec/parallel.h"

static atomic_bool opspec_checks_on = true;

/* Set by a CUDA handler around its checks: the data is on its device. Per thread, since
 * XLA runs handlers on many. */
static _Thread_local opspec_device_scan *opspec_scan_device;

void opspec_set_device_scan(opspec_device_scan *scan) { opspec_scan_device = scan; }

/* The device's scan of [0, count), or -1 when it failed (scan->code says why). */
static int64_t opspec_device_first_bad(const void *data, int32_t dtype, int64_t count, uint64_t lo, uint64_t hi,
                                       bool sorted) {
  opspec_device_scan *d = opspec_scan_device;
  int64_t first = -1;
  if (d->code) return -1;
  d->code = d->first_bad(d, data, dtype, count, lo, hi, sorted, &first);
  return d->code ? -1 : first;
}

/* Relaxed: the switch orders nothing else, and every call reads it once. */
void opspec_set_checks(bool enabled) { atomic_store_explicit(&opspec_checks_on, enabled, memory_order_relaxed); }
bool opspec_checks_enabled(void) { return atomic_load_explicit(&opspec_checks_on, memory_order_relaxed); }

/* Elements per block of the scans below. A branch-free pass over a block tells whether
 * anything in it is bad (the compiler vectorises it); only then does a second pass look
 * for the position. 4096 elements stay in L1 for the second pass. */
#define OPSPEC_SCAN_BLOCK 4096

/* opspec_scan_<T>: the first position in [from, to) whose value lies outside [lo, hi],
 * or (if `sorted`) is less than the one before it (also across `from`); -1 if none. */
#define OPSPEC_DEFINE_SCAN(name, T)                                                                  \
  static int64_t opspec_scan_##name(const T *v, int64_t from, int64_t to, T lo, T hi, bool sorted) { \
    for (int64_t start = from; start < to; start += OPSPEC_SCAN_BLOCK) {                             \
      int64_t end = to - start < OPSPEC_SCAN_BLOCK ? to : start + OPSPEC_SCAN_BLOCK;                 \
      int bad = 0;                                                                                   \
      for (int64_t i = start; i < end; ++i) bad |= (v[i] < lo) | (v[i] > hi);                        \
      if (sorted)                                                                                    \
        for (int64_t i = start ? start : 1; i < end; ++i) bad |= v[i] < v[i - 1];                    \
      if (!bad) continue;                                                                            \
      for (int64_t i = start; i < end; ++i)                                                          \
        if (v[i] < lo || v[i] > hi || (sorted && i > 0 && v[i] < v[i - 1])) return i;                \
    }                                                                                                \
    return -1;                                                                                       \
  }
OPSPEC_DEFINE_SCAN(int8, int8_t)
OPSPEC_DEFINE_SCAN(int16, int16_t)
OPSPEC_DEFINE_SCAN(int32, int32_t)
OPSPEC_DEFINE_SCAN(int64, int64_t)
OPSPEC_DEFINE_SCAN(uint8, uint8_t)
OPSPEC_DEFINE_SCAN(uint16, uint16_t)
OPSPEC_DEFINE_SCAN(uint32, uint32_t)
OPSPEC_DEFINE_SCAN(uint64, uint64_t)
#undef OPSPEC_DEFINE_SCAN

/* One integer element, widened for comparing with the int64 bounds and for printing.
 * Only uint64 values can exceed int64: `big` says so and `u` holds them. */
typedef struct opspec_int_value {
  int64_t s;
  uint64_t u;
  bool big;
} opspec_int_value;

static opspec_int_value opspec_int_at(const void *data, int32_t dtype, int64_t i) {
  opspec_int_value r = {0, 0, false};
  switch (dtype) {
    case OPSPEC_DT_int8:
      r.s = ((const int8_t *)data)[i];
      break;
    case OPSPEC_DT_int16:
      r.s = ((const int16_t *)data)[i];
      break;
    case OPSPEC_DT_int32:
      r.s = ((const int32_t *)data)[i];
      break;
    case OPSPEC_DT_int64:
      r.s = ((const int64_t *)data)[i];
      break;
    case OPSPEC_DT_uint8:
      r.s = ((const uint8_t *)data)[i];
      break;
    case OPSPEC_DT_uint16:
      r.s = ((const uint16_t *)data)[i];
      break;
    case OPSPEC_DT_uint32:
      r.s = ((const uint32_t *)data)[i];
      break;
    case OPSPEC_DT_uint64:
      r.u = ((const uint64_t *)data)[i];
      r.big = r.u > (uint64_t)INT64_MAX;
      r.s = r.big ? INT64_MAX : (int64_t)r.u;
      break;
  }
  if (!r.big) r.u = (uint64_t)r.s;
  return r;
}

static const char *opspec_int_label(opspec_int_value v, char *buf, size_t n) {
  if (v.big)
    snprintf(buf, n, "%" PRIu64, v.u);
  else
    snprintf(buf, n, "%" PRId64, v.s);
  return buf;
}

/* "n - 1 = 7", or just "0" when the text is the number itself. */
static const char *opspec_bound_label(const char *text, int64_t value, char *buf, size_t n) {
  char number[32];
  snprintf(number, sizeof number, "%" PRId64, value);
  if (strcmp(text, number) == 0)
    snprintf(buf, n, "%s", text);
  else
    snprintf(buf, n, "%s = %s", text, number);
  return buf;
}

/* Runs the scan of the dtype's C type, with the bounds clamped to that type: a bound
 * beyond the type's range checks nothing on that side, and a bound that no value of
 * the type can meet makes every value fail (clamping then leaves lo > hi). */
#define OPSPEC_SCAN_CASE(name, T, TMIN, TMAX)                                                                       \
  case OPSPEC_DT_##name: {                                                                                          \
    T lo = !c->has_min || c->min <= (int64_t)(TMIN) ? (T)(TMIN) : c->min > (int64_t)(TMAX) ? (T)(TMAX) : (T)c->min; \
    T hi = !c->has_max || c->max >= (int64_t)(TMAX) ? (T)(TMAX) : c->max < (int64_t)(TMIN) ? (T)(TMIN) : (T)c->max; \
    bool never = (c->has_min && c->min > (int64_t)(TMAX)) || (c->has_max && c->max < (int64_t)(TMIN));              \
    if (never) return to > from ? from : -1;                                                                        \
    if (opspec_scan_device) return opspec_device_first_bad(data, dtype, to, (uint64_t)lo, (uint64_t)hi, c->sorted); \
    return opspec_scan_##name((const T *)data, from, to, lo, hi, c->sorted);                                        \
  }

static int64_t opspec_first_bad_in(const void *data, int32_t dtype, int64_t from, int64_t to,
                                   const opspec_value_check *c) {
  switch (dtype) {
    OPSPEC_SCAN_CASE(int8, int8_t, INT8_MIN, INT8_MAX)
    OPSPEC_SCAN_CASE(int16, int16_t, INT16_MIN, INT16_MAX)
    OPSPEC_SCAN_CASE(int32, int32_t, INT32_MIN, INT32_MAX)
    OPSPEC_SCAN_CASE(int64, int64_t, INT64_MIN, INT64_MAX)
    OPSPEC_SCAN_CASE(uint8, uint8_t, 0, UINT8_MAX)
    OPSPEC_SCAN_CASE(uint16, uint16_t, 0, UINT16_MAX)
    OPSPEC_SCAN_CASE(uint32, uint32_t, 0, UINT32_MAX)
    case OPSPEC_DT_uint64: {
      /* Bounds are int64: a max bounds uint64 values below INT64_MAX, a min only if positive. */
      if (c->has_max && c->max < 0) return to > from ? from : -1;
      uint64_t lo = c->has_min && c->min > 0 ? (uint64_t)c->min : 0;
      uint64_t hi = c->has_max ? (uint64_t)c->max : UINT64_MAX;
      if (opspec_scan_device) return opspec_device_first_bad(data, dtype, to, lo, hi, c->sorted);
      return opspec_scan_uint64((const uint64_t *)data, from, to, lo, hi, c->sorted);
    }
  }
  return -1;
}
#undef OPSPEC_SCAN_CASE

/* Elements per chunk of a parallel scan: large enough that claiming a chunk costs
 * nothing next to scanning it, small enough that two threads share the work evenly. */
#define OPSPEC_SCAN_CHUNK ((int64_t)1 << 16)

typedef struct opspec_scan_loop {
  const void *data;
  int32_t dtype;
  int64_t count;
  const opspec_value_check *check;
  _Atomic int64_t first; /* the first bad position found so far; count if none */
} opspec_scan_loop;

static void opspec_scan_chunk(void *ctx, int64_t chunk, int worker) {
  (void)worker;
  opspec_scan_loop *l = ctx;
  int64_t from = chunk * OPSPEC_SCAN_CHUNK;
  int64_t to = l->count - from < OPSPEC_SCAN_CHUNK ? l->count : from + OPSPEC_SCAN_CHUNK;
  /* A bad element already found before this chunk wins whatever this one holds. */
  if (atomic_load_explicit(&l->first, memory_order_relaxed) < from) return;
  int64_t bad = opspec_first_bad_in(l->data, l->dtype, from, to, l->check);
  if (bad < 0) return;
  int64_t seen = atomic_load_explicit(&l->first, memory_order_relaxed);
  while (bad < seen &&
         !atomic_compare_exchange_weak_explicit(&l->first, &seen, bad, memory_order_relaxed, memory_order_relaxed)) {
  }
}

/* The first bad position of the whole input, or -1. A large input is scanned in chunks
 * on the pool the kernels use, under the same threshold: the scan reads as many bytes
 * as the kernel that follows may, and one thread alone made it a third of a CSR
 * matvec's time. The result is the same position as a serial scan's. */
static int64_t opspec_first_bad(XLA_FFI_CallFrame *cf, const void *data, int32_t dtype, int64_t count,
                                const opspec_value_check *c) {
  if (opspec_scan_device || count <= OPSPEC_SCAN_CHUNK || !opspec_cpu_parallel(count))
    return opspec_first_bad_in(data, dtype, 0, count, c);
  opspec_scan_loop l = {.data = data, .dtype = dtype, .count = count, .check = c};
  atomic_init(&l.first, count);
  opspec_parallel_run(cf, (count - 1) / OPSPEC_SCAN_CHUNK + 1, opspec_cpu_threads(), opspec_scan_chunk, &l);
  int64_t first = atomic_load_explicit(&l.first, memory_order_relaxed);
  return first < count ? first : -1;
}

XLA_FFI_Error *opspec_check_values(XLA_FFI_CallFrame *cf, const char *op, const char *input, const void *data,
                                   int32_t dtype, int64_t count, const opspec_value_check *check) {
  const XLA_FFI_Error_Code code = XLA_FFI_Error_Code_INVALID_ARGUMENT;
  char got[64];
  uint64_t local[2]; /* a device's values, below */
  switch (dtype) {
    case OPSPEC_DT_int8:
    case OPSPEC_DT_int16:
    case OPSPEC_DT_int32:
    case OPSPEC_DT_int64:
    case OPSPEC_DT_uint8:
    case OPSPEC_DT_uint16:
    case OPSPEC_DT_uint32:
    case OPSPEC_DT_uint64:
      break;
    default:
      return opspec_error(cf, code, op, "input '%s': value checks need integer data, got %s", input,
                          opspec_dtype_label(dtype, got, sizeof got));
  }
  /* A bound is a shape expression over the call's values: it can fail like one. */
  if (check->has_min && check->min == OPSPEC_SIZE_INVALID)
    return opspec_error(cf, code, op, "input '%s': check min = '%s' divides by zero or overflows int64", input,
                        check->min_text);
  if (check->has_max && check->max == OPSPEC_SIZE_INVALID)
    return opspec_error(cf, code, op, "input '%s': check max = '%s' divides by zero or overflows int64", input,
                        check->max_text);

  int64_t i = opspec_first_bad(cf, data, dtype, count, check);
  if (i < 0) return NULL;
  /* The values the message prints: `values[at]` and the one before. On a device, those
   * two copied back. */
  const void *values = data;
  int64_t at = i;
  if (opspec_scan_device) {
    const size_t size = opspec_dtype_size(dtype), from = i > 0 ? (size_t)i - 1 : 0;
    opspec_device_scan *d = opspec_scan_device;
    if ((d->code = d->to_host(d, local, (const char *)data + from * size, (i > 0 ? 2 : 1) * size))) return NULL;
    values = local;
    at = i > 0 ? 1 : 0;
  }
  opspec_int_value v = opspec_int_at(values, dtype, at);
  bool low = check->has_min && !v.big && v.s < check->min;
  bool high = check->has_max && (v.big || v.s > check->max);
  char lo[160], hi[160];
  if (low || high) {
    if (check->has_min && check->has_max)
      return opspec_error(cf, code, op, "input '%s'[%lld] = %s is out of range: expected %s <= value <= %s", input,
                          (long long)i, opspec_int_label(v, got, sizeof got),
                          opspec_bound_label(check->min_text, check->min, lo, sizeof lo),
                          opspec_bound_label(check->max_text, check->max, hi, sizeof hi));
    return opspec_error(cf, code, op, "input '%s'[%lld] = %s is out of range: expected value %s %s", input,
                        (long long)i, opspec_int_label(v, got, sizeof got), low ? ">=" : "<=",
                        low ? opspec_bound_label(check->min_text, check->min, lo, sizeof lo)
                            : opspec_bound_label(check->max_text, check->max, hi, sizeof hi));
  }
  char before[64];
  return opspec_error(cf, code, op, "input '%s'[%lld] = %s is less than %s[%lld] = %s: expected non-decreasing values",
                      input, (long long)i, opspec_int_label(v, got, sizeof got), input, (long long)(i - 1),
                      opspec_int_label(opspec_int_at(values, dtype, at - 1), before, sizeof before));
}
