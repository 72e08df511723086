"""Every op as a JAX primitive, with the rules the spec implies.

One primitive per op (``<package>.<op>``), created on first use. Its parameters are the
op record, the backend, the attributes and the batch layout; its rules are:

- abstract evaluation: the output shapes from the spec's expressions, which also accept
  symbolic dims (``jax.export.symbolic_shape``);
- lowering: ``jax.ffi.ffi_call`` of the op's target (opspec/_sharding.py wraps it in a
  sharding rule when the computation spans several devices);
- batching: native. ``jax.vmap`` moves each batched input's axis to the front and marks
  which inputs carry which batch dims (``opspec_batch``, opspec/batch.h); the handler
  runs every element in one call and reads unbatched inputs in place. A spec's ``vmap:``
  other than ``native`` overrides this;
- differentiation: JVP and transpose rules from the spec's ``derivatives:``
  (opspec/_derivatives.py).

Nothing here runs when the compiled computation runs.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

# Module imports, not names: _runtime, _derivatives and _sharding import this module too,
# and every import is at module level, so that no call runs an import statement (an op
# called from a __del__ at interpreter shutdown cannot import anything).
from opspec import _derivatives, _runtime, _sharding, _tables
from opspec._jax_private import Primitive, ShapedArray, ad, batching, mlir, require_devices_during_lowering

_PRIMITIVES: dict[tuple[str, str], Primitive] = {}


def primitive(op: Any) -> Primitive:
    """The primitive of `op` (an opspec._runtime.Op), made and registered on first use."""
    key = (op.package, op.name)
    p = _PRIMITIVES.get(key)
    if p is None:
        p = Primitive(f"{op.package}.{op.name}")
        p.multiple_results = True
        p.def_impl(lambda *args, **params: _compiled(p, params)(*args))
        p.def_abstract_eval(_abstract_eval)
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


def bind(op: Any, arrays: Sequence[Any], attrs: dict, backend: str | None) -> list:
    """Calls `op` on checked `arrays` with converted `attrs`: one unbatched call."""
    return primitive(op).bind(
        *arrays,
        op=op,
        backend=backend,
        attrs=tuple(attrs.items()),
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


# ---- shapes ---------------------------------------------------------------------------


def split_batch(shape: tuple, mask: int) -> tuple[tuple, tuple]:
    """(batch dims, core dims) of an input whose leading dims are its set mask bits."""
    nb = bin(mask).count("1")
    return tuple(shape[:nb]), tuple(shape[nb:])


def batch_extents(op: Any, shapes: Sequence[tuple], batch_rank: int, batch_mask: tuple) -> tuple:
    """The extent of every batch dim, from the inputs that carry it."""
    extents: list = [None] * batch_rank
    for shape, mask in zip(shapes, batch_mask):
        d = 0
        for k in range(batch_rank):
            if mask >> k & 1:
                extents[k] = shape[d]
                d += 1
    return tuple(extents)


# The most bytes an output may have: XLA sizes an array in int64 bytes, and jaxlib aborts
# the process (overflow in static extent product) on an array of 2**63 bytes or more,
# where it reports RESOURCE_EXHAUSTED below that (measured on jaxlib 0.10.2, CPU).
MAX_OUTPUT_BYTES = 2**63 - 1


def out_shapes(op: Any, core_shapes: Sequence[tuple], dtypes: Sequence[Any], attrs: dict, batch: tuple = ()) -> list:
    """Every output's (shape, dtype) for inputs of `core_shapes` and `dtypes`, from the
    spec's shape symbols and expressions, with the batch dims `batch` in front. Dims may be
    symbolic (jax.export). A shape with a negative dim, or of more than MAX_OUTPUT_BYTES
    bytes, is an OpError naming the attributes and inputs its dims come from."""
    types: dict = {}
    symbols: dict = {}
    symbol_from: dict = {}
    ellipsis: tuple = ()
    ellipsis_from = ""
    for spec, shape, dtype in zip(op.inputs, core_shapes, dtypes):
        if spec.dtype in op.types:
            types.setdefault(spec.dtype, np.dtype(dtype))
        has_ellipsis = bool(spec.shape) and spec.shape[0] is Ellipsis
        fixed = spec.shape[1:] if has_ellipsis else spec.shape
        lead = len(shape) - len(fixed)
        if has_ellipsis:
            ellipsis, ellipsis_from = tuple(shape[:lead]), ellipsis_from or spec.name
        for d, dim in enumerate(fixed):
            if isinstance(dim, str) and dim not in symbols:
                symbols[dim], symbol_from[dim] = shape[lead + d], spec.name
    scope: dict = dict(symbols)
    int_attrs = [spec.name for spec in op.attrs if spec.type.startswith("int")]
    for name in int_attrs:
        scope[name] = int(attrs[name])
    for spec, shape in zip(op.inputs, core_shapes):
        scope[f"{spec.name}_size"] = math.prod(shape)
        symbol_from[f"{spec.name}_size"] = spec.name
    outs = []
    for spec in op.outputs:
        out: list = list(batch)
        names: list = []  # the scope names the dims read, for errors
        for dim in spec.shape:
            if dim is Ellipsis:
                out.extend(ellipsis)  # an output '...' implies an input '...' (checked by opspec-gen)
                names.append("...")
            elif callable(dim):
                # The generated expression reads the scope as s["name"]: its string constants.
                reads = [c for c in dim.__code__.co_consts if isinstance(c, str) and c in scope]
                try:
                    value = dim(scope)
                except ZeroDivisionError:
                    found = _sources(reads, int_attrs, symbol_from, ellipsis_from, scope)
                    found.sort(key=lambda s: not s[0].startswith("attribute"))
                    _runtime._fail(
                        op,
                        ", ".join(s[0] for s in found) or f"output '{spec.name}'",
                        f"expected output '{spec.name}' shape expression not to divide by zero, got "
                        + ", ".join(s[1] for s in found),
                    )
                except Exception as e:  # symbolic dims the expression cannot take (max, min, %)
                    _runtime._fail(
                        op,
                        f"output '{spec.name}'",
                        f"its shape expression cannot be computed for symbolic dims {symbols} ({e})",
                    )
                out.append(int(value) if isinstance(value, (int, np.integer)) else value)
                names.extend(reads)
            else:
                out.append(dim if isinstance(dim, int) else scope[dim])
                names.append(dim)
        dtype = types[spec.dtype] if spec.dtype in types else np.dtype(spec.dtype)
        _check_size(
            op,
            spec.name,
            tuple(out),
            dtype,
            len(batch),
            lambda: _sources(names, int_attrs, symbol_from, ellipsis_from, scope),
        )
        outs.append((tuple(out), dtype))
    return outs


def _sources(names: list, int_attrs: list, symbol_from: dict, ellipsis_from: str, scope: dict) -> list:
    """(argument, value) for the attributes and inputs that scope `names` come from."""
    found: dict = {}
    for name in names:
        if name in int_attrs:
            found.setdefault(f"attribute '{name}'", f"{name} = {scope[name]}")
        elif name == "...":
            found.setdefault(f"input '{ellipsis_from}'", f"input '{ellipsis_from}' with leading dims ('...')")
        elif name in symbol_from:
            found.setdefault(
                f"input '{symbol_from[name]}'", f"input '{symbol_from[name]}' giving {name} = {scope[name]}"
            )
    return list(found.items())


def _check_size(op: Any, output: str, shape: tuple, dtype: np.dtype, batch_rank: int, sources: Callable) -> None:
    """Refuses an output `shape` with a negative dim or of more than MAX_OUTPUT_BYTES bytes
    (a shape with symbolic dims, from jax.export, only for its negative dims), naming what
    it comes from (`sources()`): attributes first (what a caller sets by hand), then inputs."""
    negative = any(isinstance(d, int) and d < 0 for d in shape)
    known = all(isinstance(d, int) for d in shape)
    nbytes = math.prod(shape) * dtype.itemsize if known and not negative else 0
    if not negative and nbytes <= MAX_OUTPUT_BYTES:
        return
    found = sorted(sources(), key=lambda s: not s[0].startswith("attribute"))
    what = ", ".join(s[0] for s in found) or f"output '{output}'"
    got = ", ".join(s[1] for s in found)
    if batch_rank:
        got += f"{', ' if got else ''}vmap batch dims {shape[:batch_rank]}"
    got = f"{got}, " if got else ""
    if negative:
        _runtime._fail(op, what, f"expected output '{output}' dims of at least 0, got {got}output shape {shape}")
    _runtime._fail(
        op,
        what,
        f"expected output '{output}' ({dtype.name}) of at most 2**63 - 1 bytes, the most XLA can "
        f"address, got {got}output shape {shape} of {nbytes} bytes",
    )


def _abstract_eval(
    *avals: Any, op: Any, backend: Any, attrs: tuple, batch_rank: int, batch_mask: tuple, kept: bool
) -> list:
    shapes = [tuple(a.shape) for a in avals]
    extents = batch_extents(op, shapes, batch_rank, batch_mask)
    core = [split_batch(s, m)[1] for s, m in zip(shapes, batch_mask)]
    outs = out_shapes(op, core, [a.dtype for a in avals], dict(attrs), batch=extents)
    shardings = _sharding.out_shardings(op, avals, [s for s, _ in outs], batch_rank, batch_mask)
    if shardings is None:
        return [ShapedArray(shape, dtype) for shape, dtype in outs]
    return [ShapedArray(shape, dtype, sharding=s) for (shape, dtype), s in zip(outs, shardings)]


# ---- lowering -------------------------------------------------------------------------


def ffi_body(
    op: Any, backend: Any, attrs: tuple, batch_rank: int, batch_mask: tuple, kept: bool, avals_out: Sequence
) -> Callable:
    """The call itself, for the shapes of `avals_out`: a jax.ffi.ffi_call of the op's target.
    A `kept` call (opspec/_derivatives.py) is a custom call with a side effect, which XLA
    runs even where its outputs are not used."""
    target = _runtime.target_name(op, backend)
    extra = dict(attrs)
    if op.fingerprint:  # checked by the handler: an export made before the kernel changed fails
        extra["opspec_kernel"] = op.fingerprint
    if batch_rank:
        extra["opspec_batch"] = np.array((batch_rank, *batch_mask), dtype=np.int64)
    call = jax.ffi.ffi_call(
        target,
        [jax.ShapeDtypeStruct(a.shape, a.dtype) for a in avals_out],
        input_output_aliases=op.aliases or None,
        has_side_effect=kept,
    )
    return lambda *args: call(*args, **extra)


def _lowering(ctx: Any, *args: Any, **params: Any) -> Any:
    body = _sharding.partitioned(ctx, params, ffi_body(**params, avals_out=ctx.avals_out))
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
    extents = batch_extents(op, [tuple(x.shape) for x in new_args], batch_rank + 1, tuple(new_mask))
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
