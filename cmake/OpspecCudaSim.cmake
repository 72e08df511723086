# The CUDA simulator's part of opspec_add_extension (docs/cuda-simulator.md): every
# generated <op>_cuda.cu compiled a second time, as host C++17, against the simulator's
# <cuda_runtime.h> (${OPSPEC_RUNTIME_SIM_DIR}) instead of CUDA's, plus the simulator's
# engine. Needs only a C++ compiler, so a package gets it without nvcc, and CI runs every
# CUDA kernel without a GPU.
include_guard(GLOBAL)

# enable_language() must run at file scope: a macro, called from opspec_add_extension's.
# Sets <result> ON when the simulator is built, and OPSPEC_CUDA_SIM_FLAGS.
macro(_opspec_cuda_sim_language mode result)
  set(${result} OFF)
  if("${mode}" STREQUAL "ON")
    if(NOT CMAKE_SYSTEM_NAME STREQUAL "Linux")
      message(FATAL_ERROR "opspec: the CUDA simulator runs on Linux only (its fibers); use CUDA_SIM OFF "
                          "(-DOPSPEC_CUDA_SIM=OFF)")
    endif()
    enable_language(CXX)
    set(${result} ON)
    # __shared__ is thread_local in the simulator, so a kernel's `extern __shared__` array
    # is an extern thread_local. GCC reaches it through a wrapper that calls a weak
    # initialisation function, and calls it even where there is none; no shared array
    # needs dynamic initialisation, which this flag promises. Clang has no such flag and
    # needs none.
    include(CheckCXXCompilerFlag)
    check_cxx_compiler_flag(-fno-extern-tls-init OPSPEC_HAVE_NO_EXTERN_TLS_INIT)
    set(OPSPEC_CUDA_SIM_FLAGS)
    if(OPSPEC_HAVE_NO_EXTERN_TLS_INIT)
      list(APPEND OPSPEC_CUDA_SIM_FLAGS -fno-extern-tls-init)
    endif()
  endif()
endmacro()

# The per-op sources of <package>'s simulated build: each includes its op's generated .cu,
# unchanged, and renames its launcher, so that the GPU build's and the simulator's link
# into one extension. Written at configure time (only when their text changes); a new
# spec reconfigures (the spec glob).
function(_opspec_cuda_sim_sources out package cu_sources)
  set(files)
  foreach(cu IN LISTS cu_sources)
    get_filename_component(op ${cu} NAME)
    string(REGEX REPLACE "_cuda\\.cu$" "" op ${op})
    set(file ${CMAKE_CURRENT_BINARY_DIR}/${package}_opspec_cuda_sim/${op}_cuda_sim.cpp)
    file(CONFIGURE OUTPUT ${file} CONTENT
"// Written by opspec_add_extension (OpspecCudaSim.cmake): ${op}'s generated CUDA kernels and
// launcher, unchanged, compiled as host C++ against the CUDA simulator's <cuda_runtime.h>.
#define opspec_${op}_cuda_launch opspec_${op}_cuda_sim_launch
#include \"ops/${op}_cuda.cu\"
")
    list(APPEND files ${file})
  endforeach()
  # CUDA code compares the unsigned threadIdx.x and blockDim.x with ints all the time
  # (`if (threadIdx.x < stride)`), which nvcc's front end accepts: the simulated build
  # must accept what nvcc accepts. Every other warning keeps its setting.
  set_source_files_properties(${files} PROPERTIES COMPILE_OPTIONS -Wno-sign-compare)
  set(${out} ${files} PARENT_SCOPE)
endfunction()
