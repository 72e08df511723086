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
- a symbol the spec's ``halo:`` names passes through too, and each device runs the op on
  its block extended by its neighbours' edges (opspec/_halo.py: collective-permutes);
- every other dim (an undeclared symbol, even one that passes unchanged from an input to
  an output, one an output shape expression reads, a fixed extent) is replicated: XLA
  gathers it before the call, and the result is the unsharded call's;
- a symbol twice in one array (``A: [n, n]``, a Gram output ``[m, m]``) is replicated
  in every array, each of its dims a factor of its own (one factor twice in one value is
  an error in Shardy).

Only the extents of the dims actually sharded decide: an input dim sharded over mesh
axes that do not divide its extent (30 elements over 4 devices) is gathered, and only
that dim (the op never sees a padded shard); a declared dim that a mesh axis does not
divide but part of it does is replicated in the rule (see rule()). Before jax 0.10 a
call with any such input extent is lowered without the rule, as a plain custom call that
XLA replicates (see _OLD_PARTITIONER). Each gather of a sharded input warns, once per
op, shapes and reason, with a ShardingWarning that says why (gathers()).

The same rule serves both partitioners: as a Shardy ``sharding_rule`` (the default from
jax 0.7) and as the GSPMD callbacks ``infer_sharding_from_operands`` and ``partition``.
On one device, inside ``shard_map``, and under ``jax.export`` (which cannot serialize
custom_partitioning's callbacks), the call is lowered as it is.

A false ``independent:`` (a stencil, a prefix sum, a softmax declared independent along
the dim it reads across) gives wrong sharded results; ``opspec.testing.check_op`` finds
it on one device by calling the op on pieces of each declared dim.
"""

from __future__ import annotations

import dataclasses
import inspect
import math
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import jax
import numpy as np

from opspec import _halo
from opspec._jax_private import CAN_DECODE, ShapedArray, custom_partitioning, lowering_axis_context, mesh_sharding
from opspec._spec import Array, Op, OpError


@dataclasses.dataclass
class Rule:
    inputs: list  # per input, a factor name per dim
    outputs: list  # per output, a factor name per dim
    passthrough: set  # factors that may stay sharded
    reduced: dict = dataclasses.field(default_factory=dict)  # factor -> "sum", "max", "min"
    extents: dict = dataclasses.field(default_factory=dict)  # factor -> its global extent
    uneven: set = dataclasses.field(default_factory=set)  # declared shardable, replicated for its extent
    names: dict = dataclasses.field(default_factory=dict)  # factor -> what it is, for messages
    halo: dict = dataclasses.field(default_factory=dict)  # pass-through factor -> (before, after): _halo.py
    op: str = ""  # the op, for messages

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
    axis_sizes: tuple = (),
) -> Rule:
    """The rule for a call with these (global) shapes on `devices` devices, over mesh
    axes of `axis_sizes` (one axis of `devices` if not given)."""
    counter = iter(range(1 << 30))
    # A symbol twice in one array (a square `A: [n, n]`, a Gram output `[m, m]`) cannot
    # name one factor: Shardy refuses a factor used twice by one value. Each of its dims,
    # in every array, is a factor of its own, never shardable: always replicated.
    repeated = {d for spec in (*op.inputs, *op.outputs) for d in _twice(spec.shape)}
    symbols = {d for spec in op.inputs for d in spec.shape if isinstance(d, str)} - repeated
    ellipsis_rank = 0

    names: dict = {}

    def factor(dim: Any) -> str:
        if isinstance(dim, str) and dim in symbols:
            names[f"s_{dim}"] = f"'{dim}'"
            return f"s_{dim}"
        f = f"f{next(counter)}"
        if dim in repeated:
            names[f] = f"'{dim}', twice in one array"
        else:
            names[f] = f"fixed {dim}" if isinstance(dim, int) else f"'{dim}'"
        return f

    def core(spec: Array, rank: int) -> list:
        nonlocal ellipsis_rank
        lead = spec.lead(rank)
        if spec.has_ellipsis:
            ellipsis_rank = lead
        factors = [f"e{j}" for j in range(lead)]
        return factors + [factor(dim) for dim in spec.fixed]

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
            else:
                factors.append(factor(dim))
        outputs.append(factors)
    names.update({f"e{j}": f"'...' dim {j}" for j in range(ellipsis_rank)})
    names.update({f"b{k}": f"vmap batch dim {k}" for k in range(batch_rank)})
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
    # Only the extents of the dims actually sharded decide, and the partition callback
    # sees those (axes_of replicates one its mesh axes do not divide: the op never sees a
    # padded shard). Shardy, though, shards an extent that a mesh axis does not divide
    # but a part of it does (26 over an axis of 4: a sub-axis of 2) over that part, which
    # custom_partitioning cannot hand to the callback ("shape=[2, 2] is incompatible with
    # mesh_shape"): such a factor is replicated in the rule, the others keep their
    # shardings. Before jax 0.10, every extent the device count does not divide is.
    if _OLD_PARTITIONER:
        uneven = {f for f, e in extents.items() if devices > 1 and e % devices}
    else:
        uneven = {f for f, e in extents.items() if any(1 < math.gcd(e, n) < n for n in axis_sizes or (devices,))}
    uneven &= passthrough | set(reduced)
    passthrough -= uneven
    reduced = {f: how for f, how in reduced.items() if f not in uneven}
    # An aliased pair has one shape in the spec, so the same factors: one sharding.
    return Rule(inputs, outputs, passthrough, reduced, extents, uneven, names, halo, f"{op.package}.ops.{op.name}")


def _twice(shape: Sequence) -> set:
    """The symbols `shape` names more than once."""
    names = [d for d in shape if isinstance(d, str)]
    return {d for d in names if names.count(d) > 1}


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
    sizes = tuple(int(n) for n in getattr(mesh, "axis_sizes", ()))
    r = rule(op, [tuple(a.shape) for a in avals_in], out_shapes, batch_rank, batch_mask, mesh.size, sizes)
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


def _axis_sizes(ctx: Any, devices: int) -> tuple:
    """The sizes of the mesh axes the call is partitioned over (jit's abstract mesh, or
    shard_map's mesh); one axis of all `devices` where the lowering names none."""
    axis_context = lowering_axis_context(ctx)
    mesh = getattr(axis_context, "mesh", None) or getattr(axis_context, "abstract_mesh", None)
    sizes = getattr(mesh, "axis_sizes", None)
    if sizes is None:
        sizes = tuple(dict(getattr(mesh, "shape", {}) or {}).values())
    return tuple(int(n) for n in sizes) or (devices,)


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


class ShardingWarning(UserWarning):
    """An opspec op's call gathers an input dim that the computation shards, or runs
    replicated, and why (docs/transformations.md, "When a call gathers"). Issued once per
    op, input shapes and reason; ``warnings.filterwarnings("error", category=
    opspec.ShardingWarning)`` makes each such gather an error."""


EXPORT_GATHERS = (
    "jax.export cannot serialize the sharding rule (custom_partitioning's Python callbacks), so the "
    "exported call runs replicated: XLA gathers every sharded input and each device runs the whole "
    "call, with the unsharded result. To export it sharded, call the op inside jax.shard_map, where "
    "each device calls it on its own shard"
)

_WARNED: set = set()

# An operand's sharding that no PartitionSpec of the mesh says (over part of an axis).
PART_OF_AN_AXIS = object()


def _warn(op: Op, key: tuple, message: str) -> None:
    """Warns `message` about `op`, once per op and `key` (its shapes and reason)."""
    key = (op.package, op.name, key)
    if key in _WARNED:
        return
    _WARNED.add(key)
    warnings.warn(f"{op.package}.ops.{op.name}: {message}", ShardingWarning, stacklevel=3)


def gathers(op: Op, r: Rule, shardings: Sequence, found: dict, reduce: bool = True) -> list:
    """Why each input dim that `shardings` shard is gathered before the call: every dim
    sharded over mesh axes of more than one device that `found` (the factors that stay
    sharded, axes_of) does not keep on those axes. An input with no elements is left
    out: gathering it moves nothing (a halo dim of extent 0 is not split, but there is no
    block to be too narrow for its radius)."""
    out = []
    for spec, factors, sharding in zip(op.inputs, r.inputs, shardings):
        pspec = getattr(sharding, "spec", None)
        if sharding is PART_OF_AN_AXIS:
            out.append(
                f"input '{spec.name}' is sharded over part of a mesh axis (jax's choice for an extent the "
                "axis does not divide) but gathered before the call: the op is only handed whole mesh axes"
            )
        if pspec is None or any(r.extents.get(f) == 0 for f in factors):
            continue
        mesh_shape = dict(getattr(getattr(sharding, "mesh", None), "shape", {}) or {})
        for dim, (f, axes) in enumerate(zip(factors, tuple(pspec))):
            names = () if axes is None else axes if isinstance(axes, tuple) else (axes,)
            parts = int(np.prod([mesh_shape.get(n, 1) for n in names], dtype=np.int64))
            if parts <= 1 or found.get(f) == axes:
                continue
            what = f"input '{spec.name}' dim {dim} ({r.names.get(f, f)}, extent {r.extents.get(f)})"
            out.append(
                f"{what} is sharded over {axes} but gathered before the call: {_reason(r, f, parts, found, reduce)}"
            )
    return out


def _reason(r: Rule, f: str, parts: int, found: dict, reduce: bool) -> str:
    if f in r.reduced and not reduce:
        return f"jax {jax.__version__} cannot all-reduce a partition under explicit sharding"
    if f in r.uneven:
        return "a mesh axis does not divide its extent, and jax cannot hand the op a shard over part of an axis"
    if r.shardable(f):
        if r.extents.get(f, 0) % parts:
            return f"its {parts} shards would be padded, and the op never sees padding (an extent {parts} divides stays sharded)"
        if not _halo.fits(r, f, parts):
            return _halo.too_narrow(r, f, parts)
        if f in found:
            return f"another input shards it over {found[f]}, and one sharding serves the call"
        return "its mesh axes shard another dim of the call already"
    if "twice" in r.names.get(f, ""):
        return "a symbol twice in one array is always replicated"
    if f.startswith(("s_", "e")):
        return "the spec declares it in neither `independent:` nor `reduce:`, so the op may read across it"
    return "a fixed extent, or a symbol in no input, is always replicated"


def _for_export(ctx: Any) -> bool:
    """Whether jax.export is lowering the computation."""
    params = getattr(getattr(ctx, "module_context", None), "lowering_parameters", None)
    return bool(getattr(params, "for_export", False))


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
        _axis_sizes(ctx, devices),
    )
    shapes = tuple(tuple(a.shape) for a in ctx.avals_in)
    if _for_export(ctx):
        # Lowered as a plain custom call, which both partitioners replicate (the unsharded
        # call, on whole arrays, wherever the operands were sharded): jax.export cannot
        # serialize custom_partitioning, whose partition callback is a Python object the
        # module keeps alive ("serialization of host_callbacks is not yet implemented").
        _warn(op, ("export", shapes), f"exported for {devices} devices with inputs {list(shapes)}: {EXPORT_GATHERS}")
        return body
    if _OLD_PARTITIONER and (r.uneven or any(e > 1 and e % devices for e in r.extents.values())):
        # Lowered as a plain custom call, which both partitioners replicate.
        _warn(
            op,
            ("old jax", shapes),
            f"inputs {list(shapes)} on {devices} devices: the call runs replicated (any sharded input "
            f"is gathered first): jax {jax.__version__} cannot partition it when {devices} devices do "
            "not divide one of its extents; jax 0.10 and later can",
        )
        return body

    def decoded(mesh: Any, arg_shapes: Any) -> list:
        # The callbacks get HLO shardings (decode_shardings=False): jax's own decoding
        # raises inside XLA's compile on a shard over part of a mesh axis; here that
        # operand is PART_OF_AN_AXIS, and gathered.
        out = []
        for a in arg_shapes:
            try:
                out.append(mesh_sharding(a.sharding, mesh, len(a.shape)) if CAN_DECODE else a.sharding)
            except ValueError:
                out.append(PART_OF_AN_AXIS)
        return out

    def infer(mesh: Any, arg_shapes: Any, result_shape: Any) -> Any:
        found = axes_of(r, decoded(mesh, arg_shapes))
        return tuple(jax.sharding.NamedSharding(mesh, spec_of(fs, found)) for fs in r.outputs)

    fn = custom_partitioning(lambda *args: tuple(body(*args)))
    # jax before 0.6 has no need_replication_factors (nor Shardy on by default): there the
    # GSPMD callbacks alone partition, and a rule that could not say "replicate" is left out.
    shardy = "need_replication_factors" in inspect.signature(fn.def_partition).parameters
    # jax 0.5 cannot lower the psum of a partition under explicit sharding ("Unsupported
    # reduction computation"): reduced symbols are replicated there.
    explicit = any(_explicit(getattr(getattr(a, "sharding", None), "mesh", None)) for a in ctx.avals_in)
    reduce = shardy or not explicit

    def kept(shardings: list) -> dict:
        """factor -> mesh axes, for the factors that stay sharded in this call."""
        found = axes_of(r, shardings)
        if not reduce:
            found = {f: axes for f, axes in found.items() if f not in r.reduced}
        return found

    def partition(mesh: Any, arg_shapes: Any, result_shape: Any) -> Any:
        shardings = decoded(mesh, arg_shapes)
        for message in gathers(op, r, shardings, kept(shardings), reduce):
            _warn(op, (shapes, message), message)
        try:
            return split(mesh, arg_shapes)
        except Exception as e:  # raised inside XLA's compile: say which op and inputs
            placed = ", ".join(
                f"input '{spec.name}' {tuple(a.shape)} as {getattr(a.sharding, 'spec', a.sharding)}"
                for spec, a in zip(op.inputs, arg_shapes)
            )
            raise OpError(f"{op.package}.ops.{op.name}: cannot shard the call ({placed}): {e}") from e

    def split(mesh: Any, arg_shapes: Any) -> Any:
        found = kept(decoded(mesh, arg_shapes))
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
    fn.def_partition(
        partition=partition, infer_sharding_from_operands=infer, decode_shardings=not CAN_DECODE, **rule_args
    )
    return lambda *args: list(fn(*args))
