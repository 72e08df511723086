/* Device helpers and kernel launches for generated CUDA code (CUDA C++).
 *
 * Kernels in a spec's `cuda:` section are raw bodies; these helpers give them what
 * numba's cuda.grid() gives Numba kernels. Launchers configure and validate every kernel
 * with opspec/launch.h, then launch with opspec_launch_kernel.
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

#include "opspec/ffi.h"
#include "opspec/launch.h"

/* Global thread index along x / y / z, as int64 (cuda.grid(1) in Numba). */
__device__ static inline int64_t opspec_grid_x(void) { return (int64_t)blockIdx.x * blockDim.x + threadIdx.x; }
__device__ static inline int64_t opspec_grid_y(void) { return (int64_t)blockIdx.y * blockDim.y + threadIdx.y; }
__device__ static inline int64_t opspec_grid_z(void) { return (int64_t)blockIdx.z * blockDim.z + threadIdx.z; }

/* Storage for an `extern __shared__ TYPE NAME[];` of a `cuda:` body, which a generated
 * file declares for every such name. A GPU needs none: every extern __shared__ array is
 * the block's dynamic shared memory. The simulator's <cuda_runtime.h> defines it. */
#ifndef OPSPEC_DYNAMIC_SHARED
#define OPSPEC_DYNAMIC_SHARED(name, ...)
#endif

/* Zero-fills an output of an empty launch: 0 or a cudaError_t. */
static inline int opspec_cuda_zero(void *ptr, size_t bytes, cudaStream_t stream) {
  if (bytes == 0) return 0;
  return (int)cudaMemsetAsync(ptr, 0, bytes, stream);
}

/* Launches `kernel` with `cfg` on `stream` (nothing for an empty launch): 0 or a
 * cudaError_t, naming the kernel in *failed_kernel. cudaLaunchKernel rather than <<<>>>,
 * so that the simulator, which is plain C++, runs this very function; its typed form
 * keeps the kernel's argument type. cudaGetLastError clears the error it records. */
template <typename Args>
static inline int opspec_launch_kernel(void (*kernel)(Args), const opspec_launch &cfg, cudaStream_t stream,
                                       const Args &args, const char **failed_kernel) {
  if (opspec_launch_empty(&cfg)) return 0;
  void *params[] = {const_cast<Args *>(&args)};
  cudaError_t err = cudaLaunchKernel(kernel, dim3((unsigned)cfg.grid[0], (unsigned)cfg.grid[1], (unsigned)cfg.grid[2]),
                                     dim3((unsigned)cfg.block[0], (unsigned)cfg.block[1], (unsigned)cfg.block[2]),
                                     params, (size_t)cfg.shared_mem, stream);
  cudaError_t last = cudaGetLastError();
  if (err == cudaSuccess) err = last;
  if (err != cudaSuccess) *failed_kernel = cfg.kernel;
  return (int)err;
}

#endif /* OPSPEC_CUDA_H */
