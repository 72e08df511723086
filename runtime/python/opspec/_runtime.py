"""Trace-time half of every generated op: argument checks, shapes, the FFI call.

The generated ``opspec.ops`` module describes each op with ``Op``/``Array``/``Attr``
records and calls ``call``. Everything here runs while JAX traces; the compiled
computation calls the native handler directly.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Union

import jax
import jax.numpy as jnp
import numpy as np

from opspec import _opspec, _tables

Dim = Union[int, str, "ellipsis", Callable[[dict], int]]


@dataclasses.dataclass(frozen=True)
class Array:
    name: str
    dtype: str  # a dtype name or a type variable
    shape: tuple  # of Dim


@dataclasses.dataclass(frozen=True)
class Attr:
    name: str
    type: str  # bool, int32, int64, float32, float64


@dataclasses.dataclass(frozen=True)
class Op:
    name: str
    inputs: tuple
    outputs: tuple
    types: dict
    attrs: tuple
    vmap_method: str | None
    aliases: dict  # input index -> output index


MAX_RANK = _tables.MAX_RANK


class OpError(TypeError):
    """A call that does not match the op's spec."""


def _fail(op: Op, what: str, message: str) -> None:
    raise OpError(f"opspec.ops.{op.name}: {what}: {message}")


def _check_inputs(op: Op, args: tuple) -> tuple[dict, dict, tuple | None]:
    """Checks dtypes, ranks and symbols; returns (type bindings, symbols, ellipsis)."""
    types: dict[str, np.dtype] = {}
    bound_by: dict[str, str] = {}
    symbols: dict[str, int] = {}
    symbol_from: dict[str, str] = {}
    ellipsis = None
    for spec, x in zip(op.inputs, args):
        what = f"input '{spec.name}'"
        dtype = np.dtype(x.dtype)
        if spec.dtype in op.types:
            choices = op.types[spec.dtype]
            if spec.dtype not in types:
                if dtype.name not in choices:
                    _fail(op, what, f"expected dtype {' or '.join(choices)} (type {spec.dtype}), got {dtype.name}")
                types[spec.dtype] = dtype
                bound_by[spec.dtype] = spec.name
            elif dtype != types[spec.dtype]:
                _fail(op, what, f"expected dtype {types[spec.dtype].name} (type {spec.dtype}, "
                                f"as input '{bound_by[spec.dtype]}'), got {dtype.name}")
        elif dtype.name != spec.dtype:
            _fail(op, what, f"expected dtype {spec.dtype}, got {dtype.name}")

        shape = tuple(x.shape)
        if len(shape) > MAX_RANK:
            _fail(op, what, f"rank {len(shape)} is more than the {MAX_RANK} dims opspec supports")
        has_ellipsis = bool(spec.shape) and spec.shape[0] is Ellipsis
        fixed = spec.shape[1:] if has_ellipsis else spec.shape
        if (len(shape) < len(fixed)) if has_ellipsis else (len(shape) != len(fixed)):
            want = f"at least {len(fixed)}" if has_ellipsis else f"{len(fixed)}"
            _fail(op, what, f"expected rank {want} (shape [{', '.join(map(_dim_text, spec.shape))}]), got shape {shape}")
        lead = len(shape) - len(fixed)
        if has_ellipsis:
            if ellipsis is None:
                ellipsis = shape[:lead]
            elif shape[:lead] != ellipsis:
                _fail(op, what, f"leading dims ('...') {shape[:lead]} differ from {ellipsis} of an earlier input")
        for d, dim in enumerate(fixed):
            got = shape[lead + d]
            if isinstance(dim, int):
                if got != dim:
                    _fail(op, what, f"dim {lead + d} should be {dim}, got {got} (shape {shape})")
            elif dim not in symbols:
                symbols[dim] = got
                symbol_from[dim] = spec.name
            elif symbols[dim] != got:
                _fail(op, what, f"dim {lead + d} ({dim}) is {got}, but {dim} = {symbols[dim]} "
                                f"from input '{symbol_from[dim]}' (shape {shape})")
    return types, symbols, ellipsis


def _dim_text(dim: Dim) -> str:
    return "..." if dim is Ellipsis else str(dim) if not callable(dim) else "expr"


# What each kind of attribute accepts from Python; the types and their kinds come from
# the generator's one table (_tables.ATTR_TYPES).
_ACCEPTED: dict[str, tuple[type, ...]] = {
    "bool": (bool, np.bool_),
    "int": (int, np.integer),
    "float": (float, int, np.floating, np.integer),
}
_ATTR_TYPES = {name: (np.dtype(name).type, _ACCEPTED[kind]) for name, kind in _tables.ATTR_TYPES.items()}


def _convert_attrs(op: Op, attrs: dict) -> dict:
    out = {}
    for spec in op.attrs:
        value = attrs[spec.name]
        what = f"attribute '{spec.name}'"
        if isinstance(value, jax.core.Tracer):
            _fail(op, what, f"must be a static {spec.type} value, got a traced array "
                            "(attributes are compiled into the call; pass arrays as inputs)")
        cast, accepted = _ATTR_TYPES[spec.type]
        if isinstance(value, (np.ndarray, jax.Array)) and np.ndim(value) == 0:
            value = value.item()
        if not isinstance(value, accepted) or (spec.type != "bool" and isinstance(value, (bool, np.bool_))):
            _fail(op, what, f"expected {spec.type}, got {type(value).__name__} {value!r}")
        if spec.type.startswith("int"):
            info = np.iinfo(cast)
            if not info.min <= int(value) <= info.max:
                _fail(op, what, f"{value!r} does not fit in {spec.type}")
        with np.errstate(over="ignore"):
            converted = cast(value)
        if spec.type.startswith("float") and np.isfinite(value) and not np.isfinite(converted):
            _fail(op, what, f"{value!r} does not fit in {spec.type}")
        out[spec.name] = converted
    return out


def call(op: Op, args: tuple, attrs: dict) -> Any:
    # NumPy arrays and Python scalars become JAX arrays first, so the dtype checked is the
    # one the handler will see (float64 turns float32 unless jax_enable_x64 is set).
    arrays = [x if isinstance(x, (jax.Array, jax.core.Tracer)) else jnp.asarray(x) for x in args]
    types, symbols, ellipsis = _check_inputs(op, tuple(arrays))
    static_attrs = _convert_attrs(op, attrs)

    # Output shapes: expressions see shape symbols, integer attributes and input sizes.
    scope = dict(symbols)
    for spec in op.attrs:
        if spec.type.startswith("int"):
            scope[spec.name] = int(static_attrs[spec.name])
    for spec, x in zip(op.inputs, arrays):
        scope[f"{spec.name}_size"] = int(np.prod(x.shape, dtype=np.int64))
    outs = []
    for spec in op.outputs:
        shape: list[int] = []
        for dim in spec.shape:
            if dim is Ellipsis:
                shape.extend(ellipsis or ())  # an output '...' implies an input '...' (checked by opspec-gen)
            elif callable(dim):
                try:
                    shape.append(int(dim(scope)))
                except ZeroDivisionError:
                    _fail(op, f"output '{spec.name}'", "its shape expression divides by zero for these inputs")
            else:
                shape.append(dim if isinstance(dim, int) else scope[dim])
        if any(d < 0 for d in shape):
            _fail(op, f"output '{spec.name}'", f"shape {tuple(shape)} has a negative dim")
        dtype = types[spec.dtype] if spec.dtype in types else np.dtype(spec.dtype)
        outs.append(jax.ShapeDtypeStruct(tuple(shape), dtype))

    fn = jax.ffi.ffi_call(
        target_name(op.name),
        outs,
        vmap_method=op.vmap_method,
        input_output_aliases=op.aliases or None,
    )
    results = fn(*arrays, **static_attrs)
    return results[0] if len(results) == 1 else tuple(results)


def target_name(op_name: str) -> str:
    return _opspec.target_name(op_name)


def _has_gpu_backend() -> bool:
    try:
        return len(jax.devices("gpu")) > 0
    except RuntimeError:
        return False


def register_targets() -> tuple:
    """Registers every op's handlers with JAX; returns the platforms registered."""
    platforms = ["cpu"]
    register_cuda = _opspec.has_cuda() and _has_gpu_backend()
    if register_cuda:
        platforms.append("CUDA")
    for name, cpu, cuda in _opspec.handlers():
        jax.ffi.register_ffi_target(target_name(name), cpu, platform="cpu", api_version=1)
        if register_cuda and cuda is not None:
            jax.ffi.register_ffi_target(target_name(name), cuda, platform="CUDA", api_version=1)
    return tuple(platforms)
