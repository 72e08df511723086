"""opspec: JAX operations generated from YAML specs.

``import opspec`` loads the one native extension, registers every op's XLA FFI
handlers with JAX (``cpu`` always, ``CUDA`` when JAX has a GPU backend and the extension
was built with CUDA), and exposes the ops as ``opspec.ops.<name>``. Nothing is compiled
at import: the handlers were compiled ahead of time from the generated C sources.

Environment: ``OPSPEC_CHECKS=0`` (or ``false``/``off``/``no``) starts with the input
contents checks off, as ``set_checks(False)`` would.
"""

import os as _os

from opspec import _opspec
from opspec._runtime import register_targets as _register_targets

__all__ = [
    "ops",
    "has_cuda",
    "set_cpu_threads",
    "set_parallel_threshold",
    "parallel_threshold",
    "set_checks",
    "checks_enabled",
    "target_name",
    "registered_platforms",
]

registered_platforms = _register_targets()

from opspec import ops  # noqa: E402  (ops need the targets registered first)

has_cuda = _opspec.has_cuda()
target_name = _opspec.target_name


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
