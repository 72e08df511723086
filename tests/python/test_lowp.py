"""bfloat16 and float16 on CPU compute in float and round once at each store, converting
in the loop (runtime/include/opspec/lowp.h; docs/spec.md, "Types"): results equal jnp's
computed in float32 and cast once to the narrow type, bit for bit, on random data with
NaN, infinities, zeros and subnormals, eagerly, under jit and under vmap; and the
handler makes no float copy of any array (the extension's widened-arrays counter)."""

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest

import opspec
from opspec import _opspec

DTYPES = [ml_dtypes.bfloat16, np.float16]


def narrow_data(rng, dtype, n=4099):
    """Random values over the narrow type's whole range (its bit patterns), with its
    subnormals, zeros, infinities and NaNs: every class the conversions handle."""
    bits = rng.integers(0, 1 << 16, size=n, dtype=np.uint32).astype(np.uint16)
    x = bits.view(dtype).copy()
    info = ml_dtypes.finfo(dtype)
    tiny = float(info.smallest_subnormal)
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, tiny, -tiny, 3 * tiny, float(info.max)])
    x[: special.size] = special.astype(dtype)
    x[special.size : 2 * special.size] = (rng.standard_normal(special.size) * tiny * 50).astype(dtype)
    return x


def same_bits(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    nan_got, nan_want = np.isnan(got.astype(np.float32)), np.isnan(want.astype(np.float32))
    np.testing.assert_array_equal(nan_got, nan_want)
    g, w = got.view(np.uint16)[~nan_got], want.view(np.uint16)[~nan_want]
    bad = np.flatnonzero(g != w)
    assert bad.size == 0, f"{bad.size} differ, first: got {g[bad[:5]]} want {w[bad[:5]]} (bits)"


def relu_ref(x):
    xf = jnp.asarray(x).astype(jnp.float32)
    return jnp.where((xf > 0) | jnp.isnan(xf), xf, 0.0).astype(x.dtype)


def scale_ref(x, s):
    return (jnp.asarray(x).astype(jnp.float32) * jnp.asarray(s).astype(jnp.float32)[0]).astype(x.dtype)


def run(mode, fn, *args):
    if mode == "eager":
        return fn(*args)
    if mode == "jit":
        return jax.jit(fn)(*args)
    # vmap: the same data as 7 rows (batched natively by the handler)
    rows = [a.reshape(7, -1) if a.size > 1 else np.broadcast_to(a, (7, 1)) for a in args]
    return jax.vmap(fn)(*rows).reshape(-1)


@pytest.mark.parametrize("mode", ["eager", "jit", "vmap"])
@pytest.mark.parametrize("dtype", DTYPES, ids=["bfloat16", "float16"])
def test_relu_and_scale_equal_float32_compute_rounded_once(rng, dtype, mode):
    x = narrow_data(rng, dtype, n=7 * 613)
    before = _opspec.widened_arrays()
    same_bits(run(mode, opspec.ops.relu, x), relu_ref(x))
    # scale by one is the identity, every class kept (a NaN stays a NaN)
    one = np.ones(1, dtype)
    same_bits(run(mode, opspec.ops.scale, x, one), scale_ref(x, one))
    # a factor that is not a power of two: the float product is rounded once to the type
    s = np.array([1.7], dtype)
    same_bits(run(mode, opspec.ops.scale, x, s), scale_ref(x, s))
    assert _opspec.widened_arrays() == before, "the handler widened arrays of an op that converts in its loop"


@pytest.mark.parametrize("dtype", DTYPES, ids=["bfloat16", "float16"])
def test_sigmoid_and_rms_norm_round_once(rng, dtype):
    # Ops with math: float32 compute (exp, a double row sum) and one rounding, which is
    # what jnp's float32 result cast to the type is, within one float32 rounding of the
    # math before the cast (a tie may break either way): at most 1 ulp of the type.
    x = (rng.standard_normal((64, 96)) * 3).astype(dtype)
    w = rng.standard_normal(96).astype(dtype)
    before = _opspec.widened_arrays()
    got = np.asarray(jax.jit(opspec.ops.sigmoid)(x)).astype(np.float32)
    want = np.asarray(jax.nn.sigmoid(jnp.asarray(x, jnp.float32)).astype(dtype)).astype(np.float32)
    ulp = np.asarray(ml_dtypes.finfo(dtype).eps, np.float32) * np.maximum(np.abs(want), ml_dtypes.finfo(dtype).tiny)
    assert np.all(np.abs(got - want) <= ulp), np.max(np.abs(got - want) / ulp)
    got = np.asarray(opspec.ops.rms_norm(x, w, eps=1e-6)).astype(np.float32)
    xf = np.asarray(x, np.float64)
    ref = xf / np.sqrt(np.mean(xf * xf, axis=-1, keepdims=True) + 1e-6) * np.asarray(w, np.float64)
    want = ref.astype(np.float32).astype(dtype).astype(np.float32)
    ulp = np.asarray(ml_dtypes.finfo(dtype).eps, np.float32) * np.maximum(np.abs(want), ml_dtypes.finfo(dtype).tiny)
    assert np.all(np.abs(got - want) <= ulp), np.max(np.abs(got - want) / ulp)
    assert _opspec.widened_arrays() == before
