"""The ``unwritten`` checks of ``opspec.testing.check_op``: does the kernel write every
element of each output?

XLA hands a handler its output buffers as it allocated them, holding whatever the memory
held, so an element no thread writes (a pair loop over an odd extent, a guard one short)
comes out as garbage that changes from call to call, and a comparison with a reference
may pass by luck. Here the handler itself fills each output before the kernel runs
(``<package>._opspec.set_output_fill``, runtime/src/handler.c and ffi_cuda.c): every
backend runs the example twice, once with outputs of all-ones bytes (NaN in every float
dtype, -1 in the integers, True) and once of zero bytes; an element that differs between
the two runs was not written (or was read before it was written). An output that is an
input's memory (``aliases:``) starts as the input and is not filled.
"""

from __future__ import annotations

import importlib
from typing import Any

import numpy as np

# The two fills: all-ones bytes (NaN where the dtype has one), then zero bytes.
FILLS = (0xFF, 0x00)


def _setter(package: str) -> Any:
    """The package's native set_output_fill, or None where its extension has none (built
    by an older opspec)."""
    try:
        native = importlib.import_module(f"{package}._opspec")
    except ImportError:
        return None
    return getattr(native, "set_output_fill", None)


def _differ(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Where two runs' outputs differ, NaN equal to NaN."""
    if np.issubdtype(a.dtype, np.floating) or a.dtype.name == "bfloat16":
        a, b = a.astype(np.float64), b.astype(np.float64)
        return ~((a == b) | (np.isnan(a) & np.isnan(b)))
    return a != b


def check_unwritten(checker: Any, backends: list) -> None:
    """Runs the example on each of `backends` (names, "cpu" first) twice, with the
    outputs filled with each of FILLS, and fails on the first output element that
    differs."""
    rec = checker.record
    if rec.outputs and len(rec.aliases) == len(rec.outputs):
        checker.not_applicable("unwritten", "every output is an input's memory (aliases:): it starts as the input")
        return
    setter = _setter(rec.package)
    if setter is None:
        checker.skip("unwritten", f"the extension of package '{rec.package}' cannot fill outputs: rebuild it")
        return
    aliased = set(rec.aliases.values())
    for backend in backends:
        name = f"unwritten {backend}"
        runs = []
        for byte in FILLS:
            setter(byte)
            try:
                runs.append(checker.on_backend(backend))  # NumPy arrays: the call has finished
            finally:
                setter(-1)
        for j, spec in enumerate(rec.outputs):
            if j in aliased:
                continue
            first, second = np.asarray(runs[0][j]), np.asarray(runs[1][j])
            bad = np.argwhere(_differ(first, second))
            if len(bad):
                index = tuple(int(v) for v in bad[0])
                raise AssertionError(
                    f"{checker.report.op}: {name}: output '{spec.name}' element {list(index)} was not written by the "
                    f"kernel ({len(bad)} of {first.size} elements): it holds what the handler filled the output with "
                    f"before the kernel ran ({first[index]} after all-ones bytes, {second[index]} after zero bytes), "
                    "so a call returns whatever the memory held. Write every element of every output (or the "
                    "kernel reads the element before writing it)"
                )
        checker.ran(name)
