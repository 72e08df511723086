"""`opspec dev` (docs/user-project.md, "Develop mode"): builds a package of one's own
CPU only into build/dev and runs a command that imports that build; after a one-line
kernel edit, only that op's generated file is rewritten and only its CPU source compiled,
and the command sees the new kernel; a body that does not compile is shown as the
compiler said it, without the build tool's command lines."""

import os
import subprocess
import sys

import pytest
from builds import cmake_dir, write_package
from test_user_packages import ADD_A, CLAMP_B

CHECK = "import numpy as np, devpkg; print(np.asarray(devpkg.ops.add(np.ones(3, np.float32), np.ones(3, np.float32))))"


def dev(project, *command):
    return subprocess.run(
        [sys.executable, "-m", "opspec", "dev", "--", *command], cwd=project, capture_output=True, text=True
    )


def mtimes(folder):
    return {p.name: p.stat().st_mtime_ns for p in folder.rglob("*") if p.is_file()}


@pytest.mark.slow
def test_opspec_dev_rebuilds_only_the_edited_op(tmp_path):
    cmake_dir()  # skips unless opspec is pip-installed
    project = tmp_path / "devpkg"
    write_package(project, "devpkg", {"add": ADD_A, "clamp": CLAMP_B})
    # A pip-installed devpkg elsewhere on the path must not win over build/dev.
    # pyproject.toml's version, as pip's build would give it (the CMake project names none).
    (project / "pyproject.toml").write_text('[project]\nname = "devpkg"\nversion = "2.5.1"\n')
    r = dev(project, sys.executable, "-c", CHECK + "; print(devpkg.__version__, devpkg.build_info()['version'])")
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.split("\n")[:2] == ["[2. 2. 2.]", "2.5.1 2.5.1"], r.stdout
    assert "opspec dev: configuring" in r.stderr and "(CPU only)" in r.stderr
    cache = (project / "build" / "dev" / "CMakeCache.txt").read_text()
    assert "OPSPEC_CUDA:UNINITIALIZED=OFF" in cache and "OPSPEC_CUDA_SIM:UNINITIALIZED=OFF" in cache
    generated = project / "build" / "dev" / "opspec_generated" / "devpkg" / "ops"
    before = mtimes(generated)

    (project / "specs" / "add.yaml").write_text(ADD_A.replace("x[i] + y[i];", "x[i] + 3 * y[i];"))
    r = dev(project, sys.executable, "-c", CHECK)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.strip() == "[4. 4. 4.]"
    assert "configuring" not in r.stderr
    # The body, and the handler that carries the op's fingerprint (an export pins it).
    assert "(compiled add_ffi.c, add_cpu.c)" in r.stderr, r.stderr
    after = mtimes(generated)
    assert sorted(f for f in after if after[f] != before.get(f)) == ["add_body.inc", "add_ffi.c"]

    # A body that does not compile: the compiler's error, at the spec, and no command runs.
    (project / "specs" / "add.yaml").write_text(ADD_A.replace("x[i] + y[i];", "x[i] + y[j];"))
    r = dev(project, sys.executable, "-c", "print('ran')")
    assert r.returncode == 1 and "ran" not in r.stdout
    lines = r.stderr.splitlines()
    errors = [line for line in lines if ": error:" in line]
    assert len(errors) == 1 and errors[0].startswith("specs/add.yaml:12:21: error:"), r.stderr
    assert "   12 |   out[i] = x[i] + y[j];" in lines
    assert not any(line.startswith(("FAILED", "cd ", "ninja")) for line in lines), r.stderr
    assert lines[-1].startswith("opspec dev: the build failed")
    # Nothing from this folder's build on the path of a later `python` without dev.
    assert "devpkg" not in os.environ.get("PYTHONPATH", "")
