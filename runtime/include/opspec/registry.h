/* The table of every op in the extension, generated into generated/registry.c. */
#ifndef OPSPEC_REGISTRY_H
#define OPSPEC_REGISTRY_H

#include <stddef.h>

#include "opspec/ffi.h"

typedef struct opspec_op_entry {
  const char *name;       /* FFI target "opspec_<name>" */
  XLA_FFI_Handler *cpu;   /* platform "cpu" */
  XLA_FFI_Handler *cuda;  /* platform "CUDA", or NULL (no CUDA body, or built without CUDA) */
} opspec_op_entry;

/* Ops with a CUDA body name their handler through this, so the table compiles the same
 * with and without the CUDA part. */
#ifdef OPSPEC_WITH_CUDA
#define OPSPEC_CUDA_HANDLER(handler) handler
#else
#define OPSPEC_CUDA_HANDLER(handler) NULL
#endif

extern const opspec_op_entry opspec_op_table[];
extern const size_t opspec_op_count;

#endif /* OPSPEC_REGISTRY_H */
