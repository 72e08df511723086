"""The public face of an opspec package: what ``import opspec`` and ``import <package>``
(a package built with ``opspec_add_extension``) expose besides ``ops``.

Written once, here, for every package: a package's ``__init__.py`` (opspec's own, and
the few lines ``opspec_add_extension`` generates from cmake/package_init.py.in for a
user's package) calls ``install(__name__, globals())``, which loads the package's native
module ``<package>._opspec``, checks that the installed jax can run its handlers,
registers them with JAX (opspec._load), and defines the names of ``NAMES`` in the
package, each bound to that package's native module: ``myops.set_checks`` switches
myops's checks, ``opspec.set_checks`` opspec's.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from types import ModuleType
from typing import Any

from opspec import _tune
from opspec._load import RUNTIME_API, load_package
from opspec._runtime import cost
from opspec._sanitize import route_ubsan_reports
from opspec._targets import backends

# What every package exposes, in the order of its __all__.
NAMES = (
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
    "cpu_form",
    "set_checks",
    "checks_enabled",
    "target_name",
    "cost",
    "registered_platforms",
    "__version__",
)

# OPSPEC_CHECKS=0 (or false/off/no) starts every package with its content checks off.
CHECKS_OFF = ("0", "false", "off", "no")


def _functions(package: str, native: ModuleType) -> list[Callable]:
    """The package's public functions, each bound to its native module `native`."""

    def cuda_sim_device_count() -> int:
        """How many GPUs the package's CUDA simulator models: one per JAX CPU device."""
        if not native.has_cuda_sim():
            raise RuntimeError(f"{package} was built without the CUDA simulator (OPSPEC_CUDA_SIM=OFF)")
        return native.cuda_sim_device_count()

    def cuda_sim_launches() -> list:
        """The kernel launches the package's CUDA simulator ran since the last call, oldest
        first (at most the last 4096), and forgets them: one dict per launch with the
        simulated ``device``, the CUDA error ``code`` (0), ``grid`` and ``block`` (x, y, z)
        and ``shared_mem`` (bytes of dynamic shared memory). For tests of launch
        configurations. JAX dispatches asynchronously: wait for the calls
        (``jax.block_until_ready``) first."""
        if not native.has_cuda_sim():
            raise RuntimeError(f"{package} was built without the CUDA simulator (OPSPEC_CUDA_SIM=OFF)")
        return native.cuda_sim_take_launches()

    def build_info() -> dict:
        """How the package's extension was built: the jaxlib whose FFI header it compiled
        against (``jaxlib``), the XLA FFI API version its handlers declare (``ffi_api``)
        and the header's own (``ffi_api_header``), ``cuda`` and ``cuda_sim`` (bool), the C
        and CUDA compilers, the package's name and version, and opspec's version."""
        return native.build_info()

    def set_cpu_threads(n: int) -> None:
        """Caps the threads a parallel loop of the package's CPU kernels may use, the
        calling thread included (0 restores the default: OpenMP's, the CPUs this process
        may run on). `n` is an integer (a float with an integer value is taken), else a
        TypeError; a negative one is a ValueError."""
        where = f"{package}.set_cpu_threads"
        count = _tune.as_integer(n)
        if count is None:
            raise TypeError(
                f"{where}: expected an integer (threads; 0 for the default), got {n!r} ({type(n).__name__})"
            )
        if count < 0:
            raise ValueError(f"{where}: expected 0 (the default) or a number of threads, got {count}")
        native.set_cpu_threads(min(count, 65535))  # more threads than CPUs: all of them

    def op_name(op: Any) -> str:
        """The name of `op` (a name, or an op function of the package's ``ops``), checked
        against the package's ops."""
        return _tune.op_name(package, native, op)

    def set_parallel_threshold(work: int | None, op: Any = None) -> None:
        """Sets the work at which the package's portable CPU kernels go parallel, for this
        process, over the value it started with (values below 1 become 1, above 2**63 - 1
        become 2**63 - 1). Work counts elements: the larger of a call's loop trips, its
        largest buffer's elements and its spec's ``bytes:`` / 12 and ``flops:`` / 2
        (docs/performance.md, "Work, not trips").

        With ``op`` (an op's name, or the op function, e.g. ``ops.softmax``) it sets that
        op's own threshold instead, which its calls use in place of the package's (a raw
        ``cpu:`` body's ``opspec_cpu_parallel(n)`` too); ``work=None`` removes it, and the
        op follows the package's threshold again. The package's threshold set without
        ``op`` leaves the ops' own values as they are."""
        if op is None:
            native.set_parallel_threshold(_tune.work_value(work, f"{package}.set_parallel_threshold"))
            return
        name = op_name(op)
        where = f"{package}.set_parallel_threshold(op={name!r})"
        native.set_op_parallel_threshold(name, 0 if work is None else _tune.work_value(work, where))

    def parallel_threshold(op: Any = None) -> int:
        """The work (elements) at which the package's portable CPU kernels go parallel;
        with ``op`` (a name or the op function), the one that op's calls use: its own
        where it has one, else the package's."""
        if op is None:
            return native.parallel_threshold()
        return native.op_parallel_threshold(op_name(op)) or native.parallel_threshold()

    def parallel_threshold_source(op: Any = None) -> str:
        """Where the threshold this process started with came from: ``"environment
        (OPSPEC_PARALLEL_THRESHOLD)"``, the path of this machine's file saved by ``python
        -m opspec tune``, or ``"default"``. With ``op``: the file's path where the op
        started with a value of its own from it, else the package's source.
        ``set_parallel_threshold`` does not change it."""
        if op is not None:
            source = _tune.OP_SOURCES.get(package, {}).get(op_name(op))
            if source:
                return source
        return _tune.SOURCES.get(package, "default")

    def set_cpu_pool(name: str) -> None:
        """Where the package's parallel CPU loops find their helper threads, process-wide:
        ``"opspec"`` (opspec's own threads, the default), ``"xla"`` (tasks on XLA's
        intra-op thread pool, where the XLA in use has one for the call; opspec's threads
        otherwise) or ``"openmp"`` (an OpenMP team, which waits for every thread at the end
        of each loop). In all three the calling thread works too (docs/performance.md)."""
        native.set_cpu_pool(_tune.pool_number(name))

    def cpu_pool() -> str:
        """The pool the package's parallel CPU loops use: ``"opspec"``, ``"xla"`` or
        ``"openmp"``."""
        return _tune.pool_name(native.cpu_pool())

    def cpu_form() -> str:
        """The form of the package's CPU kernels that runs on this CPU, as the loader
        chose it among the forms the build made (``target_clones``, opspec/cpu.h):
        ``"x86-64-v4"`` (AVX-512), ``"x86-64-v3"`` (AVX2, FMA, F16C) or ``"x86-64"``
        (SSE2); ``"native"`` for a build with ``OPSPEC_NATIVE=ON`` (one form, for the
        build machine), ``"default"`` where the build made no forms (not x86-64 ELF, or an
        older compiler). docs/performance.md, "CPU forms"."""
        if not hasattr(native, "cpu_form"):
            raise RuntimeError(f"{package} was built before cpu_form existed: rebuild it against the installed opspec")
        return native.cpu_form()

    def set_checks(enabled: bool) -> None:
        """Turns the input contents checks on or off, for every op of the package,
        process-wide.

        An input whose spec says ``check: {min: ..., max: ..., sorted: true}`` is scanned
        before the kernel runs (on a GPU, by a check kernel on the device); a bad value
        raises an error naming the op, the input and the position. The scan reads every
        element once (on a GPU it also waits for the device), so a caller whose data is
        known good may turn it off. Shape, dtype and size checks are not affected: they
        always run."""
        native.set_checks(bool(enabled))

    def checks_enabled() -> bool:
        """Whether the package's handlers (CPU and CUDA) check input contents
        (``set_checks``); on by default."""
        return native.checks_enabled()

    return [
        cuda_sim_device_count,
        cuda_sim_launches,
        build_info,
        set_cpu_threads,
        set_parallel_threshold,
        parallel_threshold,
        parallel_threshold_source,
        set_cpu_pool,
        cpu_pool,
        cpu_form,
        set_checks,
        checks_enabled,
    ]


def install(package: str, namespace: dict, api: int = RUNTIME_API) -> list[str]:
    """Loads package `package` (see the module's docstring) and defines its public names
    in `namespace`, the package's globals(); returns its __all__. `api`: the runtime API
    the package was built for (an ImportError asks for a rebuild if it is not this
    opspec's). The caller imports ``<package>.ops`` next: the ops need the targets
    registered first."""
    native, platforms = load_package(package, api)
    if os.environ.get("OPSPEC_DEV_SANITIZER_REPORTS"):  # under opspec dev --sanitize (opspec._sanitize)
        route_ubsan_reports()
    for fn in _functions(package, native):
        fn.__module__, fn.__qualname__ = package, fn.__name__  # as help() should show them
        namespace[fn.__name__] = fn
    values: dict[str, Any] = {
        "has_cuda": bool(native.has_cuda()),
        "has_cuda_sim": bool(native.has_cuda_sim()),
        # What backend= accepts for the package's ops in this process, e.g. ("cpu", "cuda_sim").
        "backends": backends(package),
        "target_name": native.target_name,
        "cost": cost,
        "registered_platforms": platforms,
        "__version__": native.build_info()["version"],
    }
    namespace.update(values)
    if os.environ.get("OPSPEC_CHECKS", "").strip().lower() in CHECKS_OFF:
        native.set_checks(False)
    return list(NAMES)
