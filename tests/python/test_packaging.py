"""The installed opspec as a user gets it from `pip install`: version and build info,
typed stubs, opspec-gen on the venv's PATH, the CMake package, and the jax range check
that import runs."""

import importlib.metadata
import os
import pathlib
import re
import shutil
import subprocess
import sys
import sysconfig
import textwrap

import jax
import jaxlib
import pytest

import opspec
from opspec import _load

ROOT = pathlib.Path(__file__).resolve().parents[2]
PACKAGE_DIR = pathlib.Path(opspec.__file__).parent


def installed() -> bool:
    """True when opspec came from a wheel (pip), not from a build folder on PYTHONPATH."""
    try:
        importlib.metadata.distribution("opspec")
    except importlib.metadata.PackageNotFoundError:
        return False
    return importlib.util.find_spec("opspec_cmake") is not None


needs_install = pytest.mark.skipif(not installed(), reason="opspec is not pip-installed (PYTHONPATH build)")


def test_version_and_build_info():
    info = opspec.build_info()
    assert opspec.__version__ == info["opspec"] == info["version"]
    assert re.fullmatch(r"\d+\.\d+\.\d+", opspec.__version__)
    cmake_version = re.search(r"project\(opspec VERSION ([0-9.]+)", (ROOT / "CMakeLists.txt").read_text()).group(1)
    assert opspec.__version__ == cmake_version
    assert info["package"] == "opspec"
    # Declared: what the handlers need; header: what the build compiled against.
    assert info["ffi_api"] == "0.1"
    assert tuple(map(int, info["ffi_api_header"].split("."))) >= (0, 1)
    assert re.fullmatch(r"\d+\.\d+\.\d+(\.\d+)?", info["jaxlib"])  # 0.12.0.1 has four parts
    assert info["cuda"] is opspec.has_cuda
    assert re.fullmatch(r"(GNU|Clang|AppleClang|IntelLLVM) \d+\.\d+.*", info["compiler"]), info["compiler"]
    assert (info["cuda_compiler"] != "") == info["cuda"]


@needs_install
def test_installed_metadata():
    dist = importlib.metadata.distribution("opspec")
    assert dist.version == opspec.__version__
    assert dist.metadata["License-Expression"] == "Apache-2.0"
    assert any("jax>=0.5" in r.replace(" ", "") for r in dist.requires)
    # jax.export's serialize() needs it: installed with opspec, no extra (issue 20).
    assert "flatbuffers" in [r.split(";")[0].strip() for r in dist.requires]
    # One wheel for every CPython from 3.11 (limited API); a free-threaded build has its own.
    if not sysconfig.get_config_var("Py_GIL_DISABLED"):
        tags = [line.split(": ")[1] for line in dist.read_text("WHEEL").splitlines() if line.startswith("Tag: ")]
        assert tags and all(t.startswith("cp311-abi3-") for t in tags), tags
        assert any(p.name.startswith("_opspec.abi3.") for p in dist.files), "the extension is not named for abi3"
    assert any(p.name == "LICENSE" for p in dist.files)
    prefixes = {ep.name: ep.value for ep in importlib.metadata.entry_points(group="cmake.prefix")}
    assert prefixes.get("opspec") == "opspec_cmake"


def test_typed_package():
    assert (PACKAGE_DIR / "py.typed").exists()
    stub = (PACKAGE_DIR / "ops.pyi").read_text()
    assert "def add(" in stub and "x: _ArrayLike" in stub and ") -> _jax.Array:" in stub


def test_stubs_pass_mypy(tmp_path):
    pytest.importorskip("mypy")
    good = tmp_path / "good.py"
    good.write_text(
        textwrap.dedent("""\
        import jax
        import numpy as np

        import opspec

        x = np.ones(8, np.float32)
        y: jax.Array = opspec.ops.add(x, x)
        pos, neg = opspec.ops.split(x)
        z: jax.Array = opspec.ops.leaky_relu(pos - neg, alpha=0.2)
        print(y, z)
        """)
    )
    bad = tmp_path / "bad.py"
    bad.write_text(
        textwrap.dedent("""\
        import numpy as np

        import opspec

        x = np.ones(8, np.float32)
        opspec.ops.leaky_relu(x, alpha="steep")
        n: int = opspec.ops.add(x, x)
        """)
    )
    mypy = [
        sys.executable,
        "-m",
        "mypy",
        "--no-incremental",
        "--cache-dir",
        str(tmp_path / "cache"),
        "--follow-imports=silent",
        "--ignore-missing-imports",
    ]
    r = subprocess.run([*mypy, str(good), str(bad)], capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 1, r.stdout + r.stderr
    # good.py type-checks; in bad.py the stubs are really used (not Any): wrong types are caught.
    assert "good.py" not in r.stdout, r.stdout
    assert 'Argument "alpha" to "leaky_relu" has incompatible type "str"' in r.stdout, r.stdout
    assert 'Incompatible types in assignment (expression has type "Array", variable has type "int")' in r.stdout


def opspec_gen() -> str:
    """The opspec-gen the package installed next to this Python."""
    exe = shutil.which("opspec-gen", path=os.path.dirname(sys.executable))
    if exe is None:
        pytest.skip("opspec-gen is not installed next to this Python")
    return exe


@needs_install
def test_opspec_gen_on_path_needs_no_templates(tmp_path):
    gen = opspec_gen()
    r = subprocess.run([gen, "--version"], capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout == f"opspec-gen {opspec.__version__}\n"
    # Outside the source tree, with no --templates: the built-in templates generate
    # exactly the committed code.
    (tmp_path / "specs").mkdir()
    shutil.copy(ROOT / "specs" / "add.yaml", tmp_path / "specs" / "add.yaml")
    r = subprocess.run([gen, "--out", "generated", "specs/add.yaml"], capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stderr == ""
    for name in ("add.h", "add_body.inc", "add_cpu.c", "add_ffi.c", "add_cuda.cu"):
        assert (tmp_path / "generated" / "ops" / name).read_text() == (ROOT / "generated" / "ops" / name).read_text()
    # A package name prefixes the FFI targets.
    r = subprocess.run(
        [gen, "--package", "mine", "--out", "g2", "specs/add.yaml"], capture_output=True, text=True, cwd=tmp_path
    )
    assert r.returncode == 0, r.stderr
    assert 'const char opspec_package_name[] = "mine";' in (tmp_path / "g2" / "registry.c").read_text()
    assert '_call = _caller("mine")' in (tmp_path / "g2" / "python" / "ops.py").read_text()
    r = subprocess.run([gen, "--package", "9lives", "specs/add.yaml"], capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 2 and "is not a Python package name" in r.stderr


@needs_install
def test_cmake_dir_holds_the_cmake_package():
    r = subprocess.run([sys.executable, "-m", "opspec", "--cmake-dir"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    kit = pathlib.Path(r.stdout.strip())
    for rel in (
        "opspecConfig.cmake",
        "opspecConfigVersion.cmake",
        "OpspecExtension.cmake",
        "bin/opspec-gen",
        "include/opspec/ffi.h",
        "src/ffi.c",
        "src/ffi_abi.c",
        "src/module.c",
    ):
        assert (kit / rel).is_file(), rel
    assert os.access(kit / "bin" / "opspec-gen", os.X_OK)
    # Build tools import the entry point's module to find the folder: it must not load JAX.
    r = subprocess.run(
        [sys.executable, "-c", "import sys, opspec_cmake; print('jax' in sys.modules)"], capture_output=True, text=True
    )
    assert r.stdout.strip() == "False", r.stderr


def test_python_m_opspec_prints_build_info():
    r = subprocess.run(
        [sys.executable, "-m", "opspec"],
        capture_output=True,
        text=True,
        env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)),
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith(f"opspec {opspec.__version__}\n")
    assert "  ffi_api: 0.1\n" in r.stdout


# ---- the jax range check at import -------------------------------------------------------


def test_installed_jax_is_in_range():
    assert _load.framework_ffi_api() is not None
    _load.check_jax("opspec", (0, 1))  # what import opspec just did


def test_jaxlib_older_than_the_declared_ffi_api_is_refused():
    """Handlers that declared one FFI API version more than the installed jaxlib
    implements would be refused by XLA: import must say so, with both versions."""
    have = _load.framework_ffi_api()  # read from the installed jaxlib's header
    need = (have[0], have[1] + 1)
    with pytest.raises(ImportError) as e:
        _load.check_jax("somepkg", need)
    message = str(e.value)
    assert f"jax {jax.__version__} and jaxlib {jaxlib.__version__} are installed" in message
    assert f"declare XLA FFI API {need[0]}.{need[1]}" in message and f"FFI API is {have[0]}.{have[1]}" in message
    assert "jax and jaxlib >= 0.5" in message


def test_jax_older_than_0_5_is_refused():
    # CI also imports opspec for real under jax 0.4.38 (.ci/version-matrix).
    with pytest.raises(ImportError) as e:
        _load.check_jax("opspec", (0, 1), jax_version="0.4.38", jaxlib_version="0.4.38")
    assert "jax 0.4.38 and jaxlib 0.4.38 are installed" in str(e.value)
    assert "opspec needs jax and jaxlib >= 0.5" in str(e.value)


def test_ranges_agree_across_the_project():
    """The run-time range (pyproject dependencies, _load.JAX_MIN) and the build pin
    (build-system.requires, requirements.txt) are separate, and each is stated once."""
    tomllib = pytest.importorskip("tomllib")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    deps = project["project"]["dependencies"]
    floor = f"{_load.JAX_MIN[0]}.{_load.JAX_MIN[1]}"
    assert f"jax>={floor}" in deps and f"jaxlib>={floor}" in deps
    pins = [r for r in project["build-system"]["requires"] if r.startswith(("jax==", "jaxlib=="))]
    requirements = (ROOT / "requirements.txt").read_text().split()
    assert pins and all(p in requirements for p in pins)
    assert pins[0].split("==")[1] in _load.TESTED  # the pin: ./run test runs the suite under it
