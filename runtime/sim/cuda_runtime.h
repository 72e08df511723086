/* The CUDA simulator's <cuda_runtime.h> (docs/cuda-simulator.md).
 *
 * The simulated build compiles every generated <op>_cuda.cu a second time, as host
 * C++17, with this directory first on the include path: the kernels, the launcher and
 * opspec/cuda.h include <cuda_runtime.h> and get this file instead of CUDA's. It
 * provides the part of CUDA that opspec's kernels and launchers use, with CUDA's
 * semantics, on the CPU:
 *
 *   - threadIdx, blockIdx, blockDim, gridDim, warpSize;
 *   - __global__, __device__, __host__, __shared__ (static and extern), __constant__;
 *   - __syncthreads() and its _count/_and/_or forms: real barriers. The threads of a
 *     block are fibers that run until they reach a barrier or return, so they truly
 *     interleave; a barrier that not every thread of the block reaches fails the
 *     launch with an account of who waits where (cuda_sim.cpp);
 *   - the warp intrinsics (__shfl*_sync, __ballot_sync, __any_sync, __all_sync,
 *     __syncwarp, __activemask), exchanging values between the lanes of a warp;
 *   - atomics (atomicAdd and the rest, with CUDA's overloads), fences, __ldg;
 *   - the math library: <cmath>'s functions, plus CUDA's own (rsqrtf, __expf, min, max,
 *     __popc, ...);
 *   - the runtime API the launchers call: cudaLaunchKernel, cudaMemsetAsync, errors,
 *     devices and streams.
 *
 * Shared memory is one copy per block: a block's threads run on one host thread, one
 * block at a time, and __shared__ is thread_local there. Dynamic shared memory
 * (extern __shared__) is storage the generated file declares with
 * OPSPEC_DYNAMIC_SHARED for each name its kernels use: the generator finds them.
 */
#ifndef OPSPEC_SIM_CUDA_RUNTIME_H
#define OPSPEC_SIM_CUDA_RUNTIME_H

#ifndef __cplusplus
#error "the CUDA simulator's cuda_runtime.h is C++: include it from a .cu compiled as C++"
#endif

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmath>
#include <type_traits>
#include <utility>

#include "opspec/cuda_sim.h"

/* Code that must tell the two apart (opspec/cuda.h does, once). */
#define OPSPEC_CUDA_SIM 1

/* ---- qualifiers ---------------------------------------------------------------------- */

#define __global__
#define __device__
#define __host__
/* At block scope thread_local implies static: one variable per host thread, which is
 * one per block while the block runs. It also allows `extern __shared__ T name[];`. */
#define __shared__ thread_local
#define __constant__
#define __managed__
#define __forceinline__ inline __attribute__((always_inline))
#define __align__(n)    alignas(n)
#define __launch_bounds__(...)
#define __grid_constant__

/* ---- types --------------------------------------------------------------------------- */

struct uint3 {
  unsigned int x, y, z;
};

struct dim3 {
  unsigned int x, y, z;
  constexpr dim3(unsigned int vx = 1, unsigned int vy = 1, unsigned int vz = 1) : x(vx), y(vy), z(vz) {}
  constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
  constexpr operator uint3() const { return uint3{x, y, z}; }
};

/* CUDA's vector types and make_* functions: TYPE1 to TYPE4 with fields x, y, z, w. */
#define OPSPEC_SIM_VEC(name, type, align2, align4)                                           \
  struct name##1 {                                                                           \
    type x;                                                                                  \
  };                                                                                         \
  struct alignas(align2) name##2 {                                                           \
    type x, y;                                                                               \
  };                                                                                         \
  struct name##3 {                                                                           \
    type x, y, z;                                                                            \
  };                                                                                         \
  struct alignas(align4) name##4 {                                                           \
    type x, y, z, w;                                                                         \
  };                                                                                         \
  static inline name##1 make_##name##1(type x) { return name##1 {x}; }                       \
  static inline name##2 make_##name##2(type x, type y) { return name##2 {x, y}; }            \
  static inline name##3 make_##name##3(type x, type y, type z) { return name##3 {x, y, z}; } \
  static inline name##4 make_##name##4(type x, type y, type z, type w) { return name##4 {x, y, z, w}; }
OPSPEC_SIM_VEC(char, signed char, 2, 4)
OPSPEC_SIM_VEC(uchar, unsigned char, 2, 4)
OPSPEC_SIM_VEC(short, short, 4, 8)
OPSPEC_SIM_VEC(ushort, unsigned short, 4, 8)
OPSPEC_SIM_VEC(int, int, 8, 16)
OPSPEC_SIM_VEC(float, float, 8, 16)
OPSPEC_SIM_VEC(long, long, 16, 16)
OPSPEC_SIM_VEC(ulong, unsigned long, 16, 16)
OPSPEC_SIM_VEC(longlong, long long, 16, 16)
OPSPEC_SIM_VEC(ulonglong, unsigned long long, 16, 16)
OPSPEC_SIM_VEC(double, double, 16, 16)
#undef OPSPEC_SIM_VEC
/* uint3 is the built-in type above; its siblings come from the same pattern. */
struct uint1 {
  unsigned int x;
};
struct alignas(8) uint2 {
  unsigned int x, y;
};
struct alignas(16) uint4 {
  unsigned int x, y, z, w;
};
static inline uint1 make_uint1(unsigned int x) { return uint1{x}; }
static inline uint2 make_uint2(unsigned int x, unsigned int y) { return uint2{x, y}; }
static inline uint3 make_uint3(unsigned int x, unsigned int y, unsigned int z) { return uint3{x, y, z}; }
static inline uint4 make_uint4(unsigned int x, unsigned int y, unsigned int z, unsigned int w) {
  return uint4{x, y, z, w};
}

/* cudaError_t, with CUDA's values: codes cross into C as plain ints. */
enum cudaError {
  cudaSuccess = 0,
  cudaErrorInvalidValue = 1,
  cudaErrorMemoryAllocation = 2,
  cudaErrorInvalidConfiguration = 9,
  cudaErrorInvalidDevicePointer = 17,
  cudaErrorInvalidDeviceFunction = 98,
  cudaErrorNoDevice = 100,
  cudaErrorInvalidDevice = 101,
  cudaErrorInvalidResourceHandle = 400,
  cudaErrorIllegalAddress = 700,
  cudaErrorLaunchOutOfResources = 701,
  cudaErrorAssert = 710,
  cudaErrorIllegalInstruction = 715,
  cudaErrorLaunchFailure = 719,
  cudaErrorNotSupported = 801,
  cudaErrorUnknown = 999,
};
typedef enum cudaError cudaError_t;

/* A stream names its device; the simulator runs work at once, in order. */
struct CUstream_st;
typedef struct CUstream_st *cudaStream_t;

enum cudaMemcpyKind {
  cudaMemcpyHostToHost = 0,
  cudaMemcpyHostToDevice = 1,
  cudaMemcpyDeviceToHost = 2,
  cudaMemcpyDeviceToDevice = 3,
  cudaMemcpyDefault = 4,
};

/* ---- the engine (cuda_sim.cpp) --------------------------------------------------------- */

namespace opspec_sim {

/* What the running simulated thread sees; the scheduler rewrites it at every switch.
 * Reached through a function, not an extern thread_local: the engine's TLS stays its
 * own, whatever TLS model a kernel's translation unit is compiled with. */
struct thread_context {
  uint3 thread_idx, block_idx;
  dim3 block_dim, grid_dim;
};
const thread_context &context();

/* Runs `kernel` (type-erased; `thunk` calls it with the values `args` points at, as
 * cudaLaunchKernel's void ** gives them) over the grid, now. */
typedef void kernel_thunk(void (*kernel)(), void *const *args);
cudaError_t launch(kernel_thunk *thunk, void (*kernel)(), void *const *args, dim3 grid, dim3 block, size_t shared_mem,
                   cudaStream_t stream);

template <typename... Params, size_t... I>
void call_kernel_with(void (*kernel)(), void *const *args, std::index_sequence<I...>) {
  reinterpret_cast<void (*)(Params...)>(kernel)(*static_cast<const Params *>(args[I])...);
}

template <typename... Params>
void call_kernel(void (*kernel)(), void *const *args) {
  call_kernel_with<Params...>(kernel, args, std::index_sequence_for<Params...>{});
}

/* Barriers of the block: `reduce` 0 plain, 1 count, 2 and, 3 or; `file` and `line`
 * name the call, so that a divergent barrier is reported where it is written. */
int syncthreads(int reduce, int predicate, const char *file, int line);

/* The warp intrinsics meet here: every lane of `mask` deposits `value` and, once all
 * have arrived, gets the value of lane `src` (`kind` shuffle), the ballot of all
 * (`kind` vote), or nothing (`kind` sync). `what` names the intrinsic in errors. */
enum warp_kind { warp_shuffle, warp_vote, warp_sync };
uint64_t warp_exchange(warp_kind kind, const char *what, unsigned mask, uint64_t value, int src, const char *file,
                       int line);
unsigned lane_id();
unsigned active_mask();

/* __trap(): fails the launch. */
[[noreturn]] void trap(const char *file, int line);

/* The dynamic shared memory arrays of this library, so that the engine can fill them
 * with garbage at every block (reads of values no thread wrote show) and, under ASan,
 * poison what lies past the launch's shared_mem. */
struct dynamic_shared {
  void *(*storage)();
  size_t bytes;
  const dynamic_shared *next;
  dynamic_shared(void *(*get)(), size_t size);
};

int record_error(cudaError_t code);
long long clock_ns();
cudaError_t last_error(bool reset);
cudaError_t memset_async(void *ptr, int value, size_t bytes, cudaStream_t stream);
cudaError_t check_stream(cudaStream_t stream);

}  // namespace opspec_sim

/* Storage for a dynamic shared memory array that the kernels of this file declare as
 * `extern __shared__ TYPE NAME[];`: the generated file says which (nothing on a GPU,
 * where every extern __shared__ array is the block's dynamic shared memory). Static and
 * thread_local like every __shared__ variable here, so the kernels' extern declarations
 * name it; registered so that the engine can prepare it per block. */
#define OPSPEC_DYNAMIC_SHARED(name, ...)                                                                              \
  alignas(16) static thread_local __VA_ARGS__ name[OPSPEC_SIM_DYNAMIC_SHARED_BYTES / sizeof(__VA_ARGS__)];            \
  static const ::opspec_sim::dynamic_shared opspec_sim_dynamic_shared_##name([]() -> void * { return (void *)name; }, \
                                                                             sizeof(name));

/* ---- built-in variables ------------------------------------------------------------------ */

#define threadIdx (::opspec_sim::context().thread_idx)
#define blockIdx  (::opspec_sim::context().block_idx)
#define blockDim  (::opspec_sim::context().block_dim)
#define gridDim   (::opspec_sim::context().grid_dim)
static constexpr int warpSize = 32;

/* ---- synchronisation ------------------------------------------------------------------ */

/* The call site arrives as default arguments (evaluated where the kernel calls), so that
 * a divergent barrier is reported at the line the spec wrote it on: #line directives
 * map generated code back into the YAML. */
#define OPSPEC_SIM_SITE const char *file = __builtin_FILE(), int line = __builtin_LINE()

static inline void __syncthreads(OPSPEC_SIM_SITE) { ::opspec_sim::syncthreads(0, 1, file, line); }
static inline int __syncthreads_count(int predicate, OPSPEC_SIM_SITE) {
  return ::opspec_sim::syncthreads(1, predicate != 0, file, line);
}
static inline int __syncthreads_and(int predicate, OPSPEC_SIM_SITE) {
  return ::opspec_sim::syncthreads(2, predicate != 0, file, line);
}
static inline int __syncthreads_or(int predicate, OPSPEC_SIM_SITE) {
  return ::opspec_sim::syncthreads(3, predicate != 0, file, line);
}

/* Blocks run one at a time and a block's threads switch only at barriers, so every
 * write is visible to every later read: fences order nothing more, but stay fences. */
static inline void __threadfence_block() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
static inline void __threadfence() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
static inline void __threadfence_system() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }

[[noreturn]] static inline void __trap(OPSPEC_SIM_SITE) { ::opspec_sim::trap(file, line); }

/* ---- warp intrinsics --------------------------------------------------------------------- */

namespace opspec_sim {
template <typename T>
static inline uint64_t to_bits(T v) {
  static_assert(sizeof(T) <= sizeof(uint64_t) && std::is_trivially_copyable<T>::value, "a shuffled value fits 64 bits");
  uint64_t bits = 0;
  memcpy(&bits, &v, sizeof v);
  return bits;
}
template <typename T>
static inline T from_bits(uint64_t bits) {
  T v;
  memcpy(&v, &bits, sizeof v);
  return v;
}
/* The first lane of the caller's `width`-lane segment. */
static inline int segment_base(int width) { return (int)lane_id() & ~(width - 1); }
}  // namespace opspec_sim

template <typename T>
static inline T __shfl_sync(unsigned mask, T var, int src_lane, int width = warpSize, OPSPEC_SIM_SITE) {
  int src = ::opspec_sim::segment_base(width) + (src_lane & (width - 1));
  uint64_t got = ::opspec_sim::warp_exchange(::opspec_sim::warp_shuffle, "__shfl_sync()", mask,
                                             ::opspec_sim::to_bits(var), src, file, line);
  return ::opspec_sim::from_bits<T>(got);
}
template <typename T>
static inline T __shfl_up_sync(unsigned mask, T var, unsigned delta, int width = warpSize, OPSPEC_SIM_SITE) {
  int lane = (int)::opspec_sim::lane_id(), src = (lane & (width - 1)) >= (int)delta ? lane - (int)delta : lane;
  uint64_t got = ::opspec_sim::warp_exchange(::opspec_sim::warp_shuffle, "__shfl_up_sync()", mask,
                                             ::opspec_sim::to_bits(var), src, file, line);
  return ::opspec_sim::from_bits<T>(got);
}
template <typename T>
static inline T __shfl_down_sync(unsigned mask, T var, unsigned delta, int width = warpSize, OPSPEC_SIM_SITE) {
  int lane = (int)::opspec_sim::lane_id(), src = (lane & (width - 1)) + (int)delta < width ? lane + (int)delta : lane;
  uint64_t got = ::opspec_sim::warp_exchange(::opspec_sim::warp_shuffle, "__shfl_down_sync()", mask,
                                             ::opspec_sim::to_bits(var), src, file, line);
  return ::opspec_sim::from_bits<T>(got);
}
template <typename T>
static inline T __shfl_xor_sync(unsigned mask, T var, int lane_mask, int width = warpSize, OPSPEC_SIM_SITE) {
  /* A lane may read an earlier segment but not a later one: it then keeps its value. */
  int lane = (int)::opspec_sim::lane_id(), src = lane ^ lane_mask;
  if (src >= ::opspec_sim::segment_base(width) + width) src = lane;
  uint64_t got = ::opspec_sim::warp_exchange(::opspec_sim::warp_shuffle, "__shfl_xor_sync()", mask,
                                             ::opspec_sim::to_bits(var), src, file, line);
  return ::opspec_sim::from_bits<T>(got);
}
static inline unsigned __ballot_sync(unsigned mask, int predicate, OPSPEC_SIM_SITE) {
  return (unsigned)::opspec_sim::warp_exchange(::opspec_sim::warp_vote, "__ballot_sync()", mask, predicate != 0, 0,
                                               file, line);
}
static inline int __any_sync(unsigned mask, int predicate, OPSPEC_SIM_SITE) {
  return ::opspec_sim::warp_exchange(::opspec_sim::warp_vote, "__any_sync()", mask, predicate != 0, 0, file, line) != 0;
}
static inline int __all_sync(unsigned mask, int predicate, OPSPEC_SIM_SITE) {
  return ::opspec_sim::warp_exchange(::opspec_sim::warp_vote, "__all_sync()", mask, predicate != 0, 0, file, line) ==
         mask;
}
static inline void __syncwarp(unsigned mask = 0xffffffffu, OPSPEC_SIM_SITE) {
  ::opspec_sim::warp_exchange(::opspec_sim::warp_sync, "__syncwarp()", mask, 0, 0, file, line);
}
static inline unsigned __activemask() { return ::opspec_sim::active_mask(); }

/* ---- atomics ---------------------------------------------------------------------------- */

/* Real atomic read-modify-writes, CUDA's overload set: code the simulator accepts also
 * compiles with nvcc. */
#define OPSPEC_SIM_ATOMIC(name, builtin, type) \
  static inline type name(type *address, type val) { return builtin(address, val, __ATOMIC_SEQ_CST); }
OPSPEC_SIM_ATOMIC(atomicAdd, __atomic_fetch_add, int)
OPSPEC_SIM_ATOMIC(atomicAdd, __atomic_fetch_add, unsigned int)
OPSPEC_SIM_ATOMIC(atomicAdd, __atomic_fetch_add, unsigned long long)
OPSPEC_SIM_ATOMIC(atomicSub, __atomic_fetch_sub, int)
OPSPEC_SIM_ATOMIC(atomicSub, __atomic_fetch_sub, unsigned int)
OPSPEC_SIM_ATOMIC(atomicExch, __atomic_exchange_n, int)
OPSPEC_SIM_ATOMIC(atomicExch, __atomic_exchange_n, unsigned int)
OPSPEC_SIM_ATOMIC(atomicExch, __atomic_exchange_n, unsigned long long)
OPSPEC_SIM_ATOMIC(atomicAnd, __atomic_fetch_and, int)
OPSPEC_SIM_ATOMIC(atomicAnd, __atomic_fetch_and, unsigned int)
OPSPEC_SIM_ATOMIC(atomicAnd, __atomic_fetch_and, unsigned long long)
OPSPEC_SIM_ATOMIC(atomicOr, __atomic_fetch_or, int)
OPSPEC_SIM_ATOMIC(atomicOr, __atomic_fetch_or, unsigned int)
OPSPEC_SIM_ATOMIC(atomicOr, __atomic_fetch_or, unsigned long long)
OPSPEC_SIM_ATOMIC(atomicXor, __atomic_fetch_xor, int)
OPSPEC_SIM_ATOMIC(atomicXor, __atomic_fetch_xor, unsigned int)
OPSPEC_SIM_ATOMIC(atomicXor, __atomic_fetch_xor, unsigned long long)
#undef OPSPEC_SIM_ATOMIC

namespace opspec_sim {
/* old -> f(old), atomically; returns old. For what has no builtin. */
template <typename T, typename F>
static inline T atomic_update(T *address, F f) {
  T old = __atomic_load_n(address, __ATOMIC_SEQ_CST);
  while (!__atomic_compare_exchange_n(address, &old, f(old), false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
  }
  return old;
}
template <typename U, typename T>
static inline U to_bits_as(T v) {
  U bits;
  memcpy(&bits, &v, sizeof bits);
  return bits;
}
/* Floating-point values through their bit patterns. */
template <typename T, typename U, typename F>
static inline T atomic_update_bits(T *address, F f) {
  U old = atomic_update(reinterpret_cast<U *>(address), [&](U bits) { return to_bits_as<U>(f(from_bits<T>(bits))); });
  return from_bits<T>(old);
}
}  // namespace opspec_sim

static inline float atomicAdd(float *address, float val) {
  return ::opspec_sim::atomic_update_bits<float, uint32_t>(address, [val](float old) { return old + val; });
}
static inline double atomicAdd(double *address, double val) {
  return ::opspec_sim::atomic_update_bits<double, uint64_t>(address, [val](double old) { return old + val; });
}
static inline float atomicExch(float *address, float val) {
  return ::opspec_sim::atomic_update_bits<float, uint32_t>(address, [val](float) { return val; });
}
#define OPSPEC_SIM_ATOMIC_MINMAX(type)                                                              \
  static inline type atomicMin(type *address, type val) {                                           \
    return ::opspec_sim::atomic_update(address, [val](type old) { return old < val ? old : val; }); \
  }                                                                                                 \
  static inline type atomicMax(type *address, type val) {                                           \
    return ::opspec_sim::atomic_update(address, [val](type old) { return old > val ? old : val; }); \
  }
OPSPEC_SIM_ATOMIC_MINMAX(int)
OPSPEC_SIM_ATOMIC_MINMAX(unsigned int)
OPSPEC_SIM_ATOMIC_MINMAX(long long)
OPSPEC_SIM_ATOMIC_MINMAX(unsigned long long)
#undef OPSPEC_SIM_ATOMIC_MINMAX
static inline unsigned int atomicInc(unsigned int *address, unsigned int val) {
  return ::opspec_sim::atomic_update(address, [val](unsigned int old) { return old >= val ? 0u : old + 1; });
}
static inline unsigned int atomicDec(unsigned int *address, unsigned int val) {
  return ::opspec_sim::atomic_update(address,
                                     [val](unsigned int old) { return old == 0 || old > val ? val : old - 1; });
}
#define OPSPEC_SIM_ATOMIC_CAS(type)                                                                 \
  static inline type atomicCAS(type *address, type compare, type val) {                             \
    __atomic_compare_exchange_n(address, &compare, val, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST); \
    return compare; /* the old value either way */                                                  \
  }
OPSPEC_SIM_ATOMIC_CAS(int)
OPSPEC_SIM_ATOMIC_CAS(unsigned int)
OPSPEC_SIM_ATOMIC_CAS(unsigned long long)
OPSPEC_SIM_ATOMIC_CAS(unsigned short)
#undef OPSPEC_SIM_ATOMIC_CAS

/* ---- loads, clocks ------------------------------------------------------------------------- */

template <typename T>
static inline T __ldg(const T *ptr) {
  return *ptr;
}
static inline long long clock64() { return ::opspec_sim::clock_ns(); }
static inline void __nanosleep(unsigned int) {}

/* ---- math: CUDA's functions beyond <cmath> ------------------------------------------------- */

#define OPSPEC_SIM_MINMAX(type)                                    \
  static inline type min(type a, type b) { return a < b ? a : b; } \
  static inline type max(type a, type b) { return a > b ? a : b; }
OPSPEC_SIM_MINMAX(int)
OPSPEC_SIM_MINMAX(unsigned int)
OPSPEC_SIM_MINMAX(long)
OPSPEC_SIM_MINMAX(unsigned long)
OPSPEC_SIM_MINMAX(long long)
OPSPEC_SIM_MINMAX(unsigned long long)
#undef OPSPEC_SIM_MINMAX
static inline float min(float a, float b) { return fminf(a, b); }
static inline float max(float a, float b) { return fmaxf(a, b); }
static inline double min(double a, double b) { return fmin(a, b); }
static inline double max(double a, double b) { return fmax(a, b); }
static inline unsigned int umin(unsigned int a, unsigned int b) { return a < b ? a : b; }
static inline unsigned int umax(unsigned int a, unsigned int b) { return a > b ? a : b; }
static inline long long llmin(long long a, long long b) { return a < b ? a : b; }
static inline long long llmax(long long a, long long b) { return a > b ? a : b; }

static inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
static inline double rsqrt(double x) { return 1.0 / sqrt(x); }
static inline float rcbrtf(float x) { return 1.0f / cbrtf(x); }
static inline double rcbrt(double x) { return 1.0 / cbrt(x); }
static inline float __saturatef(float x) { return x < 0.0f ? 0.0f : x > 1.0f ? 1.0f : x == x ? x : 0.0f; }
/* glibc declares these names (unexported) in <math.h>: CUDA's fast forms are macros. */
#define __expf(x)          expf(x)
#define __exp10f(x)        exp10f(x)
#define __logf(x)          logf(x)
#define __log2f(x)         log2f(x)
#define __log10f(x)        log10f(x)
#define __powf(x, y)       powf((x), (y))
#define __sinf(x)          sinf(x)
#define __cosf(x)          cosf(x)
#define __tanf(x)          tanf(x)
#define __sincosf(x, s, c) sincosf((x), (s), (c))
static inline float __fdividef(float x, float y) { return x / y; }
static inline float __frcp_rn(float x) { return 1.0f / x; }
static inline float __fsqrt_rn(float x) { return sqrtf(x); }
static inline float __frsqrt_rn(float x) { return 1.0f / sqrtf(x); }
static inline float __fadd_rn(float x, float y) { return x + y; }
static inline float __fsub_rn(float x, float y) { return x - y; }
static inline float __fmul_rn(float x, float y) { return x * y; }
static inline float __fdiv_rn(float x, float y) { return x / y; }
static inline float __fmaf_rn(float x, float y, float z) { return fmaf(x, y, z); }
static inline double __dadd_rn(double x, double y) { return x + y; }
static inline double __dsub_rn(double x, double y) { return x - y; }
static inline double __dmul_rn(double x, double y) { return x * y; }
static inline double __ddiv_rn(double x, double y) { return x / y; }
static inline double __fma_rn(double x, double y, double z) { return fma(x, y, z); }
static inline float normcdff(float x) { return 0.5f * erfcf(-x * 0.70710678f); }
static inline double normcdf(double x) { return 0.5 * erfc(-x * 0.7071067811865476); }

static inline int __popc(unsigned int x) { return __builtin_popcount(x); }
static inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
static inline int __clz(int x) { return x ? __builtin_clz((unsigned int)x) : 32; }
static inline int __clzll(long long x) { return x ? __builtin_clzll((unsigned long long)x) : 64; }
static inline int __ffs(int x) { return __builtin_ffs(x); }
static inline int __ffsll(long long x) { return __builtin_ffsll(x); }
static inline unsigned int __brev(unsigned int x) {
  unsigned int r = 0;
  for (int b = 0; b < 32; ++b) r |= ((x >> b) & 1u) << (31 - b);
  return r;
}
static inline int __mulhi(int x, int y) { return (int)(((long long)x * y) >> 32); }
static inline unsigned int __umulhi(unsigned int x, unsigned int y) {
  return (unsigned int)(((unsigned long long)x * y) >> 32);
}
static inline long long __mul64hi(long long x, long long y) { return (long long)(((__int128)x * y) >> 64); }
static inline unsigned long long __umul64hi(unsigned long long x, unsigned long long y) {
  return (unsigned long long)(((unsigned __int128)x * y) >> 64);
}
static inline int __mul24(int x, int y) {
  long long a = ((x & 0xffffff) ^ 0x800000) - 0x800000,
            b = ((y & 0xffffff) ^ 0x800000) - 0x800000; /* the low 24 bits, signed */
  return (int)(a * b);
}
static inline unsigned int __umul24(unsigned int x, unsigned int y) { return (x & 0xffffffu) * (y & 0xffffffu); }

/* ---- the runtime API -------------------------------------------------------------------------- */

static inline cudaError_t cudaGetLastError(void) { return ::opspec_sim::last_error(true); }
static inline cudaError_t cudaPeekAtLastError(void) { return ::opspec_sim::last_error(false); }
static inline const char *cudaGetErrorString(cudaError_t code) { return opspec_sim_error_string((int)code); }
static inline cudaError_t cudaGetDeviceCount(int *count) {
  return (cudaError_t)::opspec_sim::record_error((cudaError_t)opspec_sim_device_count(count));
}
static inline cudaError_t cudaGetDevice(int *device) {
  return (cudaError_t)::opspec_sim::record_error((cudaError_t)opspec_sim_get_device(device));
}
static inline cudaError_t cudaSetDevice(int device) {
  return (cudaError_t)::opspec_sim::record_error((cudaError_t)opspec_sim_set_device(device));
}
static inline cudaError_t cudaDeviceSynchronize(void) { return cudaSuccess; }
static inline cudaError_t cudaStreamSynchronize(cudaStream_t stream) { return ::opspec_sim::check_stream(stream); }
static inline cudaError_t cudaMemsetAsync(void *ptr, int value, size_t bytes, cudaStream_t stream = 0) {
  return ::opspec_sim::memset_async(ptr, value, bytes, stream);
}
static inline cudaError_t cudaMemset(void *ptr, int value, size_t bytes) {
  return ::opspec_sim::memset_async(ptr, value, bytes, 0);
}
static inline cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t bytes, cudaMemcpyKind,
                                          cudaStream_t stream = 0) {
  cudaError_t err = ::opspec_sim::check_stream(stream);
  if (err == cudaSuccess && bytes) memmove(dst, src, bytes);
  return err;
}
static inline cudaError_t cudaMemcpy(void *dst, const void *src, size_t bytes, cudaMemcpyKind kind) {
  return cudaMemcpyAsync(dst, src, bytes, kind, 0);
}

/* CUDA's typed cudaLaunchKernel: the kernel's parameter types travel with it, so the
 * simulator can call it. opspec kernels take their op's args struct, and the portable
 * kernel its opspec_batch_grid too. */
template <typename... Params>
static inline cudaError_t cudaLaunchKernel(void (*kernel)(Params...), dim3 grid, dim3 block, void **args,
                                           size_t shared_mem = 0, cudaStream_t stream = 0) {
  return ::opspec_sim::launch(&::opspec_sim::call_kernel<typename std::decay<Params>::type...>,
                              reinterpret_cast<void (*)()>(kernel), args, grid, block, shared_mem, stream);
}

#endif /* OPSPEC_SIM_CUDA_RUNTIME_H */
