"""The transpose of a linear stencil, derived from the op itself: the spec's
``derivatives: {x: {linear: halo}}`` (docs/gradients.md, "linear").

The op is linear in ``x``, y = A x, and along each ``halo:`` symbol output ``i`` reads
``x[i - before .. i + after]``: A is banded, ``w = before + after + 1`` wide. Calling the
op on the "comb" ``s_k`` (one where ``j % w == k``, zero elsewhere) gives, at each output
``i``, ``A[i, j]`` for the one ``j`` of ``i``'s window with ``j % w == k``: ``w`` calls
recover every weight, the boundary branch's included (``w1 * w2 * ...`` calls for several
halo symbols; an ``independent:`` dim is a diagonal, one call covers it). Then

    x_bar[j] = sum over i in [j - after, j + before] of A[i, j] * y_bar[i]

is a window sum of ``probe_k * y_bar`` with the *mirrored* radius (``[after, before]``),
kept where ``j % w == k``. The probes are op calls, which shard by the op's own `halo:`
(collective-permutes), and the window sum is an XLA reduce-window, which XLA's SPMD
partitioner splits with a halo exchange of its own: ``jax.grad`` of a sharded stencil
stays sharded, and the author writes no transposed op.

The checker (generator/check/halo.c) has made sure every dim of ``x`` is a halo or
independent symbol and every output has ``x``'s shape.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax


def derive(op: Any, index: int, call: Callable[..., Sequence], values: list, cts: Sequence) -> Any:
    """The cotangent of input `index` from the outputs' `cts`; `values`: the inputs, those
    being transposed as jax.ShapeDtypeStruct (read as zeros: JAX transposes an op in
    several inputs at once only where it is linear in all of them together);
    `call(*inputs)`: the op's outputs."""
    spec, x = op.inputs[index], values[index]
    shape, dtype = tuple(x.shape), x.dtype
    band = [(d, op.halo[s]) for d, s in enumerate(spec.shape) if s in op.halo]
    widths = [before + after + 1 for _, (before, after) in band]
    window = [1] * len(shape)
    padding = [(0, 0)] * len(shape)
    for (d, (before, after)), w in zip(band, widths):
        window[d], padding[d] = w, (after, before)
    args = [jnp.zeros(v.shape, v.dtype) if isinstance(v, jax.ShapeDtypeStruct) else v for v in values]
    total = jnp.zeros(shape, dtype)
    for ks in itertools.product(*(range(w) for w in widths)):
        comb = jnp.ones(shape, bool)
        for (d, _), w, k in zip(band, widths, ks):
            comb &= lax.broadcasted_iota(jnp.int32, shape, d) % w == k
        args[index] = comb.astype(dtype)
        weighted = sum(o.astype(dtype) * ct.astype(dtype) for o, ct in zip(call(*args), cts))
        summed = lax.reduce_window(weighted, np.zeros((), dtype), lax.add, window, (1,) * len(shape), padding)
        total = jnp.where(comb, summed, total)
    return total
