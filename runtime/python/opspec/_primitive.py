"""Every op as a JAX primitive, with the rules the spec implies.

One primitive per op (``<package>.<op>``), created on first use. Its parameters are the
op record, the backend, the attributes and the batch layout; its rules are:

- abstract evaluation: the output shapes from the spec's expressions, which also accept
  symbolic dims (``jax.export.symbolic_shape``);
- lowering: ``jax.ffi.ffi_call`` of the op's target (opspec/_sharding.py wraps it in a
  sharding rule when the computation spans several devices), declaring the spec's
  ``aliases`` except where the aliased operand is memory XLA would have to copy first
  (``_declared_aliases``);
- batching: native. ``jax.vmap`` moves each batched input's axis to the front and marks
  which inputs carry which batch dims (``opspec_batch``, opspec/batch.h); the handler
  runs every element in one call and reads unbatched inputs in place. A spec's ``vmap:``
  other than ``native`` overrides this;
- differentiation: JVP and transpose rules from the spec's ``derivatives:``
  (opspec/_derivatives.py).

Nothing here runs when the compiled computation runs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

# Every import is at module level, so that no call runs an import statement (an op
# called from a __del__ at interpreter shutdown cannot import anything).
from opspec import _bind, _derivatives, _sharding, _tables
from opspec._bind import Binding, batch_extents, split_batch
from opspec._jax_private import (
    Primitive,
    ShapedArray,
    ad,
    batching,
    mlir,
    read_only_entry_argument,
    register_lowering_with_operands,
    require_devices_during_lowering,
)
from opspec._spec import Op
from opspec._targets import target_name

_PRIMITIVES: dict[tuple[str, str], Primitive] = {}


def primitive(op: Op) -> Primitive:
    """The primitive of `op`, made and registered on first use."""
    key = (op.package, op.name)
    p = _PRIMITIVES.get(key)
    if p is None:
        p = Primitive(f"{op.package}.{op.name}")
        p.multiple_results = True
        p.def_impl(lambda *args, **params: _compiled(p, params)(*args))
        p.def_abstract_eval(_abstract_eval)
        if op.aliases:  # _declared_aliases reads the operands: lowered at each call
            register_lowering_with_operands(p, _lowering)
        else:
            mlir.register_lowering(p, _lowering)
        _needs_devices(p)
        batching.primitive_batchers[p] = lambda args, dims, **params: _batch(p, args, dims, **params)
        ad.primitive_jvps[p] = lambda primals, tangents, **params: _derivatives.jvp(p, primals, tangents, **params)
        ad.primitive_transposes[p] = lambda cts, *args, **params: _derivatives.transpose(p, cts, *args, **params)
        _PRIMITIVES[key] = p
    return p


def _needs_devices(p: Primitive) -> None:
    """Asks jit for the device assignment when lowering `p`, as for custom_partitioning,
    which the lowering uses on several devices (opspec/_sharding.py). JAX has no public
    hook for this; without one, sharding falls back to replicated calls, still correct."""
    require_devices_during_lowering(p)


def bind(binding: Binding, arrays: Sequence[Any], backend: str | None) -> list:
    """Calls the op on `arrays`, which `binding` read: one unbatched call, with the
    binding's converted attributes as the primitive's parameter."""
    op = binding.op
    return primitive(op).bind(
        *arrays,
        op=op,
        backend=backend,
        attrs=tuple(binding.attrs.items()),
        batch_rank=0,
        batch_mask=(0,) * len(op.inputs),
        kept=False,
    )


# ---- eager calls ----------------------------------------------------------------------

_COMPILED: dict = {}


def _compiled(p: Primitive, params: dict) -> Callable:
    """An eager call: the primitive alone under jit, compiled once per parameter set."""
    key = (p, tuple(sorted(params.items(), key=lambda kv: kv[0])))
    fn = _COMPILED.get(key)
    if fn is None:
        fn = _COMPILED[key] = jax.jit(lambda *args: p.bind(*args, **params))
    return fn


# ---- abstract evaluation -------------------------------------------------------------


def _abstract_eval(
    *avals: Any, op: Any, backend: Any, attrs: tuple, batch_rank: int, batch_mask: tuple, kept: bool
) -> list:
    """The outputs' shapes and dtypes (and shardings, under explicit sharding) from the
    call's Binding, read from the inputs' shapes without their batch dims."""
    shapes = [tuple(a.shape) for a in avals]
    core = [split_batch(s, m)[1] for s, m in zip(shapes, batch_mask)]
    binding = _bind.bind(op, core, [a.dtype for a in avals], dict(attrs))
    outs = binding.out_shapes(batch=batch_extents(shapes, batch_rank, batch_mask))
    shardings = _sharding.out_shardings(op, avals, [s for s, _ in outs], batch_rank, batch_mask)
    if shardings is None:
        return [ShapedArray(shape, dtype) for shape, dtype in outs]
    return [ShapedArray(shape, dtype, sharding=s) for (shape, dtype), s in zip(outs, shardings)]


# ---- lowering -------------------------------------------------------------------------


def ffi_body(
    op: Any,
    backend: Any,
    attrs: tuple,
    batch_rank: int,
    batch_mask: tuple,
    kept: bool,
    avals_out: Sequence,
    aliases: dict | None = None,
) -> Callable:
    """The call itself, for the shapes of `avals_out`: a jax.ffi.ffi_call of the op's target,
    with `aliases` ({input index: output index}; the spec's by default) as its
    input_output_aliases. A `kept` call (opspec/_derivatives.py) is a custom call with a
    side effect, which XLA runs even where its outputs are not used."""
    target = target_name(op, backend)
    extra = dict(attrs)
    if op.fingerprint:  # checked by the handler: an export made before the kernel changed fails
        extra["opspec_kernel"] = op.fingerprint
    if batch_rank:
        extra["opspec_batch"] = np.array((batch_rank, *batch_mask), dtype=np.int64)
    call = jax.ffi.ffi_call(
        target,
        [jax.ShapeDtypeStruct(a.shape, a.dtype) for a in avals_out],
        input_output_aliases=(op.aliases if aliases is None else aliases) or None,
        has_side_effect=kept,
    )
    return lambda *args: call(*args, **extra)


def _declared_aliases(op: Any, args: Sequence) -> dict:
    """The spec's aliases this call declares to XLA: each, unless its input is memory the
    computation may not overwrite (a jitted function's argument that is not donated, or a
    constant: opspec._jax_private.read_only_entry_argument). For such an input XLA would
    copy it into the output's buffer before the call, a pass over the array that the
    kernel, writing a fresh output, does not need; the alias saves that copy only where
    the input's buffer is free to take (a donated argument, a loop carry, a temporary)."""
    return {i: o for i, o in op.aliases.items() if not read_only_entry_argument(_single(args[i]))}


def _single(arg: Any) -> Any:
    """The one IR value of an array operand (lowering rules get a value or a sequence)."""
    return arg[0] if isinstance(arg, (list, tuple)) and len(arg) == 1 else arg


def _lowering(ctx: Any, *args: Any, **params: Any) -> Any:
    aliases = _declared_aliases(params["op"], args)
    body = _sharding.partitioned(
        ctx, params, lambda avals_out: ffi_body(**params, avals_out=avals_out, aliases=aliases)
    )
    return mlir.lower_fun(body, multiple_results=True)(ctx, *args)


# ---- batching -------------------------------------------------------------------------


def _batch(p: Primitive, args: Sequence, dims: Sequence, *, op: Any, batch_rank: int, batch_mask: tuple, **params: Any):
    size = next(x.shape[d] for x, d in zip(args, dims) if d is not None)
    method = op.vmap_method
    if method == "native" and batch_rank >= _tables.MAX_BATCH_RANK:
        method = "sequential"  # deeper than a call can describe: one call per element
    if method in ("sequential", "sequential_unrolled"):
        moved = [None if d is None else jnp.moveaxis(x, d, 0) for x, d in zip(args, dims)]

        def one(xs: list) -> list:
            it = iter(xs)
            full = [next(it) if m is not None else x for x, m in zip(args, moved)]
            return p.bind(*full, op=op, batch_rank=batch_rank, batch_mask=batch_mask, **params)

        outs = jax.lax.map(one, [m for m in moved if m is not None])
        return outs, [0] * len(outs)
    if method in ("broadcast_all", "expand_dims"):
        # As jax.ffi.ffi_call does: the op's leading '...' absorbs the batch.
        n = size if method == "broadcast_all" else 1
        full = [jax.lax.broadcast(x, (n,)) if d is None else jnp.moveaxis(x, d, 0) for x, d in zip(args, dims)]
        outs = p.bind(*full, op=op, batch_rank=batch_rank, batch_mask=batch_mask, **params)
        if method == "expand_dims":
            outs = [jax.lax.broadcast_in_dim(o, (size, *o.shape[1:]), tuple(range(o.ndim))) for o in outs]
        return outs, [0] * len(outs)
    if method != "native":
        raise NotImplementedError(f"{op.package}.ops.{op.name}: vmap method {method!r} cannot batch")

    # Native: the new vmap axis is the outermost batch dim (bit 0); the others move in.
    new_args, new_mask = [], []
    aliased = set(op.aliases)
    full_mask = (1 << (batch_rank + 1)) - 1
    for x, d, m in zip(args, dims, batch_mask):
        if d is None:
            x, m = x, m << 1
        else:
            x, m = jnp.moveaxis(x, d, 0), (m << 1) | 1
        new_args.append(x)
        new_mask.append(m)
    extents = batch_extents([tuple(x.shape) for x in new_args], batch_rank + 1, tuple(new_mask))
    for i in aliased:
        # An aliased input is its output's memory, which has every batch dim: an
        # input missing some gets them (the one case native batching copies).
        if new_mask[i] != full_mask:
            new_args[i] = _broadcast_batch(new_args[i], new_mask[i], extents)
            new_mask[i] = full_mask
    outs = p.bind(*new_args, op=op, batch_rank=batch_rank + 1, batch_mask=tuple(new_mask), **params)
    return outs, [0] * len(outs)


def _broadcast_batch(x: Any, mask: int, extents: tuple) -> Any:
    """`x` (carrying the batch dims of `mask`) with every batch dim of `extents`."""
    nb = bin(mask).count("1")
    core = tuple(x.shape[nb:])
    kept = [k for k in range(len(extents)) if mask >> k & 1]
    dims = tuple(kept) + tuple(range(len(extents), len(extents) + len(core)))
    return jax.lax.broadcast_in_dim(x, tuple(extents) + core, dims)
