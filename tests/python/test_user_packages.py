"""Users' own op packages, built with plain CMake against the installed opspec
(find_package(opspec) + opspec_add_extension): two packages that each have an op `add`,
and opspec itself, in one process; a committed GENERATED_DIR and its drift check; a spec
edit regenerates; install rules. And add_subdirectory() of the opspec source tree.
(examples/user_project, built by pip with scikit-build-core, is tested by CI.)"""

import os
import pathlib
import shutil
import subprocess
import sys
import textwrap

import pytest
from builds import cmake_build, cmake_dir, configure, run, write_package

ROOT = pathlib.Path(__file__).resolve().parents[2]


ADD_A = """\
op: add
doc: Package A's add, out = x + y.
types: {T: [float32, float64]}
inputs:
  - {name: x, dtype: T, shape: [...]}
  - {name: y, dtype: T, shape: [...]}
outputs:
  - {name: out, dtype: T, shape: [...]}
vmap: broadcast_all
launch: [x_size]
kernel: |
  out[i] = x[i] + y[i];
"""

# Same op name, other arithmetic: which handler ran shows in the result.
ADD_B = ADD_A.replace("Package A's add, out = x + y.", "Package B's add, out = x + 2 y.").replace(
    "out[i] = x[i] + y[i];", "out[i] = x[i] + 2 * y[i];"
)

CLAMP_B = """\
op: clamp
doc: Clamp to [lo, hi].
types: {T: [float32, float64]}
inputs:
  - {name: x, dtype: T, shape: [n]}
outputs:
  - {name: out, dtype: T, shape: [n]}
attrs:
  - {name: lo, type: float64}
  - {name: hi, type: float64, default: 1.0}
vmap: sequential
launch: [n]
kernel: |
  const T v = x[i];
  out[i] = v < (T)lo ? (T)lo : v > (T)hi ? (T)hi : v;
"""

CMAKELISTS = """\
cmake_minimum_required(VERSION 3.24)
project(two_packages VERSION 1.2.3 LANGUAGES C)
find_package(opspec CONFIG REQUIRED)
opspec_add_extension(pkg_a SPECS specs_a)
opspec_add_extension(pkg_b SPECS ${CMAKE_CURRENT_SOURCE_DIR}/specs_b GENERATED_DIR generated_b CUDA OFF)
# Package pkg's op a_add has pkg_a's add's target name, pkg_a_add: refused at import.
opspec_add_extension(pkg SPECS specs_clash CUDA OFF)
"""

CHECK = """\
import numpy as np, jax
jax.config.update("jax_enable_x64", True)
import opspec, pkg_a, pkg_b
rng = np.random.default_rng()
for dtype in (np.float32, np.float64):
    x, y = rng.standard_normal((2, 1000)).astype(dtype)
    tol = 1e-6 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(opspec.ops.add(x, y), x + y, rtol=tol)
    np.testing.assert_allclose(pkg_a.ops.add(x, y) , x + y + OFFSET, rtol=tol)
    np.testing.assert_allclose(jax.jit(pkg_b.ops.add)(x, y), x + 2 * y, rtol=tol)
    out = jax.jit(lambda v: pkg_b.ops.clamp(v, lo=-0.5))(x)
    np.testing.assert_allclose(out, np.clip(x, -0.5, 1.0), rtol=tol)
    # All three adds in one jitted computation.
    f = jax.jit(lambda a, b: opspec.ops.add(pkg_a.ops.add(a, b), pkg_b.ops.add(a, b)))
    np.testing.assert_allclose(f(x, y), (x + y + OFFSET) + (x + 2 * y), rtol=tol)
assert (opspec.target_name("add"), pkg_a.target_name("add"), pkg_b.target_name("add")) == (
    "opspec_add", "pkg_a_add", "pkg_b_add")
assert pkg_a.build_info()["package"] == "pkg_a" and pkg_a.__version__ == "1.2.3"
assert pkg_a.build_info()["opspec"] == opspec.__version__ and pkg_a.build_info()["ffi_api"] == "0.1"
assert pkg_b.registered_platforms == ("cpu",) and not pkg_b.has_cuda
# Each package has its own CPU knobs: pkg_b's pool changes, opspec's does not; pkg_b's
# loops still give the right sums with every loop parallel on OpenMP's team.
pkg_b.set_cpu_pool("openmp")
pkg_b.set_parallel_threshold(1)
assert (pkg_b.cpu_pool(), opspec.cpu_pool()) == ("openmp", "opspec")
big = rng.standard_normal((2, 100_000))
np.testing.assert_allclose(pkg_b.ops.add(big[0], big[1]), big[0] + 2 * big[1], rtol=1e-12)
assert pkg_a.has_cuda == HAS_NVCC and pkg_a.build_info()["cuda"] == HAS_NVCC
try:
    pkg_b.ops.add(x, y.astype(np.float32) if x.dtype == np.float64 else y.astype(np.float64))
except TypeError as e:
    assert str(e).startswith("pkg_b.ops.add: input 'y': expected dtype"), e
else:
    raise AssertionError("mixed dtypes accepted")
try:
    import pkg
except ImportError as e:
    assert str(e) == ("pkg: FFI target 'pkg_a_add' (op 'a_add') is already registered by package 'pkg_a'; "
                      "rename the op or the package"), e
else:
    raise AssertionError("a clashing target name was registered")
print("three packages ok")
"""


@pytest.mark.slow
def test_two_packages_with_an_op_add_and_opspec_in_one_process(tmp_path):
    project = tmp_path / "two"
    (project / "specs_a").mkdir(parents=True)
    (project / "specs_b").mkdir()
    (project / "specs_a" / "add.yaml").write_text(ADD_A)
    (project / "specs_b" / "add.yaml").write_text(ADD_B)
    (project / "specs_b" / "clamp.yaml").write_text(CLAMP_B)
    (project / "specs_clash").mkdir()
    (project / "specs_clash" / "a_add.yaml").write_text(ADD_A.replace("op: add", "op: a_add"))
    (project / "CMakeLists.txt").write_text(CMAKELISTS)
    build = project / "build"
    # The documented plain-CMake route: python -m opspec --cmake-dir.
    # pkg_a has no CUDA keyword: AUTO, so with nvcc here its CUDA part is built too;
    # pkg_b's CUDA OFF wins over AUTO.
    configure(project, build, f"-Dopspec_DIR={cmake_dir()}")
    cmake_build(build)
    env = dict(os.environ, PYTHONPATH=str(build / "python"))
    CHECK_NVCC = CHECK.replace("HAS_NVCC", str(shutil.which("nvcc") is not None))
    r = run([sys.executable, "-c", CHECK_NVCC.replace("OFFSET", "0")], env=env)
    assert "three packages ok" in r.stdout

    # GENERATED_DIR: the code is in the project, named as the project names it.
    committed = project / "generated_b"
    assert (committed / "ops" / "clamp_ffi.c").exists()
    assert '#line 14 "specs_b/clamp.yaml"' in (committed / "ops" / "clamp_body.inc").read_text()
    assert not (project / "generated_a").exists()
    # The drift check passes on what the build wrote, and names what drifted.
    cmake_build(build, "pkg_b_opspec_verify")
    with open(committed / "ops" / "clamp_cpu.c", "a") as f:
        f.write("/* edited by hand */\n")
    (committed / "ops" / "old_cpu.c").write_text("/* from a deleted spec */\n")
    r = subprocess.run(
        ["cmake", "--build", str(build), "--target", "pkg_b_opspec_verify"], capture_output=True, text=True
    )
    assert r.returncode != 0
    assert "generated_b/ops/clamp_cpu.c: error: differs from what the specs produce" in r.stdout + r.stderr
    assert "generated_b/ops/old_cpu.c: error: is stale: no spec produces it" in r.stdout + r.stderr
    (committed / "ops" / "old_cpu.c").unlink()

    # A spec edit regenerates and rebuilds (and repairs the edited file).
    (project / "specs_a" / "add.yaml").write_text(ADD_A.replace("x[i] + y[i];", "x[i] + y[i] + (T)1;"))
    (project / "specs_b" / "clamp.yaml").write_text(CLAMP_B + "\n")
    cmake_build(build)
    cmake_build(build, "pkg_b_opspec_verify")
    r = run([sys.executable, "-c", CHECK_NVCC.replace("OFFSET", "1")], env=env)
    assert "three packages ok" in r.stdout

    # Install rules: each package under the interpreter's site-packages below the prefix.
    prefix = tmp_path / "prefix"
    run(["cmake", "--install", str(build), "--prefix", str(prefix)])
    installed = {p.relative_to(prefix).as_posix() for p in prefix.rglob("*") if p.is_file()}
    for pkg in ("pkg_a", "pkg_b"):
        names = {p.rsplit("/", 1)[1] for p in installed if f"/{pkg}/" in p}
        assert {"__init__.py", "ops.py", "ops.pyi", "py.typed"} <= names, installed
        assert any(n.startswith("_opspec.") and n.endswith(".so") for n in names), installed


@pytest.mark.slow
def test_add_subdirectory_of_the_source_tree(tmp_path):
    """A project that vendors opspec's source tree builds its own package with it."""
    project = tmp_path / "vendoring"
    write_package(project, "vendored", {"add": ADD_A}, "CUDA OFF", vendor=True)
    build = project / "build"
    configure(project, build, "-DOPSPEC_CUDA=OFF")
    # Only the user's package (and the generator it needs): opspec's own library would
    # regenerate into the vendored tree.
    cmake_build(build, "vendored_opspec")
    check = textwrap.dedent("""\
        import numpy as np, vendored
        x = np.arange(5, dtype=np.float32)
        np.testing.assert_array_equal(vendored.ops.add(x, x), 2 * x)
        print(vendored.target_name("add"))
        """)
    r = run([sys.executable, "-c", check], env=dict(os.environ, PYTHONPATH=str(build / "python")))
    assert r.stdout.strip() == "vendored_add"


@pytest.mark.slow
def test_opspec_specs_dir_is_honoured(tmp_path):
    """-DOPSPEC_SPECS_DIR builds opspec's package from another folder of specs, and its
    code goes to the build folder, never over the committed generated/."""
    specs = tmp_path / "specs"
    specs.mkdir()
    (specs / "add.yaml").write_text(ADD_B)  # x + 2 y, under opspec's own name
    build = tmp_path / "build"
    before = {p: p.read_bytes() for p in (ROOT / "generated").rglob("*") if p.is_file()}
    configure(ROOT, build, "-DOPSPEC_CUDA=OFF", "-DBUILD_TESTING=OFF", f"-DOPSPEC_SPECS_DIR={specs}")
    cmake_build(build, "opspec_opspec")
    assert sorted(p.name for p in (build / "generated" / "ops").iterdir()) == [
        "add.h",
        "add_body.inc",
        "add_cpu.c",
        "add_cuda.cu",
        "add_ffi.c",
    ]
    assert before == {p: p.read_bytes() for p in (ROOT / "generated").rglob("*") if p.is_file()}
    check = textwrap.dedent("""\
        import numpy as np, opspec
        x = np.arange(5, dtype=np.float32)
        np.testing.assert_array_equal(opspec.ops.add(x, x), 3 * x)
        print(opspec.ops.__all__)
        """)
    r = run([sys.executable, "-c", check], env=dict(os.environ, PYTHONPATH=str(build / "python")))
    assert r.stdout.strip() == "['add']"
