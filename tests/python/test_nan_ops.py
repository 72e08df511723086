"""Shipped ops propagate NaN as jnp does (issue 31 F3): relu (every dtype), split, max and
stdp_update once gave 0, skipped it, or clipped it to w_min. Random inputs with NaN at
random positions, against jnp on the same inputs: the NaN positions must agree, and the
other values too. On the CPU, and on the CUDA simulator where the op has CUDA kernels
(the same body)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import opspec

BACKENDS = ["cpu", pytest.param("cuda_sim", marks=pytest.mark.cuda_sim)]


def backend_or_skip(backend):
    if backend == "cuda_sim" and not opspec.has_cuda_sim:
        pytest.skip("built without the CUDA simulator")
    return backend


def with_nans(rng, shape, dtype, share=0.2):
    x = rng.standard_normal(shape) * 3
    x[rng.random(shape) < share] = np.nan
    x.flat[rng.integers(x.size)] = np.nan  # at least one
    return np.asarray(x, dtype=dtype)


def same(got, want, rtol=0.0):
    got = np.asarray(got, dtype=np.float64)
    want = np.asarray(want, dtype=np.float64)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_allclose(got, want, rtol=rtol, atol=0)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, jnp.bfloat16])
def test_relu_propagates_nan(rng, dtype, backend):
    x = with_nans(rng, (9, 37), dtype)
    got = opspec.ops.relu(x, backend=backend_or_skip(backend))
    same(got, jax.nn.relu(jnp.asarray(x)))
    same(jax.jit(lambda v: opspec.ops.relu(v, backend=backend))(x), jnp.maximum(jnp.asarray(x), 0))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_split_sends_nan_to_both_parts(rng, dtype, backend):
    x = with_nans(rng, (5, 41), dtype)
    pos, neg = opspec.ops.split(x, backend=backend_or_skip(backend))
    same(pos, jnp.maximum(jnp.asarray(x), 0))
    same(neg, jnp.minimum(jnp.asarray(x), 0))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("size", [1, 3, 64, 1001, 200_003])
def test_max_is_nan_when_x_has_one(rng, dtype, size):
    """One NaN anywhere (first, last, random; among -inf too), several, all NaN: NaN, as
    np.max; without NaN, the maximum. Sizes on both sides of the parallel threshold.
    (NumPy is the reference: jnp.max on XLA's CPU, jax 0.10.2, skips a NaN in an array
    of 5,000 float32 elements, though it gives NaN for 1,000.)"""
    x = np.asarray(rng.standard_normal(size), dtype=dtype)
    same(opspec.ops.max(x), np.max(x)[None])
    for where in {0, size - 1, int(rng.integers(size))}:
        y = x.copy()
        y[where] = np.nan
        same(opspec.ops.max(y), np.max(y)[None])
        assert np.isnan(np.asarray(opspec.ops.max(y))[0])
    y = np.full(size, -np.inf, dtype=dtype)
    y[int(rng.integers(size))] = np.nan
    assert np.isnan(np.asarray(jax.jit(opspec.ops.max)(y))[0])
    assert np.isnan(np.asarray(opspec.ops.max(np.full(size, np.nan, dtype=dtype)))[0])
    same(opspec.ops.max(with_nans(rng, (size,), dtype)), [np.nan])


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_stdp_update_keeps_a_nan_weight(rng, dtype, backend):
    n_pre, n_post = 13, 29
    w = with_nans(rng, (n_pre, n_post), dtype)
    pre_trace, pre_spike = (np.asarray(rng.random(n_pre), dtype) for _ in range(2))
    post_trace, post_spike = (np.asarray(rng.random(n_post), dtype) for _ in range(2))
    pre_trace[3] = np.nan  # a NaN trace makes its row NaN too
    attrs = dict(a_plus=0.5, a_minus=0.25, w_min=-1.0, w_max=1.0)
    got = opspec.ops.stdp_update(
        w, pre_trace, pre_spike, post_trace, post_spike, backend=backend_or_skip(backend), **attrs
    )
    dw = attrs["a_plus"] * jnp.outer(pre_trace, post_spike) - attrs["a_minus"] * jnp.outer(pre_spike, post_trace)
    want = jnp.clip(jnp.asarray(w) + dw.astype(dtype), attrs["w_min"], attrs["w_max"])
    same(got, want, rtol=1e-6 if dtype == np.float32 else 1e-14)
