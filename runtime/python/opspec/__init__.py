"""opspec: JAX operations generated from YAML specs.

``import opspec`` loads the one native extension, checks that the installed jax can run
its handlers (an ``ImportError`` names the installed and the supported versions if not),
registers every op's XLA FFI handlers with JAX (``cpu`` always, ``CUDA`` when JAX has a
GPU backend and the extension was built with CUDA), and exposes the ops as
``opspec.ops.<name>``. Nothing is compiled at import: the handlers were compiled ahead of
time from the generated C sources.

Environment: ``OPSPEC_CHECKS=0`` (or ``false``/``off``/``no``) starts with the input
contents checks off, as ``set_checks(False)`` would.
"""

import os as _os

from opspec._runtime import load_package as _load_package

__all__ = [
    "ops",
    "has_cuda",
    "build_info",
    "set_cpu_threads",
    "set_parallel_threshold",
    "parallel_threshold",
    "set_checks",
    "checks_enabled",
    "target_name",
    "registered_platforms",
    "__version__",
]

_opspec, registered_platforms = _load_package(__name__)

from opspec import ops  # noqa: E402  (ops need the targets registered first)

__version__: str = _opspec.build_info()["opspec"]
has_cuda: bool = _opspec.has_cuda()
target_name = _opspec.target_name


def build_info() -> dict:
    """How the extension was built: the jaxlib whose FFI header it compiled against
    (``jaxlib``), the XLA FFI API version its handlers declare (``ffi_api``) and the
    header's own (``ffi_api_header``), ``cuda`` (bool), the C and CUDA compilers, and the
    package's and opspec's versions."""
    return _opspec.build_info()


def set_cpu_threads(n: int) -> None:
    """Caps the OpenMP threads a CPU kernel may use (0 restores OpenMP's default)."""
    _opspec.set_cpu_threads(int(n))


def set_parallel_threshold(trips: int) -> None:
    """Sets the loop trip count at which portable CPU kernels go parallel."""
    _opspec.set_parallel_threshold(int(trips))


def parallel_threshold() -> int:
    """The loop trip count at which portable CPU kernels go parallel."""
    return _opspec.parallel_threshold()


def set_checks(enabled: bool) -> None:
    """Turns the input contents checks on or off, for every op, process-wide.

    An input whose spec says ``check: {min: ..., max: ..., sorted: true}`` is scanned by
    the CPU handler before the kernel runs; a bad value raises an error naming the op,
    the input and the position. The scan reads every element once, so a caller whose
    data is known good may turn it off. On GPU the data is on the device and is never
    checked. Shape, dtype and size checks are not affected: they always run.
    """
    _opspec.set_checks(bool(enabled))


def checks_enabled() -> bool:
    """Whether the CPU handlers check input contents (``set_checks``); on by default."""
    return _opspec.checks_enabled()


if _os.environ.get("OPSPEC_CHECKS", "").strip().lower() in ("0", "false", "off", "no"):
    set_checks(False)
