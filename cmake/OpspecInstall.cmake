# Installs opspec_cmake/, the CMake package that users' op packages are built with, next
# to the opspec package: the CMake files, the runtime headers and sources every package
# compiles (OpspecExtension.cmake says why sources, not a library), and opspec-gen. Also
# puts opspec-gen on the PATH (the wheel's scripts, or <prefix>/bin).
if(NOT OPSPEC_REGENERATE)
  message(STATUS "opspec: OPSPEC_REGENERATE=OFF builds no opspec-gen: opspec_cmake/ is not installed")
  return()
endif()
include(CMakePackageConfigHelpers)
set(_opspec_kit ${OPSPEC_PYTHON_INSTALL_DIR}/opspec_cmake)
set(_opspec_kit_build ${CMAKE_CURRENT_BINARY_DIR}/opspec_cmake)
configure_file(${CMAKE_CURRENT_SOURCE_DIR}/cmake/opspecConfig.cmake.in ${_opspec_kit_build}/opspecConfig.cmake @ONLY)
# 0.x: a package built against 0.1 needs an opspec 0.1.
write_basic_package_version_file(${_opspec_kit_build}/opspecConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES
    ${_opspec_kit_build}/opspecConfig.cmake
    ${_opspec_kit_build}/opspecConfigVersion.cmake
    ${CMAKE_CURRENT_SOURCE_DIR}/cmake/OpspecExtension.cmake
    ${CMAKE_CURRENT_SOURCE_DIR}/cmake/OpspecCudaSim.cmake
    ${CMAKE_CURRENT_SOURCE_DIR}/cmake/OpspecJax.cmake
    ${CMAKE_CURRENT_SOURCE_DIR}/cmake/package_init.py.in
    ${OPSPEC_NATIVE_STUB}
  DESTINATION ${_opspec_kit} COMPONENT opspec)
install(FILES ${CMAKE_CURRENT_SOURCE_DIR}/cmake/opspec_cmake_init.py
  DESTINATION ${_opspec_kit} RENAME __init__.py COMPONENT opspec)
install(DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}/runtime/include/opspec
  DESTINATION ${_opspec_kit}/include COMPONENT opspec FILES_MATCHING PATTERN "*.h")
set(_opspec_rt ${CMAKE_CURRENT_SOURCE_DIR}/runtime/src)
install(FILES
    ${_opspec_rt}/module.c ${_opspec_rt}/ffi.c ${_opspec_rt}/ffi_abi.c ${_opspec_rt}/handler.c ${_opspec_rt}/batch.c ${_opspec_rt}/cpu.c ${_opspec_rt}/parallel.c ${_opspec_rt}/contents.c ${_opspec_rt}/bfloat16.c
    ${_opspec_rt}/lowp_vector.c ${_opspec_rt}/lowp_f16c.c ${_opspec_rt}/lowp_tiles.c ${_opspec_rt}/pages.c
    ${_opspec_rt}/ffi_cuda.c ${_opspec_rt}/cuda.cu ${_opspec_rt}/cuda_check.cu ${_opspec_rt}/cuda_check_sim.cpp
    ${_opspec_rt}/launch.c ${_opspec_rt}/cuda_sim.cpp
    ${_opspec_rt}/extension_info.c.in
  DESTINATION ${_opspec_kit}/src COMPONENT opspec)
install(FILES ${CMAKE_CURRENT_SOURCE_DIR}/runtime/sim/cuda_runtime.h DESTINATION ${_opspec_kit}/sim COMPONENT opspec)
install(TARGETS opspec-gen RUNTIME DESTINATION ${_opspec_kit}/bin COMPONENT opspec)
if(DEFINED SKBUILD_SCRIPTS_DIR)
  install(TARGETS opspec-gen RUNTIME DESTINATION ${SKBUILD_SCRIPTS_DIR} COMPONENT opspec)
else()
  install(TARGETS opspec-gen RUNTIME DESTINATION bin COMPONENT opspec)
endif()
