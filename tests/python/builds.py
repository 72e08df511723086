"""The builds the tests make, in one place: a copy of the source tree built with other
specs, and users' own packages. Each costs a minute or more on a 2-core machine (a
build of the generator, the runtime, the CUDA simulator and nvcc's part), so they are
made as few times per session as the tests allow.

- The source tree: `register_tree_specs(...)`, called by a test module at import, adds
  specs to the one copy of the tree that the session fixture `tree_build` (conftest.py)
  builds, once, with the top-level CMakeLists.txt as a user does after dropping a spec
  into specs/ (CUDA where nvcc is, -Werror). The copy holds only the registered specs:
  the shipped ones are built by `./run` already. Tests that only read that build share
  it; a run of one test file builds only that file's specs.
- A user's package: `write_package`, `configure`, `cmake_build`, against the installed
  opspec's CMake package (find_package(opspec), what users do) or, where opspec is not
  pip-installed, add_subdirectory() of the source tree. Those tests edit their package
  and rebuild, or expect the build to fail, so each has its own; the package that only
  gets read (`reading`, reading_ops.py) is built once per session (conftest.py).
"""

from __future__ import annotations

import os
import pathlib
import shutil
import subprocess
import sys
import textwrap

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]

# What a copy of the tree leaves out: git's data, the environments and every build
# folder (./run's, the matrix's, sanitize's, fuzz's), the wheel, caches.
TREE_IGNORE = shutil.ignore_patterns(".git", ".venv*", ".whl", "build*", "__pycache__", ".*_cache")


def run(cmd, **kw):
    """Runs `cmd`; a failure fails the test with the command and the end of its output."""
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    assert r.returncode == 0, f"{cmd}\n{r.stdout[-4000:]}\n{r.stderr[-4000:]}"
    return r


def generator() -> list:
    """Ninja where it is installed (its error output is what some tests read), else CMake's default."""
    return ["-G", "Ninja"] if shutil.which("ninja") else []


def launcher() -> list:
    """ccache for C and C++ where it is installed: a rebuild of the same sources is free."""
    if not shutil.which("ccache"):
        return []
    return ["-DCMAKE_C_COMPILER_LAUNCHER=ccache", "-DCMAKE_CXX_COMPILER_LAUNCHER=ccache"]


def cmake_dir() -> str:
    """The installed opspec's CMake package (python -m opspec --cmake-dir); skips the test
    where opspec is not pip-installed (a build folder on PYTHONPATH has none)."""
    r = subprocess.run([sys.executable, "-m", "opspec", "--cmake-dir"], capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip("opspec is not pip-installed (no CMake package): " + r.stderr.strip()[-200:])
    return r.stdout.strip()


def has_cmake_package() -> bool:
    return subprocess.run([sys.executable, "-m", "opspec", "--cmake-dir"], capture_output=True).returncode == 0


def cuda_architectures() -> list:
    """One CUDA architecture where nvcc is: compute_80's PTX and sm_80's code, which runs
    on every GPU from sm_80 on. A test's build proves that nvcc compiles the code; the
    default's second architecture (80-real 90, cmake/OpspecExtension.cmake) would double
    nvcc's time, the most of these builds."""
    return ["-DCMAKE_CUDA_ARCHITECTURES=80"] if shutil.which("nvcc") else []


def configure(project: pathlib.Path, build: pathlib.Path, *args: str) -> subprocess.CompletedProcess:
    """cmake -S project -B build for this Python, with Ninja and ccache where they are,
    and one CUDA architecture where nvcc is."""
    python = f"-DPython3_EXECUTABLE={sys.executable}"
    return run(
        ["cmake", "-S", str(project), "-B", str(build), *generator(), *launcher(), *cuda_architectures(), python, *args]
    )


def cmake_build(build_dir: pathlib.Path, target: str | None = None) -> subprocess.CompletedProcess:
    return run(["cmake", "--build", str(build_dir), "-j", "2", *(["--target", target] if target else [])])


def python_path(build_dir: pathlib.Path) -> dict:
    """The environment of a fresh interpreter that imports the packages of `build_dir`."""
    return dict(os.environ, PYTHONPATH=str(build_dir / "python"))


# ---- a user's package -----------------------------------------------------------------


def write_package(project: pathlib.Path, name: str, specs: dict, options: str = "", vendor: bool = False) -> None:
    """A package `name` of `specs` ({op: spec text}) in `project`: its specs/ and a
    CMakeLists.txt that finds the installed opspec (or, with `vendor`, adds the source
    tree) and calls opspec_add_extension(name SPECS specs options)."""
    (project / "specs").mkdir(parents=True)
    for op, text in specs.items():
        (project / "specs" / f"{op}.yaml").write_text(textwrap.dedent(text))
    opspec = f"add_subdirectory({ROOT.as_posix()} opspec)" if vendor else "find_package(opspec CONFIG REQUIRED)"
    (project / "CMakeLists.txt").write_text(
        f"cmake_minimum_required(VERSION 3.24)\nproject({name} LANGUAGES C)\n{opspec}\n"
        f"opspec_add_extension({name} SPECS specs {options})\n"
    )


# ---- the source tree with other specs ---------------------------------------------------

_tree_specs: dict[str, tuple[str, str]] = {}  # op -> (text, the module that registered it)


def register_tree_specs(owner: str, specs: dict) -> None:
    """Adds `specs` ({op: text}) to the copy of the tree that `tree_build` builds. `owner`
    (the registering module) is named if two modules register one op differently."""
    for op, text in specs.items():
        text = textwrap.dedent(text)
        held = _tree_specs.setdefault(op, (text, owner))
        assert held[0] == text, f"{owner} and {held[1]} both register an op {op!r} for tree_build"


def shipped_spec_edited(op: str, old: str, new: str) -> str:
    """The text of the shipped spec `op` with `old` (which it holds exactly once) replaced."""
    text = (ROOT / "specs" / f"{op}.yaml").read_text()
    assert text.count(old) == 1, op
    return text.replace(old, new)


def build_tree(folder: pathlib.Path) -> tuple[pathlib.Path, pathlib.Path]:
    """Copies the source tree into `folder`/project with only the registered specs in
    specs/, and builds it as a user would: the top-level CMakeLists.txt (the generator,
    generated/ in the copy, the extension with -Werror; nvcc's part where nvcc is).
    Returns (project, build folder)."""
    project = folder / "project"
    shutil.copytree(ROOT, project, ignore=TREE_IGNORE)
    for spec in (project / "specs").glob("*.yaml"):
        spec.unlink()
    for op, (text, _) in sorted(_tree_specs.items()):
        (project / "specs" / f"{op}.yaml").write_text(text)
    build_dir = project / "build"
    cuda = "AUTO" if shutil.which("nvcc") else "OFF"
    configure(project, build_dir, f"-DOPSPEC_CUDA={cuda}", "-DBUILD_TESTING=OFF")
    cmake_build(build_dir)
    return project, build_dir
