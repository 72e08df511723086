"""``opspec new <package>``: a new package of ops, ready to build and test.

Writes into a new folder (``./<package>`` unless ``--dir`` names another):

- ``pyproject.toml``: scikit-build-core, the package's name and version;
- ``CMakeLists.txt``: ``find_package(opspec)`` + ``opspec_add_extension``;
- ``specs/scaled_add.yaml``: one op, with derivatives, to edit or copy;
- ``tests/test_scaled_add.py``: the op against NumPy and ``opspec.testing.check_op``;
- ``opspec.schema.json``: opspec's JSON Schema of a spec, which the spec's first line
  names by a path relative to the spec, for editors with yaml-language-server;
- ``README.md`` (how to build, test and develop) and ``.gitignore``.

As written, ``pip install --no-build-isolation .`` in an environment that has opspec and
scikit-build-core builds it, and ``pytest tests`` passes (docs/user-project.md).
"""

from __future__ import annotations

import argparse
import importlib.util
import keyword
import os
import pathlib
import shutil
import sys

import opspec
from opspec._paths import schema_path

# The first op: element-wise, with an attribute and derivatives, so that check_op has
# every kind of check to run on it.
SPEC = """\
{schema_comment}op: scaled_add
doc: |
  Scaled sum, out = x + alpha * y, element-wise, for arrays of any (equal) shape.
types: {{T: [float32, float64]}}          # one specialization per choice
inputs:
  - {{name: x, dtype: T, shape: [...]}}
  - {{name: y, dtype: T, shape: [...]}}
outputs:
  - {{name: out, dtype: T, shape: [...]}}
attrs:
  - {{name: alpha, type: float64, default: 1.0}}
derivatives:                              # d out / d x and d out / d y, element-wise
  x: {{elementwise: "1"}}
  y: {{elementwise: "alpha"}}
launch: [x_size]                          # the body runs once per index i
kernel: |
  out[i] = x[i] + (T)alpha * y[i];
"""

TEST = '''\
"""{package}.ops.scaled_add against NumPy, and against its own spec (check_op)."""

import os

import jax

jax.config.update("jax_enable_x64", True)  # float64 stays float64; check_op checks derivatives in float64

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from opspec.testing import check_op  # noqa: E402

import {package}  # noqa: E402


@pytest.fixture
def rng():
    seed = int.from_bytes(os.urandom(4), "little")
    print(f"random seed {{seed}}")  # shown on failure, to replay
    return np.random.default_rng(seed)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_scaled_add(rng, dtype):
    x, y = rng.standard_normal((2, 4, 33)).astype(dtype)
    tol = 1e-6 if dtype == np.float32 else 1e-12
    out = jax.jit({package}.ops.scaled_add, static_argnames="alpha")(x, y, alpha=-2.5)
    np.testing.assert_allclose(out, x - dtype(2.5) * y, rtol=tol, atol=tol)


def test_scaled_add_conforms(rng):
    """Call checks, jit, vmap, zero sizes and the derivatives against finite differences."""
    x, y = rng.standard_normal((2, 4, 33))
    report = check_op({package}.ops.scaled_add, x, y, alpha=0.5, reference=lambda x, y, alpha: x + alpha * y)
    print(report)
    assert {{"reference", "jit", "grad x", "grad y"}} <= set(report.ran), report
'''

PYPROJECT = """\
[build-system]
# opspec is not on PyPI: build with `pip install --no-build-isolation .` in an environment
# that has opspec, jax and scikit-build-core (README.md).
requires = ["scikit-build-core>=0.11", "opspec>={major_minor},<{next_minor}", "jax>=0.5"]
build-backend = "scikit_build_core.build"

[project]
name = "{package}"
version = "0.1.0"
description = "JAX ops built with opspec from the YAML specs in specs/"
requires-python = ">=3.11"
# The opspec this package is compiled against at build time, at run time.
dependencies = ["opspec>={major_minor},<{next_minor}", "jax>=0.5"]

[tool.scikit-build]
cmake.version = ">=3.24"
# opspec_add_extension installs the package {package} (CMakeLists.txt).
wheel.packages = []
"""

CMAKELISTS = """\
cmake_minimum_required(VERSION 3.24)
project({package} LANGUAGES C)
find_package(opspec CONFIG REQUIRED)
# Every specs/*.yaml is an op of {package}.ops (docs/user-project.md in opspec).
opspec_add_extension({package} SPECS ${{CMAKE_CURRENT_SOURCE_DIR}}/specs)
"""

README = """\
# {package}

JAX ops written as YAML specs (`specs/`), built with opspec into the package `{package}`.

```sh
pip install --no-build-isolation .     # in an environment with opspec and scikit-build-core
python -m pytest -q tests
```

`specs/scaled_add.yaml` is the first op: `{package}.ops.scaled_add(x, y, alpha=0.5)`.
Add an op by adding `specs/<op>.yaml` (opspec's docs/spec.md has every key;
`opspec-gen --check specs/*.yaml` checks specs without building). For a fast edit-test
loop, see "Develop mode" in opspec's docs/user-project.md. When an op gives wrong
numbers, first run the tests with its kernels under the sanitizers, which name the op and
the spec's line of a read or write out of bounds: `opspec dev --sanitize -- python -m
pytest -q tests`.

`opspec.schema.json` is opspec's JSON Schema of a spec, named on each spec's first line
for editors with yaml-language-server (key completion, unknown keys marked); after
upgrading opspec, refresh it with `python -m opspec schema > opspec.schema.json`.
"""

GITIGNORE = """\
/build/
/.venv/
__pycache__/
*.egg-info/
"""


SCHEMA_FILE = "opspec.schema.json"


def schema_text() -> str | None:
    """This opspec's JSON Schema of a spec (python -m opspec schema), or None when it ships
    none."""
    try:
        return schema_path().read_text()
    except RuntimeError:
        return None


def schema_comment(has_schema: bool) -> str:
    """The first line of a spec, for editors with yaml-language-server: the package's copy
    of the schema, by a path relative to the spec (which yaml-language-server resolves from
    the spec's folder), so that the package holds no path of the creator's machine."""
    return f"# yaml-language-server: $schema=../{SCHEMA_FILE}\n" if has_schema else ""


def shadowed_module(name: str) -> str | None:
    """Where an `import name` finds a module now, other than in the current folder (which
    `python -m opspec` puts first on sys.path, and where the new folder may already be, as
    an empty namespace package): a package of that name would shadow it, or be shadowed."""
    saved = sys.path[:]
    sys.path[:] = [p for p in saved if os.path.abspath(p or os.curdir) != os.getcwd()]
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        spec = None
    finally:
        sys.path[:] = saved
    if spec is None:
        return None
    if spec.origin and spec.origin not in ("built-in", "frozen"):
        return spec.origin
    locations = list(spec.submodule_search_locations or [])
    return locations[0] if locations else (spec.origin or "built in")


def check_name(name: str) -> str | None:
    """Why `name` cannot be a package name, or None (docs/user-project.md): an identifier,
    not a keyword, not opspec's, and no module that Python already finds by that name,
    standard or installed, since installing the package (or running its tests) would
    then replace that module for every program of the environment (`pip`, `encodings`).
    opspec-gen --package keeps the keyword and standard-library part of the rule; only
    this one asks what is installed, since a built package's own name is."""
    if not name.isascii() or not name.isidentifier():
        return f"'{name}' is not a Python package name (ASCII letters, digits and '_', not starting with a digit)"
    if keyword.iskeyword(name):
        return f"'{name}' is a Python keyword"
    if name == "opspec" or name.startswith("opspec_"):
        return f"'{name}' is opspec's own name"
    if len(name) > 64:
        return f"'{name}' is longer than 64 characters"
    if name in sys.stdlib_module_names:
        return (
            f"'{name}' is a module of Python's standard library: a package of that name would shadow it; pick another"
        )
    where = shadowed_module(name)
    if where is not None:
        return (
            f"'{name}' is a module this Python already finds ({where}): installing a package of that name "
            "would replace it in this environment; pick another"
        )
    return None


def files(package: str) -> dict[str, str]:
    """The new package's files: relative path -> text."""
    major, minor = (int(p) for p in opspec.__version__.split(".")[:2])
    versions = dict(major_minor=f"{major}.{minor}", next_minor=f"{major}.{minor + 1}")
    schema = schema_text()
    written = {
        "pyproject.toml": PYPROJECT.format(package=package, **versions),
        "CMakeLists.txt": CMAKELISTS.format(package=package),
        "specs/scaled_add.yaml": SPEC.format(schema_comment=schema_comment(schema is not None)),
        "tests/test_scaled_add.py": TEST.format(package=package),
        "README.md": README.format(package=package),
        ".gitignore": GITIGNORE,
    }
    if schema is not None:
        written[SCHEMA_FILE] = schema
    return written


def check_folder(where: pathlib.Path) -> str | None:
    """Why the package cannot be written into `where`, or None: it must be an empty folder
    or a new one inside an existing folder (no parents are made: nothing outside it is
    touched)."""
    if where.exists() or where.is_symlink():
        if not where.is_dir() or any(where.iterdir()):
            return f"{where} exists and is not an empty folder"
        return None
    parent = where.absolute().parent
    if not parent.is_dir():
        what = "is not a folder" if parent.exists() else "does not exist"
        return f"cannot make {where}: {parent} {what}"
    return None


def create(package: str, where: pathlib.Path) -> list[pathlib.Path]:
    """Writes the package folder; raises ValueError for a bad name or folder (nothing is
    written then) or when a write fails (what was written is removed)."""
    why = check_name(package) or check_folder(where)
    if why:
        raise ValueError(why)
    made = not where.exists()
    written = []
    try:
        where.mkdir(exist_ok=True)
        for rel, text in files(package).items():
            path = where / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
            written.append(path)
    except OSError as e:
        # The folder was new or empty: leave it as it was.
        if made:
            shutil.rmtree(where, ignore_errors=True)
        else:
            for child in where.iterdir():
                if child.is_dir() and not child.is_symlink():
                    shutil.rmtree(child)
                else:
                    child.unlink()
        raise ValueError(f"cannot write {where}: {e.strerror or e}") from e
    return written


DESCRIPTION = "Make a folder with a new package of opspec ops: pyproject.toml, CMakeLists.txt, one spec and its test."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The arguments of `opspec new` (opspec.__main__ holds the one parser)."""
    parser.add_argument("package", help="the Python import name of the new package (e.g. myops)")
    parser.add_argument("--dir", type=pathlib.Path, help="the folder to make (default: ./<package>)")


def run(args: argparse.Namespace) -> int:
    """`opspec new` with parsed `args`: write the folder; 2 for a bad name or folder."""
    where = args.dir if args.dir is not None else pathlib.Path(args.package)
    try:
        written = create(args.package, where)
    except ValueError as e:
        print(f"opspec new: error: {e}", file=sys.stderr)
        return 2
    for path in written:
        print(f"  {path}")
    print(
        f"made {where}/: build and test it with\n"
        f"  cd {where}\n"
        f"  pip install --no-build-isolation .\n"
        f"  python -m pytest -q tests"
    )
    return 0
