/* A bare XLA FFI handler in pure C, for measuring what opspec's call path costs on top
 * of XLA's own: out = x + y on float32 buffers, nothing checked but the metadata query.
 * Built by the benchmarks (bench/native.py), not part of the wheel. */
#include <stdint.h>
#include <stddef.h>

#include "opspec/ffi_compat.h" /* xla/ffi/api/c_api.h under one set of names */

XLA_FFI_Error *bare_add_f32(XLA_FFI_CallFrame *cf) {
  for (opspec_ffi_extension *ext = cf->extension_start; ext; ext = ext->next) {
    if (ext->type != XLA_FFI_Extension_Metadata) continue;
    XLA_FFI_Metadata *md = ((XLA_FFI_Metadata_Extension *)ext)->metadata;
    md->api_version.major_version = XLA_FFI_API_MAJOR;
    md->api_version.minor_version = XLA_FFI_API_MINOR;
    md->traits = 0;
    return NULL;
  }
  const XLA_FFI_Buffer *x = (const XLA_FFI_Buffer *)cf->args.args[0];
  const XLA_FFI_Buffer *y = (const XLA_FFI_Buffer *)cf->args.args[1];
  XLA_FFI_Buffer *out = (XLA_FFI_Buffer *)cf->rets.rets[0];
  int64_t n = 1;
  for (int64_t d = 0; d < x->rank; ++d) n *= x->dims[d];
  const float *restrict a = (const float *)x->data;
  const float *restrict b = (const float *)y->data;
  float *restrict o = (float *)out->data;
#ifdef BARE_OMP_IF
  /* The variant with opspec's loop shape: an OpenMP loop that goes parallel only above a
   * threshold, to measure what entering the runtime costs when it runs serially. */
#pragma omp parallel for if (n >= 32768)
#endif
  for (int64_t i = 0; i < n; ++i) o[i] = a[i] + b[i];
  return NULL;
}
