"""Sharding rules derived from the spec (docs/transformations.md, "Sharding").

When a computation spans several devices, an op's lowering wraps its call in
``jax.experimental.custom_partitioning`` with a rule read off the spec:

- a symbol the spec's ``independent:`` names (the ``...`` group when it names ``...``),
  and every native-batching dim, is *pass-through*: an input sharded along it stays
  sharded, each device runs the op on its shard, and the output comes out sharded the
  same way, with no all-gather. The spec's author declares it, because shapes cannot
  say it: ``x: [n] -> y: [n]`` is a sigmoid or a cumulative sum alike, and only the
  sigmoid's outputs at a position depend on the inputs at that position alone;
- a symbol the spec's ``reduce:`` names (contracted: in no output) is a *reduction*: an
  input sharded along it stays sharded (the other inputs with that symbol are sharded
  the same way), each device runs the op on its shards, and the outputs are combined
  across those devices with the declared ``psum``, ``pmax`` or ``pmin``;
- every other dim (an undeclared symbol, even one that passes unchanged from an input to
  an output, one an output shape expression reads, a fixed extent) is replicated: XLA
  gathers it before the call, and the result is the unsharded call's.

A call where a pass-through or reduced dim has an extent the device count does not
divide (30 elements over 4 devices) is lowered without the rule, as a plain custom call
that XLA replicates: the op never sees a padded shard, and the result is the unsharded
call's (before jax 0.10, any such input extent; see _OLD_PARTITIONER).

The same rule serves both partitioners: as a Shardy ``sharding_rule`` (the default from
jax 0.7) and as the GSPMD callbacks ``infer_sharding_from_operands`` and ``partition``.
On one device, or inside ``shard_map``, the call is lowered as it is.

A false ``independent:`` (a stencil, a prefix sum, a softmax declared independent along
the dim it reads across) gives wrong sharded results; ``opspec.testing.check_op`` finds
it on one device by calling the op on pieces of each declared dim.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable, Sequence
from typing import Any

import jax
import numpy as np

from opspec import _halo
from opspec._jax_private import ShapedArray, custom_partitioning, lowering_axis_context
from opspec._spec import Array, Op, OpError


@dataclasses.dataclass
class Rule:
    inputs: list  # per input, a factor name per dim
    outputs: list  # per output, a factor name per dim
    passthrough: set  # factors that may stay sharded
    reduced: dict = dataclasses.field(default_factory=dict)  # factor -> "sum", "max", "min"
    extents: dict = dataclasses.field(default_factory=dict)  # factor -> its global extent
    uneven: set = dataclasses.field(default_factory=set)  # shardable, but the device count does not divide it
    halo: dict = dataclasses.field(default_factory=dict)  # pass-through factor -> (before, after): _halo.py
    op: str = ""  # the op, for warnings

    def shardable(self, f: str) -> bool:
        return f in self.passthrough or f in self.reduced

    def text(self) -> str:
        def side(arrays: list) -> str:
            return ", ".join(" ".join(f) if f else "" for f in arrays)

        return f"{side(self.inputs)} -> {side(self.outputs)}"

    def replicated(self) -> tuple:
        # In the order factors first appear in the rule: Shardy wants them sorted so.
        order = list(dict.fromkeys(f for fs in self.inputs + self.outputs for f in fs))
        return tuple(f for f in order if not self.shardable(f))

    def reduction(self) -> tuple:
        order = list(dict.fromkeys(f for fs in self.inputs for f in fs))
        return tuple(f for f in order if f in self.reduced)


def rule(
    op: Op,
    in_shapes: Sequence[tuple],
    out_shapes: Sequence[tuple],
    batch_rank: int,
    batch_mask: tuple,
    devices: int = 1,
) -> Rule:
    """The rule for a call with these (global) shapes on `devices` devices."""
    counter = iter(range(1 << 30))
    symbols = {d for spec in op.inputs for d in spec.shape if isinstance(d, str)}
    ellipsis_rank = 0

    def core(spec: Array, rank: int) -> list:
        nonlocal ellipsis_rank
        lead = spec.lead(rank)
        if spec.has_ellipsis:
            ellipsis_rank = lead
        factors = [f"e{j}" for j in range(lead)]
        for dim in spec.fixed:
            factors.append(f"s_{dim}" if isinstance(dim, str) and dim in symbols else f"f{next(counter)}")
        return factors

    inputs = []
    for spec, shape, mask in zip(op.inputs, in_shapes, batch_mask):
        nb = bin(mask).count("1")
        inputs.append([f"b{k}" for k in range(batch_rank) if mask >> k & 1] + core(spec, len(shape) - nb))
    outputs = []
    for spec in op.outputs:  # an output's rank follows from its spec and the '...' group
        factors = [f"b{k}" for k in range(batch_rank)]
        for dim in spec.shape:
            if dim is Ellipsis:
                factors += [f"e{j}" for j in range(ellipsis_rank)]
            elif isinstance(dim, str) and dim in symbols:
                factors.append(f"s_{dim}")
            else:
                factors.append(f"f{next(counter)}")
        outputs.append(factors)
    in_factors = {f for fs in inputs for f in fs}
    out_factors = {f for fs in outputs for f in fs}
    declared = set(op.independent)

    def declared_independent(f: str) -> bool:
        # A batch element never reads another; a symbol only where the spec says so.
        if f.startswith("b"):
            return True
        if f.startswith("e"):
            return "..." in declared
        return f.startswith("s_") and f[2:] in declared

    passthrough = {f for f in in_factors & out_factors if declared_independent(f)}
    halo = _halo.factors(op, in_factors & out_factors)
    passthrough |= set(halo)
    # A reduction is a symbol in no output (the generator checks the spec says so); the
    # '...' group reduces as a whole.
    reduced = {}
    for symbol, how in op.reduce.items():
        for f in in_factors - out_factors:
            if f == f"s_{symbol}" or (symbol == "..." and f.startswith("e")):
                reduced[f] = how
    extents = {f: int(d) for fs, shape in zip(inputs, in_shapes) for f, d in zip(fs, shape)}
    # An extent the device count does not divide is replicated, whatever mesh axes would
    # shard it: the op must never see a padded shard, and Shardy would otherwise pick a
    # sub-axis that divides it, which older jax cannot hand to the partition callback.
    uneven = {f for f, e in extents.items() if devices > 1 and e % devices and (f in passthrough or f in reduced)}
    passthrough -= uneven
    reduced = {f: how for f, how in reduced.items() if f not in uneven}
    # An aliased pair has one shape in the spec, so the same factors: one sharding.
    return Rule(inputs, outputs, passthrough, reduced, extents, uneven, halo, f"{op.package}.ops.{op.name}")


def axes_of(r: Rule, shardings: Sequence) -> dict:
    """factor -> mesh axes, from the first input that shards each pass-through factor.
    A factor whose extent those axes do not divide stays out (replicated): an uneven
    shard would be padded, and the op would see the padding as data."""
    found: dict = {}
    used: set = set()
    for factors, sharding in zip(r.inputs, shardings):
        spec = getattr(sharding, "spec", None)
        if spec is None:
            continue
        mesh_shape = dict(getattr(getattr(sharding, "mesh", None), "shape", {}) or {})
        for f, axes in zip(factors, tuple(spec) + (None,) * (len(factors) - len(spec))):
            if axes is None or not r.shardable(f) or f in found:
                continue
            names = axes if isinstance(axes, tuple) else (axes,)
            if used & set(names):
                continue  # a mesh axis shards one factor at most
            parts = int(np.prod([mesh_shape.get(n, 1) for n in names], dtype=np.int64))
            if parts > 1 and (r.extents.get(f, 0) % parts or not _halo.fits(r, f, parts)):
                continue
            found[f] = axes
            used |= set(names)
    return found


def spec_of(factors: list, found: dict) -> jax.sharding.PartitionSpec:
    return jax.sharding.PartitionSpec(*(found.get(f) for f in factors))


def out_shardings(op: Op, avals_in: Sequence, out_shapes: Sequence, batch_rank: int, batch_mask: tuple) -> Any:
    """Under explicit sharding (jax.sharding.AxisType.Explicit, the default mesh of newer
    jax), the shardings of the outputs, which types carry: each pass-through dim keeps
    its input's mesh axes. None when no input is explicitly sharded."""
    shardings = [getattr(a, "sharding", None) for a in avals_in]
    mesh = None
    for s in shardings:
        m = getattr(s, "mesh", None)
        if m is not None and _explicit(m) and not m.empty:
            mesh = m
            break
    if mesh is None:
        return None
    r = rule(op, [tuple(a.shape) for a in avals_in], out_shapes, batch_rank, batch_mask, mesh.size)
    found = axes_of(r, shardings)
    return [jax.sharding.NamedSharding(mesh, spec_of(fs, found)) for fs in r.outputs]


_COLLECTIVES = {"sum": jax.lax.psum, "max": jax.lax.pmax, "min": jax.lax.pmin}


def _explicit(mesh: Any) -> bool:
    return any(str(t).endswith("Explicit") for t in getattr(mesh, "axis_types", ()))


# Before jax 0.10, custom_partitioning cannot convert an operand sharded over a Shardy
# sub-axis (which Shardy picks for an extent the axis does not divide) and fails inside
# XLA's compile, before the partition callback could replicate it ("shape=[2, 2] is
# incompatible with mesh_shape", seen on 0.8.3). There, a call with any such extent is
# not wrapped at all.
_OLD_PARTITIONER = tuple(int(p) for p in jax.__version__.split(".")[:2]) < (0, 10)


def _devices(ctx: Any) -> int:
    """How many devices the call is partitioned over: 1 on one device, or inside a
    shard_map whose axes are all manual (the call is per-shard already)."""
    axis_context = lowering_axis_context(ctx)
    mesh = getattr(axis_context, "mesh", None)
    if mesh is not None:
        manual = set(getattr(axis_context, "manual_axes", ()))
        return 1 if manual == set(mesh.axis_names) else int(mesh.size)
    devices = getattr(axis_context, "device_assignment", None)
    return 1 if devices is None else len(devices)


def partitioned(ctx: Any, params: dict, make_body: Callable[[Sequence], Callable]) -> Callable:
    """The op's call, as a custom_partitioning op when several devices run it.
    `make_body(avals_out)` is the call for outputs of those shapes (opspec._primitive's
    ffi_body): the whole arrays' here, each shard's in the partition."""
    body = make_body(ctx.avals_out)
    devices = _devices(ctx)
    if devices <= 1:
        return body
    op = params["op"]
    r = rule(
        op,
        [tuple(a.shape) for a in ctx.avals_in],
        [tuple(a.shape) for a in ctx.avals_out],
        params["batch_rank"],
        params["batch_mask"],
        devices,
    )
    _halo.warn_uneven(r, devices)
    if r.uneven or (_OLD_PARTITIONER and any(e > 1 and e % devices for e in r.extents.values())):
        # Lowered as a plain custom call, which both partitioners replicate: the unsharded
        # call, on whole arrays, wherever the operands were sharded.
        return body

    def infer(mesh: Any, arg_shapes: Any, result_shape: Any) -> Any:
        found = axes_of(r, [a.sharding for a in arg_shapes])
        return tuple(jax.sharding.NamedSharding(mesh, spec_of(fs, found)) for fs in r.outputs)

    fn = custom_partitioning(lambda *args: tuple(body(*args)))
    # jax before 0.6 has no need_replication_factors (nor Shardy on by default): there the
    # GSPMD callbacks alone partition, and a rule that could not say "replicate" is left out.
    shardy = "need_replication_factors" in inspect.signature(fn.def_partition).parameters
    # jax 0.5 cannot lower the psum of a partition under explicit sharding ("Unsupported
    # reduction computation"): reduced symbols are replicated there.
    explicit = any(_explicit(getattr(getattr(a, "sharding", None), "mesh", None)) for a in ctx.avals_in)
    reduce = shardy or not explicit

    def partition(mesh: Any, arg_shapes: Any, result_shape: Any) -> Any:
        try:
            return split(mesh, arg_shapes)
        except Exception as e:  # raised inside XLA's compile: say which op and inputs
            placed = ", ".join(
                f"input '{spec.name}' {tuple(a.shape)} as {getattr(a.sharding, 'spec', a.sharding)}"
                for spec, a in zip(op.inputs, arg_shapes)
            )
            raise OpError(f"{op.package}.ops.{op.name}: cannot shard the call ({placed}): {e}") from e

    def split(mesh: Any, arg_shapes: Any) -> Any:
        found = axes_of(r, [a.sharding for a in arg_shapes])
        if not reduce:
            found = {f: axes for f, axes in found.items() if f not in r.reduced}
        arg_shardings = tuple(jax.sharding.NamedSharding(mesh, spec_of(fs, found)) for fs in r.inputs)
        out_shardings = tuple(jax.sharding.NamedSharding(mesh, spec_of(fs, found)) for fs in r.outputs)

        def local(shape: tuple, factors: list) -> tuple:
            out = []
            for d, f in zip(shape, factors):
                axes = found.get(f)
                names = () if axes is None else axes if isinstance(axes, tuple) else (axes,)
                out.append(d // int(np.prod([mesh.shape[n] for n in names], dtype=np.int64)))
            return tuple(out)

        local_out = [ShapedArray(local(tuple(a.shape), fs), a.dtype) for a, fs in zip(ctx.avals_out, r.outputs)]
        lower = _halo.wrap(r, found, mesh, local_out, make_body) or make_body(local_out)
        # Each sharded reduction combines every output across its mesh axes.
        combine = [(_COLLECTIVES[r.reduced[f]], found[f]) for f in r.reduction() if f in found]

        def run(*args: Any) -> tuple:
            outs = list(lower(*args))
            for collective, axes in combine:
                outs = [collective(o, axes) for o in outs]
            return tuple(outs)

        return mesh, run, out_shardings, arg_shardings

    rule_args: dict = {}
    if shardy:
        rule_args = {
            "sharding_rule": r.text(),
            "need_replication_factors": r.replicated(),
            "reduction_factors": r.reduction(),
        }
    fn.def_partition(partition=partition, infer_sharding_from_operands=infer, **rule_args)
    return lambda *args: list(fn(*args))
