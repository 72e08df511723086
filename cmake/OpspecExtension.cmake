# opspec_add_extension: a folder of YAML specs -> an importable Python package of JAX ops.
#
#   opspec_add_extension(<python_package> SPECS <dir>
#                        [GENERATED_DIR <dir>] [CUDA AUTO|ON|OFF] [CUDA_SIM ON|OFF]
#                        [PYTHON_FILES <file>...])
#
# Generates at build time (a spec edit regenerates; a new spec reconfigures), compiles the
# generated handlers together with the opspec runtime sources into <python_package>._opspec
# (with CUDA_SIM, the default, also every CUDA kernel compiled for the CUDA simulator),
# and assembles the package <python_package> (ops.py, ops.pyi, __init__.py, py.typed) in
# ${CMAKE_CURRENT_BINARY_DIR}/python/<python_package>, with install rules for it. See
# docs/user-project.md.
#
# The runtime is compiled into every package from source, with hidden symbols, instead of
# being linked from a shared library: packages share no native code, so two of them (and
# opspec itself) never clash in one process, and none depends on the exact binary of
# another. Each package gets its own copy of the CPU knobs (set_cpu_threads, ...).
#
# Used the same way by opspec's own build (CMakeLists.txt, in the source tree) and by
# find_package(opspec) (opspecConfig.cmake, from an installed opspec). Both set:
#   OPSPEC_VERSION              opspec's version
#   OPSPEC_CMAKE_DIR            this folder (the .in templates next to this file)
#   OPSPEC_RUNTIME_INCLUDE_DIR  runtime headers (opspec/*.h)
#   OPSPEC_RUNTIME_SOURCE_DIR   runtime sources (ffi.c, cpu.c, module.c, ...)
#   OPSPEC_RUNTIME_SIM_DIR      the CUDA simulator's cuda_runtime.h
#   OPSPEC_NATIVE_STUB          _opspec.pyi, the stub of every package's extension module
#   OPSPEC_GEN_TARGET           the opspec-gen executable target; empty: use the files
#                               already in GENERATED_DIR (opspec's -DOPSPEC_REGENERATE=OFF)
include_guard(GLOBAL)
include(${CMAKE_CURRENT_LIST_DIR}/OpspecCudaSim.cmake)

# Generated file names follow from op names, and a spec's file name is its op's name.
function(_opspec_generated_files out gen_dir specs)
  set(files ${gen_dir}/registry.c ${gen_dir}/python/ops.py ${gen_dir}/python/ops.pyi ${gen_dir}/python/_tables.py)
  foreach(spec IN LISTS specs)
    get_filename_component(op ${spec} NAME_WE)
    foreach(suffix .h _body.inc _cpu.c _ffi.c _cuda.cu)
      list(APPEND files ${gen_dir}/ops/${op}${suffix})
    endforeach()
  endforeach()
  set(${out} ${files} PARENT_SCOPE)
endfunction()

# Paths handed to opspec-gen end up in the generated text (comments, #line): relative to
# the calling project's folder when inside it, so committed output does not depend on
# where the project was checked out.
function(_opspec_gen_path out path)
  file(RELATIVE_PATH rel ${CMAKE_CURRENT_SOURCE_DIR} ${path})
  if(rel MATCHES "^\\.\\./" OR IS_ABSOLUTE "${rel}")
    set(${out} ${path} PARENT_SCOPE)
  else()
    set(${out} ${rel} PARENT_SCOPE)
  endif()
endfunction()

# enable_language() must run at file scope, not in a function: this is a macro, and so
# is the public entry point that calls it. Sets <result> to ON when CUDA is built.
macro(_opspec_cuda_language mode result)
  set(${result} OFF)
  if(NOT "${mode}" STREQUAL "OFF")
    if(NOT CMAKE_CUDA_COMPILER)
      include(CheckLanguage)
      check_language(CUDA)
    endif()
    if(CMAKE_CUDA_COMPILER)
      set(${result} ON)
    elseif("${mode}" STREQUAL "ON")
      message(FATAL_ERROR "opspec: CUDA ON, but no CUDA compiler (nvcc) was found")
    endif()
  endif()
  if(${result})
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      # Ampere and Hopper machine code, plus Hopper PTX for anything newer.
      set(CMAKE_CUDA_ARCHITECTURES 80-real 90)
    endif()
    enable_language(CUDA)
    find_package(CUDAToolkit REQUIRED)
  endif()
endmacro()

# Where install() puts Python packages: the wheel's root under scikit-build-core; else the
# interpreter's site-packages relative to the install prefix, so that
# `cmake --install build --prefix <venv>` lands in that virtual environment.
function(_opspec_python_install_dir)
  if(DEFINED SKBUILD)
    set(OPSPEC_PYTHON_INSTALL_DIR . PARENT_SCOPE)
  elseif(NOT DEFINED OPSPEC_PYTHON_INSTALL_DIR)
    execute_process(
      COMMAND ${Python3_EXECUTABLE} -c
              "import sysconfig; print(sysconfig.get_path('platlib', vars={'platbase': '.', 'base': '.'}))"
      OUTPUT_VARIABLE dir OUTPUT_STRIP_TRAILING_WHITESPACE)
    string(REGEX REPLACE "^\\./" "" dir "${dir}")
    set(OPSPEC_PYTHON_INSTALL_DIR ${dir} CACHE STRING "Where install() puts Python packages, relative to the install prefix")
  endif()
endfunction()

macro(opspec_add_extension _opspec_package)
  cmake_parse_arguments(_opspec_arg "" "SPECS;GENERATED_DIR;CUDA;CUDA_SIM" "PYTHON_FILES" ${ARGN})
  if(_opspec_arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "opspec_add_extension(${_opspec_package}): unexpected arguments: ${_opspec_arg_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT "${_opspec_package}" MATCHES "^[A-Za-z_][A-Za-z0-9_]*$")
    message(FATAL_ERROR "opspec_add_extension: '${_opspec_package}' is not a Python package name "
                        "(ASCII letters, digits and '_', not starting with a digit)")
  endif()
  if(NOT _opspec_arg_SPECS)
    message(FATAL_ERROR "opspec_add_extension(${_opspec_package}): SPECS <folder of .yaml specs> is required")
  endif()
  # CUDA: the keyword, else the OPSPEC_CUDA cache variable (-DOPSPEC_CUDA=OFF switches every
  # package at configure time), else AUTO.
  if(DEFINED _opspec_arg_CUDA)  # not if(): "CUDA OFF" would read as false
    set(_opspec_cuda_mode ${_opspec_arg_CUDA})
  elseif(DEFINED OPSPEC_CUDA)
    set(_opspec_cuda_mode ${OPSPEC_CUDA})
  else()
    set(_opspec_cuda_mode AUTO)
  endif()
  if(NOT _opspec_cuda_mode MATCHES "^(AUTO|ON|OFF)$")
    message(FATAL_ERROR "opspec_add_extension(${_opspec_package}): CUDA must be AUTO, ON or OFF, got '${_opspec_cuda_mode}'")
  endif()
  _opspec_cuda_language(${_opspec_cuda_mode} _opspec_with_cuda)
  # CUDA_SIM: the keyword, else the OPSPEC_CUDA_SIM cache variable, else ON.
  if(DEFINED _opspec_arg_CUDA_SIM)
    set(_opspec_sim_mode ${_opspec_arg_CUDA_SIM})
  elseif(DEFINED OPSPEC_CUDA_SIM)
    set(_opspec_sim_mode ${OPSPEC_CUDA_SIM})
  else()
    set(_opspec_sim_mode ON)
  endif()
  if(_opspec_sim_mode MATCHES "^(ON|on|On|TRUE|true|1|YES|yes)$")
    set(_opspec_sim_mode ON)
  elseif(_opspec_sim_mode MATCHES "^(OFF|off|Off|FALSE|false|0|NO|no)$")
    set(_opspec_sim_mode OFF)
  else()
    message(FATAL_ERROR "opspec_add_extension(${_opspec_package}): CUDA_SIM must be ON or OFF, got '${_opspec_sim_mode}'")
  endif()
  _opspec_cuda_sim_language(${_opspec_sim_mode} _opspec_with_cuda_sim)

  find_package(Python3 REQUIRED COMPONENTS Interpreter Development.Module)
  find_package(OpenMP REQUIRED COMPONENTS C)
  include(${OPSPEC_CMAKE_DIR}/OpspecJax.cmake)  # the jaxlib FFI header, checked once
  _opspec_python_install_dir()

  _opspec_add_extension(${_opspec_package} "${_opspec_arg_SPECS}" "${_opspec_arg_GENERATED_DIR}" ${_opspec_with_cuda}
                        ${_opspec_with_cuda_sim} "${_opspec_arg_PYTHON_FILES}")
endmacro()

function(_opspec_add_extension package specs_dir gen_dir with_cuda with_cuda_sim python_files)
  get_filename_component(specs_dir ${specs_dir} ABSOLUTE BASE_DIR ${CMAKE_CURRENT_SOURCE_DIR})
  file(GLOB specs CONFIGURE_DEPENDS ${specs_dir}/*.yaml)
  list(SORT specs)
  if(NOT specs)
    message(FATAL_ERROR "opspec_add_extension(${package}): no .yaml specs in ${specs_dir}")
  endif()
  if(gen_dir)
    get_filename_component(gen_dir ${gen_dir} ABSOLUTE BASE_DIR ${CMAKE_CURRENT_SOURCE_DIR})
  else()
    set(gen_dir ${CMAKE_CURRENT_BINARY_DIR}/opspec_generated/${package})
  endif()
  set(package_dir ${CMAKE_CURRENT_BINARY_DIR}/python/${package})
  _opspec_generated_files(generated ${gen_dir} "${specs}")

  # ---- generation -----------------------------------------------------------------
  # opspec-gen writes only files whose text changed, so their timestamps cannot drive the
  # rule: a stamp file does. Any spec or generator change reruns it (the templates are
  # built into opspec-gen); the compiler then rebuilds just the sources whose text moved.
  if(OPSPEC_GEN_TARGET)
    set(gen_args)
    foreach(spec IN LISTS specs)
      _opspec_gen_path(p ${spec})
      list(APPEND gen_args ${p})
    endforeach()
    _opspec_gen_path(out ${gen_dir})
    _opspec_gen_path(specs_rel ${specs_dir})
    set(stamp ${CMAKE_CURRENT_BINARY_DIR}/${package}_opspec_generate.stamp)
    add_custom_command(
      OUTPUT ${stamp}
      COMMAND $<TARGET_FILE:${OPSPEC_GEN_TARGET}> --quiet --package ${package} --out ${out} ${gen_args}
      COMMAND ${CMAKE_COMMAND} -E touch ${stamp}
      DEPENDS ${OPSPEC_GEN_TARGET} ${specs}
      BYPRODUCTS ${generated}
      WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}
      COMMENT "opspec-gen: regenerating ${out}/ from ${specs_rel}/"
      VERBATIM)
    add_custom_target(${package}_opspec_generate DEPENDS ${stamp})
    # The drift check for a committed GENERATED_DIR: fails, listing each file, when the
    # folder is not exactly what the specs produce (cmake --build <dir> --target ...).
    add_custom_target(${package}_opspec_verify
      COMMAND $<TARGET_FILE:${OPSPEC_GEN_TARGET}> --verify --package ${package} --out ${out} ${gen_args}
      WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}
      COMMENT "opspec-gen: checking that ${gen_dir} is what ${specs_dir} produces"
      VERBATIM)
  endif()

  set(c_sources ${generated})
  list(FILTER c_sources INCLUDE REGEX "\\.c$")
  set(cu_sources ${generated})
  list(FILTER cu_sources INCLUDE REGEX "\\.cu$")
  set(rt ${OPSPEC_RUNTIME_SOURCE_DIR})

  # ---- each op's bodies, checked before anything of the op compiles ------------------
  # A body that does not compile is reported once, with the spec's line: the C compiler
  # checks the op's CPU source alone (-fsyntax-only: no code), from the project's folder,
  # so the generated #line "specs/<op>.yaml" resolves and the compiler prints the spec's
  # line and a caret under specs/<op>.yaml:line:col. Only the first error (the rest are
  # mostly its effects), no warnings (the real compile shows those). Every object that
  # holds the op's bodies (its CPU source, its CUDA source, its simulated CUDA) depends on
  # the check, so after a failure none of them runs to repeat the error, in C++ or from
  # the build folder.
  if(CMAKE_C_COMPILER_ID MATCHES "Clang")
    set(first_error -ferror-limit=1)
  else()
    set(first_error -fmax-errors=1)
  endif()
  set(check_stamps)
  file(MAKE_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/${package}_opspec_check)  # Makefiles make no folders
  foreach(spec IN LISTS specs)
    get_filename_component(op ${spec} NAME_WE)
    _opspec_gen_path(spec_rel ${spec})
    set(stamp ${CMAKE_CURRENT_BINARY_DIR}/${package}_opspec_check/${op}.stamp)
    add_custom_command(
      OUTPUT ${stamp}
      COMMAND ${CMAKE_C_COMPILER} -std=c11 -fsyntax-only ${first_error} -w -I${OPSPEC_RUNTIME_INCLUDE_DIR} -I${gen_dir}
              -I${OPSPEC_XLA_INCLUDE_DIR} ${gen_dir}/ops/${op}_cpu.c
      COMMAND ${CMAKE_COMMAND} -E touch ${stamp}
      DEPENDS ${gen_dir}/ops/${op}_cpu.c ${gen_dir}/ops/${op}_body.inc ${gen_dir}/ops/${op}.h
      WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}
      COMMENT "opspec: checking ${op}'s bodies (${spec_rel})"
      VERBATIM)
    list(APPEND check_stamps ${stamp})
    set_property(SOURCE ${gen_dir}/ops/${op}_cpu.c APPEND PROPERTY OBJECT_DEPENDS ${stamp})
    if(with_cuda_sim)
      # Then its CUDA source as the simulator compiles it (C++), for errors in raw `cuda:`
      # kernels, which only CUDA sources hold: reported once, here, with the spec's line,
      # neither by the simulator's compile from the build folder nor again by nvcc's.
      set(sim_stamp ${CMAKE_CURRENT_BINARY_DIR}/${package}_opspec_check/${op}_cuda.stamp)
      add_custom_command(
        OUTPUT ${sim_stamp}
        COMMAND ${CMAKE_CXX_COMPILER} -std=c++17 -fsyntax-only ${first_error} -w -I${OPSPEC_RUNTIME_SIM_DIR}
                -I${OPSPEC_RUNTIME_INCLUDE_DIR} -I${gen_dir} -I${OPSPEC_XLA_INCLUDE_DIR}
                ${CMAKE_CURRENT_BINARY_DIR}/${package}_opspec_cuda_sim/${op}_cuda_sim.cpp
        COMMAND ${CMAKE_COMMAND} -E touch ${sim_stamp}
        DEPENDS ${stamp} ${gen_dir}/ops/${op}_cuda.cu
        WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}
        COMMENT "opspec: checking ${op}'s CUDA kernels (${spec_rel})"
        VERBATIM)
      list(APPEND check_stamps ${sim_stamp})
      set(stamp ${sim_stamp})
    endif()
    set_property(SOURCE ${gen_dir}/ops/${op}_cuda.cu ${CMAKE_CURRENT_BINARY_DIR}/${package}_opspec_cuda_sim/${op}_cuda_sim.cpp
                 APPEND PROPERTY OBJECT_DEPENDS ${stamp})
  endforeach()
  add_custom_target(${package}_opspec_check DEPENDS ${check_stamps})
  if(TARGET ${package}_opspec_generate)
    add_dependencies(${package}_opspec_check ${package}_opspec_generate)
  endif()

  # How the extension was built, for <package>.build_info().
  set(OPSPEC_BI_PACKAGE ${package})
  # pip's build (scikit-build-core) and `opspec dev` give pyproject.toml's version, which
  # wins over project(... VERSION ...), as it does for the wheel's metadata.
  set(OPSPEC_BI_PACKAGE_VERSION "${PROJECT_VERSION}")
  if(DEFINED SKBUILD_PROJECT_VERSION_FULL)
    set(OPSPEC_BI_PACKAGE_VERSION "${SKBUILD_PROJECT_VERSION_FULL}")
  elseif(DEFINED OPSPEC_PACKAGE_VERSION)
    set(OPSPEC_BI_PACKAGE_VERSION "${OPSPEC_PACKAGE_VERSION}")
  endif()
  set(OPSPEC_BI_OPSPEC_VERSION "${OPSPEC_VERSION}")
  set(OPSPEC_BI_JAXLIB_VERSION "${OPSPEC_JAXLIB_VERSION}")
  set(OPSPEC_BI_C_COMPILER "${CMAKE_C_COMPILER_ID} ${CMAKE_C_COMPILER_VERSION}")
  set(OPSPEC_BI_CUDA_COMPILER "")
  if(with_cuda)
    set(OPSPEC_BI_CUDA_COMPILER "${CMAKE_CUDA_COMPILER_ID} ${CMAKE_CUDA_COMPILER_VERSION}")
  endif()
  set(build_info ${CMAKE_CURRENT_BINARY_DIR}/${package}_opspec_build_info.c)
  configure_file(${rt}/extension_info.c.in ${build_info} @ONLY)

  # OPSPEC_SANITIZE=ON in a package's own build (opspec dev --sanitize): its kernels, CPU
  # and simulated CUDA, and the runtime around them, with AddressSanitizer and
  # UndefinedBehaviorSanitizer, stopping at the first finding. opspec's own tree sets
  # OPSPEC_SANITIZE_FLAGS itself (CMakeLists.txt), for the generator too.
  if(OPSPEC_SANITIZE AND NOT OPSPEC_SANITIZE_FLAGS)
    set(OPSPEC_SANITIZE_FLAGS -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer -g)
  endif()

  set(warnings -Wall -Wextra)
  if(OPSPEC_WERROR)
    list(APPEND warnings -Werror)
  endif()

  # ---- the extension module <package>._opspec --------------------------------------
  set(target ${package}_opspec)
  set(ext_sources
    ${rt}/module.c ${rt}/ffi.c ${rt}/ffi_abi.c ${rt}/handler.c ${rt}/batch.c ${rt}/cpu.c ${rt}/parallel.c ${rt}/contents.c ${rt}/bfloat16.c
    ${rt}/lowp_vector.c ${rt}/lowp_f16c.c ${rt}/lowp_tiles.c ${rt}/pages.c ${build_info} ${c_sources})
  if(SKBUILD_SABI_VERSION MATCHES "^3\\.([0-9]+)$")
    # scikit-build-core's wheel.py-api = "cp3N" on a CPython with a GIL (it leaves
    # SKBUILD_SABI_VERSION empty on a free-threaded one): module.c compiles against the
    # limited API of 3.N and the extension takes the stable ABI's name, so the abi3 wheel
    # loads on every CPython from 3.N.
    math(EXPR _opspec_limited_api "0x03000000 + ${CMAKE_MATCH_1} * 0x10000" OUTPUT_FORMAT HEXADECIMAL)
    Python3_add_library(${target} MODULE ${ext_sources})
    target_compile_definitions(${target} PRIVATE Py_LIMITED_API=${_opspec_limited_api})
    set_target_properties(${target} PROPERTIES SUFFIX ".abi3${CMAKE_SHARED_MODULE_SUFFIX}")
  else()
    Python3_add_library(${target} MODULE WITH_SOABI ${ext_sources})
  endif()
  target_include_directories(${target} PRIVATE ${OPSPEC_RUNTIME_INCLUDE_DIR} ${gen_dir} ${OPSPEC_XLA_INCLUDE_DIR})
  # OPSPEC_SANITIZE_FLAGS: opspec's own ASan + UBSan build (./run sanitize); empty otherwise.
  # -fno-math-errno: math functions need not set errno, which no kernel and nothing
  # above it reads; results are unchanged (IEEE), but sqrt becomes an instruction that
  # vectorises (abs_two_pass: 2.1x at 4M elements, docs/performance.md). Release builds
  # are -O3 already (CMAKE_C_FLAGS_RELEASE).
  # -fno-trapping-math: no kernel reads the floating-point exception flags, so the
  # compiler may compute both sides of a select (`v > 0 ? v : slope * v`) and vectorise
  # it; values are the same IEEE values (the flags raised are not).
  target_compile_options(${target} PRIVATE ${warnings} -fno-math-errno -fno-trapping-math ${OPSPEC_SANITIZE_FLAGS})
  target_link_options(${target} PRIVATE ${OPSPEC_SANITIZE_FLAGS})
  target_link_libraries(${target} PRIVATE OpenMP::OpenMP_C m)
  # glibc's vector math library (libmvec): where it is there and the compiler is GCC,
  # opspec/math.h declares expf, logf, tanhf, powf (and the double ones) `simd`, so
  # that a kernel loop calling them vectorises into calls of their 4-16 lane forms
  # (sigmoid: docs/performance.md, "Math functions"). Without it they stay scalar calls.
  if(CMAKE_C_COMPILER_ID STREQUAL "GNU")
    find_library(OPSPEC_LIBMVEC_LIBRARY mvec)
    if(OPSPEC_LIBMVEC_LIBRARY)
      target_compile_definitions(${target} PRIVATE OPSPEC_LIBMVEC)
      target_link_libraries(${target} PRIVATE ${OPSPEC_LIBMVEC_LIBRARY})
    endif()
  endif()
  # OPSPEC_NATIVE=ON: kernels for the build machine's CPU only (-march=native), for a
  # package that runs where it is built; off by default: a wheel must run on any x86-64.
  if(OPSPEC_NATIVE)
    target_compile_options(${target} PRIVATE -march=native)
    target_compile_definitions(${target} PRIVATE OPSPEC_NO_CPU_CLONES)
  endif()
  # OPSPEC_CPU_V4=OFF: no x86-64-v4 (AVX-512) form of the kernels, two forms rather than
  # three (opspec/cpu.h; the form costs compile time and size: docs/performance.md,
  # "CPU forms"). Unset, as in a user's project that never names it: the form is built.
  if(DEFINED OPSPEC_CPU_V4 AND NOT OPSPEC_CPU_V4)
    target_compile_definitions(${target} PRIVATE OPSPEC_NO_CPU_V4)
  endif()
  set_target_properties(${target} PROPERTIES
    OUTPUT_NAME _opspec
    C_STANDARD 11 C_STANDARD_REQUIRED ON C_EXTENSIONS OFF
    C_VISIBILITY_PRESET hidden
    LIBRARY_OUTPUT_DIRECTORY ${package_dir})
  add_dependencies(${target} ${package}_opspec_check)
  # Link-time optimisation where the toolchain has it: every call runs the handler's
  # steps (decode, bind, check each buffer, choose the variant, run the loop) across
  # ffi.c, handler.c, batch.c and cpu.c, and inlining across them took the C handler of
  # `add` from 37 to 25 ns a call (bench/bench_overhead.py has it beside a bare handler).
  # Not under the sanitizers, whose build should stay the plain one, nor with
  # -DOPSPEC_LTO=OFF (opspec dev): the link then takes a fraction of a second, not the
  # seconds of optimising the whole extension again after a one-line edit.
  if(NOT OPSPEC_SANITIZE_FLAGS AND (NOT DEFINED OPSPEC_LTO OR OPSPEC_LTO))
    include(CheckIPOSupported)
    check_ipo_supported(RESULT ipo_ok OUTPUT ipo_why LANGUAGES C)
    if(ipo_ok)
      set_property(TARGET ${target} PROPERTY INTERPROCEDURAL_OPTIMIZATION ON)
      # Except float16's vector conversions: a kernel's vectorised loop calls their
      # 8- and 16-lane forms by name, and under LTO it would call lowp_vector.c's weak
      # exact forms inside the unit, never the F16C ones of lowp_f16c.c that replace them
      # at the link (opspec/lowp.h).
      set_source_files_properties(${rt}/lowp_vector.c ${rt}/lowp_f16c.c TARGET_DIRECTORY ${target}
                                  PROPERTIES COMPILE_OPTIONS -fno-lto)
    else()
      message(STATUS "opspec_add_extension(${package}): no link-time optimisation (${ipo_why})")
    endif()
  endif()

  if(with_cuda OR with_cuda_sim)
    # The CUDA handlers' one path and the launch configuration, in C, for both backends.
    target_sources(${target} PRIVATE ${rt}/ffi_cuda.c ${rt}/launch.c)
  endif()

  if(with_cuda_sim)
    # The simulator's engine, and every op's CUDA source compiled against it: the same
    # kernels and launchers as the GPU build, on the CPU (OpspecCudaSim.cmake).
    _opspec_cuda_sim_sources(sim_sources ${package} "${cu_sources}")
    add_library(${target}_cuda_sim STATIC ${rt}/cuda_sim.cpp ${rt}/cuda_check_sim.cpp ${sim_sources})
    # The simulator's folder first: its cuda_runtime.h is the one the sources include.
    target_include_directories(${target}_cuda_sim PRIVATE ${OPSPEC_RUNTIME_SIM_DIR} ${OPSPEC_RUNTIME_INCLUDE_DIR} ${gen_dir}
                                                          ${OPSPEC_XLA_INCLUDE_DIR})
    target_compile_options(${target}_cuda_sim PRIVATE ${warnings} ${OPSPEC_CUDA_SIM_FLAGS} ${OPSPEC_SANITIZE_FLAGS})
    set_target_properties(${target}_cuda_sim PROPERTIES
      CXX_STANDARD 17 CXX_STANDARD_REQUIRED ON CXX_EXTENSIONS OFF
      POSITION_INDEPENDENT_CODE ON
      CXX_VISIBILITY_PRESET hidden)
    add_dependencies(${target}_cuda_sim ${package}_opspec_check)
    target_compile_definitions(${target} PRIVATE OPSPEC_WITH_CUDA_SIM)
    target_link_libraries(${target} PRIVATE ${target}_cuda_sim)
    message(STATUS "opspec_add_extension(${package}): the CUDA simulator (backend=\"cuda_sim\")")
  endif()

  if(with_cuda)
    # Kernels and launchers compile as CUDA C++ into a static library; the C handlers call
    # them through extern "C". The CUDA runtime is linked statically so the extension
    # imports on machines with no GPU or driver.
    set(cuda_warnings -Xcompiler=-Wall,-Wextra)
    if(OPSPEC_WERROR)
      set(cuda_warnings --Werror all-warnings -Xcompiler=-Wall,-Wextra,-Werror)
    endif()
    add_library(${target}_cuda STATIC ${rt}/cuda.cu ${rt}/cuda_check.cu ${cu_sources})
    target_include_directories(${target}_cuda PRIVATE ${OPSPEC_RUNTIME_INCLUDE_DIR} ${gen_dir} ${OPSPEC_XLA_INCLUDE_DIR})
    target_compile_definitions(${target}_cuda PRIVATE OPSPEC_WITH_CUDA)
    target_compile_options(${target}_cuda PRIVATE ${cuda_warnings})
    set_target_properties(${target}_cuda PROPERTIES
      CUDA_STANDARD 17 CUDA_STANDARD_REQUIRED ON
      POSITION_INDEPENDENT_CODE ON
      CUDA_VISIBILITY_PRESET hidden
      CUDA_RUNTIME_LIBRARY Static)
    add_dependencies(${target}_cuda ${package}_opspec_check)
    target_compile_definitions(${target} PRIVATE OPSPEC_WITH_CUDA)
    target_link_libraries(${target} PRIVATE ${target}_cuda CUDA::cudart_static)
    message(STATUS "opspec_add_extension(${package}): CUDA handlers for ${CMAKE_CUDA_ARCHITECTURES}")
  else()
    message(STATUS "opspec_add_extension(${package}): CPU handlers only (no CUDA)")
  endif()

  # ---- the pure-Python half, next to the extension ---------------------------------
  set(py_files)
  set(py_sources)
  set(has_init OFF)
  set(has_stub OFF)
  set(has_typed OFF)
  foreach(src IN LISTS python_files)
    get_filename_component(src ${src} ABSOLUTE BASE_DIR ${CMAKE_CURRENT_SOURCE_DIR})
    get_filename_component(name ${src} NAME)
    if(name STREQUAL "__init__.py")
      set(has_init ON)
    elseif(name STREQUAL "_opspec.pyi")
      set(has_stub ON)
    elseif(name STREQUAL "py.typed")
      set(has_typed ON)
    endif()
    list(APPEND py_sources ${src})
  endforeach()
  list(APPEND py_sources ${gen_dir}/python/ops.py ${gen_dir}/python/ops.pyi ${gen_dir}/python/_tables.py)
  if(NOT has_stub)
    list(APPEND py_sources ${OPSPEC_NATIVE_STUB})  # the extension module's API, for type checkers
  endif()
  if(NOT has_init)
    # The standard package: checks jax, registers the handlers, exposes ops and the knobs.
    set(OPSPEC_PACKAGE ${package})
    configure_file(${OPSPEC_CMAKE_DIR}/package_init.py.in ${CMAKE_CURRENT_BINARY_DIR}/${package}_opspec_init/__init__.py @ONLY)
    list(APPEND py_sources ${CMAKE_CURRENT_BINARY_DIR}/${package}_opspec_init/__init__.py)
  endif()
  if(NOT has_typed)
    file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/${package}_opspec_init/py.typed "")
    list(APPEND py_sources ${CMAKE_CURRENT_BINARY_DIR}/${package}_opspec_init/py.typed)
  endif()
  foreach(src IN LISTS py_sources)
    get_filename_component(name ${src} NAME)
    add_custom_command(
      OUTPUT ${package_dir}/${name}
      COMMAND ${CMAKE_COMMAND} -E copy_if_different ${src} ${package_dir}/${name}
      DEPENDS ${src} $<$<TARGET_EXISTS:${package}_opspec_generate>:${package}_opspec_generate>
      VERBATIM)
    list(APPEND py_files ${package_dir}/${name})
  endforeach()
  add_custom_target(${target}_python ALL DEPENDS ${py_files})
  add_dependencies(${target} ${target}_python)

  # ---- install: <package>/ under the Python install folder --------------------------
  install(TARGETS ${target} LIBRARY DESTINATION ${OPSPEC_PYTHON_INSTALL_DIR}/${package} COMPONENT ${package})
  install(FILES ${py_files} DESTINATION ${OPSPEC_PYTHON_INSTALL_DIR}/${package} COMPONENT ${package})
endfunction()

