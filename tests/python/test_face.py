"""The package face (opspec._face): every package's public functions are opspec's code,
bound to that package's native module; opspec's own __init__ installs the same face."""

import sys
import types

import pytest

import opspec
from opspec import _face


class FakeNative(types.ModuleType):
    """A native module <package>._opspec with no ops: what install() calls, recorded."""

    def __init__(self, package: str) -> None:
        super().__init__(f"{package}._opspec")
        self.name, self.checks, self.calls = package, True, []

    def package(self):
        return self.name

    def build_info(self):
        return {"package": self.name, "version": "9.8.7", "ffi_api": "0.1"}

    def has_cuda(self):
        return False

    def has_cuda_sim(self):
        return False

    def handlers(self):
        return []

    def cuda_sim_handlers(self):
        return []

    def target_name(self, op):
        return f"{self.name}_{op}"

    def set_checks(self, on):
        self.checks = on

    def checks_enabled(self):
        return self.checks

    def set_parallel_threshold(self, trips):
        self.calls.append(("set_parallel_threshold", trips))

    def parallel_threshold(self):
        return 1234

    def set_cpu_pool(self, number):
        self.calls.append(("set_cpu_pool", number))

    def cpu_pool(self):
        return 1


@pytest.fixture
def fake(monkeypatch):
    native = FakeNative("fakepkg")
    monkeypatch.setitem(sys.modules, "fakepkg._opspec", native)
    monkeypatch.delenv("OPSPEC_CHECKS", raising=False)
    monkeypatch.delenv("OPSPEC_CPU_POOL", raising=False)
    monkeypatch.delenv("OPSPEC_PARALLEL_THRESHOLD", raising=False)
    return native


def test_a_package_gets_every_name_bound_to_its_own_native_module(fake):
    namespace: dict = {}
    names = _face.install("fakepkg", namespace)
    assert names == list(_face.NAMES)
    assert set(names) - set(namespace) == {"ops"}  # the package's __init__ imports its ops
    namespace["set_checks"](False)
    assert fake.checks is False and namespace["checks_enabled"]() is False
    assert opspec.checks_enabled() is True  # opspec's own are another native module's
    assert namespace["parallel_threshold"]() == 1234 and namespace["cpu_pool"]() == "xla"
    namespace["set_cpu_pool"]("openmp")
    assert ("set_cpu_pool", 2) in fake.calls
    assert namespace["__version__"] == "9.8.7" and namespace["backends"] == ()
    assert namespace["registered_platforms"] == ("cpu",) and namespace["target_name"]("op") == "fakepkg_op"
    with pytest.raises(RuntimeError, match="^fakepkg was built without the CUDA simulator"):
        namespace["cuda_sim_launches"]()
    assert namespace["set_checks"].__module__ == "fakepkg" and namespace["set_checks"].__qualname__ == "set_checks"


def test_opspec_checks_0_starts_the_package_with_its_checks_off(fake, monkeypatch):
    monkeypatch.setenv("OPSPEC_CHECKS", "off")
    _face.install("fakepkg", {})
    assert fake.checks is False


def test_a_package_built_for_another_runtime_api_is_refused(fake):
    with pytest.raises(ImportError, match="rebuild fakepkg against the installed opspec"):
        _face.install("fakepkg", {}, api=1)


def test_opspec_itself_wears_the_same_face():
    assert opspec.__all__ == list(_face.NAMES)
    for name in _face.NAMES:
        assert hasattr(opspec, name), name
    assert opspec.set_checks.__module__ == "opspec"
    # No docstring of the face says the content checks are the CPU's alone (the CUDA
    # handlers check too): the drift a second copy had.
    for name in ("set_checks", "checks_enabled"):
        assert "CPU handlers" not in getattr(opspec, name).__doc__, name
