/* Device helpers and kernel launches for generated CUDA code (CUDA C++).
 *
 * Kernels in a spec's `cuda:` section are raw bodies; these helpers give them what
 * numba's cuda.grid() gives Numba kernels. An op's kernels are started by
 * opspec_cuda_launch_run (runtime/src/launch.c), which configures and validates every
 * kernel with opspec/launch.h, then calls each kernel's opspec_cuda_start (below).
 *
 * The same file serves both CUDA backends: under nvcc <cuda_runtime.h> is CUDA's; in the
 * simulated build it is runtime/sim/cuda_runtime.h, and everything here runs on the CPU
 * unchanged (docs/cuda-simulator.md).
 */
#ifndef OPSPEC_CUDA_H
#define OPSPEC_CUDA_H

#include <cuda_runtime.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "opspec/batch.h"
#include "opspec/ffi.h"
#include "opspec/launch.h"

/* Global thread index along x / y / z, as int64 (cuda.grid(1) in Numba). */
__device__ static inline int64_t opspec_grid_x(void) { return (int64_t)blockIdx.x * blockDim.x + threadIdx.x; }
__device__ static inline int64_t opspec_grid_y(void) { return (int64_t)blockIdx.y * blockDim.y + threadIdx.y; }
__device__ static inline int64_t opspec_grid_z(void) { return (int64_t)blockIdx.z * blockDim.z + threadIdx.z; }

/* opspec_reject() in a kernel (an op with an in_kernel check): sets the call's flag in
 * device memory, which opspec_run_cuda reads after the kernels. Atomic: threads may
 * report at once. */
__device__ static inline void opspec_cuda_reject(int *flag) { atomicExch(flag, 1); }

/* Storage for an `extern __shared__ TYPE NAME[];` of a `cuda:` body, which a generated
 * file declares for every such name. A GPU needs none: every extern __shared__ array is
 * the block's dynamic shared memory. The simulator's <cuda_runtime.h> defines it. */
#ifndef OPSPEC_DYNAMIC_SHARED
#define OPSPEC_DYNAMIC_SHARED(name, ...)
#endif

/* A natively batched call (opspec/batch.h) as a portable kernel sees it, by value in
 * its parameters: the op's N arrays, inputs then outputs, each with its byte step per
 * batch dim (0 where an input lacks the dim). An unbatched call is one element. */
template <int N>
struct opspec_batch_grid {
  int64_t count; /* elements; the kernel's z loop runs over them */
  int32_t rank;
  int64_t extent[OPSPEC_MAX_BATCH_RANK];
  int64_t step[N][OPSPEC_MAX_BATCH_RANK];
};

/* The kernel's view of `batch` (NULL: one element) for an op with `ninputs` inputs. */
template <int N>
static inline opspec_batch_grid<N> opspec_batch_grid_of(const opspec_batch *batch, int ninputs) {
  opspec_batch_grid<N> g;
  memset(&g, 0, sizeof g);
  g.count = 1;
  if (!batch || !batch->rank) return g;
  g.count = batch->count;
  g.rank = batch->rank;
  for (int k = 0; k < batch->rank; ++k) {
    g.extent[k] = batch->extent[k];
    for (int a = 0; a < N; ++a) g.step[a][k] = a < ninputs ? batch->in_step[a][k] : batch->out_step[a - ninputs][k];
  }
  return g;
}

/* Array `a`'s data for batch element `b`, from element 0's `data`: the element's index
 * along each batch dim, innermost first, times the array's step there. */
template <int N>
__device__ static inline void *opspec_batch_at(void *data, const opspec_batch_grid<N> &g, int a, int64_t b) {
  int64_t offset = 0;
  for (int k = g.rank - 1; k >= 0; --k) {
    offset += b % g.extent[k] * g.step[a][k];
    b /= g.extent[k];
  }
  return (char *)data + offset;
}

/* Launches `kernel` with `cfg` on `stream` (nothing for an empty launch): 0 or a
 * cudaError_t, naming the kernel in *failed_kernel. A raw kernel's parameter is its op's
 * args struct; the portable kernel's are that and its opspec_batch_grid.
 * cudaLaunchKernel rather than <<<>>>, so that the simulator, which is plain C++, runs
 * this very function; its typed form keeps the kernel's parameter types.
 * cudaGetLastError clears the error it records. */
template <typename... Params>
static inline int opspec_launch_kernel(void (*kernel)(Params...), const opspec_launch &cfg, cudaStream_t stream,
                                       const char **failed_kernel, const Params &...params) {
  if (opspec_launch_empty(&cfg)) return 0;
  void *values[] = {const_cast<Params *>(&params)...};
  cudaError_t err = cudaLaunchKernel(kernel, dim3((unsigned)cfg.grid[0], (unsigned)cfg.grid[1], (unsigned)cfg.grid[2]),
                                     dim3((unsigned)cfg.block[0], (unsigned)cfg.block[1], (unsigned)cfg.block[2]),
                                     values, (size_t)cfg.shared_mem, stream);
  cudaError_t last = cudaGetLastError();
  if (err == cudaSuccess) err = last;
  if (err != cudaSuccess) *failed_kernel = cfg.kernel;
  return (int)err;
}

/* Starts `kernel` with its parameters read from the op's args struct at `args`: a raw
 * kernel takes the struct; the portable kernel also its opspec_batch_grid, made from the
 * natively batched call `batch` (NULL: one element) of an op with `ninputs` inputs. */
template <typename Args>
static inline int opspec_cuda_start_kernel(void (*kernel)(Args), const opspec_launch *cfg, cudaStream_t stream,
                                           const char **failed_kernel, const void *args, const opspec_batch *,
                                           int32_t) {
  return opspec_launch_kernel(kernel, *cfg, stream, failed_kernel, *(const Args *)args);
}
template <typename Args, int N>
static inline int opspec_cuda_start_kernel(void (*kernel)(Args, opspec_batch_grid<N>), const opspec_launch *cfg,
                                           cudaStream_t stream, const char **failed_kernel, const void *args,
                                           const opspec_batch *batch, int32_t ninputs) {
  return opspec_launch_kernel(kernel, *cfg, stream, failed_kernel, *(const Args *)args,
                              opspec_batch_grid_of<N>(batch, ninputs));
}

/* One kernel's opspec_cuda_start_fn (opspec/ffi.h), an entry of its op's table
 * (opspec_cuda_launch.kernels): the one function per kernel that knows the kernel's
 * parameter types, which cudaLaunchKernel's typed form needs (the simulator reads
 * them). Compiled with the kernel, for its backend. */
template <auto kernel>
static int opspec_cuda_start(const opspec_launch *cfg, void *stream, const char **failed_kernel, const void *args,
                             const opspec_batch *batch, int32_t ninputs) {
  return opspec_cuda_start_kernel(kernel, cfg, (cudaStream_t)stream, failed_kernel, args, batch, ninputs);
}

static_assert(OPSPEC_CUDA_ERROR_INVALID_VALUE == (int)cudaErrorInvalidValue, "opspec/launch.h's copy of the code");

#endif /* OPSPEC_CUDA_H */
