/* Launch configuration and device helpers for generated CUDA code (CUDA C++).
 *
 * Kernels in a spec's `cuda:` section are raw bodies; these helpers give them what
 * numba's cuda.grid() gives Numba kernels. Launchers describe every kernel's grid and
 * block as an opspec_launch first, validate them all, then launch: a bad configuration
 * is reported with the kernel's name before anything runs.
 */
#ifndef OPSPEC_CUDA_H
#define OPSPEC_CUDA_H

#include <cuda_runtime.h>
#include <stddef.h>
#include <stdint.h>

#include "opspec/ffi.h"

/* Global thread index along x / y / z, as int64 (cuda.grid(1) in Numba). */
__device__ static inline int64_t opspec_grid_x(void) { return (int64_t)blockIdx.x * blockDim.x + threadIdx.x; }
__device__ static inline int64_t opspec_grid_y(void) { return (int64_t)blockIdx.y * blockDim.y + threadIdx.y; }
__device__ static inline int64_t opspec_grid_z(void) { return (int64_t)blockIdx.z * blockDim.z + threadIdx.z; }

typedef struct opspec_launch {
  const char *kernel;
  int64_t grid[3], block[3]; /* x, y, z */
  int64_t shared_mem;
} opspec_launch;

/* Grid and block for `ndims` launch extents (given slowest first, like array dims; the
 * last runs along x). `threads` NULL: 256 for 1-D, 16x16 for 2-D, 8x8x4 for 3-D. */
void opspec_launch_auto(opspec_launch *l, const char *kernel, int ndims, const int64_t *extents, const int64_t *threads,
                        int64_t shared_mem);
/* Explicit grid and block, given x first (as in CUDA). */
void opspec_launch_explicit(opspec_launch *l, const char *kernel, int ndims, const int64_t *grid, const int64_t *block,
                            int64_t shared_mem);
/* Validates every configuration against the device's limits; returns a cudaError_t. */
int opspec_launch_prepare(const opspec_launch *l, size_t n, const char **failed_kernel);
/* True if any kernel has an empty grid (and will be skipped). */
int opspec_launch_any_empty(const opspec_launch *l, size_t n);
int opspec_cuda_zero(void *ptr, size_t bytes, cudaStream_t stream);

static inline int opspec_launch_empty(const opspec_launch *l) {
  return l->grid[0] == 0 || l->grid[1] == 0 || l->grid[2] == 0; /* no product: it could overflow */
}

/* Checks the launch just made: 0 or a cudaError_t, naming the kernel on failure. */
int opspec_launch_check(const opspec_launch *l, const char **failed_kernel);

/* Launches `kernel` with `cfg` on `stream` (nothing for an empty launch) and checks the
 * launch: 0 or a CUDA error code, naming the kernel in *failed_kernel. A function
 * template rather than a macro, so a kernel's template arguments pass through whole. */
template <typename Args>
static inline int opspec_launch_kernel(void (*kernel)(Args), const opspec_launch &cfg, cudaStream_t stream,
                                       const Args &args, const char **failed_kernel) {
  if (opspec_launch_empty(&cfg)) return 0;
  kernel<<<dim3((unsigned)cfg.grid[0], (unsigned)cfg.grid[1], (unsigned)cfg.grid[2]),
           dim3((unsigned)cfg.block[0], (unsigned)cfg.block[1], (unsigned)cfg.block[2]), (size_t)cfg.shared_mem,
           stream>>>(args);
  return opspec_launch_check(&cfg, failed_kernel);
}

#endif /* OPSPEC_CUDA_H */
