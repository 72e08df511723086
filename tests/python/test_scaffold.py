"""`opspec new <package>` (docs/user-project.md): the folder it makes builds with pip as
written, and the test it writes passes against the built package. Built CPU only (no
CUDA, no simulator) to keep CI fast; the scaffold itself does not choose."""

import importlib.util
import os
import pathlib
import subprocess
import sys

import pytest
from builds import cmake_dir, run

FILES = {
    ".gitignore",
    "CMakeLists.txt",
    "README.md",
    "opspec.schema.json",
    "pyproject.toml",
    "specs/scaled_add.yaml",
    "tests/test_scaled_add.py",
}


def listing(folder: pathlib.Path) -> set:
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}


def opspec_script() -> pathlib.Path | None:
    """The console script pip put beside this interpreter, if opspec is pip-installed."""
    script = pathlib.Path(sys.executable).parent / "opspec"
    return script if script.exists() else None


@pytest.mark.slow
def test_opspec_new_builds_with_pip_and_its_test_passes(tmp_path):
    cmake_dir()  # skips unless opspec is pip-installed: the build needs its CMake package
    if importlib.util.find_spec("scikit_build_core") is None:
        pytest.skip("scikit-build-core is not installed: pip cannot build the package")
    project = tmp_path / "scaffolded"
    r = run([sys.executable, "-m", "opspec", "new", "scaffolded", "--dir", str(project)])
    assert listing(project) == FILES, r.stdout
    assert "pip install --no-build-isolation ." in r.stdout
    # The console script makes the same files.
    script = opspec_script()
    if script is not None:
        other = tmp_path / "other"
        run([str(script), "new", "scaffolded", "--dir", str(other)])
        assert {f: (other / f).read_text() for f in FILES} == {f: (project / f).read_text() for f in FILES}

    # pip install as the scaffold's README says, into a folder of its own (--target), not
    # into the environment running this suite.
    site = tmp_path / "site"
    run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-build-isolation",
            "--no-deps",
            "--target",
            str(site),
            "--config-settings=cmake.define.OPSPEC_CUDA=OFF",
            "--config-settings=cmake.define.OPSPEC_CUDA_SIM=OFF",
            str(project),
        ]
    )
    paths = [str(site)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(paths))
    r = run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"], cwd=project, env=env)
    assert "3 passed" in r.stdout, r.stdout


def new(*args, cwd):
    return subprocess.run([sys.executable, "-m", "opspec", "new", *args], cwd=cwd, capture_output=True, text=True)


STDLIB = "is a module of Python's standard library: a package of that name would shadow it"
INSTALLED = "is a module this Python already finds"


def test_opspec_new_refuses_bad_names_and_full_folders(tmp_path):
    for name, why in [
        ("1ops", "is not a Python package name"),
        ("my-ops", "is not a Python package name"),
        ("class", "is a Python keyword"),
        ("opspec", "is opspec's own name"),
        # Names that would replace a module of the environment once installed (issue 31, F4).
        *((name, STDLIB) for name in ("encodings", "json", "typing", "os")),
        *((name, INSTALLED) for name in ("pip", "pytest", "jax", "numpy")),  # setuptools: not in every venv (3.12+)
    ]:
        r = new(name, cwd=tmp_path)
        assert r.returncode == 2 and f"opspec new: error: '{name}' {why}" in r.stderr, r.stderr
        assert "Traceback" not in r.stderr
    # The module the name would shadow, where it is installed.
    r = new("numpy", cwd=tmp_path)
    assert str(pathlib.Path(importlib.util.find_spec("numpy").origin)) in r.stderr, r.stderr
    full = tmp_path / "full"
    full.mkdir()
    (full / "keep.txt").write_text("mine")
    r = subprocess.run([sys.executable, "-m", "opspec", "new", "full"], cwd=tmp_path, capture_output=True, text=True)
    assert r.returncode == 2 and "full exists and is not an empty folder" in r.stderr, r.stderr
    assert listing(full) == {"keep.txt"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["full"]  # nothing written for the bad names


def test_opspec_new_takes_an_empty_folder_of_its_name(tmp_path):
    """The current folder does not count as installed: an empty folder made for the
    package, where `python -m opspec` runs, is not a module the name would shadow."""
    (tmp_path / "fresh_ops").mkdir()
    r = new("fresh_ops", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert listing(tmp_path / "fresh_ops") == FILES


def test_opspec_new_dir_under_a_file_or_a_missing_folder(tmp_path):
    """--dir under a file or a folder that does not exist: an error, not a traceback, and
    nothing made (no parents either)."""
    (tmp_path / "file.txt").write_text("mine")
    for where, why in [
        ("file.txt/pkg", "file.txt is not a folder"),
        ("missing/deeper/pkg", "deeper does not exist"),
        ("file.txt", "file.txt exists and is not an empty folder"),
    ]:
        r = new("dir_ops", "--dir", where, cwd=tmp_path)
        assert r.returncode == 2 and r.stderr.startswith("opspec new: error: "), r.stderr
        assert why in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file.txt"]
    assert (tmp_path / "file.txt").read_text() == "mine"


def test_opspec_new_schema_comment_is_portable(tmp_path):
    """The spec names the package's own copy of the schema by a relative path: no path
    of the environment that made it is written anywhere in the folder (issue 30)."""
    r = new("portable_ops", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    project = tmp_path / "portable_ops"
    spec = (project / "specs" / "scaled_add.yaml").read_text()
    assert spec.splitlines()[0] == "# yaml-language-server: $schema=../opspec.schema.json"
    schema = subprocess.run([sys.executable, "-m", "opspec", "schema"], capture_output=True, text=True, check=True)
    assert (project / "opspec.schema.json").read_text() == schema.stdout
    # The copy the comment points at, resolved from the spec's folder as editors do.
    assert (project / "specs" / "../opspec.schema.json").resolve() == (project / "opspec.schema.json").resolve()
    for path in project.rglob("*"):
        if path.is_file():
            text = path.read_text()
            assert "file://" not in text and sys.prefix not in text and str(tmp_path) not in text, path
    assert 'requires-python = ">=3.11"' in (project / "pyproject.toml").read_text()
