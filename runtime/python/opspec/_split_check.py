"""The ``split`` checks of ``opspec.testing.check_op``: is a spec's ``independent:`` and
``reduce:`` true of its body?

The sharding rule (``opspec/_sharding.py``) splits an op's call across devices along the
symbols the spec declares, and trusts the declaration: shapes cannot show that a body
reads across a dim. These checks test the declaration on one device, the way the
sharding rule would use it: cut the inputs along the symbol into pieces (uneven ones,
and a piece of one element, where a stencil's boundary shows), call the op on each piece
with the other inputs whole, and compare with the whole call:

- ``independent:``: the pieces' outputs concatenated along the symbol (each output that
  has it), and every piece's output equal to the whole's (each output that does not);
- ``reduce:``: the pieces' outputs combined with the declared ``sum``, ``max`` or ``min``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from opspec._spec import Array

_COMBINE = {"sum": np.add, "max": np.maximum, "min": np.minimum}


def _axes(spec: Array, rank: int, symbol: str) -> list:
    """The axes of an array of this spec and rank that carry `symbol` ("...": each dim of
    the group, in order)."""
    lead = spec.lead(rank)
    if symbol == "...":
        return list(range(lead))
    return [lead + d for d, dim in enumerate(spec.fixed) if isinstance(dim, str) and dim == symbol]


def _cuts(extent: int) -> list:
    """Ways to cut [0, extent) into pieces: one element, then the rest; and three uneven
    pieces. Each is a list of (start, stop)."""
    cuts = [[(0, 1), (1, extent)]]
    if extent >= 4:
        a, b = extent // 3, extent // 3 + extent // 2
        cuts.append([(0, a), (a, b), (b, extent)])
    return cuts


def _take(x: np.ndarray, axis: int, start: int, stop: int) -> np.ndarray:
    index = [slice(None)] * x.ndim
    index[axis] = slice(start, stop)
    return x[tuple(index)]


def check_splits(checker: Any, whole: tuple, close: Callable) -> None:
    """Runs the split checks on `checker` (a testing._Checker); `whole` is the whole call's
    outputs; `close(got, want, rtol, atol)` asserts closeness."""
    rec = checker.record
    independent, reduce = rec.independent, rec.reduce
    if not independent and not reduce:
        checker.not_applicable("split", "the spec declares no independent: or reduce: symbols")
        return
    args = checker.args
    for symbol, how in [(s, None) for s in independent] + list(reduce.items()):
        in_axes = [_axes(spec, np.ndim(x), symbol) for spec, x in zip(rec.inputs, args)]
        group = max((len(a) for a in in_axes), default=0) if symbol == "..." else 1
        for g in range(group):
            # The g-th dim of the symbol ('...' has several): its extent from an input.
            ins = [a[g] if len(a) > g else None for a in in_axes]
            extent = next((np.shape(x)[a] for x, a in zip(args, ins) if a is not None), 0)
            label = f"split {symbol}" if group == 1 else f"split {symbol} dim {g}"
            if how is not None:
                label = f"{label} ({how})"
            if extent < 2:
                checker.skip(label, f"its extent is {extent}: nothing to cut")
                continue
            out_axes: list[int | None] = []
            for spec, w in zip(rec.outputs, whole):
                axes = _axes(spec, np.ndim(w), symbol)
                out_axes.append(axes[g] if len(axes) > g else None)
            for cut in _cuts(extent):
                pieces = []
                for start, stop in cut:
                    piece = [x if a is None else _take(x, a, start, stop) for x, a in zip(args, ins)]
                    try:
                        pieces.append(checker.call(*piece))
                    except Exception as e:
                        raise AssertionError(
                            f"{checker.report.op}: {label}: the call on {symbol} [{start}:{stop}] failed "
                            f"({type(e).__name__}: {e}); the spec declares that pieces along {symbol} "
                            "are calls of their own"
                        ) from None
                sizes = ", ".join(f"[{a}:{b}]" for a, b in cut)
                for j, spec in enumerate(rec.outputs):
                    want = np.asarray(whole[j])
                    parts = [np.asarray(p[j]) for p in pieces]
                    checks: list[tuple[Any, str, float | None]]
                    if how is not None:
                        got = parts[0]
                        for p in parts[1:]:
                            got = _COMBINE[how](got, p)
                        scale = sum(np.abs(p.astype(np.float64)) for p in parts) if how == "sum" else 0
                        tight = 1e-5 if want.dtype.itemsize <= 4 else 1e-12
                        atol = float(np.max(scale, initial=0.0)) * tight * 4 + tight
                        checks = [(got, f"the pieces' outputs combined with {how}", atol)]
                    elif (axis := out_axes[j]) is not None:
                        checks = [(np.concatenate(parts, axis=axis), "the pieces' outputs concatenated", None)]
                    else:
                        checks = [(p, f"the output of piece {k + 1}", None) for k, p in enumerate(parts)]
                    for got, what, bound in checks:
                        try:
                            close(got, want, checker.rtol, bound if bound is not None else checker.atol)
                        except AssertionError as e:
                            declared = f"reduce: {{{symbol}: {how}}}" if how else f"independent: [{symbol}]"
                            raise AssertionError(
                                f"{checker.report.op}: {label}: output '{spec.name}': {what} "
                                f"(pieces {sizes} of {symbol}) and the whole call's differ, so the spec's "
                                f"`{declared}` is false and sharded calls would be wrong: {e}"
                            ) from None
            checker.ran(label)
