/* xla/ffi/api/c_api.h under the names opspec uses, for every header from jaxlib 0.5 on.
 *
 * XLA renames things in the FFI header without changing their layout (a "minor" change
 * in the header's own terms). FFI API 0.4 (jaxlib 0.11.1) renamed two that opspec uses:
 *
 *   FFI API 0.1 - 0.3 (jaxlib 0.5 - 0.11.0)   FFI API 0.4 on (jaxlib 0.11.1, 0.12, ...)
 *   XLA_FFI_Extension_Base                    XLA_FFI_InternalExtension
 *   XLA_FFI_Error_GetMessage(_Args)           XLA_FFI_Error_GetDetails(_Args)
 *
 * The second keeps the slot in XLA_FFI_Api and the fields of the first (error, message)
 * and appends one output (errc); a caller that passes the shorter 0.1 struct gets only
 * the message. This header picks the spelling from the header's declared version
 * (XLA_FFI_API_MAJOR/MINOR), never from jax's version string, and gives opspec's code
 * (runtime, generated handlers, the benchmarks' native code) one name for each:
 *
 *   opspec_ffi_extension            the node of a call frame's extension list
 *   opspec_ffi_error_message_args   the arguments of the "message of an error" call
 *   OPSPEC_FFI_ERROR_MESSAGE        that call's field in XLA_FFI_Api
 *
 * A future rename gets one more branch here; ffi_abi.c proves the layouts are unchanged.
 */
#ifndef OPSPEC_FFI_COMPAT_H
#define OPSPEC_FFI_COMPAT_H

#include "xla/ffi/api/c_api.h"

/* The header's FFI API version as one number, major * 1000 + minor. */
#define OPSPEC_FFI_HEADER_VERSION (XLA_FFI_API_MAJOR * 1000 + XLA_FFI_API_MINOR)

#if OPSPEC_FFI_HEADER_VERSION >= 4
typedef XLA_FFI_InternalExtension opspec_ffi_extension;
typedef XLA_FFI_Error_GetDetails_Args opspec_ffi_error_message_args;
#define OPSPEC_FFI_ERROR_MESSAGE_ARGS_SIZE XLA_FFI_Error_GetDetails_Args_STRUCT_SIZE
#define OPSPEC_FFI_ERROR_MESSAGE           XLA_FFI_Error_GetDetails
#else
typedef XLA_FFI_Extension_Base opspec_ffi_extension;
typedef XLA_FFI_Error_GetMessage_Args opspec_ffi_error_message_args;
#define OPSPEC_FFI_ERROR_MESSAGE_ARGS_SIZE XLA_FFI_Error_GetMessage_Args_STRUCT_SIZE
#define OPSPEC_FFI_ERROR_MESSAGE           XLA_FFI_Error_GetMessage
#endif

#endif /* OPSPEC_FFI_COMPAT_H */
