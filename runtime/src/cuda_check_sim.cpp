// The CUDA path's check kernels (cuda_check.cu) on the CUDA simulator: the same source,
// compiled as host C++ against runtime/sim/cuda_runtime.h.
#define OPSPEC_CHECK_FN(name) opspec_sim_##name
#include "cuda_check.cu"
