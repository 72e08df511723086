/* Compile-time proof that the handlers can declare FFI API 0.1 (OPSPEC_FFI_API_MINOR).
 *
 * A handler that declares 0.1 is handed 0.1 structs by a 0.1 framework (jaxlib 0.5-0.7)
 * and reads them with the offsets of whatever header it was compiled against. That is
 * sound only while every struct, field and code opspec touches sits where FFI API 0.1
 * put it. XLA only appends (new fields at the end of a struct, new functions at the end
 * of XLA_FFI_Api), so these checks hold for every header from 0.1 up to the one this
 * build uses; if one fails, a newer header moved something opspec relies on, and
 * OPSPEC_FFI_API_MINOR must not claim 0.1 any more.
 *
 * The numbers are the offsets in jaxlib 0.5.3's xla/ffi/api/c_api.h (FFI API 0.1) on
 * 64-bit targets, the only ones jaxlib ships for.
 */
#include <stddef.h>

#include "opspec/dtypes.h"
#include "opspec/ffi.h"
#include "opspec/ffi_cuda.h"

_Static_assert(sizeof(void *) == 8 && sizeof(size_t) == 8, "opspec supports 64-bit targets only, like jaxlib");

#define OPSPEC_ABI_AT(type, field, offset) \
  _Static_assert(offsetof(type, field) == (offset), #type "." #field " is not at its FFI API 0.1 offset " #offset)
#define OPSPEC_ABI_IS(value, expected) \
  _Static_assert((int)(value) == (int)(expected), #value " is not its FFI API 0.1 value " #expected)
/* Structs opspec fills and XLA reads: XLA checks struct_size >= its own size, so the
 * header's size may grow but never shrink below 0.1's. */
#define OPSPEC_ABI_SIZE_AT_LEAST(size, expected) \
  _Static_assert((size) >= (expected), #size " is smaller than its FFI API 0.1 size " #expected)

/* Every struct starts with struct_size and extension_start. */
OPSPEC_ABI_AT(opspec_ffi_extension, struct_size, 0);
OPSPEC_ABI_AT(opspec_ffi_extension, type, 8);
OPSPEC_ABI_AT(opspec_ffi_extension, next, 16);
OPSPEC_ABI_IS(XLA_FFI_Extension_Metadata, 1);

/* The metadata query (opspec_metadata_query). */
OPSPEC_ABI_AT(XLA_FFI_Metadata_Extension, extension_base, 0);
OPSPEC_ABI_AT(XLA_FFI_Metadata_Extension, metadata, 24);
OPSPEC_ABI_AT(XLA_FFI_Metadata, api_version, 8);
OPSPEC_ABI_AT(XLA_FFI_Metadata, traits, 32);
OPSPEC_ABI_AT(XLA_FFI_Api_Version, major_version, 16);
OPSPEC_ABI_AT(XLA_FFI_Api_Version, minor_version, 20);
OPSPEC_ABI_IS(XLA_FFI_HANDLER_TRAITS_COMMAND_BUFFER_COMPATIBLE, 1);

/* The call frame and what it points to (opspec_bind_inputs, opspec_check_outputs). */
OPSPEC_ABI_AT(XLA_FFI_CallFrame, extension_start, 8);
OPSPEC_ABI_AT(XLA_FFI_CallFrame, api, 16);
OPSPEC_ABI_AT(XLA_FFI_CallFrame, ctx, 24);
OPSPEC_ABI_AT(XLA_FFI_CallFrame, stage, 32);
OPSPEC_ABI_AT(XLA_FFI_CallFrame, args, 40);
OPSPEC_ABI_AT(XLA_FFI_CallFrame, rets, 80);
OPSPEC_ABI_AT(XLA_FFI_CallFrame, attrs, 120);
OPSPEC_ABI_IS(XLA_FFI_ExecutionStage_EXECUTE, 3);
OPSPEC_ABI_AT(XLA_FFI_Args, size, 16);
OPSPEC_ABI_AT(XLA_FFI_Args, types, 24);
OPSPEC_ABI_AT(XLA_FFI_Args, args, 32);
OPSPEC_ABI_IS(XLA_FFI_ArgType_BUFFER, 1);
OPSPEC_ABI_AT(XLA_FFI_Rets, size, 16);
OPSPEC_ABI_AT(XLA_FFI_Rets, types, 24);
OPSPEC_ABI_AT(XLA_FFI_Rets, rets, 32);
OPSPEC_ABI_IS(XLA_FFI_RetType_BUFFER, 1);
OPSPEC_ABI_AT(XLA_FFI_Attrs, size, 16);
OPSPEC_ABI_AT(XLA_FFI_Attrs, types, 24);
OPSPEC_ABI_AT(XLA_FFI_Attrs, names, 32);
OPSPEC_ABI_AT(XLA_FFI_Attrs, attrs, 40);
OPSPEC_ABI_IS(XLA_FFI_AttrType_ARRAY, 1);
OPSPEC_ABI_IS(XLA_FFI_AttrType_DICTIONARY, 2);
OPSPEC_ABI_IS(XLA_FFI_AttrType_SCALAR, 3);
OPSPEC_ABI_IS(XLA_FFI_AttrType_STRING, 4);
OPSPEC_ABI_AT(XLA_FFI_Buffer, dtype, 16);
OPSPEC_ABI_AT(XLA_FFI_Buffer, data, 24);
OPSPEC_ABI_AT(XLA_FFI_Buffer, rank, 32);
OPSPEC_ABI_AT(XLA_FFI_Buffer, dims, 40);
OPSPEC_ABI_AT(XLA_FFI_Scalar, dtype, 0);
OPSPEC_ABI_AT(XLA_FFI_Scalar, value, 8);
OPSPEC_ABI_AT(XLA_FFI_ByteSpan, ptr, 0);
OPSPEC_ABI_AT(XLA_FFI_ByteSpan, len, 8);

/* dtypes.h spells the XLA dtype codes as numbers; they are the header's. */
OPSPEC_ABI_IS(XLA_FFI_DataType_PRED, OPSPEC_DT_bool);
OPSPEC_ABI_IS(XLA_FFI_DataType_S8, OPSPEC_DT_int8);
OPSPEC_ABI_IS(XLA_FFI_DataType_S16, OPSPEC_DT_int16);
OPSPEC_ABI_IS(XLA_FFI_DataType_S32, OPSPEC_DT_int32);
OPSPEC_ABI_IS(XLA_FFI_DataType_S64, OPSPEC_DT_int64);
OPSPEC_ABI_IS(XLA_FFI_DataType_U8, OPSPEC_DT_uint8);
OPSPEC_ABI_IS(XLA_FFI_DataType_U16, OPSPEC_DT_uint16);
OPSPEC_ABI_IS(XLA_FFI_DataType_U32, OPSPEC_DT_uint32);
OPSPEC_ABI_IS(XLA_FFI_DataType_U64, OPSPEC_DT_uint64);
OPSPEC_ABI_IS(XLA_FFI_DataType_F16, OPSPEC_DT_float16);
OPSPEC_ABI_IS(XLA_FFI_DataType_F32, OPSPEC_DT_float32);
OPSPEC_ABI_IS(XLA_FFI_DataType_F64, OPSPEC_DT_float64);

/* The function table: the slots opspec calls through cf->api. */
OPSPEC_ABI_AT(XLA_FFI_Api, struct_size, 0);
OPSPEC_ABI_AT(XLA_FFI_Api, api_version, 16);
OPSPEC_ABI_AT(XLA_FFI_Api, XLA_FFI_Error_Create, 48);
OPSPEC_ABI_AT(XLA_FFI_Api, OPSPEC_FFI_ERROR_MESSAGE, 56); /* GetMessage, GetDetails from 0.4 */
OPSPEC_ABI_AT(XLA_FFI_Api, XLA_FFI_Error_Destroy, 64);
OPSPEC_ABI_AT(XLA_FFI_Api, XLA_FFI_Stream_Get, 80);
OPSPEC_ABI_AT(XLA_FFI_Api, XLA_FFI_DeviceMemory_Allocate, 120);
OPSPEC_ABI_AT(XLA_FFI_Api, XLA_FFI_DeviceMemory_Free, 128);

/* Errors (opspec_error, opspec_drop_error, opspec_reword_error). */
OPSPEC_ABI_AT(XLA_FFI_Error_Create_Args, message, 16);
OPSPEC_ABI_AT(XLA_FFI_Error_Create_Args, errc, 24);
OPSPEC_ABI_SIZE_AT_LEAST(XLA_FFI_Error_Create_Args_STRUCT_SIZE, 28);
OPSPEC_ABI_AT(opspec_ffi_error_message_args, error, 16);
OPSPEC_ABI_AT(opspec_ffi_error_message_args, message, 24);
OPSPEC_ABI_SIZE_AT_LEAST(OPSPEC_FFI_ERROR_MESSAGE_ARGS_SIZE, 32);
OPSPEC_ABI_AT(XLA_FFI_Error_Destroy_Args, error, 16);
OPSPEC_ABI_SIZE_AT_LEAST(XLA_FFI_Error_Destroy_Args_STRUCT_SIZE, 24);
OPSPEC_ABI_IS(XLA_FFI_Error_Code_INVALID_ARGUMENT, 3);
OPSPEC_ABI_IS(XLA_FFI_Error_Code_RESOURCE_EXHAUSTED, 8);
OPSPEC_ABI_IS(XLA_FFI_Error_Code_UNIMPLEMENTED, 12);
OPSPEC_ABI_IS(XLA_FFI_Error_Code_INTERNAL, 13);

/* GPU: XLA's stream and its device allocator (ffi_cuda.c). Checked in every build, so
 * a CPU-only build proves the CUDA part's layout too. */
OPSPEC_ABI_AT(XLA_FFI_Stream_Get_Args, ctx, 16);
OPSPEC_ABI_AT(XLA_FFI_Stream_Get_Args, stream, 24);
OPSPEC_ABI_SIZE_AT_LEAST(XLA_FFI_Stream_Get_Args_STRUCT_SIZE, 32);
OPSPEC_ABI_AT(XLA_FFI_DeviceMemory_Allocate_Args, ctx, 16);
OPSPEC_ABI_AT(XLA_FFI_DeviceMemory_Allocate_Args, size, 24);
OPSPEC_ABI_AT(XLA_FFI_DeviceMemory_Allocate_Args, alignment, 32);
OPSPEC_ABI_AT(XLA_FFI_DeviceMemory_Allocate_Args, data, 40);
OPSPEC_ABI_SIZE_AT_LEAST(XLA_FFI_DeviceMemory_Allocate_Args_STRUCT_SIZE, 48);
OPSPEC_ABI_AT(XLA_FFI_DeviceMemory_Free_Args, ctx, 16);
OPSPEC_ABI_AT(XLA_FFI_DeviceMemory_Free_Args, size, 24);
OPSPEC_ABI_AT(XLA_FFI_DeviceMemory_Free_Args, data, 32);
OPSPEC_ABI_SIZE_AT_LEAST(XLA_FFI_DeviceMemory_Free_Args_STRUCT_SIZE, 40);

/* XLA's thread pool (opspec/parallel.h, OPSPEC_POOL_XLA), read where the table XLA hands
 * over is long enough to hold it. */
OPSPEC_ABI_AT(XLA_FFI_Api, XLA_FFI_ThreadPool_Schedule, 136);
OPSPEC_ABI_AT(XLA_FFI_ThreadPool_Schedule_Args, ctx, 16);
OPSPEC_ABI_AT(XLA_FFI_ThreadPool_Schedule_Args, task, 24);
OPSPEC_ABI_AT(XLA_FFI_ThreadPool_Schedule_Args, data, 32);
OPSPEC_ABI_SIZE_AT_LEAST(XLA_FFI_ThreadPool_Schedule_Args_STRUCT_SIZE, 40);

/* The declared version can never be newer than the header's. */
_Static_assert(OPSPEC_FFI_API_MAJOR == XLA_FFI_API_MAJOR && OPSPEC_FFI_API_MINOR <= XLA_FFI_API_MINOR,
               "OPSPEC_FFI_API_MINOR is newer than the XLA FFI header compiled against");

/* The versions as numbers, for opspec.build_info(). */
int opspec_ffi_api_declared(void) { return OPSPEC_FFI_API_MAJOR * 1000 + OPSPEC_FFI_API_MINOR; }
int opspec_ffi_api_header(void) { return XLA_FFI_API_MAJOR * 1000 + XLA_FFI_API_MINOR; }

/* XLA_FFI_DeviceOrdinal_Get (FFI API 0.2), which ffi_cuda.c spells itself so that it
 * compiles against 0.1 headers too: where a header has the call, it is where ffi_cuda.c
 * reads it (OPSPEC_FFI_DEVICE_ORDINAL_SLOT, the slot after XLA_FFI_RunId_Get), and its
 * arguments are laid out as opspec_ffi_device_ordinal_args. */
OPSPEC_ABI_AT(XLA_FFI_Api, XLA_FFI_RunId_Get, OPSPEC_FFI_DEVICE_ORDINAL_SLOT - 8);
#if XLA_FFI_API_MAJOR > 0 || XLA_FFI_API_MINOR >= 2
_Static_assert(offsetof(XLA_FFI_Api, XLA_FFI_DeviceOrdinal_Get) == OPSPEC_FFI_DEVICE_ORDINAL_SLOT,
               "XLA_FFI_DeviceOrdinal_Get is not where ffi_cuda.c reads it");
_Static_assert(offsetof(XLA_FFI_DeviceOrdinal_Get_Args, ctx) == offsetof(opspec_ffi_device_ordinal_args, ctx) &&
                   offsetof(XLA_FFI_DeviceOrdinal_Get_Args, device_ordinal) ==
                       offsetof(opspec_ffi_device_ordinal_args, device_ordinal) &&
                   XLA_FFI_DeviceOrdinal_Get_Args_STRUCT_SIZE == OPSPEC_FFI_DEVICE_ORDINAL_ARGS_SIZE,
               "XLA_FFI_DeviceOrdinal_Get_Args is not laid out as opspec_ffi_device_ordinal_args");
#endif
