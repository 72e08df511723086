/* Launch configuration for CUDA kernels (opspec/launch.h), and the launcher that
 * configures, checks and starts an op's kernels (opspec_cuda_launch_run, opspec/ffi.h). */
#include "opspec/launch.h"

#include <stdbool.h>

#include "opspec/batch.h"
#include "opspec/ffi.h"

void opspec_launch_auto(opspec_launch *l, const char *kernel, int ndims, const int64_t *extents, const int64_t *threads,
                        int64_t shared_mem) {
  static const int64_t defaults[3][3] = {{256, 1, 1}, {16, 16, 1}, {8, 8, 4}};
  l->kernel = kernel;
  l->shared_mem = shared_mem;
  for (int axis = 0; axis < 3; ++axis) {
    l->grid[axis] = 1;
    l->block[axis] = 1;
  }
  for (int d = 0; d < ndims; ++d) {
    int axis = ndims - 1 - d; /* the last extent runs along x */
    int64_t block = threads ? threads[d] : defaults[ndims - 1][axis];
    l->block[axis] = block;
    /* opspec_cdiv cannot overflow where extents[d] + block - 1 could; an empty or
     * negative extent, or a bad block (reported by opspec_launch_prepare), gives no grid. */
    l->grid[axis] = block > 0 && extents[d] > 0 ? opspec_cdiv(extents[d], block) : 0;
  }
}

void opspec_launch_portable(opspec_launch *l, const char *kernel, int ndims, const int64_t *extents,
                            const int64_t *threads) {
  opspec_launch_auto(l, kernel, ndims, extents, threads, 0);
  const int64_t x_extent = ndims > 0 ? extents[ndims - 1] : 0, x_block = l->block[0];
  if (ndims > 0)
    l->grid[0] = x_block > 0 && x_extent > 0 ? opspec_cdiv(x_extent, x_block * OPSPEC_PORTABLE_X_PER_THREAD) : 0;
  for (int axis = 1; axis < 3; ++axis)
    if (l->grid[axis] > 65535) l->grid[axis] = 65535;
}

void opspec_launch_batch(opspec_launch *l, int64_t count) {
  l->grid[2] = count < 0 ? 0 : count > 65535 ? 65535 : count;
}

void opspec_launch_explicit(opspec_launch *l, const char *kernel, int ndims, const int64_t *grid, const int64_t *block,
                            int64_t shared_mem) {
  l->kernel = kernel;
  l->shared_mem = shared_mem;
  for (int axis = 0; axis < 3; ++axis) {
    l->grid[axis] = axis < ndims ? grid[axis] : 1;
    l->block[axis] = axis < ndims ? block[axis] : 1;
  }
}

int opspec_launch_prepare(const opspec_launch *l, size_t n, const char **failed_kernel) {
  static const int64_t max_grid[3] = {2147483647, 65535, 65535}, max_block[3] = {1024, 1024, 64};
  for (size_t i = 0; i < n; ++i) {
    /* Each block dim within its limit first, so that their product cannot overflow. */
    bool bad = l[i].shared_mem < 0;
    for (int axis = 0; axis < 3; ++axis) bad |= l[i].block[axis] < 1 || l[i].block[axis] > max_block[axis];
    bad = bad || l[i].block[0] * l[i].block[1] * l[i].block[2] > 1024;
    for (int axis = 0; axis < 3; ++axis) bad |= l[i].grid[axis] < 0 || l[i].grid[axis] > max_grid[axis];
    if (bad) {
      *failed_kernel = l[i].kernel;
      return OPSPEC_CUDA_ERROR_INVALID_CONFIGURATION;
    }
  }
  return 0;
}

int opspec_launch_any_empty(const opspec_launch *l, size_t n) {
  for (size_t i = 0; i < n; ++i)
    if (opspec_launch_empty(&l[i])) return 1;
  return 0;
}

int opspec_cuda_launch_run(const opspec_cuda_launch *launch, const opspec_op_desc *op, const opspec_bound *bound,
                           void *args, const opspec_batch *batch, void *stream,
                           int (*zero)(void *stream, void *ptr, size_t bytes), const size_t *output_bytes,
                           const char **failed_kernel) {
  opspec_launch config[OPSPEC_MAX_CUDA_KERNELS];
  size_t n = (size_t)launch->nkernels;
  if (launch->configure)
    launch->configure(args, config);
  else
    opspec_launch_portable(&config[0], "kernel", op->launch_ndims, bound->launch, NULL);
  /* A natively batched call's elements run along z: on the grid for 1 or 2 launch dims,
   * in each thread's loop for 3. */
  if (op->cuda_batch_grid && op->launch_ndims < 3)
    opspec_launch_batch(&config[0], batch && batch->rank ? batch->count : 1);
  int code = opspec_launch_prepare(config, n, failed_kernel);
  if (code) return code;
  /* An empty launch runs nothing: its outputs get zeros, as on CPU. */
  if (opspec_launch_any_empty(config, n))
    for (int32_t i = 0; i < op->noutputs; ++i) {
      void *data = opspec_array_at(args, op->outputs[i].offset)->data;
      if (output_bytes[i] && (code = zero(stream, data, output_bytes[i]))) return code;
    }
  if (bound->variant < 0 || bound->variant >= launch->nvariants) {
    *failed_kernel = "(dispatch)";
    return OPSPEC_CUDA_ERROR_INVALID_VALUE;
  }
  opspec_cuda_start_fn *const *start = launch->kernels + (size_t)bound->variant * n;
  for (size_t k = 0; k < n; ++k)
    if ((code = start[k](&config[k], stream, failed_kernel, args, batch, op->ninputs))) return code;
  return 0;
}
