"""The ``split`` checks of ``opspec.testing.check_op``: is a spec's ``independent:`` and
``reduce:`` true of its body?

The sharding rule (``opspec/_sharding.py``) splits an op's call across devices along the
symbols the spec declares, and trusts the declaration: shapes cannot show that a body
reads across a dim. These checks test the declaration on one device, the way the
sharding rule would use it: cut the inputs along the symbol into pieces, call the op on
each piece with the other inputs whole, and compare with the whole call:

- ``independent:``: the pieces' outputs concatenated along the symbol (each output that
  has it), and every piece's output equal to the whole's (each output that does not);
- ``reduce:``: the pieces' outputs combined with the declared ``sum``, ``max`` or ``min``.

A false declaration must fail on the defaults, whatever the seed (issue 31): several cut
points (one element and the rest, the rest and one element, halves, three uneven
pieces), an extent of at least ``EXTENT`` where the checker drew the arguments itself,
and for ``max``/``min`` the extreme of the float inputs put into each piece in turn (an
argmax that claims ``reduce: {n: max}`` returns a piece's own index, which the combined
maximum misses when the extreme is in any piece but the first).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax.numpy as jnp
import numpy as np

from opspec._spec import Array

_COMBINE = {"sum": np.add, "max": np.maximum, "min": np.minimum}

# The extent a symbol gets for its split check where the checker draws the arguments.
EXTENT = 8


def _axes(spec: Array, rank: int, symbol: str) -> list:
    """The axes of an array of this spec and rank that carry `symbol` ("...": each dim of
    the group, in order)."""
    lead = spec.lead(rank)
    if symbol == "...":
        return list(range(lead))
    return [lead + d for d, dim in enumerate(spec.fixed) if isinstance(dim, str) and dim == symbol]


def _cuts(extent: int) -> list:
    """Ways to cut [0, extent) into pieces, each a list of (start, stop): one element and
    the rest; the rest and one element; halves; three uneven pieces. No two alike."""
    half, third = extent // 2, extent // 3
    cuts = [
        [(0, 1), (1, extent)],
        [(0, extent - 1), (extent - 1, extent)],
        [(0, half), (half, extent)],
        [(0, third), (third, third + half), (third + half, extent)],
    ]
    out: list = []
    for cut in cuts:
        if all(a < b for a, b in cut) and cut not in out:
            out.append(cut)
    return out


def _take(x: np.ndarray, axis: int, start: int, stop: int) -> np.ndarray:
    index = [slice(None)] * x.ndim
    index[axis] = slice(start, stop)
    return x[tuple(index)]


def _with_extreme(args: tuple, ins: list, at: int, sign: float) -> tuple:
    """`args` with every float input that carries the symbol (axis ins[k]) set, at index
    `at` along it, to a value beyond all of its others (`sign` +1: above, -1: below)."""
    out = []
    for x, axis in zip(args, ins):
        if axis is None or not jnp.issubdtype(x.dtype, jnp.floating) or x.size == 0:
            out.append(x)
            continue
        wide = x.astype(np.float64)
        finite = np.abs(wide[np.isfinite(wide)])
        value = sign * (2 * float(np.max(finite, initial=0.0)) + 1)
        x = np.array(x)
        index = [slice(None)] * x.ndim
        index[axis] = at  # type: ignore[call-overload]
        x[tuple(index)] = value
        out.append(x)
    return tuple(out)


class _Symbol:
    """One dim of a declared symbol: the arguments and the whole call's outputs it is
    checked on, and the input and output axes that carry it."""

    def __init__(self, checker: Any, symbol: str, g: int, args: tuple, whole: tuple) -> None:
        rec = checker.record
        self.checker, self.symbol, self.args, self.whole = checker, symbol, args, whole
        in_axes = [_axes(spec, np.ndim(x), symbol) for spec, x in zip(rec.inputs, args)]
        self.ins = [a[g] if len(a) > g else None for a in in_axes]
        self.extent = next((np.shape(x)[a] for x, a in zip(args, self.ins) if a is not None), 0)
        self.outs = []
        for spec, w in zip(rec.outputs, whole):
            axes = _axes(spec, np.ndim(w), symbol)
            self.outs.append(axes[g] if len(axes) > g else None)


def _arguments(checker: Any, symbol: str, whole: tuple) -> tuple:
    """The arguments and whole outputs to cut along `symbol`: the example's, or, where the
    checker drew the example itself, fresh ones with the symbol at least EXTENT long."""
    if not checker.random:
        return checker.args, whole
    sizes, ellipsis = dict(checker.symbols), checker.ellipsis
    if symbol == "...":
        ellipsis = tuple(max(e, EXTENT) for e in (ellipsis or (2,)))
    elif symbol in sizes:
        sizes[symbol] = max(sizes[symbol], EXTENT)
    try:
        args = checker.random_args(sizes, ellipsis)
        return args, checker.call(*args)
    except (ValueError, TypeError):  # no valid contents (a check:) or shape (an OpError) of that size
        return checker.args, whole


def check_splits(checker: Any, whole: tuple, close: Callable) -> None:
    """Runs the split checks on `checker` (a testing._Checker); `whole` is the whole call's
    outputs on the example; `close(got, want, rtol, atol)` asserts closeness."""
    rec = checker.record
    independent, reduce = rec.independent, rec.reduce
    if not independent and not reduce:
        checker.not_applicable("split", "the spec declares no independent: or reduce: symbols")
        return
    for symbol, how in [(s, None) for s in independent] + list(reduce.items()):
        args, outs = _arguments(checker, symbol, whole)
        in_axes = [_axes(spec, np.ndim(x), symbol) for spec, x in zip(rec.inputs, args)]
        group = max((len(a) for a in in_axes), default=0) if symbol == "..." else 1
        for g in range(group):
            label = f"split {symbol}" if group == 1 else f"split {symbol} dim {g}"
            if how is not None:
                label = f"{label} ({how})"
            dim = _Symbol(checker, symbol, g, args, outs)
            if dim.extent < 2:
                checker.skip(label, f"its extent is {dim.extent}: nothing to cut")
                continue
            for cut in _cuts(dim.extent):
                _check_cut(dim, how, label, cut, dim.args, dim.whole, "", close)
                if how not in ("max", "min"):
                    continue
                # The extreme in each piece in turn, above and below the rest.
                for start, stop in cut:
                    at = int(checker.rng.integers(start, stop))
                    for sign in (1.0, -1.0):
                        moved = _with_extreme(dim.args, dim.ins, at, sign)
                        if all(m is a for m, a in zip(moved, dim.args)):
                            break  # no float input carries the symbol
                        where = f", the float inputs' {'largest' if sign > 0 else 'smallest'} value at {symbol}={at}"
                        _check_cut(dim, how, label, cut, moved, checker.call(*moved), where, close)
            checker.ran(label)


def _check_cut(
    dim: _Symbol, how: str | None, label: str, cut: list, args: tuple, whole: tuple, where: str, close: Callable
) -> None:
    """The op on the pieces of `args` cut as `cut` against `whole`, the op on `args`."""
    checker, symbol = dim.checker, dim.symbol
    rec = checker.record
    pieces = []
    for start, stop in cut:
        piece = [x if a is None else _take(x, a, start, stop) for x, a in zip(args, dim.ins)]
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
        elif (axis := dim.outs[j]) is not None:
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
                    f"(pieces {sizes} of {symbol}{where}) and the whole call's differ, so the spec's "
                    f"`{declared}` is false and sharded calls would be wrong: {e}"
                ) from None
