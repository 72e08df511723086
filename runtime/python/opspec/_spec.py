"""The records a generated ``ops.py`` describes its ops with, and opspec's error types.

The bottom of the package: every other module reads these, and this one imports nothing
of opspec's, so that the records and errors have one home whatever imports them first.
The rules that read an array's shape (where its '...' group is, which dims are fixed)
and an attribute's type (is it an integer?) are methods here, written once.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from types import EllipsisType
from typing import Any, NoReturn

import numpy as np

Dim = int | str | EllipsisType | Callable[[dict], int]


@dataclasses.dataclass(frozen=True)
class Check:
    """What an input's contents must satisfy (spec key `check:`): bounds are functions of
    the scope of shape symbols and integer attributes, inclusive."""

    min: Callable[[dict], int] | None = None
    max: Callable[[dict], int] | None = None
    sorted: bool = False


@dataclasses.dataclass(frozen=True)
class Array:
    name: str
    dtype: str  # a dtype name or a type variable
    shape: tuple  # of Dim
    check: Check | None = None  # inputs only

    @property
    def has_ellipsis(self) -> bool:
        """Whether the shape starts with '...', a group of leading dims of any rank (a
        spec allows '...' first only)."""
        return bool(self.shape) and self.shape[0] is Ellipsis

    @property
    def fixed(self) -> tuple:
        """The dims after the '...' group: the whole shape where there is none."""
        return self.shape[1:] if self.has_ellipsis else self.shape

    def lead(self, rank: int) -> int:
        """How many leading dims of an array of `rank` the '...' group takes (0 without one)."""
        return rank - len(self.fixed) if self.has_ellipsis else 0


@dataclasses.dataclass(frozen=True)
class Attr:
    name: str
    type: str  # bool, int32, int64, float32, float64

    @property
    def is_integer(self) -> bool:
        """Whether the attribute is an integer, which shape expressions and formulas read."""
        return bool(np.issubdtype(np.dtype(self.type), np.integer))


@dataclasses.dataclass(frozen=True)
class Derivative:
    """How one input's tangent moves the outputs (spec key `derivatives:`; docs/gradients.md).

    kind "elementwise": formulas[out] is d out / d input, element-wise;
    kind "jvp": formulas[out] is out's tangent from this input's tangent `<input>_dot`;
    kind "transpose": the op is linear in this input; formulas[input] is the input's
    cotangent from the outputs' cotangents `<output>_bar`;
    kind "linear" (`linear: halo`): linear in this input, a stencil along the op's `halo:`;
    no formula: the transpose is derived from the op (_halo_transpose.py).
    Each formula takes the names it uses as keyword arguments. `where` maps a formula's
    key to where it was written ("specs/sigmoid.yaml:12"), for errors while JAX traces it."""

    kind: str
    formulas: dict
    where: dict = dataclasses.field(default_factory=dict)


# eq=False: records are compared and hashed by identity, as JAX does with a primitive's
# parameters (one record per op and package).
@dataclasses.dataclass(frozen=True, eq=False)
class Op:
    name: str
    inputs: tuple
    outputs: tuple
    types: dict
    attrs: tuple
    vmap_method: str | None
    aliases: dict  # input index -> output index
    package: str = "opspec"  # the Python package the op belongs to; its FFI target is <package>_<name>
    derivatives: dict = dataclasses.field(default_factory=dict)  # input name -> Derivative
    # `derivatives: let:`: (name, formula, where) in the spec's order; a derivative formula
    # (and a later let) reads a let's value by its name.
    derivative_lets: tuple = ()
    # The spec's `require:`: (condition as written, the names it reads, test(scope) -> bool),
    # checked by opspec._bind.bind at trace time and by the handler for every call.
    require: tuple = ()
    # The spec's `bytes:` and `flops:` formulas (memory traffic and arithmetic of one call),
    # as functions of the call's scope; None where the spec declares none. See cost().
    bytes: Callable[[dict], Any] | None = None
    flops: Callable[[dict], Any] | None = None
    # The spec's `reduce:`: shape symbol ("..." for the '...' group) -> "sum", "max" or
    # "min", how the outputs of shards split along it combine (docs/transformations.md).
    reduce: dict = dataclasses.field(default_factory=dict)
    # The spec's `independent:`: shape symbols ("..." for the '...' group) along which each
    # output element depends only on the inputs at its own position, so a sharding rule
    # may keep them split across devices (docs/transformations.md, "Sharding").
    independent: tuple = ()
    # The spec's `halo:`: shape symbol -> (before, after), the radius each output element
    # reads along it, so a sharding rule may keep it split and exchange only the edges
    # (docs/transformations.md, "Halo").
    halo: dict = dataclasses.field(default_factory=dict)
    # The fingerprint of the op's generated code (opspec-gen, generator/fingerprint.h):
    # every call records it (attribute opspec_kernel), and the handler of a build whose
    # code differs refuses the call, so an exported computation never runs a changed
    # kernel. "" (a record made by hand): not recorded.
    fingerprint: str = ""

    def __repr__(self) -> str:  # as jaxprs show the primitive's parameter
        return f"{self.package}.ops.{self.name}"


class OpError(TypeError):
    """A call that does not match the op's spec: `<package>.ops.<op>: <argument>: <message>`."""


class ShutdownError(ImportError):
    """An op called while the interpreter shuts down (from a ``__del__``, say), when JAX and
    NumPy can no longer import what a call needs: `<package>.ops.<op>: cannot run while
    ...`. An ImportError, the exception JAX raises there, named after the op."""


def fail(op: Op, what: str, message: str, cause: BaseException | None = None) -> NoReturn:
    """Raises the OpError `<package>.ops.<op>: <what>: <message>`."""
    raise OpError(f"{op.package}.ops.{op.name}: {what}: {message}") from cause


def shown(value: Any) -> str:
    """`value` for an error message: its type and repr, the repr cut to 60 characters."""
    text = repr(value)
    if len(text) > 60:
        text = f"{text[:40]}...{text[-12:]} ({len(text)} characters)"
    return f"{type(value).__name__} {text}"
