"""``python -m opspec``: where opspec's CMake package is, and how opspec was built.

python -m opspec --cmake-dir    the folder to pass as -Dopspec_DIR=... to plain CMake
python -m opspec --version      opspec's version
python -m opspec                version, build information, the parallel threshold
python -m opspec tune           measure where portable CPU loops should go parallel on
                                this machine, and save it for every later `import opspec`
                                (docs/performance.md); --no-save only prints it
python -m opspec new PACKAGE    make a folder with a new package of ops: pyproject.toml,
                                CMakeLists.txt, one spec, its test (docs/user-project.md)
python -m opspec schema         print the JSON Schema of a spec (--path: where the file is),
                                for editors (docs/spec.md, "Editor support")
python -m opspec dev [CMD...]   develop mode, in a package's folder: build it CPU only into
                                build/dev, then run CMD with that build on PYTHONPATH; a
                                rerun after an edit rebuilds only what changed
                                (docs/user-project.md, "Develop mode")

The console script `opspec` is the same command: `opspec new PACKAGE`.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import pathlib
import sys

import opspec


def cmake_dir() -> str:
    """The folder of opspecConfig.cmake (the opspec_cmake package, found without
    importing it)."""
    spec = importlib.util.find_spec("opspec_cmake")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("opspec_cmake is not installed: opspec was not installed as a package (pip install)")
    return os.path.abspath(list(spec.submodule_search_locations)[0])


def schema_path() -> pathlib.Path:
    """The JSON Schema of a spec that ships in the package (``spec.schema.json``, written
    by ``opspec-gen --schema`` at build time)."""
    path = pathlib.Path(opspec.__file__).resolve().parent / "spec.schema.json"
    if not path.is_file():
        raise RuntimeError(f"{path} is missing: this opspec was built without opspec-gen (OPSPEC_REGENERATE=OFF)")
    return path


def schema(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="opspec schema", description="The JSON Schema of an opspec spec.")
    parser.add_argument("--path", action="store_true", help="print the schema file's path instead of the schema")
    args = parser.parse_args(argv)
    try:
        path = schema_path()
    except RuntimeError as e:
        print(f"opspec schema: error: {e}", file=sys.stderr)
        return 1
    print(path if args.path else path.read_text(), end="\n" if args.path else "")
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    # Commands with arguments of their own parse them themselves.
    if argv and argv[0] == "new":
        from opspec import _scaffold

        return _scaffold.main(argv[1:])
    if argv and argv[0] == "schema":
        return schema(argv[1:])
    if argv and argv[0] == "dev":
        from opspec import _dev

        return _dev.main(argv[1:])
    parser = argparse.ArgumentParser(
        prog="python -m opspec",
        description="opspec: JAX ops from YAML specs.",
        epilog="python -m opspec new PACKAGE: make a folder with a new package of ops (new --help); "
        "python -m opspec schema [--path]: the JSON Schema of a spec; "
        "python -m opspec dev [COMMAND...]: develop mode (dev --help).",
    )
    group = parser.add_mutually_exclusive_group()
    group.add_argument(
        "--cmake-dir", action="store_true", help="print the folder of opspec's CMake package (for -Dopspec_DIR=...)"
    )
    group.add_argument("--version", action="store_true", help="print opspec's version")
    parser.add_argument(
        "command",
        nargs="?",
        choices=["tune"],
        help="tune: measure this machine's parallel threshold and save it under the user's cache folder",
    )
    parser.add_argument("--no-save", action="store_true", help="tune: print the threshold, do not save it")
    parser.add_argument("--rounds", type=int, default=9, help="tune: interleaved rounds per size (default 9)")
    args = parser.parse_args(argv)
    if args.command == "tune":
        from opspec import _tune

        _tune.tune(save=not args.no_save, rounds=max(1, args.rounds))
    elif args.cmake_dir:
        print(cmake_dir())
    elif args.version:
        print(opspec.__version__)
    else:
        print(f"opspec {opspec.__version__}")
        for key, value in opspec.build_info().items():
            print(f"  {key}: {value}")
        print(f"  registered platforms: {', '.join(opspec.registered_platforms)}")
        print(f"  parallel threshold: {opspec.parallel_threshold()} trips ({opspec.parallel_threshold_source()})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
