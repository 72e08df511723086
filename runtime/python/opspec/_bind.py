"""The one reading of a call against its spec: ``bind(op, shapes, dtypes, attrs)``.

A ``Binding`` is what the call's inputs and attributes say about the spec's names: the
dtype of each type variable, the extent of each shape symbol, the dims of the '...'
group, the attributes converted to their types, and which input each name came from.
It is made at the two places JAX requires: the call (``opspec._runtime.call``, so that a
bad call is an ``OpError`` before JAX traces anything) and the primitive's abstract
evaluation (``opspec._primitive``, which sees the shapes every transformation hands it);
the rules that need the spec's names (derivatives, ``check_op``, ``cost``) read a
Binding too. Shapes may hold batch dims in front (``split_batch``) and symbolic dims
(``jax.export.symbolic_shape``).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from typing import Any

import jax
import numpy as np

from opspec import _tables
from opspec._jax_private import Tracer
from opspec._spec import Attr, Dim, Op, fail, shown

MAX_RANK = _tables.MAX_RANK

# The most bytes an output may have: XLA sizes an array in int64 bytes, and jaxlib aborts
# the process (overflow in static extent product) on an array of 2**63 bytes or more,
# where it reports RESOURCE_EXHAUSTED below that (measured on jaxlib 0.10.2, CPU).
MAX_OUTPUT_BYTES = 2**63 - 1


@dataclasses.dataclass(frozen=True)
class Binding:
    """One call's values of the spec's names (see the module's docstring)."""

    op: Op
    types: dict  # type variable -> np.dtype
    symbols: dict  # shape symbol -> extent (an int, or a symbolic dim under jax.export)
    ellipsis: tuple | None  # the '...' group's dims; None where no input has '...'
    attrs: dict  # attribute name -> value, converted to the attribute's type
    sizes: dict  # <input>_size -> the input's element count
    sources: dict  # shape symbol or '...' -> the input it was read from, for errors

    def scope(self) -> dict:
        """The names a spec's expressions read (shape expressions, `check:` bounds, `bytes:`
        and `flops:`): the shape symbols, the integer attributes and <input>_size."""
        scope = dict(self.symbols)
        scope.update({a.name: int(self.attrs[a.name]) for a in self.op.attrs if a.is_integer and a.name in self.attrs})
        scope.update(self.sizes)
        return scope

    def out_shapes(self, batch: tuple = ()) -> list:
        """Every output's (shape, dtype), from the spec's shape symbols and expressions,
        with the batch dims `batch` in front. A shape with a negative dim, or of more than
        MAX_OUTPUT_BYTES bytes, is an OpError naming the attributes and inputs its dims
        come from."""
        op, scope = self.op, self.scope()
        outs = []
        for spec in op.outputs:
            out: list = list(batch)
            names: list = []  # the scope names the dims read, for errors
            for dim in spec.shape:
                if dim is Ellipsis:
                    out.extend(self.ellipsis or ())  # an output '...' implies an input '...' (opspec-gen)
                    names.append("...")
                elif callable(dim):
                    # The generated expression reads the scope as s["name"]: its string constants.
                    reads = [c for c in dim.__code__.co_consts if isinstance(c, str) and c in scope]
                    try:
                        value = dim(scope)
                    except ZeroDivisionError:
                        found = self._from(reads, scope)
                        fail(
                            op,
                            ", ".join(s[0] for s in found) or f"output '{spec.name}'",
                            f"expected output '{spec.name}' shape expression not to divide by zero, got "
                            + ", ".join(s[1] for s in found),
                        )
                    except Exception as e:  # symbolic dims the expression cannot take (max, min, %)
                        fail(
                            op,
                            f"output '{spec.name}'",
                            f"its shape expression cannot be computed for symbolic dims {self.symbols} ({e})",
                        )
                    out.append(int(value) if isinstance(value, (int, np.integer)) else value)
                    names.extend(reads)
                elif isinstance(dim, int):
                    out.append(dim)  # a literal dim: no argument to name
                else:
                    out.append(scope[dim])
                    names.append(dim)
            dtype = self.types[spec.dtype] if spec.dtype in self.types else np.dtype(spec.dtype)
            self._check_size(spec.name, tuple(out), dtype, len(batch), lambda names=names: self._from(names, scope))
            outs.append((tuple(out), dtype))
        return outs

    def _from(self, names: list, scope: dict) -> list:
        """(argument, value) for the attributes and inputs that scope `names` come from:
        attributes first (what a caller sets by hand), then inputs."""
        int_attrs = {a.name for a in self.op.attrs if a.is_integer}
        input_names = {spec.name for spec in self.op.inputs}
        found: dict = {}
        for name in names:
            if name in int_attrs:
                found.setdefault(f"attribute '{name}'", f"{name} = {scope[name]}")
            elif name == "...":
                source = self.sources.get("...", "")
                found.setdefault(f"input '{source}'", f"input '{source}' with leading dims ('...')")
            elif name in self.sources or name.removesuffix("_size") in input_names:
                source = self.sources.get(name) or name.removesuffix("_size")
                found.setdefault(f"input '{source}'", f"input '{source}' giving {name} = {scope[name]}")
        return sorted(found.items(), key=lambda s: not s[0].startswith("attribute"))

    def _check_size(self, output: str, shape: tuple, dtype: np.dtype, batch_rank: int, sources: Callable) -> None:
        """Refuses an output `shape` with a negative dim or of more than MAX_OUTPUT_BYTES
        bytes (a shape with symbolic dims, from jax.export, only for its negative dims)."""
        negative = any(isinstance(d, int) and d < 0 for d in shape)
        known = all(isinstance(d, int) for d in shape)
        nbytes = math.prod(shape) * dtype.itemsize if known and not negative else 0
        if not negative and nbytes <= MAX_OUTPUT_BYTES:
            return
        found = sources()
        what = ", ".join(s[0] for s in found) or f"output '{output}'"
        got = ", ".join(s[1] for s in found)
        if batch_rank:
            got += f"{', ' if got else ''}vmap batch dims {shape[:batch_rank]}"
        got = f"{got}, " if got else ""
        if negative:
            fail(self.op, what, f"expected output '{output}' dims of at least 0, got {got}output shape {shape}")
        fail(
            self.op,
            what,
            f"expected output '{output}' ({dtype.name}) of at most 2**63 - 1 bytes, the most XLA can "
            f"address, got {got}output shape {shape} of {nbytes} bytes",
        )


def bind(op: Op, shapes: Sequence[tuple], dtypes: Sequence[Any], attrs: dict) -> Binding:
    """Reads one call of `op`: inputs of `shapes` (without batch dims) and `dtypes`, and
    attributes `attrs` (those given: a call gives all, opspec.cost only the integers its
    formulas read). An input whose dtype, rank or dims the spec refuses, or an attribute
    its type cannot hold, is an OpError naming the op and the input or attribute."""
    types: dict[str, np.dtype] = {}
    bound_by: dict[str, str] = {}
    symbols: dict[str, Any] = {}
    sources: dict[str, str] = {}
    ellipsis = None
    for spec, shape, raw in zip(op.inputs, shapes, dtypes):
        what = f"input '{spec.name}'"
        try:
            dtype = np.dtype(raw)
        except TypeError:  # a JAX extended dtype (a PRNG key array), which NumPy has not
            want = " or ".join(op.types.get(spec.dtype, (spec.dtype,)))
            fail(op, what, f"expected dtype {want}, got {raw}")
        if spec.dtype in op.types:
            choices = op.types[spec.dtype]
            if spec.dtype not in types:
                if dtype.name not in choices:
                    fail(op, what, f"expected dtype {' or '.join(choices)} (type {spec.dtype}), got {dtype.name}")
                types[spec.dtype] = dtype
                bound_by[spec.dtype] = spec.name
            elif dtype != types[spec.dtype]:
                fail(
                    op,
                    what,
                    f"expected dtype {types[spec.dtype].name} (type {spec.dtype}, "
                    f"as input '{bound_by[spec.dtype]}'), got {dtype.name}",
                )
        elif dtype.name != spec.dtype:
            fail(op, what, f"expected dtype {spec.dtype}, got {dtype.name}")

        shape = tuple(shape)
        if len(shape) > MAX_RANK:
            fail(op, what, f"rank {len(shape)} is more than the {MAX_RANK} dims opspec supports")
        fixed = spec.fixed
        if (len(shape) < len(fixed)) if spec.has_ellipsis else (len(shape) != len(fixed)):
            want = f"at least {len(fixed)}" if spec.has_ellipsis else f"{len(fixed)}"
            fail(op, what, f"expected rank {want} (shape [{', '.join(map(_dim_text, spec.shape))}]), got shape {shape}")
        lead = spec.lead(len(shape))
        if spec.has_ellipsis:
            if ellipsis is None:
                ellipsis, sources["..."] = shape[:lead], spec.name
            elif shape[:lead] != ellipsis:
                fail(op, what, f"leading dims ('...') {shape[:lead]} differ from {ellipsis} of an earlier input")
        for d, dim in enumerate(fixed):
            got = shape[lead + d]
            if isinstance(dim, int):
                if got != dim:
                    fail(op, what, f"dim {lead + d} should be {dim}, got {got} (shape {shape})")
            elif dim not in symbols:
                symbols[dim], sources[dim] = got, spec.name
            elif symbols[dim] != got:
                fail(
                    op,
                    what,
                    f"dim {lead + d} ({dim}) is {got}, but {dim} = {symbols[dim]} "
                    f"from input '{sources[dim]}' (shape {shape})",
                )
    sizes = {f"{spec.name}_size": math.prod(tuple(shape)) for spec, shape in zip(op.inputs, shapes)}
    given = {spec.name: spec for spec in op.attrs if spec.name in attrs}
    converted = {name: convert_attr(op, spec, attrs[name]) for name, spec in given.items()}
    binding = Binding(op, types, symbols, ellipsis, converted, sizes, sources)
    if op.require:
        _check_require(op, binding)
    return binding


def _check_require(op: Op, binding: Binding) -> None:
    """The spec's `require:` conditions over the call's symbols and attributes: one that
    does not hold is an OpError naming the op, the condition and the values it read. A
    condition is skipped where it reads an attribute the caller did not give
    (opspec.cost) or cannot be decided at trace time (symbolic dims under jax.export):
    the handler checks every call again."""
    scope = binding.scope()
    scope.update(binding.attrs)
    for text, names, test in op.require:
        if any(name not in scope for name in names):
            continue
        # A symbolic dim's `==` answers False where it cannot prove equality: no verdict.
        if not all(isinstance(scope[name], (int, float, np.integer, np.floating)) for name in names):
            continue
        try:
            holds = bool(test(scope))
        except Exception:  # a side that divides by zero: left to the handler
            continue
        if not holds:
            values = ", ".join(f"{name} = {scope[name]}" for name in names)
            fail(op, f"require '{text}'", f"does not hold: {values}")


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


def convert_attr(op: Op, spec: Attr, value: Any) -> Any:
    """`value` as attribute `spec`'s type (a NumPy scalar), or an OpError naming it: a
    traced value, a value of another kind, an integer or float its type cannot hold."""
    what = f"attribute '{spec.name}'"
    if isinstance(value, Tracer):
        fail(
            op,
            what,
            f"must be a static {spec.type} value, got a traced array "
            "(attributes are compiled into the call; pass arrays as inputs)",
        )
    cast, accepted = _ATTR_TYPES[spec.type]
    if isinstance(value, (np.ndarray, jax.Array)) and np.ndim(value) == 0:
        value = value.item()
    takes = isinstance(value, accepted) and not (spec.type != "bool" and isinstance(value, (bool, np.bool_)))
    if not takes:
        fail(op, what, f"expected {spec.type}, got {shown(value)}")
    if spec.is_integer:
        info = np.iinfo(cast)
        if not info.min <= int(value) <= info.max:
            fail(op, what, f"expected {spec.type}, from {info.min} to {info.max}, got {shown(value)}")
    # A float attribute takes any finite Python number its type can hold; inf and nan
    # pass as themselves. An int too large for a double raises OverflowError in NumPy.
    finite = isinstance(value, (int, np.integer)) or bool(np.isfinite(value))
    try:
        with np.errstate(over="ignore"):
            converted = cast(value)
    except OverflowError:
        converted = None
    if converted is None or (np.issubdtype(cast, np.floating) and finite and not np.isfinite(converted)):
        most = np.finfo(cast).max
        fail(op, what, f"expected {spec.type}, at most {most:g} in magnitude (or inf, nan), got {shown(value)}")
    return converted


def split_batch(shape: tuple, mask: int) -> tuple[tuple, tuple]:
    """(batch dims, core dims) of an input whose leading dims are its set mask bits."""
    nb = bin(mask).count("1")
    return tuple(shape[:nb]), tuple(shape[nb:])


def batch_extents(shapes: Sequence[tuple], batch_rank: int, batch_mask: tuple) -> tuple:
    """The extent of every batch dim, from the inputs that carry it."""
    extents: list = [None] * batch_rank
    for shape, mask in zip(shapes, batch_mask):
        d = 0
        for k in range(batch_rank):
            if mask >> k & 1:
                extents[k] = shape[d]
                d += 1
    return tuple(extents)
