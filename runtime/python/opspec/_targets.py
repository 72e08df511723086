"""The FFI targets of every opspec package in this process: registering a package's
handlers with JAX, and which target a call of an op on a backend uses.

Target <package>_<op> is the op as the platform runs it: the CPU handler on "cpu", the
CUDA handler on "CUDA". Each backend also has its own target, registered only on its
platform, "<package>_<op>.<backend>" (names have no dots, so these cannot collide with an
op's): the CPU handler as ".cpu", the CUDA handler as ".cuda", and the CUDA kernels on
the CUDA simulator, a "cpu" platform handler, as ".cuda_sim".
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

import jax

from opspec._spec import Op

# The implementations a call can ask for with backend=, and the platform each runs on.
BACKENDS = {"cpu": "cpu", "cuda": "gpu", "cuda_sim": "cpu"}

# The FFI target of each (package, op, backend) registered in this process; the
# platform's own implementation is the op's target <package>_<op>.
TARGETS: dict[tuple[str, str, str], str] = {}
# (package, backend) -> why the package has no targets for the backend here.
UNAVAILABLE: dict[tuple[str, str], str] = {}
# Every FFI target registered through this module in this process: (name, platform) -> package.
REGISTERED: dict[tuple[str, str], str] = {}


def target_name(op: Op, backend: str | None) -> str:
    """The FFI target for `backend`: the op's own, which the platform resolves, for None."""
    if backend is None:
        return f"{op.package}_{op.name}"  # as <package>._opspec.target_name(name) spells it
    return TARGETS[(op.package, op.name, backend)]


def backends(package: str) -> tuple:
    """The backends some op of `package` can run on in this process: "cpu", and "cuda",
    "cuda_sim" where registered."""
    return tuple(b for b in BACKENDS if any(key[0] == package and key[2] == b for key in TARGETS))


def _has_gpu_backend() -> bool:
    # Not jax.devices("gpu") inside `except RuntimeError`: that also swallows a backend
    # that failed to start (an FFI handler XLA refused, a broken plugin), which must
    # surface here rather than as a puzzling failure on the first computation.
    return jax.default_backend() == "gpu"


def _register(target: str, handler: Any, platform: str, package: str, op: str) -> None:
    owner = REGISTERED.get((target, platform))
    if owner == package:
        return  # the same package loaded again (importlib.reload): same handlers
    if owner is not None:
        raise ImportError(
            f"{package}: FFI target '{target}' (op '{op}') is already registered by package "
            f"'{owner}'; rename the op or the package"
        )
    jax.ffi.register_ffi_target(target, handler, platform=platform, api_version=1)
    REGISTERED[(target, platform)] = package


def register_targets(native: ModuleType) -> tuple:
    """Registers every op's handlers of one package's native module with JAX (see the
    module's docstring for the names); returns the platforms registered."""
    package = native.package()
    platforms = ["cpu"]
    register_cuda = native.has_cuda() and _has_gpu_backend()
    if register_cuda:
        platforms.append("CUDA")
    elif not native.has_cuda():
        UNAVAILABLE[(package, "cuda")] = f"{package} was built without CUDA (no nvcc, or CUDA OFF)"
    else:
        UNAVAILABLE[(package, "cuda")] = "JAX has no GPU backend in this process"
    if native.has_cuda_sim():
        # One simulated GPU per JAX CPU device: a call XLA runs on CPU device d runs on
        # simulated GPU d, so the simulator sees the device ordinal XLA passes.
        native.cuda_sim_set_device_count(max(1, min(len(jax.devices("cpu")), 64)))
    else:
        UNAVAILABLE[(package, "cuda_sim")] = f"{package} was built without the CUDA simulator (CUDA_SIM OFF)"
    simulated = dict(native.cuda_sim_handlers())
    for name, cpu, cuda in native.handlers():
        target = native.target_name(name)
        _register(target, cpu, "cpu", package, name)
        _register(f"{target}.cpu", cpu, "cpu", package, name)
        TARGETS[(package, name, "cpu")] = f"{target}.cpu"
        if register_cuda and cuda is not None:
            _register(target, cuda, "CUDA", package, name)
            _register(f"{target}.cuda", cuda, "CUDA", package, name)
            TARGETS[(package, name, "cuda")] = f"{target}.cuda"
        if name in simulated:
            _register(f"{target}.cuda_sim", simulated[name], "cpu", package, name)
            TARGETS[(package, name, "cuda_sim")] = f"{target}.cuda_sim"
    return tuple(platforms)
