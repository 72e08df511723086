/* A handler that runs another one, from XLA's own call frame, with XLA's own API table,
 * except that the table says it ends before XLA_FFI_DeviceOrdinal_Get: what a handler
 * sees under a jaxlib whose FFI has no such call (FFI API 0.1, jaxlib 0.5-0.7).
 * tests/python/test_cuda_sim.py runs an op's simulated CUDA handler through it. */
#include <string.h>

#include "opspec/ffi_cuda.h"

#define OPSPEC_TEST_EXPORT __attribute__((visibility("default")))

static XLA_FFI_Handler *opspec_test_inner;

OPSPEC_TEST_EXPORT void opspec_test_set_inner(XLA_FFI_Handler *handler) { opspec_test_inner = handler; }

OPSPEC_TEST_EXPORT XLA_FFI_Error *opspec_test_older_api(XLA_FFI_CallFrame *cf) {
  /* Some jaxlibs ask for the metadata with no API table at all (jaxlib 0.5 does, when the
   * target is registered): nothing to shrink. */
  if (!cf->api) return opspec_test_inner(cf);
  XLA_FFI_Api api;
  memset(&api, 0, sizeof api);
  /* Copy no more than XLA's table holds (an older XLA's is smaller than this header's). */
  memcpy(&api, cf->api, cf->api->struct_size < sizeof api ? cf->api->struct_size : sizeof api);
  api.struct_size = OPSPEC_FFI_DEVICE_ORDINAL_SLOT; /* the fields before the slot are the older table */
  XLA_FFI_CallFrame frame = *cf;
  frame.api = &api;
  return opspec_test_inner(&frame);
}
