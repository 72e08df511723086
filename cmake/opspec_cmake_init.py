"""opspec's CMake package: ``find_package(opspec CONFIG REQUIRED)`` finds it here.

scikit-build-core reads the ``cmake.prefix`` entry point that names this package and puts
its folder on ``CMAKE_PREFIX_PATH``; plain CMake gets the folder from
``python -m opspec --cmake-dir``. It holds the CMake files, the runtime headers and
sources that every opspec package compiles, and the opspec-gen binary. Importing it does
nothing (build tools import it to find the folder), unlike ``import opspec``, which
loads JAX.
"""
