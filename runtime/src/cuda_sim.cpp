// The CUDA simulator's engine (docs/cuda-simulator.md): simulated devices and streams,
// the last error, the launch log, and kernel launches, whose blocks run one at a time on
// the calling host thread with their threads as fibers.
//
// Why fibers: the threads of a block must truly interleave, because __syncthreads() and
// the warp intrinsics make each wait for the others. A fiber runs a simulated thread
// until it reaches a barrier (then the next one runs) or returns. Scheduling is
// deterministic, cheap on a 2-core machine, and exact about divergence: when a thread
// returns while others wait at a barrier, or reaches a barrier after another returned,
// the barrier can never complete; the launch fails with an account of who waits where,
// instead of hanging. A thread that never waits costs no switch at all: the fiber that
// ran it goes on with the next thread of the block.
//
// Switching fibers: on x86-64 a few instructions below save and restore what the ABI
// says a call preserves; swapcontext would also make a system call per switch (for the
// signal mask), which made a barrier-heavy kernel 10x slower. Elsewhere, or with
// -DOPSPEC_SIM_UCONTEXT: ucontext.
//
// Under AddressSanitizer the fiber switches are announced to it, dynamic shared memory
// past the launch's size is poisoned, and fiber stacks are unpoisoned when reused.
#include <cuda_runtime.h>  // the simulator's (runtime/sim/), not CUDA's
#include <sys/mman.h>
#include <unistd.h>

#if defined(__x86_64__) && defined(__ELF__) && !defined(OPSPEC_SIM_UCONTEXT)
#define OPSPEC_SIM_X86_64_SWITCH 1
#else
#include <ucontext.h>
#endif

#include <atomic>
#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#if defined(__SANITIZE_ADDRESS__)
#define OPSPEC_SIM_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define OPSPEC_SIM_ASAN 1
#endif
#endif
#ifdef OPSPEC_SIM_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif

// Device d's stream is g_streams[d]: a stream only names its device.
struct CUstream_st {
  char unused;
};

#ifdef OPSPEC_SIM_X86_64_SWITCH
// opspec_sim_switch(&from_sp, to_sp): pushes the callee-saved registers and the SSE and
// x87 control words on the current stack, stores the stack pointer in *from_sp, then
// loads to_sp and pops the same from there. A new fiber's stack is laid out so that this
// "returns" into its entry function (fiber_init).
extern "C" void opspec_sim_switch(void **from_sp, void *to_sp);
asm(R"(
    .text
    .p2align 4
    .globl opspec_sim_switch
    .hidden opspec_sim_switch
    .type opspec_sim_switch, @function
opspec_sim_switch:
    pushq %rbp
    pushq %rbx
    pushq %r12
    pushq %r13
    pushq %r14
    pushq %r15
    subq $8, %rsp
    stmxcsr (%rsp)
    fnstcw 4(%rsp)
    movq %rsp, (%rdi)
    movq %rsi, %rsp
    ldmxcsr (%rsp)
    fldcw 4(%rsp)
    addq $8, %rsp
    popq %r15
    popq %r14
    popq %r13
    popq %r12
    popq %rbx
    popq %rbp
    ret
    .size opspec_sim_switch, .-opspec_sim_switch
)");
#endif

namespace opspec_sim {

namespace {

thread_local thread_context current;

// ---- devices, streams, errors ---------------------------------------------------------------

std::atomic<int> g_device_count{1};
CUstream_st g_streams[OPSPEC_SIM_MAX_DEVICES];
int device_of(cudaStream_t stream) { return (int)(stream - g_streams); }

thread_local int t_device = 0;                    // cudaSetDevice's, per host thread as in CUDA
thread_local cudaError_t t_last = cudaSuccess;    // cudaGetLastError's
thread_local cudaError_t t_failed = cudaSuccess;  // the last failed launch's code ...
thread_local std::string t_failed_detail;         // ... and what happened

const char *error_text(int code) {
  switch (code) {
    case cudaSuccess:
      return "no error";
    case cudaErrorInvalidValue:
      return "invalid argument";
    case cudaErrorMemoryAllocation:
      return "out of memory";
    case cudaErrorInvalidConfiguration:
      return "invalid configuration argument";
    case cudaErrorInvalidDevicePointer:
      return "invalid device pointer";
    case cudaErrorInvalidDeviceFunction:
      return "invalid device function";
    case cudaErrorNoDevice:
      return "no CUDA-capable device is detected";
    case cudaErrorInvalidDevice:
      return "invalid device ordinal";
    case cudaErrorInvalidResourceHandle:
      return "invalid resource handle";
    case cudaErrorIllegalAddress:
      return "an illegal memory access was encountered";
    case cudaErrorLaunchOutOfResources:
      return "too many resources requested for launch";
    case cudaErrorAssert:
      return "device-side assert triggered";
    case cudaErrorIllegalInstruction:
      return "an illegal instruction was encountered";
    case cudaErrorLaunchFailure:
      return "unspecified launch failure";
    case cudaErrorNotSupported:
      return "operation not supported";
    default:
      return "unrecognized error code";
  }
}

// OPSPEC_CUDA_SIM_ORDER=reverse: blocks and threads from the last.
std::atomic<bool> g_reverse{[] {
  const char *order = getenv("OPSPEC_CUDA_SIM_ORDER");
  return order && strcmp(order, "reverse") == 0;
}()};

// ---- the launch log -------------------------------------------------------------------------

constexpr size_t kLogCapacity = 4096;
std::mutex g_log_mutex;
std::vector<opspec_sim_launch_record> g_log;  // the newest kLogCapacity

void log_launch(int device, int code, dim3 grid, dim3 block, size_t shared_mem) {
  opspec_sim_launch_record r{device, code, {grid.x, grid.y, grid.z}, {block.x, block.y, block.z}, (uint64_t)shared_mem};
  std::lock_guard<std::mutex> lock(g_log_mutex);
  if (g_log.size() == kLogCapacity) g_log.erase(g_log.begin());
  g_log.push_back(r);
}

// ---- dynamic shared memory --------------------------------------------------------------------

const dynamic_shared *g_dynamic_shared = nullptr;  // every OPSPEC_DYNAMIC_SHARED of the library

// Before a launch: what lies past `bytes` is out of bounds for its kernels.
void guard_dynamic_shared(size_t bytes) {
#ifdef OPSPEC_SIM_ASAN
  for (const dynamic_shared *d = g_dynamic_shared; d; d = d->next) {
    char *base = static_cast<char *>(d->storage());
    ASAN_UNPOISON_MEMORY_REGION(base, d->bytes);
    if (bytes < d->bytes) ASAN_POISON_MEMORY_REGION(base + bytes, d->bytes - bytes);
  }
#else
  (void)bytes;
#endif
}

void unguard_dynamic_shared() {
#ifdef OPSPEC_SIM_ASAN
  for (const dynamic_shared *d = g_dynamic_shared; d; d = d->next) ASAN_UNPOISON_MEMORY_REGION(d->storage(), d->bytes);
#endif
}

// At every block: a GPU's shared memory starts with whatever was there; here it starts
// as all-ones bytes (NaN as float or double, -1 as an integer), so that a thread reading
// a value no thread wrote gets a result that shows it.
void scribble_dynamic_shared(size_t bytes) {
  for (const dynamic_shared *d = g_dynamic_shared; d; d = d->next)
    memset(d->storage(), 0xff, bytes < d->bytes ? bytes : d->bytes);
}

// ---- fibers -----------------------------------------------------------------------------------

constexpr size_t kStackBytes = 256 * 1024;  // address space; pages are touched as used
constexpr unsigned kWarp = 32;

struct fiber {
#ifdef OPSPEC_SIM_X86_64_SWITCH
  void *sp = nullptr;  // saved by opspec_sim_switch while switched away
#else
  ucontext_t ctx;
#endif
  char *mapping = nullptr;  // the stack, after a guard page that catches an overflow
  char *stack = nullptr;
  size_t bytes = 0;
  void *fake_stack = nullptr;  // ASan's, while switched away
  int thread = -1;             // the block thread it runs; -1 while idle
  bool fresh = true;           // needs makecontext before it runs
};

enum class tstate : uint8_t { unstarted, ready, running, at_barrier, at_warp, exited };

// A warp's pending exchange (one at a time per warp: its lanes wait in it).
struct warp_pending {
  uint32_t arrived = 0, mask = 0;
  warp_kind kind = warp_sync;
  const char *what = nullptr, *file = nullptr;
  int line = 0;
  uint64_t value[kWarp], result[kWarp];
  int src[kWarp];
};

struct launch_desc {
  kernel_thunk *thunk;
  void (*kernel)();
  void *const *args;
  dim3 grid, block;
};

// The block being run, and what its threads wait for.
struct block_run {
  const launch_desc *launch = nullptr;
  uint3 index{0, 0, 0};
  unsigned nthreads = 0;
  std::vector<tstate> state;
  std::vector<fiber *> fiber_of;
  std::vector<int> ready;  // released threads, resumed in order
  size_t ready_head = 0;
  unsigned next_unstarted = 0, exited = 0;
  bool reverse = false;  // start threads from the last
  int first_exited = -1;
  // __syncthreads(): who waits, where, and the reduction of the _count/_and/_or forms.
  std::vector<int> waiting;
  const char *file = nullptr;
  int line = 0, first = -1, reduce = 0, acc = 0, result = 0;
  std::vector<warp_pending> warps;
  std::vector<uint32_t> exited_lanes;  // per warp
  cudaError_t error = cudaSuccess;
  std::string detail;

  void reset(const launch_desc *l, unsigned n) {
    launch = l;
    nthreads = n;
    state.assign(n, tstate::unstarted);
    fiber_of.assign(n, nullptr);
    ready.clear();
    ready_head = 0;
    next_unstarted = exited = 0;
    first_exited = -1;
    waiting.clear();
    file = nullptr;
    line = 0;
    first = -1;
    reduce = acc = result = 0;
    warps.assign((n + kWarp - 1) / kWarp, warp_pending());
    exited_lanes.assign(warps.size(), 0);
    error = cudaSuccess;
    detail.clear();
  }
  bool has_ready() const { return ready_head < ready.size(); }
  bool has_unstarted() const { return next_unstarted < nthreads; }
  int start_next() {
    unsigned k = next_unstarted++;
    return (int)(reverse ? nthreads - 1 - k : k);
  }
  uint3 thread_index(int t) const {
    dim3 b = launch->block;
    return uint3{(unsigned)t % b.x, (unsigned)t / b.x % b.y, (unsigned)t / (b.x * b.y)};
  }
  // The lanes that exist in warp `w` (the last warp of a block may be partial).
  uint32_t lanes(unsigned w) const {
    unsigned n = nthreads - w * kWarp;
    return n >= kWarp ? 0xffffffffu : (1u << n) - 1;
  }
};

std::string thread_name(const block_run &b, int t) {
  uint3 i = b.thread_index(t);
  char text[64];
  snprintf(text, sizeof text, "(%u, %u, %u)", i.x, i.y, i.z);
  return text;
}

// One per host thread that launches: the main context and the fiber pool.
struct scheduler {
#ifdef OPSPEC_SIM_X86_64_SWITCH
  void *main_sp = nullptr;
#else
  ucontext_t main;
#endif
  void *main_fake_stack = nullptr;
  const void *main_bottom = nullptr;
  size_t main_bytes = 0;
  std::vector<std::unique_ptr<fiber>> fibers;
  std::vector<fiber *> idle;
  block_run block;
  bool in_launch = false;
  fiber *running = nullptr;

  ~scheduler() {
    for (auto &f : fibers)
      if (f->mapping) munmap(f->mapping, f->bytes + (size_t)getpagesize());
  }
};

thread_local std::unique_ptr<scheduler> t_scheduler;

scheduler &sched() {
  if (!t_scheduler) t_scheduler.reset(new scheduler());
  return *t_scheduler;
}

void set_thread(const block_run &b, int t) { current.thread_idx = b.thread_index(t); }

// ASan must know which stack is live: announce every switch.
inline void start_switch(void **fake_stack_save, const void *bottom, size_t bytes) {
#ifdef OPSPEC_SIM_ASAN
  __sanitizer_start_switch_fiber(fake_stack_save, bottom, bytes);
#else
  (void)fake_stack_save, (void)bottom, (void)bytes;
#endif
}
inline void finish_switch(void *fake_stack_save, const void **bottom_old, size_t *bytes_old) {
#ifdef OPSPEC_SIM_ASAN
  __sanitizer_finish_switch_fiber(fake_stack_save, bottom_old, bytes_old);
#else
  (void)fake_stack_save, (void)bottom_old, (void)bytes_old;
#endif
}

void fiber_main();

// Makes `f` start in fiber_main at its next switch.
void fiber_init(fiber *f) {
#ifdef OPSPEC_SIM_X86_64_SWITCH
  // From the top: a zero return address for fiber_main (it never returns, and an entry
  // rsp of 8 mod 16 is what the ABI promises a called function), the address the switch
  // returns to, six zeroed registers, and this thread's control words.
  uintptr_t top = ((uintptr_t)(f->stack + f->bytes)) & ~(uintptr_t)15;
  void **sp = (void **)top;
  *--sp = nullptr;
  *--sp = (void *)&fiber_main;
  for (int r = 0; r < 6; ++r) *--sp = nullptr;
  uint32_t control[2];
  asm volatile("stmxcsr %0\n\tfnstcw %1" : "=m"(control[0]), "=m"(control[1]));
  *--sp = nullptr;
  memcpy(sp, control, sizeof control);
  f->sp = sp;
#else
  getcontext(&f->ctx);
  f->ctx.uc_stack.ss_sp = f->stack;
  f->ctx.uc_stack.ss_size = f->bytes;
  f->ctx.uc_link = nullptr;  // fiber_main never returns
  makecontext(&f->ctx, fiber_main, 0);
#endif
  f->fresh = false;
}

// From the scheduler into fiber `f` (which runs f->thread); returns when it switches back.
void resume(scheduler &s, fiber *f) {
  if (f->fresh) fiber_init(f);
  s.running = f;
  set_thread(s.block, f->thread);
  start_switch(&s.main_fake_stack, f->stack, f->bytes);
#ifdef OPSPEC_SIM_X86_64_SWITCH
  opspec_sim_switch(&s.main_sp, f->sp);
#else
  swapcontext(&s.main, &f->ctx);
#endif
  finish_switch(s.main_fake_stack, nullptr, nullptr);
  s.running = nullptr;
}

// From the running fiber back to the scheduler; returns when the scheduler resumes it.
void suspend(scheduler &s) {
  fiber *f = s.running;
  start_switch(&f->fake_stack, s.main_bottom, s.main_bytes);
#ifdef OPSPEC_SIM_X86_64_SWITCH
  opspec_sim_switch(&f->sp, s.main_sp);
#else
  swapcontext(&f->ctx, &s.main);
#endif
  finish_switch(f->fake_stack, &s.main_bottom, &s.main_bytes);
}

// Ends the block with `code`: the running fiber switches away for good.
[[noreturn]] void fail(scheduler &s, cudaError_t code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void fail(scheduler &s, cudaError_t code, const char *fmt, ...) {
  char text[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  s.block.error = code;
  s.block.detail = text;
  suspend(s);
  abort();  // the scheduler never resumes a failed block's threads
}

fiber *take_fiber(scheduler &s) {
  if (!s.idle.empty()) {
    fiber *f = s.idle.back();
    s.idle.pop_back();
    return f;
  }
  size_t page = (size_t)getpagesize();
  void *m =
      mmap(nullptr, kStackBytes + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (m == MAP_FAILED) return nullptr;
  mprotect(m, page, PROT_NONE);
  std::unique_ptr<fiber> f(new fiber());
  f->mapping = static_cast<char *>(m);
  f->stack = f->mapping + page;
  f->bytes = kStackBytes;
  s.fibers.push_back(std::move(f));
  return s.fibers.back().get();
}

// A thread returned from the kernel.
void thread_exited(scheduler &s, int t) {
  block_run &b = s.block;
  b.state[t] = tstate::exited;
  if (b.exited++ == 0) b.first_exited = t;
  unsigned w = (unsigned)t / kWarp, lane = (unsigned)t % kWarp;
  b.exited_lanes[w] |= 1u << lane;
  if (!b.waiting.empty())
    fail(s, cudaErrorLaunchFailure,
         "barrier divergence: thread %s returned while %zu other thread(s) of its block wait at __syncthreads() at "
         "%s:%d, "
         "which it can no longer reach (every thread of a block must reach every __syncthreads())",
         thread_name(b, t).c_str(), b.waiting.size(), b.file, b.line);
  const warp_pending &p = b.warps[w];
  if (p.arrived && (p.mask >> lane & 1))
    fail(s, cudaErrorLaunchFailure,
         "warp divergence: thread %s (lane %u) returned while lanes 0x%08x of its warp wait for it at %s at %s:%d",
         thread_name(b, t).c_str(), lane, p.arrived, p.what, p.file, p.line);
}

// The body of every fiber: run the assigned thread; while nothing else is ready, go on
// with the next thread of the block in place; then idle until given another.
void fiber_main() {
  scheduler &s = sched();
  finish_switch(nullptr, &s.main_bottom, &s.main_bytes);
  for (;;) {
    fiber *f = s.running;
    block_run &b = s.block;
    for (int t = f->thread;;) {
      b.state[t] = tstate::running;
      b.launch->thunk(b.launch->kernel, b.launch->args);
      thread_exited(s, t);
      if (b.has_ready() || !b.has_unstarted()) break;
      t = b.start_next();
      f->thread = t;
      b.fiber_of[t] = f;
      set_thread(b, t);
    }
    f->thread = -1;
    s.idle.push_back(f);
    suspend(s);
  }
}

// Nothing ready, nothing to start, yet threads wait for lanes that wait elsewhere (a warp
// intrinsic against a __syncthreads()): the block's failure, naming where they wait.
void report_deadlock(block_run &b) {
  for (unsigned t = 0; t < b.nthreads; ++t) {
    if (b.state[t] != tstate::at_barrier && b.state[t] != tstate::at_warp) continue;
    const warp_pending &p = b.warps[t / kWarp];
    b.error = cudaErrorLaunchFailure;
    char text[512];
    if (b.state[t] == tstate::at_warp)
      snprintf(text, sizeof text,
               "deadlock: lanes 0x%08x of warp %u wait at %s at %s:%d for lanes 0x%08x that wait elsewhere", p.arrived,
               t / kWarp, p.what, p.file, p.line, p.mask & ~p.arrived);
    else
      snprintf(text, sizeof text,
               "deadlock: %zu thread(s) wait at __syncthreads() at %s:%d while others wait in a warp intrinsic",
               b.waiting.size(), b.file, b.line);
    b.detail = text;
    return;
  }
}

// After a failed block: threads left waiting are abandoned, and their fibers start
// afresh next time.
void abandon_waiting(scheduler &s) {
  for (auto &f : s.fibers)
    if (f->thread >= 0) {
      f->thread = -1;
      f->fresh = true;
      f->fake_stack = nullptr;
#ifdef OPSPEC_SIM_ASAN
      ASAN_UNPOISON_MEMORY_REGION(f->stack, f->bytes);  // the abandoned frames' redzones
#endif
      s.idle.push_back(f.get());
    }
}

// Runs every thread of the current block to completion, or until it fails.
void run_block(scheduler &s) {
  block_run &b = s.block;
  while (b.error == cudaSuccess) {
    fiber *f = nullptr;
    if (b.has_ready()) {
      f = b.fiber_of[b.ready[b.ready_head++]];
    } else if (b.has_unstarted()) {
      if (!(f = take_fiber(s))) {
        b.error = cudaErrorMemoryAllocation;
        b.detail = "no memory for the stack of a simulated thread";
        break;
      }
      int t = b.start_next();
      f->thread = t;
      b.fiber_of[t] = f;
    } else {
      break;
    }
    resume(s, f);
  }
  if (b.error == cudaSuccess) report_deadlock(b);
  if (b.error != cudaSuccess) abandon_waiting(s);
}

void set_failure(cudaError_t code, std::string detail) {
  t_failed = code;
  t_failed_detail = std::move(detail);
  t_last = code;
}

bool in_kernel() { return t_scheduler && t_scheduler->running; }

}  // namespace

// ---- what kernels call ----------------------------------------------------------------------

const thread_context &context() { return current; }

dynamic_shared::dynamic_shared(void *(*get)(), size_t size) : storage(get), bytes(size), next(g_dynamic_shared) {
  g_dynamic_shared = this;  // at load time, one library initialiser at a time
}

int syncthreads(int reduce, int predicate, const char *file, int line) {
  scheduler &s = sched();
  block_run &b = s.block;
  int t = s.running->thread;
  if (b.exited)
    fail(s, cudaErrorLaunchFailure,
         "barrier divergence: thread %s reached __syncthreads() at %s:%d, but thread %s of its block has returned and "
         "can "
         "never reach it (every thread of a block must reach every __syncthreads())",
         thread_name(b, t).c_str(), file, line, thread_name(b, b.first_exited).c_str());
  if (b.waiting.empty()) {
    b.file = file;
    b.line = line;
    b.first = t;
    b.reduce = reduce;
    b.acc = reduce == 2 ? 1 : 0;
  } else if (line != b.line || strcmp(file, b.file) != 0 || reduce != b.reduce) {
    fail(s, cudaErrorLaunchFailure,
         "barrier divergence: thread %s waits at __syncthreads() at %s:%d while thread %s waits at a different one at "
         "%s:%d",
         thread_name(b, t).c_str(), file, line, thread_name(b, b.first).c_str(), b.file, b.line);
  }
  if (reduce == 1)
    b.acc += predicate;
  else if (reduce == 2)
    b.acc &= predicate;
  else if (reduce == 3)
    b.acc |= predicate;
  if (b.waiting.size() + 1 == b.nthreads) {
    // The last to arrive releases the others, in the order they came, and goes on.
    for (int w : b.waiting) {
      b.state[w] = tstate::ready;
      b.ready.push_back(w);
    }
    b.waiting.clear();
    b.result = b.acc;
    return b.result;
  }
  b.waiting.push_back(t);
  b.state[t] = tstate::at_barrier;
  suspend(s);
  return b.result;  // set by the release; no barrier can complete before this reads it
}

// Fails the launch where a warp intrinsic's mask cannot be met: lanes past the block's
// last thread, the caller's own lane missing, lanes that have returned.
static void check_warp_mask(scheduler &s, const char *what, unsigned mask, const char *file, int line) {
  block_run &b = s.block;
  int t = s.running->thread;
  unsigned w = (unsigned)t / kWarp, lane = (unsigned)t % kWarp;
  auto me = [&] { return thread_name(b, t); };  // for messages only
  if (mask & ~b.lanes(w))
    fail(s, cudaErrorLaunchFailure,
         "%s at %s:%d by thread %s: mask 0x%08x names lanes past the block's last thread (warp %u has lanes 0x%08x)",
         what, file, line, me().c_str(), mask, w, b.lanes(w));
  if (!(mask >> lane & 1))
    fail(s, cudaErrorLaunchFailure, "%s at %s:%d by thread %s: its own lane %u is not in the mask 0x%08x", what, file,
         line, me().c_str(), lane, mask);
  if (mask & b.exited_lanes[w])
    fail(s, cudaErrorLaunchFailure,
         "warp divergence: %s at %s:%d by thread %s waits for lanes 0x%08x of its warp, which have returned", what,
         file, line, me().c_str(), mask & b.exited_lanes[w]);
}

// The last lane of warp w has arrived (thread t): every lane's answer now, and the ones
// that wait made ready.
static void complete_warp(block_run &b, warp_pending &p, unsigned w, int t) {
  uint64_t ballot = 0;
  for (unsigned l = 0; l < kWarp; ++l)
    if ((p.mask >> l & 1) && p.value[l]) ballot |= 1ull << l;
  for (unsigned l = 0; l < kWarp; ++l) {
    if (!(p.mask >> l & 1)) continue;
    unsigned from = (unsigned)p.src[l];
    p.result[l] = p.kind == warp_vote ? ballot : from < kWarp && (p.mask >> from & 1) ? p.value[from] : p.value[l];
    int other = (int)(w * kWarp + l);
    if (other != t) {
      b.state[other] = tstate::ready;
      b.ready.push_back(other);
    }
  }
  p.arrived = 0;
}

uint64_t warp_exchange(warp_kind kind, const char *what, unsigned mask, uint64_t value, int src, const char *file,
                       int line) {
  scheduler &s = sched();
  block_run &b = s.block;
  int t = s.running->thread;
  unsigned w = (unsigned)t / kWarp, lane = (unsigned)t % kWarp;
  check_warp_mask(s, what, mask, file, line);
  warp_pending &p = b.warps[w];
  if (!p.arrived) {
    p.kind = kind;
    p.mask = mask;
    p.what = what;
    p.file = file;
    p.line = line;
  } else if (p.kind != kind || p.mask != mask) {
    fail(s, cudaErrorLaunchFailure,
         "warp divergence: thread %s calls %s at %s:%d with mask 0x%08x while lanes 0x%08x wait at %s at %s:%d with "
         "mask 0x%08x",
         thread_name(b, t).c_str(), what, file, line, mask, p.arrived, p.what, p.file, p.line, p.mask);
  }
  p.value[lane] = value;
  p.src[lane] = src;
  p.arrived |= 1u << lane;
  if (p.arrived == p.mask) {
    complete_warp(b, p, w, t);
    return p.result[lane];
  }
  b.state[t] = tstate::at_warp;
  suspend(s);
  return p.result[lane];
}

unsigned lane_id() {
  const dim3 &d = current.block_dim;
  const uint3 &i = current.thread_idx;
  return (i.x + d.x * (i.y + d.y * i.z)) % kWarp;
}

unsigned active_mask() {
  if (!in_kernel()) return 0;
  const block_run &b = t_scheduler->block;
  unsigned w = (unsigned)t_scheduler->running->thread / kWarp;
  return b.lanes(w) & ~b.exited_lanes[w];
}

void trap(const char *file, int line) {
  scheduler &s = sched();
  fail(s, cudaErrorLaunchFailure, "__trap() at %s:%d by thread %s", file, line,
       thread_name(s.block, s.running->thread).c_str());
}

int record_error(cudaError_t code) {
  if (code != cudaSuccess) t_last = code;
  return code;
}

cudaError_t last_error(bool reset) {
  cudaError_t code = t_last;
  if (reset) t_last = cudaSuccess;
  return code;
}

long long clock_ns() {
  return (long long)std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

cudaError_t check_stream(cudaStream_t stream) {
  if (stream && (stream < g_streams || stream >= g_streams + OPSPEC_SIM_MAX_DEVICES))
    return (cudaError_t)record_error(cudaErrorInvalidResourceHandle);
  return cudaSuccess;
}

cudaError_t memset_async(void *ptr, int value, size_t bytes, cudaStream_t stream) {
  cudaError_t err = check_stream(stream);
  if (err != cudaSuccess) return err;
  if (bytes && !ptr) return (cudaError_t)record_error(cudaErrorInvalidValue);
  if (bytes) memset(ptr, value, bytes);
  return cudaSuccess;
}

// What a GPU checks at launch: the same limits opspec_launch_prepare enforces first, and
// the ones it leaves to the device (dynamic shared memory, the stream's device). The
// code, with `detail` where CUDA's own text would not say enough.
static cudaError_t refuse_launch(dim3 grid, dim3 block, size_t shared_mem, cudaStream_t stream, int device,
                                 std::string &detail) {
  uint64_t threads = (uint64_t)block.x * block.y * block.z;
  if (!grid.x || !grid.y || !grid.z || grid.y > 65535 || grid.z > 65535 || grid.x > 2147483647u || !threads ||
      threads > 1024 || block.x > 1024 || block.y > 1024 || block.z > 64)
    return cudaErrorInvalidConfiguration;
  if (shared_mem > OPSPEC_SIM_DYNAMIC_SHARED_BYTES) {
    detail = "invalid argument: " + std::to_string(shared_mem) + " bytes of dynamic shared memory, more than the " +
             std::to_string(OPSPEC_SIM_DYNAMIC_SHARED_BYTES) + " a kernel gets without cudaFuncSetAttribute";
    return cudaErrorInvalidValue;
  }
  if (check_stream(stream) != cudaSuccess) return cudaErrorInvalidResourceHandle;
  if (stream && device_of(stream) != device) {
    detail = "invalid resource handle: a launch into the stream of device " + std::to_string(device_of(stream)) +
             " while device " + std::to_string(device) + " is current (cudaSetDevice)";
    return cudaErrorInvalidResourceHandle;
  }
  if (in_kernel() || (t_scheduler && t_scheduler->in_launch)) {
    detail = "operation not supported: a kernel launch from inside a kernel";
    return cudaErrorNotSupported;
  }
  return cudaSuccess;
}

// Runs the grid's blocks one after the other (x fastest; last first under
// opspec_sim_set_reverse), until one fails: s.block then holds the failure.
static void run_grid(scheduler &s, const launch_desc &l, dim3 grid, dim3 block, size_t shared_mem) {
  bool reverse = g_reverse.load();
  s.in_launch = true;
  thread_context saved = current;
  current.block_dim = block;
  current.grid_dim = grid;
  guard_dynamic_shared(shared_mem);
  uint64_t nblocks = (uint64_t)grid.x * grid.y * grid.z;
  for (uint64_t k = 0; k < nblocks; ++k) {
    uint64_t at = reverse ? nblocks - 1 - k : k;
    s.block.reset(&l, block.x * block.y * block.z);
    s.block.reverse = reverse;
    s.block.index = uint3{(unsigned)(at % grid.x), (unsigned)(at / grid.x % grid.y), (unsigned)(at / grid.x / grid.y)};
    current.block_idx = s.block.index;
    scribble_dynamic_shared(shared_mem);
    run_block(s);
    if (s.block.error != cudaSuccess) break;
  }
  unguard_dynamic_shared();
  current = saved;
  s.in_launch = false;
}

cudaError_t launch(kernel_thunk *thunk, void (*kernel)(), void *const *args, dim3 grid, dim3 block, size_t shared_mem,
                   cudaStream_t stream) {
  int device = t_device;
  std::string detail;
  cudaError_t code = refuse_launch(grid, block, shared_mem, stream, device, detail);
  log_launch(device, code, grid, block, shared_mem);
  if (code != cudaSuccess) {
    set_failure(code, detail.empty() ? error_text(code) : detail);
    return code;
  }
  scheduler &s = sched();
  launch_desc l{thunk, kernel, args, grid, block};
  run_grid(s, l, grid, block, shared_mem);
  if (s.block.error != cudaSuccess) {
    const uint3 &i = s.block.index;
    char where[96];
    snprintf(where, sizeof where, " (block (%u, %u, %u) of a (%u, %u, %u) grid)", i.x, i.y, i.z, grid.x, grid.y,
             grid.z);
    set_failure(s.block.error, s.block.detail + where);
    return s.block.error;
  }
  return cudaSuccess;
}

}  // namespace opspec_sim

// ---- the C interface (opspec/cuda_sim.h) ---------------------------------------------------

using namespace opspec_sim;

extern "C" int opspec_sim_set_device_count(int count) {
  if (count < 1 || count > OPSPEC_SIM_MAX_DEVICES) return cudaErrorInvalidValue;
  g_device_count.store(count);
  return cudaSuccess;
}

extern "C" int opspec_sim_device_count(int *count) {
  *count = g_device_count.load();
  return cudaSuccess;
}

extern "C" int opspec_sim_get_device(int *device) {
  *device = t_device;
  return cudaSuccess;
}

extern "C" int opspec_sim_set_device(int device) {
  if (device < 0 || device >= g_device_count.load()) {
    set_failure(cudaErrorInvalidDevice, "invalid device ordinal: " + std::to_string(device) +
                                            " (the simulator models " + std::to_string(g_device_count.load()) +
                                            " device(s))");
    return cudaErrorInvalidDevice;
  }
  t_device = device;
  return cudaSuccess;
}

extern "C" void *opspec_sim_device_stream(int device) {
  return device >= 0 && device < g_device_count.load() ? &g_streams[device] : nullptr;
}

extern "C" const char *opspec_sim_error_string(int code) {
  if (code != cudaSuccess && code == t_failed && !t_failed_detail.empty()) return t_failed_detail.c_str();
  return error_text(code);
}

extern "C" int opspec_sim_set_reverse_order(int reverse) { return g_reverse.exchange(reverse != 0); }

extern "C" size_t opspec_sim_take_launches(opspec_sim_launch_record *out, size_t max) {
  std::lock_guard<std::mutex> lock(g_log_mutex);
  size_t n = g_log.size() < max ? g_log.size() : max;
  for (size_t i = 0; i < n; ++i) out[i] = g_log[i];
  g_log.clear();
  return n;
}
