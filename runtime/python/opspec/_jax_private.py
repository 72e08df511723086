"""Every piece of JAX that opspec uses outside JAX's API compatibility policy, in one place.

An opspec op is a JAX primitive with its own abstract evaluation, lowering, batching,
JVP and transpose rules, and a sharding rule; JAX offers no public API for any of these.
Each use is listed here with what it is for and the jax versions it is known to hold for:
"0.5 to 0.12.0.1" means checked in jax 0.5.3's and 0.12.0.1's sources and run by the test
suite on both (.ci/matrix runs the oldest, a middle and the newest jax). The other modules import from here and reach nothing else of
JAX's internals. When a jax release renames one of these, this is the file to change,
and CI (which turns JAX's DeprecationWarnings into errors: pyproject.toml,
[tool.pytest.ini_options]) says so before a user does.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import jax

# The primitive class that every op's primitive is an instance of (opspec._primitive). In
# jax.extend, which JAX describes as unstable API for library authors. jax 0.5 to 0.12.0.1.
from jax.extend.core import Primitive

# The MLIR Python bindings jax lowers with (jax.extend.mlir.ir, jax 0.5 to 0.12.0.1): what
# read_only_entry_argument looks at.
from jax.extend.mlir import ir as _ir

# The rule tables and helpers of JAX's transformations, internal modules re-exported under
# jax.interpreters. Holds from jax 0.5 to 0.12.0.1.
#   ad.primitive_jvps, ad.primitive_transposes: register an op's JVP and transpose rules
#     (opspec._primitive);
#   ad.Zero, ad.instantiate_zeros: symbolic zero tangents and cotangents (opspec._derivatives);
#   ad.UndefinedPrimal, ad.is_undefined_primal: which operands a transpose is taken for
#     (opspec._derivatives);
#   batching.primitive_batchers: registers an op's vmap rule (opspec._primitive);
#   mlir.register_lowering, mlir.lower_fun: lower an op to its FFI call (opspec._primitive).
from jax.interpreters import ad, batching, mlir

# The abstract value of an array (shape, dtype, and from jax 0.5 a `sharding=` keyword):
# what an op's abstract evaluation returns and the sharding rule builds per shard
# (opspec._primitive, opspec._sharding). jax.core re-exports it from jax 0.5 to 0.12.0.1.
ShapedArray = jax.core.ShapedArray

# The base class of JAX's tracers: tells a traced value from a concrete one, for values
# that must be static (attributes) and for what a derivative formula sees
# (opspec._runtime, opspec._derivatives). jax.core re-exports it from jax 0.5 to 0.12.0.1.
Tracer = jax.core.Tracer

# Imported here, not where they are used: an op's call runs no import statement of
# opspec's, for an op called while the interpreter shuts down (from a __del__), when
# Python can import nothing. custom_partitioning takes a fraction of a millisecond.
from jax.experimental.custom_partitioning import custom_partitioning as _custom_partitioning  # noqa: E402

_dispatch: Any
try:  # internal: see require_devices_during_lowering
    from jax._src import dispatch as _dispatch  # noqa: E402
except ImportError:  # pragma: no cover
    _dispatch = None

_parse_flatten_op_sharding: Any
try:  # internal: see mesh_sharding
    from jax._src.sharding_impls import parse_flatten_op_sharding as _parse_flatten_op_sharding  # noqa: E402
except ImportError:  # pragma: no cover
    _parse_flatten_op_sharding = None

__all__ = [
    "Primitive",
    "CAN_DECODE",
    "ShapedArray",
    "Tracer",
    "ad",
    "batching",
    "custom_partitioning",
    "lowering_axis_context",
    "mesh_sharding",
    "mlir",
    "read_only_entry_argument",
    "register_lowering_with_operands",
    "require_devices_during_lowering",
    "tangent_zero",
]


def tangent_zero(x: Any) -> Any:
    """The symbolic zero tangent of `x` (opspec._derivatives: an input without a tangent).
    jax.typeof is public in jax 0.5 to 0.12.0.1 (jax.core.get_aval, the fallback, is gone
    in 0.12); the aval method `to_tangent_aval` is in 0.5 to 0.12.0.1 (`at_least_vspace`,
    the fallback, is older)."""
    aval = jax.typeof(x) if hasattr(jax, "typeof") else jax.core.get_aval(x)  # type: ignore[attr-defined]
    tangent = aval.to_tangent_aval() if hasattr(aval, "to_tangent_aval") else aval.at_least_vspace()
    return ad.Zero(tangent)


def require_devices_during_lowering(p: Primitive) -> None:
    """Makes jit hand `p`'s lowering the device assignment, as it does for
    custom_partitioning, which the lowering wraps the call in on several devices
    (opspec._sharding). jax._src.dispatch.prim_requires_devices_during_lowering, a set, in
    jax 0.5 to 0.12.0.1. JAX has no public hook for it; without it, sharding falls back
    to replicated calls, still correct, so a jax without the set is not an error."""
    requires = getattr(_dispatch, "prim_requires_devices_during_lowering", None)
    if requires is not None:
        requires.add(p)


def lowering_axis_context(ctx: Any) -> Any:
    """The axis context of a lowering rule's `ctx`: inside shard_map it has `mesh` and
    `manual_axes`, under jit `device_assignment` (opspec._sharding: whether the call runs
    on several devices). LoweringRuleContext.module_context.axis_context, in jax 0.5 to
    0.12.0.1; the attributes are read with getattr, so a missing one means one device."""
    return ctx.module_context.axis_context


def custom_partitioning(fn: Callable) -> Any:
    """jax.experimental.custom_partitioning around `fn`: how an op's call shards
    (opspec._sharding). Experimental API: `def_partition` takes `sharding_rule` and
    `need_replication_factors` (Shardy) from jax 0.6 (opspec._sharding checks its
    signature), the GSPMD callbacks before; GSPMD is deprecated from jax 0.11."""
    return _custom_partitioning(fn)


def mesh_sharding(sharding: Any, mesh: Any, ndim: int) -> Any:
    """`sharding`, as custom_partitioning hands it to its callbacks with
    `decode_shardings=False` (an HLO sharding of the devices, a GSPMDSharding), as a
    NamedSharding of `mesh` (None for None). Raises ValueError where no PartitionSpec of
    `mesh`'s axes says it (Shardy shards an extent that an axis does not divide over part
    of that axis: 26 over an axis of 4, in 2 shards), on which custom_partitioning's own
    decoding raises inside XLA's compile (opspec._sharding gathers such an operand).
    Reads the private `_hlo_sharding` and jax._src.sharding_impls.
    parse_flatten_op_sharding, which custom_partitioning's own decoding calls (run here on
    jax 0.10.2 only; older versions return a ParsedPartitionSpec, converted); where the
    function is missing, CAN_DECODE is False and opspec._sharding lets custom_partitioning
    decode as before."""
    if sharding is None or isinstance(sharding, jax.sharding.NamedSharding):
        return sharding
    try:
        spec = _parse_flatten_op_sharding(getattr(sharding, "_hlo_sharding", None), mesh)[0]
        if hasattr(spec, "get_partition_spec"):  # older jax: a ParsedPartitionSpec
            spec = spec.get_partition_spec()
    except Exception as e:  # noqa: BLE001  (jax raises its own IndivisibleError)
        raise ValueError(f"{sharding} is no PartitionSpec of {mesh}: {e}") from e
    return jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec(*spec, *(None,) * (ndim - len(spec))))


# Decoded here from jax 0.10 on, where it ran; before, custom_partitioning decodes as it
# always did (the matrix's jax 0.5.3 and 0.8.3 gathered every input the other way).
CAN_DECODE = _parse_flatten_op_sharding is not None and tuple(int(p) for p in jax.__version__.split(".")[:2]) >= (0, 10)


def register_lowering_with_operands(p: Primitive, rule: Callable) -> None:
    """mlir.register_lowering(p, rule), with `rule` seeing the very values its call
    consumes (read_only_entry_argument reads them). In jax 0.8.3 and 0.10.2 (read; which
    version brought it is not known here) a primitive's lowering is cached by default:
    lowered once per shapes and parameters into a function of its own, whose block
    arguments stand for the operands, and inlined at each call; `cacheable=False` lowers
    it in place at each call instead. jax 0.5.3 has neither the cache nor the keyword."""
    if "cacheable" in inspect.signature(mlir.register_lowering).parameters:
        mlir.register_lowering(p, rule, cacheable=False)
    else:
        mlir.register_lowering(p, rule)


# The arg attributes jax sets on the entry function's donated parameters: a donated input
# matched to an output of its shape and dtype, and one that is not. Set, with the
# function's other arg attributes, before its body is lowered, in jax 0.5.3, 0.8.3,
# 0.10.2 and 0.11.1's mlir.lower_jaxpr_to_fun (read; run by tests/python/test_aliasing.py on
# 0.10.2 here, on the others by .ci/matrix).
_DONATION_ATTRS = ("tf.aliasing_output", "jax.buffer_donor")
_ENTRY_FUNCTION = "main"  # the name jax gives the lowered computation's entry, 0.5 to 0.12


def read_only_entry_argument(value: Any) -> bool:
    """Whether `value`, an operand in a lowering rule, is a parameter of the computation's
    entry function (a jitted function's argument, or a constant jax hoisted into one) that
    the caller does not donate, or a constant: memory the computation may not overwrite,
    so XLA copies it into a fresh buffer for a custom call that declares an output alias
    of it. Reads the MLIR module being built: the value's defining block, that block's
    function (`func.func @main`) and its `arg_attrs` (_DONATION_ATTRS). False wherever
    that is not known: a value computed in the computation, the argument of a loop body or
    of a nested function (`jax.jit` inside `jax.jit`, lowered as a function of its own),
    or a jax whose bindings or module differ from what is read here."""
    try:
        return _is_constant(value) or _is_undonated_entry_parameter(value)
    except Exception:  # noqa: BLE001  (an MLIR binding that differs: today's answer)
        return False


def _as_block_argument(value: Any) -> Any:
    if isinstance(value, _ir.BlockArgument):
        return value
    isa = getattr(_ir.BlockArgument, "isinstance", None)  # older (pybind11) bindings
    return _ir.BlockArgument(value) if isa is not None and isa(value) else None


def _is_constant(value: Any) -> bool:
    owner = getattr(value, "owner", None)
    return getattr(owner, "name", None) == "stablehlo.constant"


def _is_undonated_entry_parameter(value: Any) -> bool:
    arg = _as_block_argument(value)
    if arg is None:
        return False
    fn = arg.owner.owner
    fn = getattr(fn, "operation", fn)
    if fn.name != "func.func" or _ir.StringAttr(fn.attributes["sym_name"]).value != _ENTRY_FUNCTION:
        return False
    if "arg_attrs" not in fn.attributes:
        return True  # jax writes arg_attrs whenever a parameter is donated
    attrs = _ir.DictAttr(_ir.ArrayAttr(fn.attributes["arg_attrs"])[arg.arg_number])
    return not any(name in attrs for name in _DONATION_ATTRS)
