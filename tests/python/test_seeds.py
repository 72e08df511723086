"""The reference tutorials' own worked examples, with their numbers."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import scipy.sparse as sp

import opspec


def test_csr_small_example():
    A = np.array([[1, 0, 2], [0, 3, 0], [4, 0, 5]], dtype=np.float32)
    m = sp.csr_matrix(A)
    y = opspec.ops.csr_matvec(
        m.data, m.indices.astype(np.int32), m.indptr.astype(np.int32), np.array([-1, 2, 3], np.float32)
    )
    np.testing.assert_array_equal(y, [5, 6, 11])


def test_max_of_the_seed_list():
    assert float(opspec.ops.max(jnp.array([3, 1, 4, 1, 5, 9, 2, 6], jnp.float32))[0]) == 9.0


def test_sum_and_stats_of_arange():
    x = jnp.arange(10_000, dtype=jnp.float32)
    assert float(opspec.ops.sum(x)[0]) == 49_995_000.0
    mean, std = opspec.ops.running_stats(x)
    assert float(mean[0]) == 4999.5
    np.testing.assert_allclose(float(std[0]), float(np.std(np.arange(10_000.0))), rtol=1e-6)


def test_add_and_relu_seed_sizes():
    a = jnp.arange(512, dtype=jnp.float32)
    b = jnp.ones(512, dtype=jnp.float32) * 3.0
    assert float(jnp.max(jnp.abs(opspec.ops.add(a, b) - (a + b)))) == 0.0
    x = jnp.linspace(-3.0, 3.0, 512, dtype=jnp.float32)
    assert float(jnp.max(jnp.abs(opspec.ops.relu(x) - jnp.maximum(x, 0.0)))) == 0.0


def test_lif_seed_network():
    rng = np.random.default_rng(0)  # the tutorial's own data
    N = 5000
    V = jnp.array(rng.uniform(-75.0, -50.0, N).astype(np.float32))
    I_ext = jnp.array(rng.uniform(0.0, 5.0, N).astype(np.float32))
    one = lambda v: jnp.array([v], jnp.float32)  # noqa: E731
    V_new, spikes = opspec.ops.lif(V, I_ext, one(1 / 20), one(-55.0), one(-70.0), one(0.1))
    V_ref = V + 0.1 * (-(V - -70.0) * (1 / 20) + I_ext)
    spk_ref = (V_ref >= -55.0).astype(jnp.int32)
    V_ref = jnp.where(spk_ref, -70.0, V_ref)
    assert int(jnp.sum(spikes != spk_ref)) == 0
    assert float(jnp.max(jnp.abs(V_new - V_ref))) < 1e-4
    assert 0 < int(spikes.sum()) < N


def test_trace_reaches_the_theoretical_steady_state():
    N, p, tau_inv = 1000, 0.05, jnp.array([1.0 / 20.0], jnp.float32)
    update = jax.jit(opspec.ops.exp_trace)
    trace = jnp.zeros(N, jnp.float32)
    means = []
    for step in range(400):
        spikes = jnp.array(np.random.default_rng(step).random(N) < p, jnp.float32)
        trace = update(trace, spikes, tau_inv)
        means.append(float(trace.mean()))
    steady = p / (1 - math.exp(-1 / 20))
    # After 20 time constants the mean of the last 100 steps sits at the fixed point.
    assert abs(np.mean(means[-100:]) - steady) / steady < 0.03


def test_spike_reset_seed_network():
    rng = np.random.default_rng(0)
    V = jnp.array(rng.uniform(-75.0, -50.0, 10_000).astype(np.float32))
    spikes, V_out = opspec.ops.spike_reset(V, jnp.array([-55.0], jnp.float32), jnp.array([-70.0], jnp.float32))
    expected = (V >= -55.0).astype(jnp.int32)
    assert int(jnp.sum(spikes != expected)) == 0
    np.testing.assert_array_equal(V_out, jnp.where(expected, -70.0, V))


def test_block_sum_of_ones():
    sums = opspec.ops.block_sum(jnp.ones(1024, jnp.float32))
    np.testing.assert_array_equal(sums, [256.0] * 4)
    assert float(sums.sum()) == 1024.0


def test_abs_two_pass_and_exp_decay():
    x = jnp.linspace(-5.0, 5.0, 512, dtype=jnp.float32)
    np.testing.assert_allclose(opspec.ops.abs_two_pass(x), np.abs(np.asarray(x)), rtol=1e-6)
    r = opspec.ops.exp_decay(jnp.ones(1024, jnp.float32), jnp.array([0.1], jnp.float32))
    np.testing.assert_allclose(float(r[0]), math.exp(-0.1), rtol=1e-6)


def test_multi_backend_scale():
    x = jnp.arange(256, dtype=jnp.float32)
    assert bool(jnp.allclose(opspec.ops.scale(x, jnp.array([3.14], jnp.float32)), x * 3.14, atol=1e-5))
