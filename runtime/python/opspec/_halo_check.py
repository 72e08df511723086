"""The ``halo`` check of ``opspec.testing.check_op``: is a spec's ``halo:`` true of its
body?

A call sharded along a halo symbol runs the kernel on each device's block extended by
the declared radius, the first block with nothing before it and the last with nothing
after (``opspec/_halo.py``). This check does the same on one device: it cuts the inputs
along the symbol at random points, calls the op on each piece extended by the radius
(clipped at the array's edges), keeps each piece's own outputs, and compares their
concatenation with the whole call. A radius too small (a 3-point stencil declared
``halo: {n: 0}``) or a body that uses its absolute index or the extent for more than
finding the edges (``y[i] = i * x[i]``) gives different outputs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from opspec._split_check import _axes, _take


def _cuts(extent: int, rng: np.random.Generator) -> list:
    """Pieces of [0, extent): one element then the rest, and up to four pieces cut at
    random points. Each is a list of (start, stop)."""
    cuts = [[(0, 1), (1, extent)]]
    if extent >= 3:
        points = sorted(rng.choice(np.arange(1, extent), size=min(3, extent - 1), replace=False).tolist())
        edges = [0, *points, extent]
        cuts.append(list(zip(edges[:-1], edges[1:])))
    return cuts


def check_halos(checker: Any, whole: tuple, close: Callable) -> None:
    """Runs the halo check on `checker` (a testing._Checker); `whole` is the whole call's
    outputs; `close(got, want, rtol, atol)` asserts closeness."""
    rec = checker.record
    if not rec.halo:
        checker.not_applicable("halo", "the spec declares no halo: symbols")
        return
    args = checker.args
    for symbol, (before, after) in rec.halo.items():
        label = f"halo {symbol}"
        ins = [next(iter(_axes(spec, np.ndim(x), symbol)), None) for spec, x in zip(rec.inputs, args)]
        outs = [next(iter(_axes(spec, np.ndim(w), symbol)), -1) for spec, w in zip(rec.outputs, whole)]
        extent = next((np.shape(x)[a] for x, a in zip(args, ins) if a is not None), 0)
        if -1 in outs:  # a record made by hand: the generator refuses such a spec
            checker.skip(label, f"an output does not have {symbol}")
            continue
        if extent < 2:
            checker.skip(label, f"its extent is {extent}: nothing to cut")
            continue
        for cut in _cuts(extent, checker.rng):
            kept: list[list] = [[] for _ in rec.outputs]
            for start, stop in cut:
                lo, hi = max(start - before, 0), min(stop + after, extent)
                window = [x if a is None else _take(x, a, lo, hi) for x, a in zip(args, ins)]
                try:
                    got = checker.call(*window)
                except Exception as e:
                    raise AssertionError(
                        f"{checker.report.op}: {label}: the call on {symbol} [{lo}:{hi}] failed "
                        f"({type(e).__name__}: {e}); the spec declares that windows along {symbol} are calls "
                        "of their own"
                    ) from None
                for j, axis in enumerate(outs):
                    kept[j].append(_take(np.asarray(got[j]), axis, start - lo, stop - lo))
            pieces = ", ".join(f"[{a}:{b}]" for a, b in cut)
            for j, spec in enumerate(rec.outputs):
                try:
                    close(np.concatenate(kept[j], axis=outs[j]), np.asarray(whole[j]), checker.rtol, checker.atol)
                except AssertionError as e:
                    raise AssertionError(
                        f"{checker.report.op}: {label}: output '{spec.name}': the pieces {pieces} of {symbol}, "
                        f"each called with {before} before and {after} after, and the whole call differ, so "
                        f"the spec's `halo: {{{symbol}: [{before}, {after}]}}` is false and sharded calls "
                        f"would be wrong: {e}"
                    ) from None
        checker.ran(label)
