"""The call: the trace-time half of every generated op.

The generated ``<package>.ops`` module describes each op with the records of
opspec._spec (re-exported here, where ops.py imports them from) and calls the function
``caller(<package>)`` returns. A call turns its inputs into JAX arrays, checks
``backend=``, binds the call to its spec (opspec._bind: an OpError before JAX traces
anything) and binds the op's primitive (opspec._primitive) with the converted
attributes. Everything here runs while JAX traces; the compiled computation calls the
native handler directly. Every import is at module level, so that a call runs no import
statement of opspec's: at interpreter shutdown Python can no longer import (see
ShutdownError).
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from opspec import _primitive
from opspec._bind import Binding, bind
from opspec._jax_private import Tracer

# The names generated ops.py files (Array, Attr, Check, Derivative, Op, caller) and the
# __init__.py of packages built before opspec._face (backends, load_package) import from
# here.
from opspec._load import load_package
from opspec._spec import Array, Attr, Check, Derivative, Op, OpError, ShutdownError, fail, shown
from opspec._targets import BACKENDS, TARGETS, UNAVAILABLE, backends

__all__ = [
    "Array",
    "Attr",
    "Binding",
    "Check",
    "Derivative",
    "Op",
    "OpError",
    "ShutdownError",
    "as_array",
    "backends",
    "call",
    "caller",
    "cost",
    "load_package",
    "record_of",
]

# What an input accepts: what jnp.asarray takes, for the message when it takes nothing.
_AN_ARRAY = "an array (jax.Array, NumPy array, or a Python number or nested list of numbers)"


def as_array(op: Op, spec: Array, x: Any) -> Any:
    """Input `x` as a JAX array (a Tracer or a jax.Array passes through): NumPy arrays and
    Python scalars become JAX arrays, so that the dtype checked is the one the handler will
    see (float64 turns float32 unless jax_enable_x64 is set). What jnp.asarray cannot take
    (None, a str, a dict, strings, an object array, a jax.ShapeDtypeStruct, a number no
    dtype holds) is an OpError naming the input."""
    if isinstance(x, (jax.Array, Tracer)):
        return x
    if x is None or isinstance(x, (str, bytes, dict, jax.ShapeDtypeStruct)):
        hint = (
            " (an abstract shape: call the op inside jax.eval_shape instead)"
            if isinstance(x, jax.ShapeDtypeStruct)
            else ""
        )
        fail(op, f"input '{spec.name}'", f"expected {_AN_ARRAY}, got {shown(x)}{hint}")
    try:
        # Strings and objects in a list or NumPy array: refused here, before JAX, which
        # warns about some of them (a DeprecationWarning for a list of str) first. A list
        # holding JAX arrays (tracers, under jit) is left to jnp.asarray, which stacks it.
        probe = x if isinstance(x, np.ndarray) else None
        if isinstance(x, (list, tuple)) and not any(isinstance(e, (jax.Array, Tracer)) for e in x):
            probe = np.asarray(x)  # a ragged list raises ValueError, as jnp.asarray would
        if probe is not None and probe.dtype.kind in "OSU":
            raise TypeError(f"its elements are {probe.dtype}, not numbers")
        return jnp.asarray(x)
    except (TypeError, ValueError, OverflowError) as e:
        fail(op, f"input '{spec.name}'", f"expected {_AN_ARRAY}, got {shown(x)}: {e}", e)


def _check_backend(op: Op, backend: str | None, arrays: list) -> None:
    if backend is None:
        return
    if not isinstance(backend, str) or backend not in BACKENDS:
        fail(op, "backend", f"expected one of {', '.join(map(repr, BACKENDS))} or None, got {backend!r}")
    key = (op.package, op.name, backend)
    if key not in TARGETS:
        why = UNAVAILABLE.get((op.package, backend), "the op has no CUDA kernels")
        fail(op, "backend", f"{backend!r} is not available: {why}")
    # Concrete inputs show where the call will run; under jit, XLA rejects a target that is
    # not registered for the platform it compiles for.
    platform = BACKENDS[backend]
    for spec, x in zip(op.inputs, arrays):
        if isinstance(x, jax.Array) and not isinstance(x, Tracer):
            where = {d.platform for d in x.devices()}
            if where != {platform}:
                fail(
                    op,
                    "backend",
                    f"{backend!r} runs on the {platform} platform, but input '{spec.name}' is on "
                    f"{', '.join(sorted(where))} (jax.device_put it to a {platform} device)",
                )


def record_of(fn: Any) -> Op | None:
    """The record of op function `fn` (``opspec.ops.sigmoid``, or a package's): the global
    ``_op_<name>`` of its module, named as the package calls it; None for anything else."""
    module = sys.modules.get(getattr(fn, "__module__", None) or "", None)
    op = getattr(module, f"_op_{getattr(fn, '__name__', '')}", None)
    if not isinstance(op, Op):
        return None
    package = fn.__module__.rsplit(".", 1)[0]
    return op if op.package == package else dataclasses.replace(op, package=package)


def cost(fn: Any, *args: Any, **attrs: Any) -> dict:
    """{"bytes": ..., "flops": ...} of one call of op function `fn` (an ``ops.<name>``) on
    `args` (arrays or anything with ``.shape`` and ``.dtype``) and integer `attrs`, from
    the spec's `bytes:` and `flops:` formulas; None for a formula the spec does not give.
    In the formulas a type variable stands for its dtype's element size in bytes."""
    op = record_of(fn)
    if op is None:
        raise TypeError(f"cost: expected an op function (opspec.ops.<name>, or a package's), got {shown(fn)}")
    if len(args) != len(op.inputs):
        fail(op, "cost", f"expected {len(op.inputs)} inputs, got {len(args)}")
    shapes, dtypes = [], []
    for spec, x in zip(op.inputs, args):
        try:
            shapes.append(tuple(int(d) for d in np.shape(x)))
            dtypes.append(np.dtype(x.dtype))
        except (AttributeError, TypeError, ValueError) as e:
            want = "an array, or anything with .shape and .dtype (a jax.ShapeDtypeStruct)"
            fail(op, f"input '{spec.name}'", f"expected {want}, got {shown(x)}", e)
    binding = bind(op, shapes, dtypes, {a.name: attrs[a.name] for a in op.attrs if a.is_integer and a.name in attrs})
    scope = binding.scope()
    scope.update({var: dtype.itemsize for var, dtype in binding.types.items()})
    out = {}
    for key, formula in (("bytes", op.bytes), ("flops", op.flops)):
        try:
            out[key] = None if formula is None else int(formula(scope))
        except KeyError as e:  # a name the formula reads and the call did not give
            name = e.args[0]
            if any(a.name == name for a in op.attrs):
                fail(op, f"attribute '{name}'", f"expected a value (cost(..., {name}=...)), got none", e)
            raise
    return out


def call(op: Op, args: tuple, attrs: dict, backend: str | None = None) -> Any:
    """Checks a call against the spec and binds the op's primitive with its Binding (opspec/_primitive.py)."""
    try:
        arrays = [as_array(op, spec, x) for spec, x in zip(op.inputs, args)]
        _check_backend(op, backend, arrays)
        binding = bind(op, [x.shape for x in arrays], [x.dtype for x in arrays], attrs)
        results = _primitive.bind(binding, arrays, backend)
    except ImportError as e:
        # At interpreter shutdown (sys.meta_path is None) JAX's and NumPy's own lazy
        # imports fail; say which op could not run instead of a bare ImportError.
        if sys.meta_path is not None or isinstance(e, ShutdownError):
            raise
        raise ShutdownError(
            f"{op.package}.ops.{op.name}: cannot run while the Python interpreter shuts down "
            f"(JAX can no longer import what the call needs: {e}); call it before exit, "
            "from an atexit handler for instance"
        ) from None
    return results[0] if len(results) == 1 else tuple(results)


def caller(package: str) -> Callable[..., Any]:
    """`call` for the ops.py of `package`: its ops call the FFI targets <package>_<op>
    (and <package>_<op>.<backend>) and name themselves <package>.ops.<op> in errors. (The
    op records in ops.py carry no package: they are the same for every package.)"""
    records: dict = {}

    def call_in_package(op: Op, args: tuple, attrs: dict, backend: str | None = None) -> Any:
        record = records.get(op.name)
        if record is None:
            record = records[op.name] = dataclasses.replace(op, package=package)
        return call(record, args, attrs, backend)

    return call_in_package
