"""opspec: JAX operations generated from YAML specs.

``import opspec`` loads the one native extension, checks that the installed jax can run
its handlers (an ``ImportError`` names the installed and the supported versions if not),
registers every op's XLA FFI handlers with JAX (``cpu`` always, ``CUDA`` when JAX has a
GPU backend and the extension was built with CUDA, and the CUDA kernels on the CUDA
simulator, on ``cpu``, when it was built with the simulator), and exposes the ops as
``opspec.ops.<name>``. Nothing is compiled at import: the handlers were compiled ahead of
time from the generated sources.

Environment: ``OPSPEC_CHECKS=0`` (or ``false``/``off``/``no``) starts with the input
contents checks off, as ``set_checks(False)`` would. ``OPSPEC_PARALLEL_THRESHOLD=<trips>``
sets the parallel threshold, over the value ``python -m opspec tune`` saved for this
machine; ``OPSPEC_CPU_POOL=opspec|xla|openmp`` where parallel loops find their helper
threads (docs/performance.md).
"""

import os as _os

from opspec import _tune
from opspec._load import load_package as _load_package
from opspec._runtime import cost
from opspec._targets import backends as _backends

__all__ = [
    "ops",
    "has_cuda",
    "has_cuda_sim",
    "backends",
    "cuda_sim_device_count",
    "cuda_sim_launches",
    "build_info",
    "set_cpu_threads",
    "set_parallel_threshold",
    "parallel_threshold",
    "parallel_threshold_source",
    "set_cpu_pool",
    "cpu_pool",
    "set_checks",
    "checks_enabled",
    "target_name",
    "cost",
    "registered_platforms",
    "__version__",
]

_opspec, registered_platforms = _load_package(__name__)

from opspec import ops  # noqa: E402  (ops need the targets registered first)

__version__: str = _opspec.build_info()["opspec"]
has_cuda: bool = _opspec.has_cuda()
has_cuda_sim: bool = _opspec.has_cuda_sim()
target_name = _opspec.target_name
# What backend= accepts in this process, e.g. ("cpu", "cuda_sim").
backends: tuple = _backends(__name__)


def cuda_sim_device_count() -> int:
    """How many GPUs the CUDA simulator models: one per JAX CPU device."""
    if not has_cuda_sim:
        raise RuntimeError("this opspec was built without the CUDA simulator (OPSPEC_CUDA_SIM=OFF)")
    return _opspec.cuda_sim_device_count()


def cuda_sim_launches() -> list:
    """The kernel launches the CUDA simulator ran since the last call, oldest first (at
    most the last 4096), and forgets them: one dict per launch with the simulated
    ``device``, the CUDA error ``code`` (0), ``grid`` and ``block`` (x, y, z) and
    ``shared_mem`` (bytes of dynamic shared memory). For tests of launch configurations.
    JAX dispatches asynchronously: wait for the calls (``jax.block_until_ready``) first.
    """
    if not has_cuda_sim:
        raise RuntimeError("this opspec was built without the CUDA simulator (OPSPEC_CUDA_SIM=OFF)")
    return _opspec.cuda_sim_take_launches()


def build_info() -> dict:
    """How the extension was built: the jaxlib whose FFI header it compiled against
    (``jaxlib``), the XLA FFI API version its handlers declare (``ffi_api``) and the
    header's own (``ffi_api_header``), ``cuda`` (bool), the C and CUDA compilers, and the
    package's and opspec's versions."""
    return _opspec.build_info()


def set_cpu_threads(n: int) -> None:
    """Caps the threads a parallel CPU loop may use, the calling thread included (0
    restores the default: OpenMP's, the CPUs this process may run on)."""
    _opspec.set_cpu_threads(int(n))


def set_cpu_pool(name: str) -> None:
    """Where a parallel CPU loop finds its helper threads, process-wide: ``"opspec"``
    (opspec's own threads, the default), ``"xla"`` (tasks on XLA's intra-op thread pool,
    where the XLA in use has one for the call; opspec's threads otherwise) or
    ``"openmp"`` (an OpenMP team, which waits for every thread at the end of each loop).
    In all three the calling thread works too (docs/performance.md)."""
    _opspec.set_cpu_pool(_tune.pool_number(name))


def cpu_pool() -> str:
    """The pool parallel CPU loops use: ``"opspec"``, ``"xla"`` or ``"openmp"``."""
    return _tune.pool_name(_opspec.cpu_pool())


def set_parallel_threshold(trips: int) -> None:
    """Sets the loop trip count at which portable CPU kernels go parallel (values below 1
    become 1), for this process, over the value it started with."""
    _opspec.set_parallel_threshold(int(trips))


def parallel_threshold() -> int:
    """The loop trip count at which portable CPU kernels go parallel."""
    return _opspec.parallel_threshold()


def parallel_threshold_source() -> str:
    """Where the threshold this process started with came from: ``"environment
    (OPSPEC_PARALLEL_THRESHOLD)"``, the path of this machine's file saved by ``python -m
    opspec tune``, or ``"default"``. ``set_parallel_threshold`` does not change it."""
    return _tune.SOURCES.get(__name__, "default")


def set_checks(enabled: bool) -> None:
    """Turns the input contents checks on or off, for every op, process-wide.

    An input whose spec says ``check: {min: ..., max: ..., sorted: true}`` is scanned
    before the kernel runs (on a GPU, by a check kernel on the device); a bad value
    raises an error naming the op, the input and the position. The scan reads every
    element once (on a GPU it also waits for the device), so a caller whose data is
    known good may turn it off. Shape, dtype and size checks are not affected: they
    always run.
    """
    _opspec.set_checks(bool(enabled))


def checks_enabled() -> bool:
    """Whether the handlers check input contents (``set_checks``); on by default."""
    return _opspec.checks_enabled()


if _os.environ.get("OPSPEC_CHECKS", "").strip().lower() in ("0", "false", "off", "no"):
    set_checks(False)
