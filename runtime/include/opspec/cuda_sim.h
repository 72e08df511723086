/* The CUDA simulator's C interface (docs/cuda-simulator.md).
 *
 * The simulator runs the generated CUDA kernels and launchers on the CPU: each op's
 * <op>_cuda.cu is compiled a second time as host C++ against runtime/sim/cuda_runtime.h,
 * which stands in for CUDA's own header. That header is what kernels see. This one is
 * what C sees: the simulated devices and their streams, error texts, and a log of the
 * launches, for the simulated backend of the FFI handlers (runtime/src/ffi_cuda.c), the
 * extension module and the tests. Error codes are cudaError_t values.
 */
#ifndef OPSPEC_CUDA_SIM_H
#define OPSPEC_CUDA_SIM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The most devices the simulator models. */
#define OPSPEC_SIM_MAX_DEVICES 64
/* Dynamic shared memory per block: what a GPU gives a kernel that does not opt into
 * more with cudaFuncSetAttribute. A launch asking for more fails, as on a GPU. */
#define OPSPEC_SIM_DYNAMIC_SHARED_BYTES 49152

/* How many GPUs the simulator models: 1 (the default) to OPSPEC_SIM_MAX_DEVICES. The
 * Python package sets it to the number of JAX CPU devices, so that a call XLA runs on
 * CPU device d runs on simulated GPU d. Returns 0 or cudaErrorInvalidValue. */
int opspec_sim_set_device_count(int count);
/* cudaGetDeviceCount, cudaGetDevice and cudaSetDevice of the simulator. The current
 * device is per host thread, as in CUDA. */
int opspec_sim_device_count(int *count);
int opspec_sim_get_device(int *device);
int opspec_sim_set_device(int device);
/* The stream of simulated device `device`, the one XLA would hand a handler running
 * there; NULL if there is no such device. Launching into it while another device is
 * current fails with cudaErrorInvalidResourceHandle, as on a GPU. */
void *opspec_sim_device_stream(int device);
/* CUDA's text for `code`. For the calling thread's last failed launch, the simulator's
 * account of what went wrong (e.g. which thread left a barrier unreachable). */
const char *opspec_sim_error_string(int code);

/* The order the simulator runs blocks, and starts the threads of a block, in: forward
 * (0, the default: x fastest, from 0) or reverse (1). Any order is one a GPU may choose;
 * a kernel whose result depends on it has a race. The environment variable
 * OPSPEC_CUDA_SIM_ORDER=reverse sets reverse at load. */
int opspec_sim_set_reverse_order(int reverse); /* returns the previous setting */

/* One kernel launch the simulator ran (or refused). */
typedef struct opspec_sim_launch_record {
  int device;                 /* the current device at the launch */
  int code;                   /* its cudaError_t */
  uint32_t grid[3], block[3]; /* x, y, z */
  uint64_t shared_mem;        /* dynamic shared memory, bytes */
} opspec_sim_launch_record;

/* Copies the launches recorded since the last call (at most the last 4096, oldest
 * first; at most `max` of them) to `out`, forgets them all, and returns how many it
 * copied. For tests: what the launchers actually asked for. */
size_t opspec_sim_take_launches(opspec_sim_launch_record *out, size_t max);

#ifdef __cplusplus
}
#endif

#endif /* OPSPEC_CUDA_SIM_H */
