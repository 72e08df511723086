"""opspec: JAX operations generated from YAML specs.

``import opspec`` loads the one native extension, checks that the installed jax can run
its handlers (an ``ImportError`` names the installed and the supported versions if not),
registers every op's XLA FFI handlers with JAX (``cpu`` always, ``CUDA`` when JAX has a
GPU backend and the extension was built with CUDA, and the CUDA kernels on the CUDA
simulator, on ``cpu``, when it was built with the simulator), and exposes the ops as
``opspec.ops.<name>``. Nothing is compiled at import: the handlers were compiled ahead of
time from the generated sources. The functions beside ``ops`` (``set_checks``,
``build_info``, ...) are every opspec package's, written once in opspec._face.

Environment: ``OPSPEC_CHECKS=0`` (or ``false``/``off``/``no``) starts with the input
contents checks off, as ``set_checks(False)`` would. ``OPSPEC_PARALLEL_THRESHOLD=<work>``
sets the parallel threshold, over the value ``python -m opspec tune`` saved for this
machine; ``OPSPEC_CPU_POOL=opspec|xla|openmp`` where parallel loops find their helper
threads; ``OPSPEC_HUGE_PAGES=0`` (or ``false``/``off``/``no``) stops CPU calls asking
Linux for huge pages on their large fresh outputs (docs/performance.md).
"""

from typing import TYPE_CHECKING, Any

from opspec._face import install as _install

__all__ = _install(__name__, globals())

from opspec import ops as ops  # noqa: E402  (ops need the targets registered first)
from opspec._sharding import ShardingWarning as ShardingWarning  # noqa: E402

if TYPE_CHECKING:  # the names install() defines (opspec._face.NAMES), for type checkers

    def __getattr__(name: str) -> Any: ...
