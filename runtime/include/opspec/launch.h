/* Launch configuration for generated CUDA launchers, in C (runtime/src/launch.c).
 *
 * A launcher describes every kernel's grid and block as an opspec_launch, validates them
 * all, then launches: a bad configuration is reported with the kernel's name before
 * anything runs. This is plain arithmetic, compiled once into the extension, so the GPU
 * build and the CUDA simulator (docs/cuda-simulator.md) run the very same code.
 */
#ifndef OPSPEC_LAUNCH_H
#define OPSPEC_LAUNCH_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* cudaErrorInvalidConfiguration, for C code that has no CUDA header; cuda.cu and the
 * simulator check that it matches. */
#define OPSPEC_CUDA_ERROR_INVALID_CONFIGURATION 9
/* cudaErrorInvalidValue: a type variant that the op's kernels do not have. */
#define OPSPEC_CUDA_ERROR_INVALID_VALUE 1

typedef struct opspec_launch {
  const char *kernel;
  int64_t grid[3], block[3]; /* x, y, z */
  int64_t shared_mem;
} opspec_launch;

/* Grid and block for `ndims` launch extents (given slowest first, like array dims; the
 * last runs along x). `threads` NULL: 256 for 1-D, 16x16 for 2-D, 8x8x4 for 3-D. */
void opspec_launch_auto(opspec_launch *l, const char *kernel, int ndims, const int64_t *extents, const int64_t *threads,
                        int64_t shared_mem);
/* Launch indices along x per thread of the portable kernel, a block apart: a thread with
 * one index keeps one load in flight and an element-wise kernel reaches about two thirds
 * of an H100's memory bandwidth (docs/notes.md, "On a real GPU"); with four, the loads
 * of all four are issued before the first is used. */
#define OPSPEC_PORTABLE_X_PER_THREAD 4
/* nvcc unrolls that loop; the CUDA simulator's host compiler has no such pragma. */
#ifdef __CUDACC__
#define OPSPEC_UNROLL _Pragma("unroll")
#else
#define OPSPEC_UNROLL
#endif

/* The portable kernel's: as opspec_launch_auto, but a block covers
 * OPSPEC_PORTABLE_X_PER_THREAD times its threads along x, and at most 65535 blocks along
 * y and z (CUDA's limit there), since its kernel loops over the indices past them. */
void opspec_launch_portable(opspec_launch *l, const char *kernel, int ndims, const int64_t *extents,
                            const int64_t *threads);
/* Puts the `count` elements of a natively batched call along z of a portable kernel's
 * grid of at most 2 launch dims: at most 65535 blocks, since the kernel loops over the
 * elements past them; none for an empty batch. */
void opspec_launch_batch(opspec_launch *l, int64_t count);
/* Explicit grid and block, given x first (as in CUDA). */
void opspec_launch_explicit(opspec_launch *l, const char *kernel, int ndims, const int64_t *grid, const int64_t *block,
                            int64_t shared_mem);
/* Validates every configuration against CUDA's limits (1 to 1024 threads per block, at
 * most 64 along z; grid y and z at most 65535, x 2^31 - 1): 0, or
 * OPSPEC_CUDA_ERROR_INVALID_CONFIGURATION naming the first bad kernel in *failed_kernel. */
int opspec_launch_prepare(const opspec_launch *l, size_t n, const char **failed_kernel);
/* True if any kernel has an empty grid (and will be skipped). */
int opspec_launch_any_empty(const opspec_launch *l, size_t n);

static inline int opspec_launch_empty(const opspec_launch *l) {
  return l->grid[0] == 0 || l->grid[1] == 0 || l->grid[2] == 0; /* no product: it could overflow */
}

#ifdef __cplusplus
}
#endif

#endif /* OPSPEC_LAUNCH_H */
