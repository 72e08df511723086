/* What a package's extension is made of: the table of every op, generated into
 * <generated>/registry.c, and how the extension was built. */
#ifndef OPSPEC_REGISTRY_H
#define OPSPEC_REGISTRY_H

#include <stddef.h>

#include "opspec/ffi.h"

typedef struct opspec_op_entry {
  const char *name;          /* FFI target "<package>_<name>" (opspec_package_name) */
  XLA_FFI_Handler *cpu;      /* platform "cpu" */
  XLA_FFI_Handler *cuda;     /* platform "CUDA", or NULL (no CUDA body, or built without CUDA) */
  XLA_FFI_Handler *cuda_sim; /* platform "cpu": the CUDA kernels simulated, or NULL (no CUDA
                              * body, or built without the simulator) */
} opspec_op_entry;

/* Ops with a CUDA body name their handlers through these, so the table compiles the same
 * with and without each CUDA backend. */
#ifdef OPSPEC_WITH_CUDA
#define OPSPEC_CUDA_HANDLER(handler) handler
#else
#define OPSPEC_CUDA_HANDLER(handler) NULL
#endif
#ifdef OPSPEC_WITH_CUDA_SIM
#define OPSPEC_CUDA_SIM_HANDLER(handler) handler
#else
#define OPSPEC_CUDA_SIM_HANDLER(handler) NULL
#endif

/* The Python package the table belongs to: "opspec" for the shipped library, the name
 * given to opspec_add_extension for a user's. It prefixes every FFI target name, so two
 * packages may each have an op "add" in one process. */
extern const char opspec_package_name[];
extern const opspec_op_entry opspec_op_table[];
extern const size_t opspec_op_count;

/* How the extension was built, for <package>.build_info(). CMake writes it from
 * runtime/src/extension_info.c.in (opspec_add_extension). */
typedef struct opspec_build_desc {
  const char *package_version; /* the package's own version ("" if unknown) */
  const char *opspec_version;  /* the opspec runtime and generator it was built with */
  const char *jaxlib_version;  /* the jaxlib whose xla/ffi/api/c_api.h it compiled against */
  const char *c_compiler;      /* "GNU 12.2.0" */
  const char *cuda_compiler;   /* "NVIDIA 13.0.88", or "" without CUDA */
} opspec_build_desc;

extern const opspec_build_desc opspec_build;

#endif /* OPSPEC_REGISTRY_H */
