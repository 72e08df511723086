"""JVP and transpose rules from a spec's ``derivatives:`` (docs/gradients.md).

For each input with a nonzero tangent, the spec says how it moves the outputs:
- ``elementwise``: the local derivative d out / d input; out's tangent gains
  ``formula * input_dot``;
- ``jvp``: out's tangent gains the formula, written in terms of ``<input>_dot``;
- ``transpose``: the op is linear in the input, so its tangent is the op itself applied
  to ``<input>_dot``, and reverse mode uses the formula: the input's cotangent from the
  outputs' cotangents ``<output>_bar``;
- ``linear`` (``linear: halo``): as ``transpose``, and the transpose is derived from the
  op itself along its ``halo:`` (_halo_transpose.py), the mirrored radius.

Formulas are jnp expressions and calls of ops, so what they compute is differentiable
and batchable again: ``jax.hessian``, ``vmap(grad)`` and ``grad(vmap)`` compose. A
primitive bound with batch dims (``grad`` of ``vmap``) differentiates as ``jax.vmap`` of
the unbatched rule, so a formula always sees one batch element, shaped as in the spec.
"""

from __future__ import annotations

import importlib
import math
import sys
from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from opspec import _halo_transpose
from opspec._bind import bind, split_batch
from opspec._jax_private import ShapedArray, Tracer, ad, tangent_zero
from opspec._spec import Op, fail

# The modules a formula reads by name, besides the op's `ops`; opspec-gen checks the
# names a formula reads against the same list (generator/spec_derivs.c).
_MODULES = {"jnp": jnp, "lax": lax, "jax": jax, "np": np}
FORMULA_MODULES = (*_MODULES, "ops")


def _zero(x: Any) -> Any:
    return tangent_zero(x)


def _is_zero(t: Any) -> bool:
    return type(t) is ad.Zero


def _scope(op: Op, attrs: tuple, values: dict) -> dict:
    """The names a formula may read: FORMULA_MODULES, the attributes, the shape symbols
    (the Binding of the inputs in `values`) and the arrays `values`."""
    package_ops = f"{op.package}.ops"
    scope = dict(_MODULES, ops=sys.modules.get(package_ops) or importlib.import_module(package_ops))
    inputs = [values[spec.name] for spec in op.inputs]
    binding = bind(op, [tuple(x.shape) for x in inputs], [x.dtype for x in inputs], dict(attrs))
    scope.update(binding.attrs)
    scope.update(binding.symbols)
    scope.update(values)
    return scope


def _array(x: Any) -> Any:
    """A formula's view of a value: a constant becomes a jax array, so every formula sees
    one kind of array (jax 0.8 hands rules constants as TypedNdArray, which has no unary
    minus)."""
    return x if isinstance(x, Tracer) else jnp.asarray(x)


def _params(formula: Any) -> tuple:
    """The names a generated formula (a lambda of the names it reads) takes."""
    return formula.__code__.co_varnames[: formula.__code__.co_argcount]


def _with_lets(op: Any, input: str, names: tuple, scope: dict) -> dict:
    """`scope` with the values of the `let:` names that `names` read, directly or through
    other lets, each computed once, in the spec's order. A let that fails while JAX traces
    it is reported naming the op, the input whose derivative needed it and where the spec
    wrote it."""
    lets = op.derivative_lets
    needed = set(names)
    for name, formula, _ in reversed(lets):
        if name in needed:
            needed.update(_params(formula))
    scope = dict(scope)
    for name, formula, where in lets:
        if name not in needed:
            continue
        try:
            scope[name] = formula(**{n: scope[n] for n in _params(formula)})
        except Exception as e:
            fail(
                op,
                f"input '{input}'",
                f"let '{name}' ({where}) of its derivative failed while JAX traced it: {type(e).__name__}: {e}",
                cause=e,
            )
    return scope


def _evaluate(op: Any, input: str, d: Any, key: str, scope: dict, then: Any) -> Any:
    """`then` of formula `key` of input `input`'s derivative `d`, evaluated on `scope`
    (`then` fits the value to the output's or the input's shape). A formula that fails
    while JAX traces it (a misspelt jnp function, a value of the wrong shape) is reported
    naming the op, the input, the output it is about and where the spec wrote it."""
    formula = d.formulas[key]
    names = _params(formula)
    if op.derivative_lets:
        scope = _with_lets(op, input, names, scope)
    try:
        return then(formula(**{n: scope[n] for n in names}))
    except Exception as e:
        about = "" if d.kind == "transpose" else f" of output '{key}'"
        where = d.where.get(key)
        fail(
            op,
            f"input '{input}'",
            f"its {d.kind} derivative{about}{f' ({where})' if where else ''} failed while JAX traced it: "
            f"{type(e).__name__}: {e}",
            cause=e,
        )


def _checked(op: Any) -> bool:
    """Whether the op's call validates an input's contents (a `check:`)."""
    return any(spec.check is not None for spec in op.inputs)


def _tied(values: list, to: list) -> list:
    """`values`, made to depend on `to` for XLA: whatever uses them keeps `to` computed.

    The call of an op with `check:` inputs is what validates them (the handler's scans,
    opspec_reject() in the body). A derivative may not need its outputs (csr_matvec's
    data gradient is a jnp gather of x by indices), and XLA would then drop the call and
    its checks. The derivative rules read the inputs through an optimization barrier
    together with the call's outputs, so a gradient that reads them runs the call."""
    tied, _ = lax.optimization_barrier((list(values), list(to)))
    return tied


def _batch_axes(batch_mask: tuple, level: int) -> list:
    return [0 if m >> level & 1 else None for m in batch_mask]


# ---- forward mode ---------------------------------------------------------------------


def jvp(p: Any, primals: Sequence, tangents: Sequence, **params: Any) -> tuple[list, list]:
    batch_rank, batch_mask = params["batch_rank"], params["batch_mask"]
    if batch_rank == 0:
        return _jvp_one(p, list(primals), list(tangents), **params)
    op = params["op"]
    live = [i for i, t in enumerate(tangents) if not _is_zero(t)]
    one_params = dict(params, batch_rank=0, batch_mask=(0,) * len(op.inputs))
    nonzero: list = []  # which outputs have a tangent, found while tracing the element

    def element(prims: list, tans: list) -> tuple:
        full = [_zero(x) for x in prims]
        for i, t in zip(live, tans):
            full[i] = t
        outs, touts = _jvp_one(p, prims, full, **one_params)
        nonzero[:] = [j for j, t in enumerate(touts) if not _is_zero(t)]
        return outs, [touts[j] for j in nonzero]

    fn = element
    for level in reversed(range(batch_rank)):
        axes = _batch_axes(batch_mask, level)
        fn = jax.vmap(fn, in_axes=(axes, [axes[i] for i in live]), out_axes=0)
    outs, touts = fn(list(primals), [tangents[i] for i in live])
    full_touts = [_zero(o) for o in outs]
    for j, t in zip(nonzero, touts):
        full_touts[j] = t
    return list(outs), full_touts


def _jvp_one(
    p: Any, primals: list, tangents: list, *, op: Any, attrs: tuple, kept: bool, **params: Any
) -> tuple[list, list]:
    outs = p.bind(*primals, op=op, attrs=attrs, kept=kept or _checked(op), **params)
    if _checked(op):
        primals = _tied(list(map(_array, primals)), outs)
    values = {spec.name: _array(x) for spec, x in zip(op.inputs, primals)}
    values.update({spec.name: _array(y) for spec, y in zip(op.outputs, outs)})
    touts: list = [None] * len(outs)

    def add(j: int, t: Any) -> None:
        t = jnp.broadcast_to(t, outs[j].shape).astype(outs[j].dtype)
        t = _typed(op, f"output '{op.outputs[j].name}'", t, getattr(outs[j], "aval", None))
        touts[j] = t if touts[j] is None else touts[j] + t

    for spec, t in zip(op.inputs, tangents):
        if _is_zero(t):
            continue
        d = op.derivatives.get(spec.name)
        if d is None:
            fail(
                op,
                f"input '{spec.name}'",
                "cannot be differentiated: the spec declares no derivative for it "
                "(add one under `derivatives:`, docs/gradients.md, or stop the gradient with jax.lax.stop_gradient)",
            )
        scope = _scope(op, attrs, dict(values, **{f"{spec.name}_dot": t}))
        index = {o.name: j for j, o in enumerate(op.outputs)}
        if d.kind == "elementwise":
            for out in d.formulas:
                _evaluate(op, spec.name, d, out, scope, lambda v, j=index[out], t=t: add(j, v * t))
        elif d.kind == "jvp":
            for out in d.formulas:
                _evaluate(op, spec.name, d, out, scope, lambda v, j=index[out]: add(j, v))
        else:  # transpose, linear: linear in this input, so its tangent is the op of the tangent
            args = [t if other is spec else x for other, x in zip(op.inputs, primals)]
            for j, y in enumerate(p.bind(*args, op=op, attrs=attrs, kept=False, **params)):
                add(j, y)
    return list(outs), [_zero(y) if t is None else t for y, t in zip(outs, touts)]


# ---- reverse mode ---------------------------------------------------------------------


def transpose(p: Any, cts: Sequence, *args: Any, **params: Any) -> list:
    op = params["op"]
    out = _transpose(p, cts, *args, **params)
    return [
        None if ct is None else _typed(op, f"input '{spec.name}'", ct, x.aval)
        for spec, x, ct in zip(op.inputs, args, out)
    ]


def _typed(op: Op, what: str, t: Any, aval: Any) -> Any:
    """`t` with the sharding of `aval`'s type, under explicit sharding (where types carry
    shardings and JAX requires a cotangent's or tangent's to be its primal's): a formula
    such as `jnp.broadcast_to(out_bar[0], x.shape)` gives a replicated array for an input
    sharded along its rows. Elsewhere `t` as it is."""
    sharding: Any = getattr(aval, "sharding", None)
    mesh = getattr(sharding, "mesh", None)
    explicit = any(str(a).endswith("Explicit") for a in getattr(mesh, "axis_types", ()))
    have = getattr(getattr(t, "aval", None), "sharding", None)
    if not explicit or getattr(have, "spec", None) == sharding.spec or not hasattr(jax.sharding, "reshard"):
        return t
    try:
        return jax.sharding.reshard(t, sharding)  # a NamedSharding: a bare spec needs a mesh context
    except Exception as e:  # noqa: BLE001  (JAX's own would name neither op nor input)
        fail(
            op,
            what,
            f"its derivative has sharding {getattr(have, 'spec', have)}, and cannot be resharded to {sharding.spec}: {e}",
            e,
        )


def _transpose(p: Any, cts: Sequence, *args: Any, **params: Any) -> list:
    op, batch_rank, batch_mask = params["op"], params["batch_rank"], params["batch_mask"]
    cts = [ad.instantiate_zeros(ct) for ct in cts]
    one = dict(params, batch_rank=0, batch_mask=(0,) * len(op.inputs), kept=False)
    call = lambda *xs: p.bind(*xs, **one)  # noqa: E731  (the op, unbatched: _halo_transpose)
    if batch_rank == 0:
        return _transpose_one(op, params["attrs"], cts, list(args), call)
    undefined = [i for i, x in enumerate(args) if ad.is_undefined_primal(x)]
    known = [i for i, x in enumerate(args) if not ad.is_undefined_primal(x)]

    # One batch level at a time, innermost first: each strips its dim from the arrays that
    # carry it, and sums the cotangent of an input that does not carry it.
    def lift(fn: Any, level: int) -> Any:
        axes = _batch_axes(batch_mask, level)
        vf = jax.vmap(fn, in_axes=([0] * len(cts), [axes[i] for i in known]), out_axes=0)

        def g(cts: list, knowns: list) -> list:
            outs = vf(cts, knowns)
            return [o if batch_mask[i] >> level & 1 else o.sum(0) for i, o in zip(undefined, outs)]

        return g

    def base(cts: list, knowns: list) -> list:
        it = iter(knowns)
        full = []
        for i, x in enumerate(args):
            if i in known:
                full.append(next(it))
            else:
                _, core = split_batch(tuple(x.aval.shape), batch_mask[i])
                full.append(ad.UndefinedPrimal(ShapedArray(core, x.aval.dtype)))
        return [r for r in _transpose_one(op, params["attrs"], cts, full, call) if r is not None]

    fn = base
    for level in reversed(range(batch_rank)):
        fn = lift(fn, level)
    results = fn(cts, [args[i] for i in known])
    out: list = [None] * len(args)
    for i, r in zip(undefined, results):
        out[i] = r
    return out


def _transpose_one(op: Any, attrs: tuple, cts: list, args: list, call: Any) -> list:
    values: dict = {}
    for spec, x in zip(op.inputs, args):
        # An input being transposed has no value, only its shape and dtype.
        values[spec.name] = jax.ShapeDtypeStruct(x.aval.shape, x.aval.dtype) if ad.is_undefined_primal(x) else _array(x)
    values.update({f"{spec.name}_bar": _array(ct) for spec, ct in zip(op.outputs, cts)})
    out: list = []
    for spec, x in zip(op.inputs, args):
        if not ad.is_undefined_primal(x):
            out.append(None)
            continue
        d = op.derivatives.get(spec.name)
        if d is not None and d.kind == "linear":  # derived from the op itself
            out.append(_halo_transpose.derive(op, len(out), call, [values[s.name] for s in op.inputs], cts))
            continue
        if d is None or d.kind != "transpose":
            fail(
                op,
                f"input '{spec.name}'",
                "cannot be transposed: reverse mode needs a `transpose:` (or, for a stencil, `linear: halo`) "
                "derivative for it (docs/gradients.md)",
            )
        aval = x.aval

        def fit(ct: Any, aval: Any = aval) -> Any:
            ct = jnp.asarray(ct)
            sizes = (ct.size, math.prod(aval.shape))
            if all(isinstance(n, int) for n in sizes) and sizes[0] != sizes[1]:  # symbolic: left to reshape
                raise ValueError(f"the cotangent has shape {ct.shape}, expected the input's {aval.shape}")
            return ct.astype(aval.dtype).reshape(aval.shape)

        out.append(_evaluate(op, spec.name, d, spec.name, _scope(op, attrs, values), fit))
    known = [_array(x) for x in args if not ad.is_undefined_primal(x)]
    if _checked(op) and known:
        # The inputs the JVP rule tied to the call: a cotangent depends on them even when
        # its formula reads none of them, so it never runs without the call's checks.
        ready = _tied([ct for ct in out if ct is not None], known)
        out = [None if ct is None else ready.pop(0) for ct in out]
    return out
