"""Binding agrees in C and in Python: every case of binding_cases.py, through the op's
Python function (trace-time checks) and through the raw FFI target (the handler's
checks, with the Python layer bypassed)."""

import jax
import numpy as np
import pytest
from binding_cases import CASES

import opspec
from opspec._runtime import OpError


def _args(inputs, rng):
    return [
        rng.standard_normal(shape).astype(dtype)
        if dtype.startswith("float")
        else rng.integers(0, 1, shape).astype(dtype)
        for shape, dtype in inputs
    ]


@pytest.mark.parametrize("op, inputs, attrs, expected", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_python_and_handler_bind_alike(op, inputs, attrs, expected, rng):
    args = _args(inputs, rng)
    fn = getattr(opspec.ops, op)
    if expected is None:
        outs = jax.eval_shape(lambda *a: fn(*a, **attrs), *args)
        outs = outs if isinstance(outs, tuple) else (outs,)
        raw = jax.ffi.ffi_call(opspec.target_name(op), tuple(jax.ShapeDtypeStruct(o.shape, o.dtype) for o in outs))
        got = raw(*args, **attrs)
        got = got if isinstance(got, (tuple, list)) else (got,)
        assert [g.shape for g in got] == [o.shape for o in outs]
        return
    arg, phrase, c_only, py_only = expected
    with pytest.raises(OpError) as py:
        jax.eval_shape(lambda *a: fn(*a, **attrs), *args)
    assert f"opspec.ops.{op}: {arg}" in str(py.value) and phrase in str(py.value) and py_only in str(py.value), str(
        py.value
    )
    # The handler sees the call with the Python checks bypassed; any output will do, for
    # the inputs are bound (and refused) first.
    raw = jax.ffi.ffi_call(opspec.target_name(op), jax.ShapeDtypeStruct((1,), np.float32))
    with pytest.raises(Exception) as c:
        jax.block_until_ready(raw(*args, **attrs))
    assert f"opspec {op}: {arg}" in str(c.value) and phrase in str(c.value) and c_only in str(c.value), str(c.value)
