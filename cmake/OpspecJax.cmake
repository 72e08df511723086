# The XLA FFI header of the jaxlib in Python3_EXECUTABLE, and the check that it is C.
#
# Sets (cache, internal) OPSPEC_XLA_INCLUDE_DIR and OPSPEC_JAXLIB_VERSION. Included by
# opspec_add_extension; runs once per configure.
include_guard(GLOBAL)

execute_process(
  COMMAND ${Python3_EXECUTABLE} -c "import jax, jaxlib; print(jax.ffi.include_dir()); print(jaxlib.__version__)"
  OUTPUT_VARIABLE _opspec_jax_out OUTPUT_STRIP_TRAILING_WHITESPACE
  RESULT_VARIABLE _opspec_jax_status ERROR_VARIABLE _opspec_jax_error)
if(NOT _opspec_jax_status EQUAL 0)
  message(FATAL_ERROR
    "opspec needs jax and jaxlib >= 0.5 (for jax.ffi and its C header) in ${Python3_EXECUTABLE}:\n"
    "${_opspec_jax_error}\n"
    "Install them there (pip install 'jax>=0.5'), or point CMake at the Python that has them "
    "(-DPython3_EXECUTABLE=/path/to/venv/bin/python).")
endif()
string(REPLACE "\n" ";" _opspec_jax_out "${_opspec_jax_out}")
list(GET _opspec_jax_out 0 _opspec_include)
list(GET _opspec_jax_out 1 _opspec_jaxlib)
if(NOT "${_opspec_include}" STREQUAL "${OPSPEC_XLA_INCLUDE_DIR}")
  unset(OPSPEC_C_API_IS_C CACHE)  # another jaxlib: probe its header again
endif()
set(OPSPEC_XLA_INCLUDE_DIR ${_opspec_include} CACHE INTERNAL "jaxlib's include folder (xla/ffi/api/c_api.h)")
set(OPSPEC_JAXLIB_VERSION ${_opspec_jaxlib} CACHE INTERNAL "the jaxlib the handlers compile against")

# The handlers are pure C against xla/ffi/api/c_api.h, which compiles as C from jaxlib 0.5
# on (jaxlib 0.4's does not). Fail here, with advice, rather than deep in the build.
set(_opspec_probe_dir ${CMAKE_BINARY_DIR}/opspec_probe)
file(WRITE ${_opspec_probe_dir}/c_api_probe.c
  "#include \"xla/ffi/api/c_api.h\"\nint main(void) { return (int)sizeof(XLA_FFI_CallFrame) == 0; }\n")
try_compile(OPSPEC_C_API_IS_C ${_opspec_probe_dir}
  SOURCES ${_opspec_probe_dir}/c_api_probe.c
  CMAKE_FLAGS "-DINCLUDE_DIRECTORIES=${OPSPEC_XLA_INCLUDE_DIR}"
  C_STANDARD 11 C_STANDARD_REQUIRED ON
  COMPILE_DEFINITIONS -Wall -Wextra -Werror
  OUTPUT_VARIABLE _opspec_probe_log)
if(NOT OPSPEC_C_API_IS_C)
  message(FATAL_ERROR
    "${OPSPEC_XLA_INCLUDE_DIR}/xla/ffi/api/c_api.h (jaxlib ${OPSPEC_JAXLIB_VERSION}) does not compile as C11 "
    "with -Wall -Wextra -Werror. opspec needs jaxlib >= 0.5.\n${_opspec_probe_log}")
endif()
message(STATUS "opspec: XLA FFI header of jaxlib ${OPSPEC_JAXLIB_VERSION} (${OPSPEC_XLA_INCLUDE_DIR}) compiles as C11")
