/* The content checks a spec's `check:` asks for (opspec_check_values in opspec/ffi.h):
 * a scan of an integer input for the first element out of bounds or out of order, run
 * on the CPU handler's pool when the input is large, or on the device through the
 * opspec_device_scan that a CUDA handler's call frame carries; and the error that names
 * the element. */
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "opspec/cpu.h"
#include "opspec/dtypes.h"
#include "opspec/ffi.h"
#include "opspec/parallel.h"

static atomic_bool opspec_checks_on = true;

/* Relaxed: the switch orders nothing else, and every call reads it once. */
void opspec_set_checks(bool enabled) { atomic_store_explicit(&opspec_checks_on, enabled, memory_order_relaxed); }
bool opspec_checks_enabled(void) { return atomic_load_explicit(&opspec_checks_on, memory_order_relaxed); }

/* opspec.testing.check_op's test for unwritten outputs: off (-1) except while it runs. */
static atomic_int opspec_fill_byte = -1;

void opspec_set_output_fill(int byte) {
  atomic_store_explicit(&opspec_fill_byte, byte >= 0 && byte <= 255 ? byte : -1, memory_order_relaxed);
}
int opspec_output_fill(void) { return atomic_load_explicit(&opspec_fill_byte, memory_order_relaxed); }

int opspec_output_fill_value(int32_t dtype, int byte) { return dtype == OPSPEC_DT_bool ? byte & 1 : byte; }

/* ---- the device scan, which the call frame carries ---------------------------------- */

/* The type of opspec's node in a frame's extension list ("opsc"): XLA's types are small
 * numbers, and XLA never sees a frame that holds this node. */
#define OPSPEC_FFI_EXTENSION_DEVICE_SCAN 0x6f707363u

XLA_FFI_CallFrame *opspec_frame_with_scan(XLA_FFI_CallFrame *frame, const XLA_FFI_CallFrame *cf,
                                          opspec_device_scan *scan) {
  *frame = *cf;
  scan->extension.struct_size = sizeof *scan;
  scan->extension.type = OPSPEC_FFI_EXTENSION_DEVICE_SCAN;
  scan->extension.next = cf->extension_start;
  frame->extension_start = &scan->extension;
  return frame;
}

/* The scan `cf` carries, or NULL: the data is on the host. */
static opspec_device_scan *opspec_device_scan_of(const XLA_FFI_CallFrame *cf) {
  for (opspec_ffi_extension *ext = cf->extension_start; ext; ext = ext->next)
    if ((unsigned)ext->type == OPSPEC_FFI_EXTENSION_DEVICE_SCAN) return (opspec_device_scan *)(void *)ext;
  return NULL;
}

/* ---- one scan per integer C type (the dtype table's integer rows) ------------------- */

/* Elements per block of the scans below. A branch-free pass over a block tells whether
 * anything in it is bad (the compiler vectorises it); only then does a second pass look
 * for the position. 4096 elements stay in L1 for the second pass. */
#define OPSPEC_SCAN_BLOCK 4096

/* An integer C type's range, as an int64 minimum and a uint64 maximum: every integer
 * dtype's fits. */
#define OPSPEC_IS_UNSIGNED(T) ((T)-1 > (T)0)
#define OPSPEC_TYPE_MAX(T)    ((OPSPEC_IS_UNSIGNED(T) ? UINT64_MAX : (uint64_t)INT64_MAX) >> (64 - 8 * sizeof(T)))
#define OPSPEC_TYPE_MIN(T)    (OPSPEC_IS_UNSIGNED(T) ? 0 : -(int64_t)OPSPEC_TYPE_MAX(T) - 1)

/* What a check needs of one integer dtype: its C type's range; its scan, the first
 * position in [from, to) whose value lies outside [lo, hi] (values of the type, converted
 * to uint64) or (if `sorted`) is less than the one before it (also across `from`), -1 if
 * none; and its element i, converted to uint64. */
typedef struct opspec_int_type {
  int64_t min;
  uint64_t max;
  int64_t (*scan)(const void *data, int64_t from, int64_t to, uint64_t lo, uint64_t hi, bool sorted);
  uint64_t (*load)(const void *data, int64_t i);
} opspec_int_type;

#define OPSPEC_DEFINE_INT_TYPE(name, T)                                                                             \
  static int64_t opspec_scan_##name(const void *data, int64_t from, int64_t to, uint64_t lo_bits, uint64_t hi_bits, \
                                    bool sorted) {                                                                  \
    const T *v = data, lo = (T)lo_bits, hi = (T)hi_bits;                                                            \
    for (int64_t start = from; start < to; start += OPSPEC_SCAN_BLOCK) {                                            \
      int64_t end = to - start < OPSPEC_SCAN_BLOCK ? to : start + OPSPEC_SCAN_BLOCK;                                \
      int bad = 0;                                                                                                  \
      for (int64_t i = start; i < end; ++i) bad |= (v[i] < lo) | (v[i] > hi);                                       \
      if (sorted)                                                                                                   \
        for (int64_t i = start ? start : 1; i < end; ++i) bad |= v[i] < v[i - 1];                                   \
      if (!bad) continue;                                                                                           \
      for (int64_t i = start; i < end; ++i)                                                                         \
        if (v[i] < lo || v[i] > hi || (sorted && i > 0 && v[i] < v[i - 1])) return i;                               \
    }                                                                                                               \
    return -1;                                                                                                      \
  }                                                                                                                 \
  static uint64_t opspec_load_##name(const void *data, int64_t i) { return (uint64_t)((const T *)data)[i]; }
#define OPSPEC_INT_TYPE_ROW(name, T, cutype, xla, np, integer) \
  OPSPEC_IF_INTEGER(integer, OPSPEC_DEFINE_INT_TYPE(name, T))
OPSPEC_DTYPES(OPSPEC_INT_TYPE_ROW)
#undef OPSPEC_INT_TYPE_ROW
#undef OPSPEC_DEFINE_INT_TYPE

/* The integer dtype's entry; all NULL for any other dtype. */
static opspec_int_type opspec_int_type_of(int32_t dtype) {
#define OPSPEC_INT_TYPE_OF(name, T, xla) \
  case xla:                              \
    return (opspec_int_type){OPSPEC_TYPE_MIN(T), OPSPEC_TYPE_MAX(T), opspec_scan_##name, opspec_load_##name};
#define OPSPEC_INT_TYPE_ROW(name, T, cutype, xla, np, integer) \
  OPSPEC_IF_INTEGER(integer, OPSPEC_INT_TYPE_OF(name, T, xla))
  switch (dtype) {
    OPSPEC_DTYPES(OPSPEC_INT_TYPE_ROW)
    default:
      return (opspec_int_type){0, 0, NULL, NULL};
  }
#undef OPSPEC_INT_TYPE_ROW
#undef OPSPEC_INT_TYPE_OF
}

/* The check's bounds as values of the type (converted to uint64, as the scans take
 * them), clamped to its range: a bound beyond the range checks nothing on that side.
 * False when no value of the type can meet them: every value fails. (A min above the
 * max fails every value too: the scan then finds lo > hi.) */
static bool opspec_type_bounds(const opspec_int_type *t, const opspec_value_check *c, uint64_t *lo, uint64_t *hi) {
  if ((c->has_min && c->min > 0 && (uint64_t)c->min > t->max) || (c->has_max && c->max < t->min)) return false;
  *lo = (uint64_t)(c->has_min && c->min > t->min ? c->min : t->min);
  *hi = c->has_max && (c->max < 0 || (uint64_t)c->max < t->max) ? (uint64_t)c->max : t->max;
  return true;
}

/* One integer element, widened for comparing with the int64 bounds and for printing.
 * Only uint64 values can exceed int64: `big` says so and `u` holds them. */
typedef struct opspec_int_value {
  int64_t s;
  uint64_t u;
  bool big;
} opspec_int_value;

/* `bits` (an element of the type, converted to uint64) widened. */
static opspec_int_value opspec_int_value_of(const opspec_int_type *t, uint64_t bits) {
  opspec_int_value r = {(int64_t)bits, bits, false};
  if (t->min == 0 && bits > (uint64_t)INT64_MAX) {
    r.big = true;
    r.s = INT64_MAX;
  }
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

/* ---- one input's scan --------------------------------------------------------------- */

typedef struct opspec_input_scan {
  const void *data;
  int32_t dtype;
  int64_t count;
  opspec_int_type type;
  uint64_t lo, hi; /* opspec_type_bounds' */
  bool sorted;
  bool never;                 /* no value of the type meets the bounds */
  opspec_device_scan *device; /* NULL: the data is on the host */
} opspec_input_scan;

/* The first bad position in [from, to) of host data, or -1. */
static int64_t opspec_first_bad_in(const opspec_input_scan *s, int64_t from, int64_t to) {
  if (s->never) return to > from ? from : -1;
  return s->type.scan(s->data, from, to, s->lo, s->hi, s->sorted);
}

/* The device's scan of the whole input, or -1, also when it failed (d->code says why). */
static int64_t opspec_device_first_bad(const opspec_input_scan *s) {
  opspec_device_scan *d = s->device;
  int64_t first = -1;
  if (s->never) return s->count > 0 ? 0 : -1;
  if (d->code) return -1;
  d->code = d->first_bad(d, s->data, s->dtype, s->count, s->lo, s->hi, s->sorted, &first);
  return d->code ? -1 : first;
}

/* Elements per chunk of a parallel scan: large enough that claiming a chunk costs
 * nothing next to scanning it, small enough that two threads share the work evenly. */
#define OPSPEC_SCAN_CHUNK ((int64_t)1 << 16)

typedef struct opspec_scan_loop {
  const opspec_input_scan *scan;
  _Atomic int64_t first; /* the first bad position found so far; count if none */
} opspec_scan_loop;

static void opspec_scan_chunk(void *ctx, int64_t chunk, int worker) {
  (void)worker;
  opspec_scan_loop *l = ctx;
  const int64_t count = l->scan->count, from = chunk * OPSPEC_SCAN_CHUNK;
  const int64_t to = count - from < OPSPEC_SCAN_CHUNK ? count : from + OPSPEC_SCAN_CHUNK;
  /* A bad element already found before this chunk wins whatever this one holds. */
  if (atomic_load_explicit(&l->first, memory_order_relaxed) < from) return;
  int64_t bad = opspec_first_bad_in(l->scan, from, to);
  if (bad < 0) return;
  int64_t seen = atomic_load_explicit(&l->first, memory_order_relaxed);
  while (bad < seen &&
         !atomic_compare_exchange_weak_explicit(&l->first, &seen, bad, memory_order_relaxed, memory_order_relaxed)) {
  }
}

/* The first bad position of the whole input, or -1. A large input on the host is
 * scanned in chunks on the pool the kernels use, under the same threshold: the scan
 * reads as many bytes as the kernel that follows may, and one thread alone made it a
 * third of a CSR matvec's time. The result is the same position as a serial scan's. */
static int64_t opspec_first_bad(XLA_FFI_CallFrame *cf, const opspec_input_scan *s) {
  if (s->device) return opspec_device_first_bad(s);
  if (s->count <= OPSPEC_SCAN_CHUNK || !opspec_cpu_parallel(s->count)) return opspec_first_bad_in(s, 0, s->count);
  opspec_scan_loop l = {.scan = s};
  atomic_init(&l.first, s->count);
  opspec_parallel_run(cf, (s->count - 1) / OPSPEC_SCAN_CHUNK + 1, opspec_cpu_threads(), opspec_scan_chunk, &l);
  int64_t first = atomic_load_explicit(&l.first, memory_order_relaxed);
  return first < s->count ? first : -1;
}

/* Element i, and the one before it where i > 0, widened for the message; from a device,
 * those two copied back first. False when that copy failed (device->code says why). */
static bool opspec_values_at(const opspec_input_scan *s, int64_t i, opspec_int_value *value, opspec_int_value *before) {
  const void *values = s->data;
  int64_t at = i;
  uint64_t copied[2]; /* room for two elements of any integer dtype */
  if (s->device) {
    opspec_device_scan *d = s->device;
    const size_t size = opspec_dtype_size(s->dtype), from = i > 0 ? (size_t)i - 1 : 0;
    if ((d->code = d->to_host(d, copied, (const char *)s->data + from * size, (i > 0 ? 2 : 1) * size))) return false;
    values = copied;
    at = i > 0 ? 1 : 0;
  }
  *value = opspec_int_value_of(&s->type, s->type.load(values, at));
  *before = at > 0 ? opspec_int_value_of(&s->type, s->type.load(values, at - 1)) : *value;
  return true;
}

/* The error for `value` at position i, which breaks `check`: out of range, or (if in
 * range) less than `before`. */
static XLA_FFI_Error *opspec_bad_value(XLA_FFI_CallFrame *cf, const char *op, const char *input,
                                       const opspec_value_check *check, int64_t i, opspec_int_value value,
                                       opspec_int_value before) {
  const XLA_FFI_Error_Code code = XLA_FFI_Error_Code_INVALID_ARGUMENT;
  const bool low = check->has_min && !value.big && value.s < check->min;
  const bool high = check->has_max && (value.big || value.s > check->max);
  char got[64], lo[160], hi[160];
  if (low || high) {
    if (check->has_min && check->has_max)
      return opspec_error(cf, code, op, "input '%s'[%lld] = %s is out of range: expected %s <= value <= %s", input,
                          (long long)i, opspec_int_label(value, got, sizeof got),
                          opspec_bound_label(check->min_text, check->min, lo, sizeof lo),
                          opspec_bound_label(check->max_text, check->max, hi, sizeof hi));
    return opspec_error(cf, code, op, "input '%s'[%lld] = %s is out of range: expected value %s %s", input,
                        (long long)i, opspec_int_label(value, got, sizeof got), low ? ">=" : "<=",
                        low ? opspec_bound_label(check->min_text, check->min, lo, sizeof lo)
                            : opspec_bound_label(check->max_text, check->max, hi, sizeof hi));
  }
  char previous[64];
  return opspec_error(cf, code, op, "input '%s'[%lld] = %s is less than %s[%lld] = %s: expected non-decreasing values",
                      input, (long long)i, opspec_int_label(value, got, sizeof got), input, (long long)(i - 1),
                      opspec_int_label(before, previous, sizeof previous));
}

XLA_FFI_Error *opspec_check_values(XLA_FFI_CallFrame *cf, const char *op, const char *input, const void *data,
                                   int32_t dtype, int64_t count, const opspec_value_check *check) {
  const XLA_FFI_Error_Code code = XLA_FFI_Error_Code_INVALID_ARGUMENT;
  if (!opspec_dtype_is_integer(dtype)) {
    char got[64];
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

  opspec_input_scan s = {.data = data,
                         .dtype = dtype,
                         .count = count,
                         .type = opspec_int_type_of(dtype),
                         .sorted = check->sorted,
                         .device = opspec_device_scan_of(cf)};
  s.never = !opspec_type_bounds(&s.type, check, &s.lo, &s.hi);
  const int64_t i = opspec_first_bad(cf, &s);
  opspec_int_value value, before;
  if (i < 0 || !opspec_values_at(&s, i, &value, &before)) return NULL;
  return opspec_bad_value(cf, op, input, check, i, value, before);
}
