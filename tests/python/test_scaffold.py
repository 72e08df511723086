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


def test_opspec_new_refuses_bad_names_and_full_folders(tmp_path):
    for name, why in [
        ("1ops", "is not a Python package name"),
        ("my-ops", "is not a Python package name"),
        ("class", "is a Python keyword"),
        ("opspec", "is opspec's own name"),
    ]:
        r = subprocess.run([sys.executable, "-m", "opspec", "new", name], cwd=tmp_path, capture_output=True, text=True)
        assert r.returncode == 2 and f"opspec new: error: '{name}' {why}" in r.stderr, r.stderr
    full = tmp_path / "full"
    full.mkdir()
    (full / "keep.txt").write_text("mine")
    r = subprocess.run([sys.executable, "-m", "opspec", "new", "full"], cwd=tmp_path, capture_output=True, text=True)
    assert r.returncode == 2 and "full exists and is not an empty folder" in r.stderr, r.stderr
    assert listing(full) == {"keep.txt"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["full"]  # nothing written for the bad names
