/* The CPU handler of every op, driven by its tables (opspec_op_desc): decode the call
 * into the op's args struct, check contents, provide scratch memory, run the kernel of
 * the bound type variant, over every batch element, in parallel where it pays.
 * Generated code describes; this file does, once. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "opspec/batch.h"
#include "opspec/bfloat16.h"
#include "opspec/cpu.h"
#include "opspec/ffi.h"
#include "opspec/pages.h"
#include "opspec/parallel.h"
#include "opspec/registry.h"

/* Runs on every call for every buffer: the product in a local (writing it through `a`
 * made the compiler reload it, as `a->shape` might alias XLA's dims), and the rank was
 * checked against OPSPEC_MAX_RANK by opspec_check_buffer. Every dim is set to 1 first,
 * with a loop of constant trip count (a few vector stores), then the buffer's dims
 * overwrite the leading ones: filling from `rank` on was a loop per buffer. */
static void opspec_view(const XLA_FFI_Buffer *buf, opspec_array *a) {
  const int64_t rank = buf->rank;
  int64_t size = 1;
  a->data = buf->data;
  for (int d = 0; d < OPSPEC_MAX_RANK; ++d) a->shape[d] = 1;
  for (int64_t d = 0; d < rank; ++d) {
    const int64_t extent = buf->dims[d];
    a->shape[d] = extent;
    size *= extent; /* buffers XLA allocated: the product fits */
  }
  a->size = size;
}

/* The args field that opspec_reject() writes through (op->kernel_checked ops only). */
static int **opspec_rejected_flag(const opspec_op_desc *op, void *args) {
  return (int **)(void *)((char *)args + op->rejected_at);
}

XLA_FFI_Error *opspec_decode(XLA_FFI_CallFrame *cf, const opspec_op_desc *op, void *args, opspec_bound *bound) {
  XLA_FFI_Error *err = opspec_bind_inputs(cf, op, bound);
  if (err) return err;
  for (int32_t i = 0; i < op->nsymbols; ++i)
    memcpy((char *)args + op->symbols[i].offset, &bound->symbols[i], sizeof(int64_t));
  for (int32_t i = 0; i < op->nattrs; ++i)
    memcpy((char *)args + op->attrs[i].offset, bound->attrs[i], opspec_dtype_size(op->attrs[i].dtype));
  for (int32_t i = 0; i < op->ninputs; ++i) opspec_view(cf->args.args[i], opspec_array_at(args, op->inputs[i].offset));
  if (op->require && (err = op->require(cf, args))) return err;

  int64_t extents[OPSPEC_MAX_OUTPUTS * OPSPEC_MAX_RANK];
  for (int32_t i = 0; i < op->nscratch; ++i) {
    opspec_array *a = opspec_array_at(args, op->scratch[i].offset);
    a->data = NULL;
    for (int d = 0; d < OPSPEC_MAX_RANK; ++d) a->shape[d] = 1;
  }
  if (op->shapes && (err = op->shapes(cf, args, extents))) return err;
  if ((err = opspec_check_outputs(cf, op, bound, extents))) return err;
  for (int32_t i = 0; i < op->noutputs; ++i)
    opspec_view(cf->rets.rets[i], opspec_array_at(args, op->outputs[i].offset));
  /* A scratch buffer's count may overflow even where each dim is valid: it then stays
   * OPSPEC_SIZE_INVALID, which opspec_buffer_bytes reports by name. */
  for (int32_t i = 0; i < op->nscratch; ++i) {
    opspec_array *a = opspec_array_at(args, op->scratch[i].offset);
    a->size = 1;
    for (int d = 0; d < OPSPEC_MAX_RANK; ++d) a->size = opspec_safe_mul(a->size, a->shape[d]);
  }
  if (op->launch && (err = op->launch(cf, args, bound->launch))) return err;
  if (op->kernel_checked) *opspec_rejected_flag(op, args) = NULL; /* the CPU handler points it at its flag */
  return NULL;
}

/* The bytes of scratch buffer `i` under the bound dtypes. */
static XLA_FFI_Error *opspec_scratch_bytes(XLA_FFI_CallFrame *cf, const opspec_op_desc *op, const opspec_bound *bound,
                                           void *args, int32_t i, size_t *bytes) {
  const opspec_array_desc *desc = &op->scratch[i];
  /* A bfloat16 variant's kernel computes in float, and so does a float16 one that
   * converts in its loop (opspec/lowp.h): so does its scratch, which it never converts
   * (a float16 kernel in _Float16 uses half of it). */
  int32_t dtype = opspec_bound_dtype(desc, bound);
  size_t elem =
      dtype == OPSPEC_DT_bfloat16 || dtype == OPSPEC_DT_float16 ? sizeof(float) : opspec_elem_size(desc, bound);
  return opspec_buffer_bytes(cf, op->name, "scratch", desc->name, opspec_array_at(args, desc->offset)->size, elem,
                             bytes);
}

/* The work of a call, which decides whether its loop goes parallel and how it is cut,
 * counts elements of work: the larger of its launch trips and the elements of its
 * largest buffer (input or output, all batch elements together), and, where the spec
 * gives `bytes:` or `flops:` (op->cost, the generated C of the formulas), its bytes /
 * OPSPEC_WORK_BYTES and its flops / OPSPEC_WORK_FLOPS. An element-wise op's largest
 * buffer has one element per trip, so without formulas its work is its trips; a
 * row-wise op, one trip per row and a body that loops over the row, counts every
 * element of its rows. The formulas' units are one element of float32 `add` (x, y and
 * out: 12 bytes and 1 flop; the op `python -m opspec tune` times), whose work stays its
 * elements: bytes count an op that moves more memory per element (`lif`: 16 bytes), and
 * flops one that computes more (n^2 flops on n elements; `gelu_tanh`'s 9 per element).
 * A flop counts half an element: in cache `add` ran at about 0.3 ns per element,
 * `sigmoid` (4 flops, one an `exp`) 0.6, `lif` (6 flops) 0.34 (docs/performance.md,
 * "CPU forms"), so a flop is worth between a fifth of an element and one. The formulas
 * only add work, never take it away: a gather from a large table still counts the
 * whole table (it may go parallel early, which costs a helper's wake-up), since an op
 * that ran parallel must not go back to one thread without a measurement saying so.
 * A raw `cpu:` body decides with opspec_cpu_parallel(trips) itself, by its own trips
 * (against its op's own threshold where it has one: opspec_cpu_enter_op). */
#define OPSPEC_WORK_BYTES 12
#define OPSPEC_WORK_FLOPS 2

static _Atomic int64_t opspec_last[4] = {-2, -2, -2, -2}; /* opspec_last_work */
/* Set by the first opspec_last_work: until a test or `opspec tune` reads the work, a call
 * stores none of it (four stores a call showed in bench_overhead's 0.1 µs call). */
static _Atomic bool opspec_work_wanted;

void opspec_last_work(int64_t out[4]) {
  atomic_store_explicit(&opspec_work_wanted, true, memory_order_relaxed);
  for (int i = 0; i < 4; ++i) out[i] = atomic_exchange_explicit(&opspec_last[i], -2, memory_order_relaxed);
}

/* The work of one batch element from the spec's formulas, or -1 where it gives none (or
 * a formula divides by zero or passes int64). */
static int64_t opspec_formula_work(const opspec_op_desc *op, const opspec_bound *bound, const void *args) {
  int64_t cost[2] = {-1, -1};
  if (!op->cost) {
    if (atomic_load_explicit(&opspec_work_wanted, memory_order_relaxed)) {
      atomic_store_explicit(&opspec_last[0], -1, memory_order_relaxed);
      atomic_store_explicit(&opspec_last[1], -1, memory_order_relaxed);
    }
    return -1;
  }
  op->cost(args, bound->dtypes, cost);
  if (atomic_load_explicit(&opspec_work_wanted, memory_order_relaxed)) {
    atomic_store_explicit(&opspec_last[0], cost[0], memory_order_relaxed);
    atomic_store_explicit(&opspec_last[1], cost[1], memory_order_relaxed);
  }
  int64_t by_bytes = cost[0] >= 0 ? cost[0] / OPSPEC_WORK_BYTES : -1;
  int64_t by_flops = cost[1] >= 0 ? cost[1] / OPSPEC_WORK_FLOPS : -1;
  return opspec_max(by_bytes, by_flops);
}

/* Records a call's work (`work`) beside what the count without the formulas gave. */
static void opspec_record_work(int64_t work, int64_t without_formulas) {
  if (!atomic_load_explicit(&opspec_work_wanted, memory_order_relaxed)) return;
  atomic_store_explicit(&opspec_last[2], work, memory_order_relaxed);
  atomic_store_explicit(&opspec_last[3], without_formulas, memory_order_relaxed);
}

/* A parallel loop's chunks, for work that reaches the threshold: about
 * OPSPEC_CHUNKS_PER_THREAD per thread, so that the caller can take over the share of a
 * helper that starts late, and no less than OPSPEC_MIN_CHUNK_WORK elements of work
 * each (some microseconds), so that claiming one costs little beside running it. */
#define OPSPEC_CHUNKS_PER_THREAD 8
#define OPSPEC_MIN_CHUNK_WORK    4096

static int64_t opspec_sat_mul(int64_t a, int64_t b) {
  int64_t p;
  return __builtin_mul_overflow(a, b, &p) ? INT64_MAX : p;
}

/* Per-worker copies of the args struct, each pointed at its own batch element; NULL when
 * there is one element (every worker reads the one struct) or no memory (run alone). */
typedef struct opspec_copies {
  char *data;
  int64_t *element; /* the element each copy points at, -1 for none yet */
} opspec_copies;

static bool opspec_copies_make(opspec_copies *c, const opspec_op_desc *op, const void *args, int threads) {
  c->data = malloc((size_t)threads * (op->args_size + sizeof(int64_t)));
  if (!c->data) return false;
  c->element = (int64_t *)(c->data + (size_t)threads * op->args_size);
  for (int w = 0; w < threads; ++w) {
    memcpy(c->data + (size_t)w * op->args_size, args, op->args_size);
    c->element[w] = -1;
  }
  return true;
}

/* Worker `w`'s args, pointed at batch element `b`. */
static void *opspec_copies_at(opspec_copies *c, const opspec_batch *batch, const opspec_op_desc *op, int w, int64_t b) {
  void *args = c->data + (size_t)w * op->args_size;
  if (c->element[w] != b) {
    opspec_batch_point(batch, op, args, b);
    c->element[w] = b;
  }
  return args;
}

/* ---- raw `cpu:` bodies: a whole call per batch element ---------------------------- */

typedef struct opspec_element_loop {
  const opspec_op_desc *op;
  const opspec_batch *batch;
  opspec_cpu_kernel *kernel;
  opspec_copies copies;
} opspec_element_loop;

static void opspec_element_chunk(void *ctx, int64_t b, int worker) {
  opspec_element_loop *l = ctx;
  l->kernel(opspec_copies_at(&l->copies, l->batch, l->op, worker, b));
}

/* Runs the kernel over every batch element: the elements in parallel, each on one
 * thread, when each is too small for its kernel to go parallel but all together are
 * not (and there is no scratch memory, which is per call); otherwise one after the
 * other, each kernel deciding for itself. */
static void opspec_run_batch(XLA_FFI_CallFrame *cf, const opspec_batch *batch, const opspec_op_desc *op, void *args,
                             opspec_cpu_kernel *kernel) {
  int64_t element = 0; /* output elements of one batch element: the work to split */
  for (int32_t i = 0; i < op->noutputs; ++i) element += opspec_array_at(args, op->outputs[i].offset)->size;
  int threads = opspec_cpu_threads();
  opspec_element_loop l = {op, batch, kernel, {NULL, NULL}};
  if (op->nscratch == 0 && batch->count > 1 && !opspec_cpu_parallel(element) &&
      opspec_cpu_parallel(opspec_sat_mul(element, batch->count)) && opspec_copies_make(&l.copies, op, args, threads)) {
    opspec_parallel_run(cf, batch->count, threads, opspec_element_chunk, &l);
    free(l.copies.data);
    return;
  }
  for (int64_t b = 0; b < batch->count; ++b) {
    opspec_batch_point(batch, op, args, b);
    kernel(args);
  }
}

/* ---- portable kernels: ranges of the launch of every batch element -------------- */

/* The launch of every batch element, as one index space: position f is launch index
 * f % outer of element f / outer. Chunks are `chunk` positions. */
typedef struct opspec_range_loop {
  const opspec_op_desc *op;
  const opspec_batch *batch; /* NULL: one element, `args` */
  opspec_cpu_range_kernel *kernel;
  void *args;
  opspec_copies copies;
  int64_t outer, chunk, total;
} opspec_range_loop;

static void opspec_range_chunk(void *ctx, int64_t c, int worker) {
  opspec_range_loop *l = ctx;
  int64_t f = c * l->chunk, end = l->total - f > l->chunk ? f + l->chunk : l->total;
  while (f < end) { /* a chunk may cross from one element into the next */
    int64_t b = f / l->outer, begin = f - b * l->outer;
    int64_t stop = end - b * l->outer < l->outer ? end - b * l->outer : l->outer;
    l->kernel(l->batch ? opspec_copies_at(&l->copies, l->batch, l->op, worker, b) : l->args, begin, stop);
    f += stop - begin;
  }
}

/* Runs the kernel over launch positions [0, total) of `l` (one element, or all of a
 * batch), in parallel chunks once `work` (at least the body's runs: the work of a call)
 * reaches `threshold` (the op's own, else the package's: opspec_op_parallel_threshold).
 * A position's work is the same everywhere (work / total), so a chunk of positions holds
 * about the work the chunk count asks for. */
static void opspec_run_ranges(XLA_FFI_CallFrame *cf, opspec_range_loop *l, int64_t work, int64_t threshold) {
  bool parallel = opspec_cpu_parallel_at(work, threshold);
  int threads = parallel ? opspec_cpu_threads() : 1;
  if (!parallel || (l->batch && !opspec_copies_make(&l->copies, l->op, l->args, threads))) {
    if (!l->batch) {
      l->kernel(l->args, 0, l->outer);
      return;
    }
    for (int64_t b = 0; b < l->batch->count; ++b) {
      opspec_batch_point(l->batch, l->op, l->args, b);
      l->kernel(l->args, 0, l->outer);
    }
    return;
  }
  int64_t per_position = work / l->total; /* at least 1: work counts every trip */
  int64_t chunk_work = work / ((int64_t)threads * OPSPEC_CHUNKS_PER_THREAD);
  if (chunk_work < OPSPEC_MIN_CHUNK_WORK) chunk_work = OPSPEC_MIN_CHUNK_WORK;
  l->chunk = chunk_work / per_position > 0 ? chunk_work / per_position : 1;
  opspec_parallel_run(cf, (l->total - 1) / l->chunk + 1, threads, opspec_range_chunk, l);
  if (l->batch) free(l->copies.data);
}

/* The elements of the largest input or output of one batch element. From the sizes
 * opspec_view decoded. */
static int64_t opspec_largest_buffer(const opspec_op_desc *op, void *args) {
  int64_t largest = 0;
  for (int32_t i = 0; i < op->ninputs; ++i) {
    int64_t size = opspec_array_at(args, op->inputs[i].offset)->size;
    if (size > largest) largest = size;
  }
  for (int32_t i = 0; i < op->noutputs; ++i) {
    int64_t size = opspec_array_at(args, op->outputs[i].offset)->size;
    if (size > largest) largest = size;
  }
  return largest;
}

static void opspec_run_launch(XLA_FFI_CallFrame *cf, const opspec_op_desc *op, const opspec_bound *bound,
                              const opspec_batch *batch, void *args, opspec_cpu_range_kernel *kernel) {
  int64_t outer = bound->launch[0], inner = 1;
  for (int32_t d = 1; d < op->launch_ndims; ++d) inner = opspec_sat_mul(inner, bound->launch[d]);
  bool empty = outer <= 0 || inner <= 0;
  if (empty) { /* outputs get zeros, as on GPU (a widened bfloat16 output's copy was calloc'ed; an
                 * output converted in the loop is XLA's buffer, zeroed at its 2 bytes an element) */
    for (int64_t b = 0; b < batch->count; ++b) {
      if (batch->rank) opspec_batch_point(batch, op, args, b);
      for (int32_t i = 0; i < op->noutputs; ++i) {
        opspec_array *a = opspec_array_at(args, op->outputs[i].offset);
        opspec_cpu_zero(a->data, (size_t)a->size * opspec_elem_size(&op->outputs[i], bound));
      }
    }
    return;
  }
  int64_t element_trips = opspec_sat_mul(outer, inner);
  /* The call's largest buffer (an input read in place by every element is read once per
   * element) per element, saturated as the call's work is: a division only for a batch
   * (an idiv was a tenth of a small call's own time). */
  int64_t largest = opspec_largest_buffer(op, args);
  if (batch->count > 1) largest = opspec_sat_mul(largest, batch->count) / batch->count;
  int64_t by_buffers = opspec_max(element_trips, largest);
  /* The formulas only where they could matter: a call below 1/1024 of the threshold by
   * its buffers stays serial unless its formulas count over 1024 units of work an
   * element; evaluating them costs about 15 ns, a tenth of a small call's 0.12 µs
   * (bench_overhead.py). Always while the work is read (opspec_last_work). */
  int64_t threshold = opspec_op_parallel_threshold(op); /* its own, else the package's */
  int64_t by_formulas =
      by_buffers >= threshold / 1024 || atomic_load_explicit(&opspec_work_wanted, memory_order_relaxed)
          ? opspec_formula_work(op, bound, args)
          : -1;
  int64_t element_work = opspec_max(by_buffers, by_formulas);
  opspec_record_work(opspec_sat_mul(element_work, batch->count), opspec_sat_mul(by_buffers, batch->count));
  opspec_range_loop l = {op, NULL, kernel, args, {NULL, NULL}, outer, 0, outer};
  /* Elements share one scratch buffer, so with scratch (or an index space past int64)
   * they run one after the other, each in parallel on its own. */
  if (batch->rank && op->nscratch == 0 && opspec_sat_mul(outer, batch->count) < INT64_MAX) {
    l.batch = batch;
    l.total = outer * batch->count;
    opspec_run_ranges(cf, &l, opspec_sat_mul(element_work, batch->count), threshold);
    return;
  }
  for (int64_t b = 0; b < batch->count; ++b) {
    if (batch->rank) opspec_batch_point(batch, op, args, b);
    opspec_run_ranges(cf, &l, element_work, threshold);
  }
}

/* ---- the handlers ------------------------------------------------------------------ */

/* One CPU call's state around its kernel. */
typedef struct opspec_cpu_call {
  opspec_batch batch;
  XLA_FFI_CallFrame *frame; /* as one batch element sees the call */
  opspec_bound bound;
  int32_t allocated; /* scratch buffers */
  opspec_widened wide;
  int rejected; /* set by a body's opspec_reject() (in_kernel checks) */
} opspec_cpu_call;

/* Whether `data` is an input's buffer: an output XLA aliased to that input. */
static bool opspec_is_input(const XLA_FFI_CallFrame *cf, const void *data) {
  for (int64_t i = 0; i < cf->args.size; ++i)
    if (((const XLA_FFI_Buffer *)cf->args.args[i])->data == data) return true;
  return false;
}

/* check_op's test for unwritten outputs (opspec_set_output_fill): each output that is
 * not an input's memory, every batch element of it, filled with `byte` before the
 * kernel runs; a widened bfloat16 output's float copy, which is what the kernel writes
 * (an output the kernel converts in its loop is filled as it is, 2 bytes an element). */
static void opspec_fill_outputs(const XLA_FFI_CallFrame *cf, const opspec_op_desc *op, const opspec_bound *bound,
                                const opspec_widened *wide, int byte) {
  for (int32_t o = 0; o < op->noutputs; ++o) {
    const XLA_FFI_Buffer *buf = cf->rets.rets[o];
    if (opspec_is_input(cf, buf->data)) continue;
    size_t count = 1;
    for (int64_t d = 0; d < buf->rank; ++d) count *= (size_t)buf->dims[d]; /* XLA allocated it: fits */
    void *data = buf->data;
    size_t elem = opspec_elem_size(&op->outputs[o], bound);
    for (int32_t a = 0; a < wide->n; ++a)
      if (wide->arrays[a].output && (void *)wide->arrays[a].data == buf->data) {
        data = wide->arrays[a].copy;
        elem = sizeof(float);
      }
    if (count) memset(data, opspec_output_fill_value(opspec_bound_dtype(&op->outputs[o], bound), byte), count * elem);
  }
}

/* Huge pages for the fresh memory a call writes, where Linux gives them on request
 * (runtime/src/pages.c): each output of at least OPSPEC_HUGE_MIN_BYTES, all batch
 * elements together, that is not an input's memory (a donated state is mapped already).
 * A small call pays two multiplies and a compare per output (no division: an idiv was a
 * tenth of a small call's time, above). */
#define OPSPEC_HUGE_MIN_BYTES ((int64_t)2 << 20)

static void opspec_advise_outputs(const XLA_FFI_CallFrame *cf, const opspec_op_desc *op, const opspec_bound *bound,
                                  void *args, int64_t count) {
  for (int32_t o = 0; o < op->noutputs; ++o) {
    const int64_t elem = (int64_t)opspec_elem_size(&op->outputs[o], bound);
    int64_t bytes;
    if (__builtin_mul_overflow(opspec_array_at(args, op->outputs[o].offset)->size, count, &bytes) ||
        __builtin_mul_overflow(bytes, elem, &bytes) || bytes < OPSPEC_HUGE_MIN_BYTES)
      continue; /* small, or past int64, which no buffer XLA allocated is */
    void *data = ((const XLA_FFI_Buffer *)cf->rets.rets[o])->data;
    if (!opspec_is_input(cf, data)) opspec_advise_huge_pages(data, (size_t)bytes);
  }
}

/* Everything before the kernel runs: decoding, content checks, bfloat16 copies, scratch.
 * opspec_cpu_end undoes what it did, whether it failed or not. */
static XLA_FFI_Error *opspec_cpu_begin(XLA_FFI_CallFrame *cf, const opspec_op_desc *op, void *args,
                                       opspec_cpu_call *c) {
  c->allocated = 0;
  c->wide.n = 0;
  c->rejected = 0;
  XLA_FFI_Error *err = opspec_batch_split(cf, op, &c->batch, &c->frame);
  if (err || (err = opspec_decode(c->frame, op, args, &c->bound)) || (err = opspec_check_overlap(cf, op))) return err;
  if (c->batch.count == 0) return NULL; /* an empty batch: outputs without elements, nothing to run */
  if (op->contents && opspec_checks_enabled())
    for (int64_t b = 0; b < c->batch.count && !err; ++b) {
      if (c->batch.rank) opspec_batch_point(&c->batch, op, args, b);
      err = op->contents(c->frame, args);
    }
  if (err) return err;
  if (op->kernel_checked) *opspec_rejected_flag(op, args) = &c->rejected;
  /* Only an op whose body cannot convert in its loop (op->widens_bfloat16). */
  if (op->widens_bfloat16 && opspec_has_bfloat16(op, &c->bound) &&
      (err = opspec_widen_bfloat16(cf, op, &c->bound, &c->batch, args, &c->wide)))
    return err;
  opspec_advise_outputs(cf, op, &c->bound, args, c->batch.count);
  const int fill = opspec_output_fill();
  if (fill >= 0) opspec_fill_outputs(cf, op, &c->bound, &c->wide, fill);
  if (c->batch.rank) opspec_batch_point(&c->batch, op, args, 0);
  for (; c->allocated < op->nscratch; ++c->allocated) {
    size_t bytes;
    opspec_array *a = opspec_array_at(args, op->scratch[c->allocated].offset);
    if ((err = opspec_scratch_bytes(c->frame, op, &c->bound, args, c->allocated, &bytes)) ||
        (err = opspec_host_alloc(c->frame, op->name, op->scratch[c->allocated].name, bytes, &a->data)))
      return err;
    if (bytes >= (size_t)OPSPEC_HUGE_MIN_BYTES) opspec_advise_huge_pages(a->data, bytes);
  }
  return NULL;
}

/* opspec_cpu_end's work, for a call with bfloat16 copies or scratch. */
static __attribute__((noinline)) void opspec_cpu_release(const opspec_op_desc *op, void *args, opspec_cpu_call *c,
                                                         bool ran) {
  if (c->wide.n) opspec_narrow_bfloat16(&c->wide, ran);
  for (int32_t i = 0; i < c->allocated; ++i) free(opspec_array_at(args, op->scratch[i].offset)->data);
}

/* After the kernel (`ran`) or a failure: bfloat16 outputs written back, copies and scratch
 * freed. Two tests where there is nothing to do, as for most calls: no call per call. */
static inline void opspec_cpu_end(const opspec_op_desc *op, void *args, opspec_cpu_call *c, bool ran) {
  if (c->wide.n || c->allocated) opspec_cpu_release(op, args, c, ran);
}

/* After a kernel that called opspec_reject(): the in_kernel checks' scans name the
 * first bad position, element by element of a batched call. The outputs are not used:
 * the call fails. With checks off the rejection still fails the call (the body's own
 * check costs nothing to keep), without the scan. */
static XLA_FFI_Error *opspec_rejection(const opspec_op_desc *op, void *args, opspec_cpu_call *c) {
  XLA_FFI_Error *err = NULL;
  if (!opspec_checks_enabled())
    return opspec_error(c->frame, XLA_FFI_Error_Code_INVALID_ARGUMENT, op->name,
                        "the kernel rejected a value of an input checked in_kernel (checks are off: "
                        "%s.set_checks(True) names the position)",
                        opspec_package_name); /* the package's own knob: myops.set_checks */
  for (int64_t b = 0; b < c->batch.count && !err; ++b) {
    if (c->batch.rank) opspec_batch_point(&c->batch, op, args, b);
    err = op->kernel_checked(c->frame, args);
  }
  if (err) return err;
  return opspec_error(c->frame, XLA_FFI_Error_Code_INVALID_ARGUMENT, op->name,
                      "the kernel called opspec_reject(), but every input checked in_kernel meets its check: the "
                      "body rejects what the spec's check allows");
}

/* Whether a body rejected a value (the kernel has returned: every thread's store is
 * visible after the loop's join). */
static bool opspec_was_rejected(const opspec_op_desc *op, const opspec_cpu_call *c) {
  return op->kernel_checked && __atomic_load_n(&c->rejected, __ATOMIC_RELAXED);
}

XLA_FFI_Error *opspec_run_cpu(XLA_FFI_CallFrame *cf, const opspec_op_desc *op, void *args,
                              opspec_cpu_kernel *const *variants) {
  if (opspec_metadata_query(cf, 0)) return NULL;
  opspec_cpu_call c;
  XLA_FFI_Error *err = opspec_cpu_begin(cf, op, args, &c);
  int64_t outer = opspec_cpu_enter_op(opspec_op_own_threshold(op)); /* the body's opspec_cpu_parallel */
  if (!err && c.batch.rank)
    opspec_run_batch(cf, &c.batch, op, args, variants[c.bound.variant]);
  else if (!err && c.batch.count)
    variants[c.bound.variant](args);
  opspec_cpu_enter_op(outer);
  if (!err && opspec_was_rejected(op, &c)) err = opspec_rejection(op, args, &c);
  opspec_cpu_end(op, args, &c, !err);
  return err;
}

XLA_FFI_Error *opspec_run_cpu_range(XLA_FFI_CallFrame *cf, const opspec_op_desc *op, void *args,
                                    opspec_cpu_range_kernel *const *variants) {
  if (opspec_metadata_query(cf, 0)) return NULL;
  opspec_cpu_call c;
  XLA_FFI_Error *err = opspec_cpu_begin(cf, op, args, &c);
  if (!err && c.batch.count) opspec_run_launch(cf, op, &c.bound, &c.batch, args, variants[c.bound.variant]);
  if (!err && opspec_was_rejected(op, &c)) err = opspec_rejection(op, args, &c);
  opspec_cpu_end(op, args, &c, !err);
  return err;
}
