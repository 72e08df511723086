# OPSPEC_CUDA_SIM -> the CUDA simulator (docs/cuda-simulator.md): every generated
# <op>_cuda.cu compiled a second time, as host C++17, against runtime/sim/cuda_runtime.h
# instead of CUDA's header. Needs only a C++ compiler, so CI builds it without nvcc.
if(NOT OPSPEC_CUDA_SIM)
  message(STATUS "opspec: CUDA simulator not built (OPSPEC_CUDA_SIM=OFF)")
  return()
endif()
if(NOT CMAKE_SYSTEM_NAME STREQUAL "Linux")
  message(FATAL_ERROR "the CUDA simulator runs on Linux only (its fibers); configure with -DOPSPEC_CUDA_SIM=OFF")
endif()
enable_language(CXX)
set(CMAKE_CXX_STANDARD 17)
set(CMAKE_CXX_STANDARD_REQUIRED ON)
set(CMAKE_CXX_EXTENSIONS OFF)

# __shared__ is thread_local in the simulator, so a kernel's `extern __shared__` array is
# an extern thread_local. GCC reaches it through a wrapper that calls a weak
# initialisation function, and calls it even where there is none; no shared array needs
# dynamic initialisation, which this flag promises. Clang has no such flag, needs none.
include(CheckCXXCompilerFlag)
check_cxx_compiler_flag(-fno-extern-tls-init OPSPEC_HAVE_NO_EXTERN_TLS_INIT)
set(OPSPEC_CUDA_SIM_FLAGS)
if(OPSPEC_HAVE_NO_EXTERN_TLS_INIT)
  list(APPEND OPSPEC_CUDA_SIM_FLAGS -fno-extern-tls-init)
endif()
message(STATUS "opspec: building the CUDA simulator")

# The per-op sources of the simulated build: each includes its op's generated .cu, which
# stays unchanged, and renames its launcher so that the GPU build's and the simulator's
# link into one extension. Written at configure time (only when their text changes); the
# spec glob reconfigures when a spec is added.
function(opspec_cuda_sim_sources out)
  set(files)
  foreach(cu IN LISTS ARGN)
    get_filename_component(op ${cu} NAME)
    string(REGEX REPLACE "_cuda\\.cu$" "" op ${op})
    set(file ${CMAKE_CURRENT_BINARY_DIR}/cuda_sim/${op}_cuda_sim.cpp)
    file(CONFIGURE OUTPUT ${file} CONTENT
"// Written by cmake/OpspecCudaSim.cmake: ${op}'s generated CUDA kernels and launcher,
// unchanged, compiled as host C++ against the CUDA simulator (runtime/sim/cuda_runtime.h).
#define opspec_${op}_cuda_launch opspec_${op}_cuda_sim_launch
#include \"ops/${op}_cuda.cu\"
")
    list(APPEND files ${file})
  endforeach()
  set(${out} ${files} PARENT_SCOPE)
endfunction()
