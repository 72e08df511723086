// The CUDA path's content checks (docs/spec.md, `check`): the scan the CPU runs in
// contents.c, as one kernel on the call's stream, whose result is copied back with one
// synchronisation. Compiled by nvcc for a GPU, and again as host C++ for the CUDA
// simulator (cuda_check_sim.cpp, which names the functions opspec_sim_*).
#include <limits.h>

#include "opspec/cuda.h"
#include "opspec/dtypes.h"
#include "opspec/ffi_cuda.h"

#ifndef OPSPEC_CHECK_FN
#define OPSPEC_CHECK_FN(name) opspec_cudart_##name
#endif

// Grid-stride: each thread visits its positions in increasing order and stops at its first
// bad one; atomicMin keeps the least over all threads, the position the CPU names.
template <typename T>
static __global__ void opspec_check_kernel(const T *values, int64_t count, T lo, T hi, bool sorted,
                                           unsigned long long *first) {
  const int64_t stride = (int64_t)gridDim.x * blockDim.x;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < count; i += stride) {
    const T v = values[i];
    if (v < lo || v > hi || (sorted && i > 0 && v < values[i - 1])) {
      atomicMin(first, (unsigned long long)i);
      return;
    }
  }
}

template <typename T>
static cudaError_t opspec_check_launch(const void *data, int64_t count, uint64_t lo_bits, uint64_t hi_bits, bool sorted,
                                       unsigned long long *first, cudaStream_t stream) {
  const T *values = (const T *)data;
  T lo = (T)lo_bits, hi = (T)hi_bits;
  // 256 threads a block, at most 1024 blocks: enough to fill a GPU; larger inputs loop.
  const int64_t blocks = (count + 255) / 256 < 1024 ? (count + 255) / 256 : 1024;
  void *params[] = {&values, &count, &lo, &hi, &sorted, &first};
  cudaError_t err = cudaLaunchKernel(opspec_check_kernel<T>, dim3((unsigned)blocks), dim3(256), params, 0, stream);
  cudaError_t last = cudaGetLastError();
  return err != cudaSuccess ? err : last;
}

// first_bad's cases: one instantiation per integer row of the dtype table.
#define OPSPEC_CHECK_LAUNCH(T, xla)                                                  \
  case xla:                                                                          \
    err = opspec_check_launch<T>(data, count, lo, hi, sorted, device_first, stream); \
    break;
#define OPSPEC_CHECK_ROW(name, ctype, cutype, xla, np, integer) \
  OPSPEC_IF_INTEGER(integer, OPSPEC_CHECK_LAUNCH(cutype, xla))

// opspec_cuda_backend.first_bad: the check kernel on `stream`, its result in the device's
// `slot` (8 bytes), copied back after a synchronisation.
extern "C" int OPSPEC_CHECK_FN(first_bad)(void *stream_handle, void *slot, const void *data, int32_t dtype,
                                          int64_t count, uint64_t lo, uint64_t hi, bool sorted, int64_t *first) {
  cudaStream_t stream = (cudaStream_t)stream_handle;
  unsigned long long *device_first = (unsigned long long *)slot, host_first = ULLONG_MAX;
  *first = -1;
  if (count <= 0) return 0;
  cudaError_t err = cudaMemsetAsync(device_first, 0xff, sizeof host_first, stream);  // ULLONG_MAX: none
  if (err != cudaSuccess) return (int)err;
  switch (dtype) {
    OPSPEC_DTYPES(OPSPEC_CHECK_ROW)
    default:
      return (int)cudaErrorInvalidValue;  // opspec_check_values takes integer dtypes only
  }
#undef OPSPEC_CHECK_ROW
#undef OPSPEC_CHECK_LAUNCH
  if (err == cudaSuccess)
    err = cudaMemcpyAsync(&host_first, device_first, sizeof host_first, cudaMemcpyDeviceToHost, stream);
  if (err == cudaSuccess) err = cudaStreamSynchronize(stream);
  if (err != cudaSuccess) return (int)err;
  *first = host_first == ULLONG_MAX ? -1 : (int64_t)host_first;
  return 0;
}

// opspec_cuda_backend.to_host: `bytes` from the device, once the stream has reached them.
extern "C" int OPSPEC_CHECK_FN(to_host)(void *stream_handle, void *dst, const void *src, size_t bytes) {
  cudaStream_t stream = (cudaStream_t)stream_handle;
  cudaError_t err = cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, stream);
  if (err == cudaSuccess) err = cudaStreamSynchronize(stream);
  return (int)err;
}

// opspec_cuda_backend.zero: clears the rejection flag before the kernels run.
extern "C" int OPSPEC_CHECK_FN(zero)(void *stream_handle, void *ptr, size_t bytes) {
  return (int)cudaMemsetAsync(ptr, 0, bytes, (cudaStream_t)stream_handle);
}

// opspec_cuda_backend.fill: fills outputs with check_op's byte (opspec_set_output_fill).
extern "C" int OPSPEC_CHECK_FN(fill)(void *stream_handle, void *ptr, int value, size_t bytes) {
  return (int)cudaMemsetAsync(ptr, value, bytes, (cudaStream_t)stream_handle);
}
