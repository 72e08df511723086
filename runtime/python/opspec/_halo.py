"""Stencils that stay sharded: the spec's ``halo:`` (docs/transformations.md, "Halo").

A symbol the spec's ``halo:`` names is pass-through in the sharding rule (_sharding.py),
as an ``independent:`` one is, and the partition callback built here runs the op on each
device's block *extended by the radius*:

1. each input with the symbol sends its last ``before`` slices along that dim to the
   next device and its first ``after`` slices to the previous one (``lax.ppermute``:
   collective-permutes of the radius times the other local dims, never an all-gather);
2. each device runs the kernel on its block with the neighbours' slices around it, and
   keeps its own block of every output.

The first device along the mesh axes has no left neighbour and the last no right one:
their blocks are extended on one side only, so the kernel sees the array's true edges
there, and a body's own boundary branch (``i == 0``, ``i == n - 1``) fires where it does
on the whole array. Shapes are static under SPMD, so the three cases (first, interior,
last) are three calls of the kernel, chosen by ``lax.switch`` on the device's index
along the axes (3**k cases for k sharded halo symbols); only one runs.

What this asks of a body, along a halo symbol: an output whose window (the positions
within the radius) lies inside the array reads only that window, and neither the array's
extent nor its own absolute index, except to find the edges.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable, Sequence
from typing import Any

import jax
import numpy as np

from opspec._jax_private import ShapedArray

FIRST, INTERIOR, LAST = 0, 1, 2


def factors(op: Any, shared: set) -> dict:
    """factor -> (before, after) for each `halo:` symbol that an input and an output have."""
    return {f"s_{s}": (int(lo), int(hi)) for s, (lo, hi) in op.halo.items() if f"s_{s}" in shared}


def fits(r: Any, f: str, parts: int) -> bool:
    """Whether a halo factor `f` may be split in `parts`: each block holds at least the
    radius (a device exchanges with its two neighbours only), and there is something to
    exchange. True for a factor with no halo. Where it may not, the call gathers the dim
    (_sharding.gathers says why: too_narrow)."""
    if f not in r.halo:
        return True
    extent = r.extents.get(f, 0)
    return extent > 0 and extent // parts >= max(r.halo[f])


def too_narrow(r: Any, f: str, parts: int) -> str:
    """Why a halo factor that `parts` divide is gathered (fits is false)."""
    extent, radius = r.extents.get(f, 0), max(r.halo[f])
    return (
        f"its halo (radius {radius}) is wider than a block of it ({extent} over {parts} devices gives "
        f"{extent // parts}), and a device exchanges with its two neighbours only"
    )


@dataclasses.dataclass
class _Axis:
    factor: str
    axes: Any  # the mesh axis name, or a tuple of them
    parts: int
    before: int
    after: int


def _shift(x: Any, d: int, lo: int, hi: int, a: _Axis, forward: bool) -> Any:
    """`x[lo:hi]` along dim `d` of each device's neighbour: the previous one's where
    `forward`, else the next one's. Zeros at the mesh's edges, which no branch keeps."""
    edge = jax.lax.slice_in_dim(x, lo, hi, axis=d)
    perm = [(j, j + 1) if forward else (j + 1, j) for j in range(a.parts - 1)]
    return jax.lax.ppermute(edge, a.axes, perm)


def _exchange(x: Any, d: int, a: _Axis) -> Any:
    """`x` extended along `d` by its neighbours' edges: before + block + after."""
    n = x.shape[d]
    pieces = []
    if a.before:
        pieces.append(_shift(x, d, n - a.before, n, a, True))
    pieces.append(x)
    if a.after:
        pieces.append(_shift(x, d, 0, a.after, a, False))
    return jax.lax.concatenate(pieces, d) if len(pieces) > 1 else x


def _position(a: _Axis) -> Any:
    i = jax.lax.axis_index(a.axes)
    return jax.numpy.where(i == 0, FIRST, jax.numpy.where(i == a.parts - 1, LAST, INTERIOR))


def wrap(
    r: Any, found: dict, mesh: Any, local_out: Sequence, make_body: Callable[[Sequence], Callable]
) -> Callable | None:
    """The partition's call when a halo factor is sharded (`found`: factor -> mesh axes),
    else None. `local_out`: each output's block; `make_body(avals_out)`: the kernel's call
    for outputs of those shapes."""
    plan = []
    for f in r.halo:
        if f not in found:
            continue
        axes = found[f]
        names = axes if isinstance(axes, tuple) else (axes,)
        parts = int(np.prod([mesh.shape[n] for n in names], dtype=np.int64))
        plan.append(_Axis(f, axes, parts, *r.halo[f]))
    if not plan:
        return None

    def branch(combo: tuple) -> Callable:
        def call(*ext: Any) -> tuple:
            cut, outs_shape, keep = list(ext), [list(o.shape) for o in local_out], []
            for a, where in zip(plan, combo):
                left = a.before if where != FIRST else 0
                right = a.after if where != LAST else 0
                for i, fs in enumerate(r.inputs):
                    if a.factor in fs:
                        d = fs.index(a.factor)
                        block = cut[i].shape[d] - a.before - a.after
                        cut[i] = jax.lax.slice_in_dim(cut[i], a.before - left, a.before + block + right, axis=d)
                for k, fs in enumerate(r.outputs):
                    if a.factor in fs:
                        d = fs.index(a.factor)
                        keep.append((k, d, left, outs_shape[k][d]))
                        outs_shape[k][d] += left + right
            avals = [ShapedArray(tuple(s), o.dtype) for s, o in zip(outs_shape, local_out)]
            outs = list(make_body(avals)(*cut))
            for k, d, left, block in keep:
                outs[k] = jax.lax.slice_in_dim(outs[k], left, left + block, axis=d)
            return tuple(outs)

        return call

    combos = list(itertools.product((FIRST, INTERIOR, LAST), repeat=len(plan)))
    branches = [branch(c) for c in combos]

    def run(*args: Any) -> tuple:
        ext = list(args)
        for a in plan:
            for i, fs in enumerate(r.inputs):
                if a.factor in fs:
                    ext[i] = _exchange(ext[i], fs.index(a.factor), a)
        index = sum(_position(a) * 3**k for k, a in enumerate(reversed(plan)))
        return tuple(jax.lax.switch(index, branches, *ext))

    return run
