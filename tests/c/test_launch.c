/* The launcher of every op's CUDA kernels (opspec_cuda_launch_run, runtime/src/launch.c)
 * with a table of recording kernels in place of real ones: the portable kernel's grid from
 * the handler's launch extents, a batch along z, a configure function's grids, a bad
 * configuration named before anything starts, zero-filled outputs of an empty launch, the
 * variant's kernels in order, the first error stopping the rest, a variant the table
 * lacks. Needs no GPU: the starts only record what they were handed. */
#include <stdlib.h>

#include "check.h"
#include "opspec/batch.h"
#include "opspec/ffi.h"
#include "opspec/launch.h"

typedef struct test_args {
  opspec_array out;
  int64_t n;
} test_args;

#define MAX_STARTS 8

static struct {
  int kernel[MAX_STARTS]; /* which table entry, in start order */
  opspec_launch cfg[MAX_STARTS];
  const opspec_batch *batch[MAX_STARTS];
  int32_t ninputs[MAX_STARTS];
  int count, fail_at; /* fail_at: the start that returns an error, -1 none */
  int zeroed;
  size_t zeroed_bytes;
  void *zeroed_ptr;
} seen;

static int start(int kernel, const opspec_launch *cfg, const char **failed_kernel, const opspec_batch *batch,
                 int32_t ninputs) {
  int i = seen.count++;
  if (i >= MAX_STARTS) return 1;
  seen.kernel[i] = kernel;
  seen.cfg[i] = *cfg;
  seen.batch[i] = batch;
  seen.ninputs[i] = ninputs;
  if (i != seen.fail_at) return 0;
  *failed_kernel = cfg->kernel;
  return 700; /* cudaErrorIllegalAddress, say */
}

/* Four kernels: two variants of two kernels each, [variant * 2 + k]. */
#define START(k)                                                                                                \
  static int start##k(const struct opspec_launch *cfg, void *stream, const char **failed_kernel, const void *a, \
                      const opspec_batch *batch, int32_t ninputs) {                                             \
    (void)stream;                                                                                               \
    (void)a;                                                                                                    \
    return start(k, cfg, failed_kernel, batch, ninputs);                                                        \
  }
START(0)
START(1)
START(2)
START(3)
static opspec_cuda_start_fn *const kernels[] = {start0, start1, start2, start3};

static int zero(void *stream, void *ptr, size_t bytes) {
  (void)stream;
  seen.zeroed++;
  seen.zeroed_ptr = ptr;
  seen.zeroed_bytes = bytes;
  return 0;
}

/* Two raw kernels over n threads, the second with 0 threads per block when n is 13. */
static void configure(const void *argp, opspec_launch *config) {
  const test_args *args = argp;
  const int64_t extents[3] = {args->n}, threads[3] = {args->n == 13 ? 0 : 64};
  opspec_launch_auto(&config[0], "first", 1, extents, NULL, 0);
  opspec_launch_auto(&config[1], "second", 1, extents, threads, 0);
}

static const opspec_array_desc outputs[] = {{"out", OPSPEC_DT_float32, 1, NULL, offsetof(test_args, out)}};

static int run(const opspec_cuda_launch *launch, const opspec_op_desc *op, int32_t variant, int64_t launch_extent,
               const opspec_batch *batch, const char **failed) {
  memset(&seen, 0, sizeof seen);
  seen.fail_at = -1;
  static float data[4];
  test_args args = {.out = {.data = data, .size = 4}, .n = launch_extent};
  opspec_bound bound = {.variant = variant, .launch = {launch_extent}};
  const size_t output_bytes[] = {sizeof data};
  *failed = NULL;
  return opspec_cuda_launch_run(launch, op, &bound, &args, batch, NULL, zero, output_bytes, failed);
}

static void portable_kernel(void) {
  const opspec_cuda_launch launch = {NULL, 4, 1, kernels};
  const opspec_op_desc op = {
      .name = "p", .ninputs = 3, .noutputs = 1, .outputs = outputs, .launch_ndims = 1, .cuda_batch_grid = true};
  const char *failed;
  /* 5000 indices, 256 threads a block, each thread OPSPEC_PORTABLE_X_PER_THREAD (4) of
   * them: 5 blocks; one element along z. */
  OG_CHECK(run(&launch, &op, 2, 5000, NULL, &failed) == 0);
  OG_CHECK(seen.count == 1 && seen.kernel[0] == 2 && seen.ninputs[0] == 3 && seen.batch[0] == NULL);
  OG_CHECK(seen.cfg[0].grid[0] == 5 && seen.cfg[0].block[0] == 256 && seen.cfg[0].grid[2] == 1);
  OG_CHECK_STR(seen.cfg[0].kernel, "kernel");
  OG_CHECK(seen.zeroed == 0);
  /* A natively batched call of 7 elements: along z, handed to the kernel's start. */
  opspec_batch *batch = calloc(1, sizeof *batch);
  batch->rank = 1;
  batch->count = batch->extent[0] = 7;
  OG_CHECK(run(&launch, &op, 0, 1000, batch, &failed) == 0);
  OG_CHECK(seen.count == 1 && seen.cfg[0].grid[2] == 7 && seen.batch[0] == batch);
  free(batch);
  /* An empty launch zero-fills the output and starts the kernel, which skips itself. */
  OG_CHECK(run(&launch, &op, 1, 0, NULL, &failed) == 0);
  OG_CHECK(seen.zeroed == 1 && seen.zeroed_bytes == 4 * sizeof(float) && seen.count == 1);
}

static void raw_kernels(void) {
  const opspec_cuda_launch launch = {configure, 2, 2, kernels};
  const opspec_op_desc op = {.name = "r", .ninputs = 1, .noutputs = 1, .outputs = outputs};
  const char *failed;
  /* Variant 1: entries 2 and 3, in order, each with its own configuration. */
  OG_CHECK(run(&launch, &op, 1, 100, NULL, &failed) == 0);
  OG_CHECK(seen.count == 2 && seen.kernel[0] == 2 && seen.kernel[1] == 3);
  OG_CHECK(seen.cfg[0].block[0] == 256 && seen.cfg[1].block[0] == 64 && seen.cfg[1].grid[0] == 2);
  OG_CHECK(seen.cfg[0].grid[2] == 1 && seen.cfg[1].grid[2] == 1); /* no batch on the grid */
  /* A bad configuration (0 threads a block) is named before any kernel starts. */
  OG_CHECK(run(&launch, &op, 0, 13, NULL, &failed) == OPSPEC_CUDA_ERROR_INVALID_CONFIGURATION);
  OG_CHECK(seen.count == 0);
  OG_CHECK_STR(failed, "second");
  /* The first failing kernel stops the rest and is named. */
  memset(&seen, 0, sizeof seen);
  static float data[4];
  test_args args = {.out = {.data = data, .size = 4}, .n = 100};
  opspec_bound bound = {.variant = 0};
  const size_t output_bytes[] = {sizeof data};
  seen.fail_at = 0;
  failed = NULL;
  OG_CHECK(opspec_cuda_launch_run(&launch, &op, &bound, &args, NULL, NULL, zero, output_bytes, &failed) == 700);
  OG_CHECK(seen.count == 1);
  OG_CHECK_STR(failed, "first");
  /* A variant the table lacks. */
  OG_CHECK(run(&launch, &op, 2, 100, NULL, &failed) == OPSPEC_CUDA_ERROR_INVALID_VALUE);
  OG_CHECK(seen.count == 0);
  OG_CHECK_STR(failed, "(dispatch)");
}

int main(void) {
  portable_kernel();
  raw_kernels();
  return og_check_report("test_launch");
}
