"""``python -m opspec``: where opspec's CMake package is, how opspec was built, and its
commands. One parser; each command's arguments and code live in the command's module.

python -m opspec --cmake-dir    the folder to pass as -Dopspec_DIR=... to plain CMake
python -m opspec --version      opspec's version
python -m opspec                version, build information, the parallel threshold
python -m opspec tune           measure where CPU loops should go parallel on this machine
                                (the threshold, and ops' own where they differ), and save
                                it for every later `import opspec` (docs/performance.md);
                                --no-save only prints it; --ops add,softmax times fewer;
                                --package NAME times a package's own ops
python -m opspec new PACKAGE    make a folder with a new package of ops: pyproject.toml,
                                CMakeLists.txt, one spec, its test (docs/user-project.md)
python -m opspec schema         print the JSON Schema of a spec (--path: where the file is),
                                for editors (docs/spec.md, "Editor support")
python -m opspec dev [CMD...]   develop mode, in a package's folder: build it CPU only into
                                build/dev, then run CMD with that build on PYTHONPATH; a
                                rerun after an edit rebuilds only what changed
                                (docs/user-project.md, "Develop mode"); --sanitize:
                                under ASan + UBSan, which name the op and the spec's
                                line of a read or write out of bounds

The console script `opspec` is the same command: `opspec new PACKAGE`.
"""

from __future__ import annotations

import argparse
import sys

import opspec
from opspec import _dev, _measure, _scaffold
from opspec._paths import cmake_dir, schema_path


def _schema(args: argparse.Namespace) -> int:
    try:
        path = schema_path()
    except RuntimeError as e:
        print(f"opspec schema: error: {e}", file=sys.stderr)
        return 1
    print(path if args.path else path.read_text(), end="\n" if args.path else "")
    return 0


def _tune(args: argparse.Namespace) -> int:
    ops = [op.strip() for op in args.ops.split(",") if op.strip()] if args.ops else None
    try:
        if args.package and args.package != "opspec":
            if ops:
                raise ValueError("--ops times opspec's own ops; with --package every op it can build inputs for")
            _measure.tune_package(args.package, save=not args.no_save, rounds=max(1, args.rounds))
        else:
            _measure.tune(save=not args.no_save, rounds=max(1, args.rounds), ops=ops)
    except ValueError as e:
        print(f"opspec tune: error: {e}", file=sys.stderr)
        return 2
    return 0


def _about(args: argparse.Namespace) -> int:
    if args.cmake_dir:
        print(cmake_dir())
    elif args.version:
        print(opspec.__version__)
    else:
        print(f"opspec {opspec.__version__}")
        for key, value in opspec.build_info().items():
            print(f"  {key}: {value}")
        print(f"  registered platforms: {', '.join(opspec.registered_platforms)}")
        print(
            f"  parallel threshold: {opspec.parallel_threshold()} elements of work ({opspec.parallel_threshold_source()})"
        )
    return 0


def parser() -> argparse.ArgumentParser:
    """The command line: the top-level flags, and one subcommand per command."""
    top = argparse.ArgumentParser(prog="python -m opspec", description="opspec: JAX ops from YAML specs.")
    top.set_defaults(run=_about)
    group = top.add_mutually_exclusive_group()
    group.add_argument(
        "--cmake-dir", action="store_true", help="print the folder of opspec's CMake package (for -Dopspec_DIR=...)"
    )
    group.add_argument("--version", action="store_true", help="print opspec's version")
    commands = top.add_subparsers(title="commands", metavar="COMMAND")

    tune = commands.add_parser(
        "tune",
        prog="opspec tune",
        help="measure this machine's parallel thresholds and save them under the user's cache folder",
        description="Measure where CPU loops should go parallel on this machine (the package's threshold "
        "from `add`, and the own threshold of each other op timed where its crossover is lower), and save "
        "them for every later `import opspec` (docs/performance.md).",
    )
    tune.add_argument("--no-save", action="store_true", help="print the threshold, do not save it")
    tune.add_argument("--rounds", type=int, default=9, help="interleaved rounds per size (default 9)")
    tune.add_argument(
        "--package",
        help="time the ops of this package built with opspec instead (each op whose inputs can be float32 "
        "ones: docs/performance.md), and save their own thresholds for it",
    )
    tune.add_argument(
        "--ops",
        help=f"comma-separated ops to time, of {', '.join(_measure.OPS)} (default: all; add is always "
        "timed: its crossover is the package's threshold)",
    )
    tune.set_defaults(run=_tune)

    new = commands.add_parser(
        "new", prog="opspec new", help="make a folder with a new package of ops", description=_scaffold.DESCRIPTION
    )
    _scaffold.add_arguments(new)
    new.set_defaults(run=_scaffold.run)

    schema = commands.add_parser(
        "schema",
        prog="opspec schema",
        help="print the JSON Schema of a spec",
        description="The JSON Schema of an opspec spec.",
    )
    schema.add_argument("--path", action="store_true", help="print the schema file's path instead of the schema")
    schema.set_defaults(run=_schema)

    dev = commands.add_parser("dev", prog="opspec dev", help="develop mode (dev --help)", description=_dev.DESCRIPTION)
    _dev.add_arguments(dev)
    dev.set_defaults(run=_dev.run)
    return top


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(sys.argv[1:] if argv is None else argv)
    return int(args.run(args))


if __name__ == "__main__":
    sys.exit(main())
