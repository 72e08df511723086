/* What every generated <op>_ffi.c spells the same way, once: its descriptor's tables and
 * its XLA FFI handlers (included by opspec/ffi.h).
 *
 * A handler only declares its op's args struct and hands it, with the op's descriptor,
 * to the runtime's one path for its backend (opspec_run_cpu_range or opspec_run_cpu,
 * opspec_run_cuda). The macros write the functions that were generated text: the same
 * functions, named opspec_<op>_cpu, opspec_<op>_cuda and opspec_<op>_cuda_sim as
 * <op>.h declares them, from the names every generated file of the op uses
 * (opspec_<op>_args, opspec_<op>_desc, opspec_<op>_cpu_variants,
 * opspec_<op>_cuda_launch, opspec_<op>_cuda_sim_launch).
 */
#ifndef OPSPEC_HANDLERS_H
#define OPSPEC_HANDLERS_H

/* One table of an opspec_op_desc initializer: its count field (n<field>) and its
 * pointer, from the static array `array`. */
#define OPSPEC_DESC_TABLE(field, array) .n##field = OPSPEC_COUNT(array), .field = array

/* The CPU handler opspec_<op>_cpu; `run` is opspec_run_cpu_range for a portable kernel,
 * opspec_run_cpu for a raw `cpu:` body. */
#define OPSPEC_CPU_HANDLER(op, run)                                         \
  XLA_FFI_Error *opspec_##op##_cpu(XLA_FFI_CallFrame *cf) {                 \
    opspec_##op##_args args;                                                \
    return run(cf, &opspec_##op##_desc, &args, opspec_##op##_cpu_variants); \
  }

/* The CUDA handler opspec_<op>_cuda, on a GPU (built with OPSPEC_WITH_CUDA). */
#ifdef OPSPEC_WITH_CUDA
#define OPSPEC_GPU_HANDLER(op)                                                                            \
  XLA_FFI_Error *opspec_##op##_cuda(XLA_FFI_CallFrame *cf) {                                              \
    opspec_##op##_args args;                                                                              \
    return opspec_run_cuda(cf, &opspec_##op##_desc, &args, &opspec_cuda_gpu, &opspec_##op##_cuda_launch); \
  }
#else
#define OPSPEC_GPU_HANDLER(op)
#endif

/* The same kernels on the CUDA simulator (OPSPEC_WITH_CUDA_SIM, docs/cuda-simulator.md):
 * opspec_<op>_cuda_sim. */
#ifdef OPSPEC_WITH_CUDA_SIM
#define OPSPEC_SIM_HANDLER(op)                                                                                \
  XLA_FFI_Error *opspec_##op##_cuda_sim(XLA_FFI_CallFrame *cf) {                                              \
    opspec_##op##_args args;                                                                                  \
    return opspec_run_cuda(cf, &opspec_##op##_desc, &args, &opspec_cuda_sim, &opspec_##op##_cuda_sim_launch); \
  }
#else
#define OPSPEC_SIM_HANDLER(op)
#endif

/* Every handler of an op with CUDA kernels: on CPU, and on the backends the build has. */
#define OPSPEC_HANDLERS(op, run) OPSPEC_CPU_HANDLER(op, run) OPSPEC_GPU_HANDLER(op) OPSPEC_SIM_HANDLER(op)

#endif /* OPSPEC_HANDLERS_H */
