"""Where opspec's installed files are: its CMake package and the spec's JSON Schema.
Found without importing opspec (nor JAX): the command line and `opspec dev` read them."""

from __future__ import annotations

import importlib.util
import os
import pathlib


def cmake_dir() -> str:
    """The folder of opspecConfig.cmake (the opspec_cmake package, found without
    importing it): what plain CMake takes as -Dopspec_DIR=..."""
    spec = importlib.util.find_spec("opspec_cmake")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("opspec_cmake is not installed: opspec was not installed as a package (pip install)")
    return os.path.abspath(list(spec.submodule_search_locations)[0])


def schema_path() -> pathlib.Path:
    """The JSON Schema of a spec that ships in the package (``spec.schema.json``, written
    by ``opspec-gen --schema`` at build time, beside this module)."""
    path = pathlib.Path(__file__).resolve().parent / "spec.schema.json"
    if not path.is_file():
        raise RuntimeError(f"{path} is missing: this opspec was built without opspec-gen (OPSPEC_REGENERATE=OFF)")
    return path
