// The CUDA simulator on its own: kernels written here against its <cuda_runtime.h>,
// launched as opspec's launchers launch (cudaLaunchKernel), results checked exactly;
// and the launchers' configuration arithmetic (launch.c).
// Each test states a CUDA rule and shows the simulator keeps it, or reports the kernel
// that breaks it.
//
//   test_cuda_sim           every test
//   test_cuda_sim oob       a kernel writing past its output: under ASan, a report
//   test_cuda_sim oob-shared  a kernel writing past its dynamic shared memory: likewise
#include <cuda_runtime.h>  // the simulator's (runtime/sim/)

#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "check.h"
#include "opspec/launch.h"

namespace {

// The dynamic shared memory the kernels below declare, as generated files declare it
// (in the namespace of the kernels, which their extern declarations name).
OPSPEC_DYNAMIC_SHARED(sim_test_shared, float)

struct args {
  float *out;
  const float *in;
  int *counts;
  long long n;
};

template <typename Args>
cudaError_t launch(void (*kernel)(Args), dim3 grid, dim3 block, const Args &a, size_t shared = 0,
                   cudaStream_t stream = 0) {
  void *params[] = {const_cast<Args *>(&a)};
  return cudaLaunchKernel(kernel, grid, block, params, shared, stream);
}

// The simulator's account of a failed launch (valid until the next failure).
const char *error_text(cudaError_t code) { return cudaGetErrorString(code); }

// Launches `kernel` on one block of one warp (out: 32 floats), which must fail: the
// failure's account.
const char *failed_warp_launch(void (*kernel)(args)) {
  std::vector<float> out(32, 0);
  cudaError_t err = launch(kernel, dim3(1), dim3(32), args{out.data(), nullptr, nullptr, 32});
  OG_CHECK(err == cudaErrorLaunchFailure);
  return error_text(err);
}

// ---- indices -------------------------------------------------------------------------------

__global__ void write_linear_index(args a) {
  long long t = threadIdx.x + blockDim.x * (threadIdx.y + (long long)blockDim.y * threadIdx.z);
  long long b = blockIdx.x + gridDim.x * (blockIdx.y + (long long)gridDim.y * blockIdx.z);
  long long i = b * blockDim.x * blockDim.y * blockDim.z + t;
  a.counts[i] += 1;
  a.out[i] = (float)i;
}

void test_every_thread_of_a_3d_grid_runs_once() {
  dim3 grid(3, 2, 2), block(8, 4, 2);
  size_t n = 3 * 2 * 2 * 8 * 4 * 2;
  std::vector<float> out(n, -1);
  std::vector<int> counts(n, 0);
  OG_CHECK(launch(write_linear_index, grid, block, args{out.data(), nullptr, counts.data(), (long long)n}) ==
           cudaSuccess);
  bool ok = true;
  for (size_t i = 0; i < n; ++i) ok &= counts[i] == 1 && out[i] == (float)i;
  OG_CHECK(ok);
}

// ---- barriers --------------------------------------------------------------------------------

// The tutorial's tree reduction: 256 threads, static shared memory.
__global__ void block_sum(args a) {
  __shared__ float s[256];
  int tx = threadIdx.x;
  long long pos = blockIdx.x * 256LL + tx;
  s[tx] = pos < a.n ? a.in[pos] : 0.0f;
  __syncthreads();
  for (int stride = 128; stride > 0; stride /= 2) {
    if (tx < stride) s[tx] += s[tx + stride];
    __syncthreads();
  }
  if (tx == 0) a.out[blockIdx.x] = s[0];
}

// The same with its loop barrier forgotten.
__global__ void block_sum_missing_barrier(args a) {
  __shared__ float s[256];
  int tx = threadIdx.x;
  long long pos = blockIdx.x * 256LL + tx;
  s[tx] = pos < a.n ? a.in[pos] : 0.0f;
  __syncthreads();
  for (int stride = 128; stride > 0; stride /= 2)
    if (tx < stride) s[tx] += s[tx + stride];
  if (tx == 0) a.out[blockIdx.x] = s[0];
}

std::vector<float> ramp(size_t n) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = (float)(i % 7) - 3.0f;
  return v;
}

float block_total(const std::vector<float> &in, size_t b) {
  float t = 0;
  for (size_t i = b * 256; i < in.size() && i < (b + 1) * 256; ++i) t += in[i];
  return t;
}

void test_barrier_makes_the_tree_reduction_right() {
  std::vector<float> in = ramp(1000), out(4, -1);
  OG_CHECK(launch(block_sum, dim3(4), dim3(256), args{out.data(), in.data(), nullptr, 1000}) == cudaSuccess);
  for (size_t b = 0; b < 4; ++b) OG_CHECK(out[b] == block_total(in, b));
}

void test_a_missing_barrier_gives_a_wrong_sum() {
  // Threads interleave only at barriers: without the loop's, thread 0 adds partial sums
  // that other threads have not computed yet.
  std::vector<float> in(256, 1.0f), out(1, -1);
  OG_CHECK(launch(block_sum_missing_barrier, dim3(1), dim3(256), args{out.data(), in.data(), nullptr, 256}) ==
           cudaSuccess);
  OG_CHECK(out[0] != 256.0f);
}

__global__ void barrier_after_early_return(args a) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i >= a.n) return;
#line 400 "specs/sim_test.yaml"
  __syncthreads();
#line 121 "tests/sim/test_cuda_sim.cpp"
  a.out[i] = 1;
}

void test_a_barrier_after_an_early_return_is_reported_not_hung() {
  std::vector<float> out(300, 0);
  cudaError_t err = launch(barrier_after_early_return, dim3(2), dim3(256), args{out.data(), nullptr, nullptr, 300});
  OG_CHECK(err == cudaErrorLaunchFailure);
  OG_CHECK_CONTAINS(error_text(err), "barrier divergence");
  OG_CHECK_CONTAINS(error_text(err), "specs/sim_test.yaml:400");  // where the spec wrote it
  OG_CHECK_CONTAINS(error_text(err), "block (1, 0, 0)");          // the partial block
  OG_CHECK(cudaGetLastError() == cudaErrorLaunchFailure);
  OG_CHECK(cudaGetLastError() == cudaSuccess);
  // The simulator recovers: the abandoned threads' fibers run the next launch.
  std::vector<float> in = ramp(512), sums(2, -1);
  OG_CHECK(launch(block_sum, dim3(2), dim3(256), args{sums.data(), in.data(), nullptr, 512}) == cudaSuccess);
  OG_CHECK(sums[0] == block_total(in, 0) && sums[1] == block_total(in, 1));
}

__global__ void different_barriers(args a) {
  if (threadIdx.x < 16) {
    __syncthreads();
  } else {
    __syncthreads();
  }
  a.out[threadIdx.x] = 1;
}

void test_threads_at_different_barriers_are_reported() {
  OG_CHECK_CONTAINS(failed_warp_launch(different_barriers), "waits at a different one");
}

__global__ void count_positive(args a) {
  int n = __syncthreads_count(a.in[threadIdx.x] > 0);
  int all = __syncthreads_and(a.in[threadIdx.x] > -10);
  int any = __syncthreads_or(a.in[threadIdx.x] > 2);
  if (threadIdx.x == 5) {
    a.counts[0] = n;
    a.counts[1] = all;
    a.counts[2] = any;
  }
}

void test_syncthreads_count_and_or() {
  std::vector<float> in = ramp(100);
  int positive = 0;
  for (float v : in) positive += v > 0;
  std::vector<int> counts(3, -1);
  OG_CHECK(launch(count_positive, dim3(1), dim3(100), args{nullptr, in.data(), counts.data(), 100}) == cudaSuccess);
  OG_CHECK(counts[0] == positive);
  OG_CHECK(counts[1] == 1);
  OG_CHECK(counts[2] == 1);
}

// Reads a neighbour's slot with no barrier between its write and this read: a race.
__global__ void racy_neighbour(args a) {
  extern __shared__ float sim_test_shared[];
  unsigned t = threadIdx.x;
  sim_test_shared[t] = (float)t;
  a.out[t] = sim_test_shared[(t + 1) % blockDim.x];
}

void test_the_order_of_threads_shows_a_race() {
  // Forward, each thread reads its right neighbour's slot before that thread wrote it;
  // reverse, after. A GPU may do either: a result that depends on it is a race.
  std::vector<float> forward(64, 0), reverse(64, 0);
  int order = opspec_sim_set_reverse_order(0);
  OG_CHECK(launch(racy_neighbour, dim3(1), dim3(64), args{forward.data(), nullptr, nullptr, 64}, 64 * sizeof(float)) ==
           cudaSuccess);
  opspec_sim_set_reverse_order(1);
  OG_CHECK(launch(racy_neighbour, dim3(1), dim3(64), args{reverse.data(), nullptr, nullptr, 64}, 64 * sizeof(float)) ==
           cudaSuccess);
  opspec_sim_set_reverse_order(order);
  OG_CHECK(std::isnan(forward[0]) && forward[63] == 0.0f);  // thread 63 wraps to thread 0, which ran first
  OG_CHECK(reverse[0] == 1.0f && std::isnan(reverse[63]));
}

// ---- shared memory ------------------------------------------------------------------------------

__global__ void static_shared_per_block(args a) {
  __shared__ int mine;
  if (threadIdx.x == 0) mine = (int)blockIdx.x * 10;
  __syncthreads();
  a.counts[blockIdx.x * blockDim.x + threadIdx.x] = mine;
}

void test_static_shared_memory_is_one_copy_per_block() {
  std::vector<int> counts(4 * 64, -1);
  OG_CHECK(launch(static_shared_per_block, dim3(4), dim3(64), args{nullptr, nullptr, counts.data(), 0}) == cudaSuccess);
  bool ok = true;
  for (int i = 0; i < 4 * 64; ++i) ok &= counts[i] == i / 64 * 10;
  OG_CHECK(ok);
}

// Reverses each block's slice through dynamic shared memory, and reports what a slot
// held before any thread wrote it.
__global__ void reverse_through_dynamic_shared(args a) {
  extern __shared__ float sim_test_shared[];
  int tx = threadIdx.x;
  if (tx == 0) a.out[a.n + blockIdx.x] = sim_test_shared[blockDim.x - 1];  // before anyone wrote
  __syncthreads();
  sim_test_shared[tx] = a.in[blockIdx.x * blockDim.x + tx];
  __syncthreads();
  a.out[blockIdx.x * blockDim.x + tx] = sim_test_shared[blockDim.x - 1 - tx];
}

void test_dynamic_shared_memory_per_block_starts_as_garbage() {
  std::vector<float> in = ramp(3 * 128), out(3 * 128 + 3, 0);
  OG_CHECK(launch(reverse_through_dynamic_shared, dim3(3), dim3(128), args{out.data(), in.data(), nullptr, 3 * 128},
                  128 * sizeof(float)) == cudaSuccess);
  bool ok = true;
  for (int b = 0; b < 3; ++b)
    for (int t = 0; t < 128; ++t) ok &= out[b * 128 + t] == in[b * 128 + 127 - t];
  OG_CHECK(ok);
  for (int b = 0; b < 3; ++b) OG_CHECK(std::isnan(out[3 * 128 + b]));  // not the last block's values
}

void test_dynamic_shared_memory_is_limited_as_on_a_gpu() {
  std::vector<float> in = ramp(128), out(131, 0);
  cudaError_t err = launch(reverse_through_dynamic_shared, dim3(1), dim3(128),
                           args{out.data(), in.data(), nullptr, 128}, OPSPEC_SIM_DYNAMIC_SHARED_BYTES + 1);
  OG_CHECK(err == cudaErrorInvalidValue);
  OG_CHECK_CONTAINS(error_text(err), "cudaFuncSetAttribute");
  OG_CHECK(launch(reverse_through_dynamic_shared, dim3(1), dim3(128), args{out.data(), in.data(), nullptr, 128},
                  OPSPEC_SIM_DYNAMIC_SHARED_BYTES) == cudaSuccess);
}

// ---- atomics ----------------------------------------------------------------------------------

struct atomic_args {
  int *count;
  unsigned int *max;
  float *fsum;
  double *dsum;
  unsigned long long *cas;
};

__global__ void atomics(atomic_args a) {
  unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
  atomicAdd(a.count, 1);
  atomicMax(a.max, i);
  atomicAdd(a.fsum, 0.5f);
  atomicAdd(a.dsum, 0.25);
  unsigned long long old = *a.cas;
  while (atomicCAS(a.cas, old, old + 2) != old) old = *a.cas;
}

void test_atomics() {
  int count = 0;
  unsigned int mx = 0;
  float fsum = 0;
  double dsum = 0;
  unsigned long long cas = 0;
  OG_CHECK(launch(atomics, dim3(5), dim3(100), atomic_args{&count, &mx, &fsum, &dsum, &cas}) == cudaSuccess);
  OG_CHECK(count == 500 && mx == 499 && fsum == 250.0f && dsum == 125.0 && cas == 1000);
}

// ---- warps ------------------------------------------------------------------------------------

__global__ void warp_sums(args a) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = a.in[i];
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
  float lane0 = __shfl_sync(0xffffffffu, v, 0);  // broadcast the warp's sum
  float x = a.in[i];
  for (int m = 1; m < 32; m *= 2) x += __shfl_xor_sync(0xffffffffu, x, m);  // butterfly: every lane gets it
  unsigned ballot = __ballot_sync(0xffffffffu, a.in[i] > 0);
  if (threadIdx.x % 32 == 0) {
    a.out[i / 32] = lane0;
    a.counts[i / 32] = (int)__popc(ballot);
  }
  if (x != lane0) a.counts[64 + i / 32] = 1;
  __syncwarp();
}

void test_warp_shuffles_and_votes() {
  std::vector<float> in = ramp(256), out(8, 0);
  std::vector<int> counts(72, 0);
  OG_CHECK(launch(warp_sums, dim3(2), dim3(128), args{out.data(), in.data(), counts.data(), 256}) == cudaSuccess);
  bool ok = true;
  for (int w = 0; w < 8; ++w) {
    float sum = 0;
    int positive = 0;
    for (int l = 0; l < 32; ++l) {
      sum += in[w * 32 + l];
      positive += in[w * 32 + l] > 0;
    }
    ok &= out[w] == sum && counts[w] == positive && counts[64 + w] == 0;
  }
  OG_CHECK(ok);
}

__global__ void shuffle_after_early_return(args a) {
  if (threadIdx.x == 3) return;
  float v = __shfl_down_sync(0xffffffffu, 1.0f, 1);
  a.out[threadIdx.x] = v;
}

void test_a_shuffle_waiting_for_a_returned_lane_is_reported() {
  const char *text = failed_warp_launch(shuffle_after_early_return);
  OG_CHECK_CONTAINS(text, "warp divergence");
  OG_CHECK_CONTAINS(text, "__shfl_down_sync()");
}

// ---- devices, streams, configurations ------------------------------------------------------------

__global__ void noop(args) {}

void test_a_stream_launches_only_on_its_device() {
  OG_CHECK(opspec_sim_set_device_count(3) == 0);
  int count = 0, device = -1;
  OG_CHECK(cudaGetDeviceCount(&count) == cudaSuccess && count == 3);
  OG_CHECK(cudaGetDevice(&device) == cudaSuccess && device == 0);
  cudaStream_t second = (cudaStream_t)opspec_sim_device_stream(2);
  OG_CHECK(second != nullptr && opspec_sim_device_stream(3) == nullptr);
  opspec_sim_launch_record log[8];
  opspec_sim_take_launches(log, 8);
  // A handler that forgot cudaSetDevice: device 0 is current, the stream is device 2's.
  cudaError_t err = launch(noop, dim3(1), dim3(1), args{}, 0, second);
  OG_CHECK(err == cudaErrorInvalidResourceHandle);
  OG_CHECK_CONTAINS(error_text(err), "stream of device 2 while device 0 is current");
  OG_CHECK(cudaSetDevice(2) == cudaSuccess);
  OG_CHECK(launch(noop, dim3(2), dim3(3), args{}, 0, second) == cudaSuccess);
  OG_CHECK(cudaSetDevice(3) == cudaErrorInvalidDevice);
  OG_CHECK(cudaSetDevice(0) == cudaSuccess);
  size_t n = opspec_sim_take_launches(log, 8);
  OG_CHECK(n == 2);
  OG_CHECK(log[0].device == 0 && log[0].code == cudaErrorInvalidResourceHandle);
  OG_CHECK(log[1].device == 2 && log[1].code == 0 && log[1].grid[0] == 2 && log[1].block[0] == 3);
  OG_CHECK(opspec_sim_set_device_count(1) == 0);
  cudaGetLastError();
}

void test_bad_configurations_fail_as_on_a_gpu() {
  OG_CHECK(launch(noop, dim3(1), dim3(1025), args{}) == cudaErrorInvalidConfiguration);
  OG_CHECK(launch(noop, dim3(1), dim3(32, 32, 2), args{}) == cudaErrorInvalidConfiguration);
  OG_CHECK(launch(noop, dim3(0), dim3(32), args{}) == cudaErrorInvalidConfiguration);
  OG_CHECK(launch(noop, dim3(1, 65536), dim3(32), args{}) == cudaErrorInvalidConfiguration);
  OG_CHECK(launch(noop, dim3(1), dim3(1024), args{}) == cudaSuccess);
  cudaGetLastError();
}

__global__ void traps(args a) {
  if (threadIdx.x == 7) __trap();
  a.out[threadIdx.x] = 1;
}

void test_trap_fails_the_launch() {
  OG_CHECK_CONTAINS(failed_warp_launch(traps), "__trap()");
  cudaGetLastError();
}

// The launchers' own arithmetic (runtime/src/launch.c), which both backends run.
void test_launch_configuration() {
  opspec_launch l;
  const char *failed = nullptr;
  const int64_t rows_cols[2] = {65535 * 16 + 1, 5};
  opspec_launch_auto(&l, "k", 2, rows_cols, nullptr, 0);
  OG_CHECK(l.grid[0] == 1 && l.grid[1] == 65536 && l.block[0] == 16 && l.block[1] == 16);
  OG_CHECK(opspec_launch_prepare(&l, 1, &failed) == cudaErrorInvalidConfiguration && std::string(failed) == "k");
  opspec_launch_portable(&l, "kernel", 2, rows_cols, nullptr);  // its kernel loops along y
  OG_CHECK(l.grid[1] == 65535 && opspec_launch_prepare(&l, 1, &failed) == 0);
  const int64_t grid[3] = {1, 1, 1}, deep[3] = {1, 1, 128}, wide[3] = {1024, 1, 1};
  opspec_launch_explicit(&l, "deep", 3, grid, deep, 0);  // CUDA allows at most 64 along z
  OG_CHECK(opspec_launch_prepare(&l, 1, &failed) == cudaErrorInvalidConfiguration && std::string(failed) == "deep");
  OG_CHECK(launch(noop, dim3(1), dim3(1, 1, 128), args{}) == cudaErrorInvalidConfiguration);
  opspec_launch_explicit(&l, "wide", 3, grid, wide, 0);
  OG_CHECK(opspec_launch_prepare(&l, 1, &failed) == 0);
  const int64_t empty[1] = {0};
  opspec_launch_auto(&l, "empty", 1, empty, nullptr, 0);
  OG_CHECK(opspec_launch_empty(&l) && opspec_launch_prepare(&l, 1, &failed) == 0);
  cudaGetLastError();
}

// ---- faults only a sanitizer sees -------------------------------------------------------------

__global__ void write_one_past(args a) { a.out[blockIdx.x * blockDim.x + threadIdx.x + 1] = 1; }

int write_out_of_bounds() {
  float *out = static_cast<float *>(malloc(64 * sizeof(float)));
  cudaError_t err = launch(write_one_past, dim3(2), dim3(32), args{out, nullptr, nullptr, 64});
  printf("launch returned %d: no sanitizer saw the write past the buffer\n", (int)err);
  free(out);
  return 0;
}

__global__ void write_past_shared(args a) {
  extern __shared__ float sim_test_shared[];
  sim_test_shared[threadIdx.x + 1] = 1;  // one float past what the launch asked for
  a.out[0] = sim_test_shared[0];
}

int write_shared_out_of_bounds() {
  float out = 0;
  cudaError_t err = launch(write_past_shared, dim3(1), dim3(32), args{&out, nullptr, nullptr, 1}, 32 * sizeof(float));
  printf("launch returned %d: no sanitizer saw the write past the shared memory\n", (int)err);
  return 0;
}

}  // namespace

int main(int argc, char **argv) {
  if (argc > 1 && std::string(argv[1]) == "oob") return write_out_of_bounds();
  if (argc > 1 && std::string(argv[1]) == "oob-shared") return write_shared_out_of_bounds();
  test_every_thread_of_a_3d_grid_runs_once();
  test_barrier_makes_the_tree_reduction_right();
  test_a_missing_barrier_gives_a_wrong_sum();
  test_a_barrier_after_an_early_return_is_reported_not_hung();
  test_threads_at_different_barriers_are_reported();
  test_the_order_of_threads_shows_a_race();
  test_syncthreads_count_and_or();
  test_static_shared_memory_is_one_copy_per_block();
  test_dynamic_shared_memory_per_block_starts_as_garbage();
  test_dynamic_shared_memory_is_limited_as_on_a_gpu();
  test_atomics();
  test_warp_shuffles_and_votes();
  test_a_shuffle_waiting_for_a_returned_lane_is_reported();
  test_a_stream_launches_only_on_its_device();
  test_bad_configurations_fail_as_on_a_gpu();
  test_trap_fails_the_launch();
  test_launch_configuration();
  return og_check_report("test_cuda_sim");
}
