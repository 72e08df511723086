// The GPU's side of the CUDA backend (opspec_cuda_gpu in ffi_cuda.c): devices and error
// texts from the CUDA runtime, which the extension links statically.
#include "opspec/cuda.h"
#include "opspec/ffi_cuda.h"

static_assert(OPSPEC_CUDA_ERROR_INVALID_CONFIGURATION == (int)cudaErrorInvalidConfiguration,
              "opspec/launch.h spells cudaErrorInvalidConfiguration for C");

extern "C" int opspec_cudart_device_count(int *count) { return (int)cudaGetDeviceCount(count); }
extern "C" int opspec_cudart_get_device(int *device) { return (int)cudaGetDevice(device); }
extern "C" int opspec_cudart_set_device(int device) { return (int)cudaSetDevice(device); }
extern "C" const char *opspec_cudart_error_string(int code) { return cudaGetErrorString((cudaError_t)code); }
