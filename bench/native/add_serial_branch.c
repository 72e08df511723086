/* opspec's `add` handler built from the repository's own sources (runtime/src/ffi.c,
 * handler.c, cpu.c and generated/ops/add_ffi.c, compiled together by bench/native.py),
 * with the CPU kernel below in place of generated/ops/add_cpu.c: the same body, but the
 * loop runs without entering OpenMP when it stays serial (the `omp if` clause still
 * calls GOMP_parallel, which costs more than the rest of the call). It measures what the
 * call costs once the generator emits that serial branch; not part of the wheel. */
#include <stdint.h>

#include "opspec/cpu.h"
#include "ops/add.h"

#define ADD_KERNEL(name, ctype)                                                                                 \
  static void name(const void *opspec_argp) {                                                                   \
    typedef ctype T;                                                                                            \
    const opspec_add_args *opspec_args = opspec_argp;                                                           \
    const T *OPSPEC_RESTRICT x = (const T *)opspec_args->x.data;                                                \
    const int64_t x_size = opspec_args->x.size;                                                                 \
    const T *OPSPEC_RESTRICT y = (const T *)opspec_args->y.data;                                                \
    T *OPSPEC_RESTRICT out = (T *)opspec_args->out.data;                                                        \
    if (!opspec_cpu_parallel(x_size)) {                                                                         \
      for (int64_t i = 0; i < x_size; ++i) out[i] = x[i] + y[i];                                                \
      return;                                                                                                   \
    }                                                                                                           \
    _Pragma("omp parallel for num_threads(opspec_cpu_threads())") for (int64_t i = 0; i < x_size; ++i) out[i] = \
        x[i] + y[i];                                                                                            \
  }

ADD_KERNEL(add_f32, float)
ADD_KERNEL(add_f64, double)

opspec_cpu_kernel *const opspec_add_cpu_variants[2] = {add_f32, add_f64};
