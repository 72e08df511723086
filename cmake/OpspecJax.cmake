# Finds the Python that has JAX, jaxlib's XLA FFI header, and checks the header is C.
find_package(Python3 REQUIRED COMPONENTS Interpreter Development.Module)

execute_process(
  COMMAND ${Python3_EXECUTABLE} -c "import jax; print(jax.ffi.include_dir())"
  OUTPUT_VARIABLE OPSPEC_XLA_INCLUDE_DIR OUTPUT_STRIP_TRAILING_WHITESPACE
  RESULT_VARIABLE _opspec_jax_status ERROR_VARIABLE _opspec_jax_error)
if(NOT _opspec_jax_status EQUAL 0)
  message(FATAL_ERROR
    "opspec needs JAX in ${Python3_EXECUTABLE}:\n${_opspec_jax_error}\n"
    "Run ./run setup (or pass -DPython3_EXECUTABLE=/path/to/venv/bin/python).")
endif()

# The handlers are pure C against xla/ffi/api/c_api.h; older jaxlib headers were C++
# only. Fail here, with advice, rather than deep in the build.
file(WRITE ${CMAKE_BINARY_DIR}/probe/c_api_probe.c
  "#include \"xla/ffi/api/c_api.h\"\nint main(void) { return (int)sizeof(XLA_FFI_CallFrame) == 0; }\n")
try_compile(OPSPEC_C_API_IS_C ${CMAKE_BINARY_DIR}/probe
  SOURCES ${CMAKE_BINARY_DIR}/probe/c_api_probe.c
  CMAKE_FLAGS "-DINCLUDE_DIRECTORIES=${OPSPEC_XLA_INCLUDE_DIR}"
  C_STANDARD 11 C_STANDARD_REQUIRED ON
  COMPILE_DEFINITIONS -Wall -Wextra -Werror
  OUTPUT_VARIABLE _opspec_probe_log)
if(NOT OPSPEC_C_API_IS_C)
  message(FATAL_ERROR
    "${OPSPEC_XLA_INCLUDE_DIR}/xla/ffi/api/c_api.h does not compile as C11 with -Wall -Wextra -Werror.\n"
    "Install the jaxlib pinned in requirements.txt (./run setup does), or a newer one.\n"
    "${_opspec_probe_log}")
endif()
message(STATUS "opspec: XLA FFI header ${OPSPEC_XLA_INCLUDE_DIR} compiles as C11")
