"""Bad calls fail with a clear error naming the op and the argument; nothing crashes."""

import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import opspec
from opspec._runtime import OpError


def expect(fn, pattern, exc=OpError):
    with pytest.raises(exc, match=pattern):
        fn()


def test_wrong_dtype():
    x = np.ones(4, np.float32)
    expect(
        lambda: opspec.ops.add(x, x.astype(np.int32)),
        r"opspec.ops.add: input 'y': expected dtype float32 \(type T, as input 'x'\), got int32",
    )
    expect(
        lambda: opspec.ops.relu(np.ones(3, np.int32)),
        r"opspec.ops.relu: input 'x': expected dtype float32 or float64 or float16 or bfloat16 \(type T\), got int32",
    )
    m = np.ones(3, np.float32)
    expect(
        lambda: opspec.ops.csr_matvec(m, m, np.zeros(2, np.int32), m),
        r"csr_matvec: input 'indices': expected dtype int32, got float32",
    )


def test_wrong_rank():
    expect(
        lambda: opspec.ops.matvec(np.ones(3), np.ones(3)),
        r"opspec.ops.matvec: input 'A': expected rank 2 \(shape \[rows, cols\]\), got shape \(3,\)",
    )


def test_mismatched_symbol():
    expect(
        lambda: opspec.ops.matvec(np.ones((2, 3)), np.ones(4)),
        r"opspec.ops.matvec: input 'x': dim 0 \(cols\) is 4, but cols = 3 from input 'A'",
    )
    expect(lambda: opspec.ops.add(np.ones((2, 3)), np.ones((3, 2))), r"input 'y': leading dims \('...'\)")


def test_fixed_dim():
    expect(lambda: opspec.ops.scale(np.ones(3), np.ones(2)), r"opspec.ops.scale: input 's': dim 0 should be 1, got 2")


def test_unknown_and_missing_attrs():
    with pytest.raises(TypeError, match="leaky_relu.*unexpected keyword argument 'beta'"):
        opspec.ops.leaky_relu(np.ones(3), beta=1.0)
    with pytest.raises(TypeError, match="relu.*takes 1 positional argument"):
        opspec.ops.relu(np.ones(3), np.ones(3))
    with pytest.raises(TypeError, match="add.*missing 1 required positional argument: 'y'"):
        opspec.ops.add(np.ones(3))


def test_bad_attr_values():
    expect(
        lambda: opspec.ops.leaky_relu(np.ones(3), alpha="big"),
        r"leaky_relu: attribute 'alpha': expected float64, got str 'big'",
    )

    @jax.jit
    def traced(x, a):
        return opspec.ops.leaky_relu(x, alpha=a)

    expect(lambda: traced(np.ones(3), 0.1), r"leaky_relu: attribute 'alpha': must be a static float64 value")


# The raw targets, called without the stub's checks: the handler itself must refuse.


def raw(name, outs, *args, **attrs):
    return jax.ffi.ffi_call(opspec.target_name(name), outs)(*args, **attrs)


def test_handler_rejects_wrong_dtype():
    x = jnp.ones(8, jnp.int32)
    with pytest.raises(
        Exception,
        match=r"opspec relu: input 'x': expected dtype float32 or float64 or float16 or bfloat16 \(type T\), got int32",
    ):
        jax.block_until_ready(raw("relu", jax.ShapeDtypeStruct((8,), jnp.int32), x))


def test_handler_rejects_wrong_arity():
    x = jnp.ones(8, jnp.float32)
    with pytest.raises(Exception, match=r"opspec add: expected 2 inputs and 1 outputs, got 1 and 1"):
        jax.block_until_ready(raw("add", jax.ShapeDtypeStruct((8,), jnp.float32), x))


def test_handler_rejects_wrong_output_shape():
    x = jnp.ones(8, jnp.float32)
    with pytest.raises(Exception, match=r"opspec scale: output 'out': dim 0 should be 8, got 7"):
        jax.block_until_ready(raw("scale", jax.ShapeDtypeStruct((7,), jnp.float32), x, jnp.ones(1, jnp.float32)))


def test_handler_rejects_missing_and_mistyped_attrs():
    x = jnp.ones(8, jnp.float32)
    out = jax.ShapeDtypeStruct((8,), jnp.float32)
    with pytest.raises(Exception, match=r"opspec leaky_relu: missing attribute 'alpha' \(float64\)"):
        jax.block_until_ready(raw("leaky_relu", out, x))
    with pytest.raises(Exception, match=r"opspec leaky_relu: attribute 'alpha': expected float64, got float32"):
        jax.block_until_ready(raw("leaky_relu", out, x, alpha=np.float32(0.1)))
    with pytest.raises(
        Exception,
        match=r"opspec leaky_relu: missing attribute 'alpha' \(float64\); unexpected attribute 'beta' \(expected attributes: alpha \(float64\)\)",
    ):
        jax.block_until_ready(raw("leaky_relu", out, x, beta=np.float64(0.1)))


def test_process_survives_all_of_the_above():
    np.testing.assert_allclose(opspec.ops.add(np.ones(3), np.ones(3)), 2 * np.ones(3))


def test_messages_name_op_and_argument():
    try:
        opspec.ops.lif(*(np.ones(4),) * 2, *(np.ones(2),) * 4)
    except OpError as e:
        assert re.search(r"opspec.ops.lif: input 'tau_inv'", str(e))
    else:
        pytest.fail("no error")
