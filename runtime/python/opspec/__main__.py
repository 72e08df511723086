"""``python -m opspec``: where opspec's CMake package is, and how opspec was built.

python -m opspec --cmake-dir    the folder to pass as -Dopspec_DIR=... to plain CMake
python -m opspec --version      opspec's version
python -m opspec                version and build information
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys

import opspec


def cmake_dir() -> str:
    """The folder of opspecConfig.cmake (the opspec_cmake package, found without
    importing it)."""
    spec = importlib.util.find_spec("opspec_cmake")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("opspec_cmake is not installed: opspec was not installed as a package (pip install)")
    return os.path.abspath(list(spec.submodule_search_locations)[0])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m opspec", description="opspec: JAX ops from YAML specs.")
    group = parser.add_mutually_exclusive_group()
    group.add_argument(
        "--cmake-dir", action="store_true", help="print the folder of opspec's CMake package (for -Dopspec_DIR=...)"
    )
    group.add_argument("--version", action="store_true", help="print opspec's version")
    args = parser.parse_args(argv)
    if args.cmake_dir:
        print(cmake_dir())
    elif args.version:
        print(opspec.__version__)
    else:
        print(f"opspec {opspec.__version__}")
        for key, value in opspec.build_info().items():
            print(f"  {key}: {value}")
        print(f"  registered platforms: {', '.join(opspec.registered_platforms)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
