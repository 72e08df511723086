"""The CUDA handlers on a real GPU. Skipped where JAX sees no GPU (CI has none).

Run on a GPU machine with: pytest -m gpu tests/python
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from cases import CASES, reference
from conftest import tol

import opspec
from opspec import _opspec

pytestmark = pytest.mark.gpu

CUDA_OPS = sorted(name for name, _, cuda in _opspec.handlers() if cuda is not None)


def gpu():
    return jax.devices("gpu")[0]


def on_gpu(args):
    return tuple(jax.device_put(a, gpu()) for a in args)


def check(name, args, attrs, dtype, out):
    out = out if isinstance(out, tuple) else (out,)
    for got, exp in zip(out, reference(name, args, attrs, dtype)):
        assert list(got.devices())[0].platform == "gpu"
        got = np.asarray(got)
        if got.dtype.kind in "iub":
            np.testing.assert_array_equal(got, exp)
        else:
            np.testing.assert_allclose(got, exp, **tol(dtype))


def test_cuda_registered():
    assert "CUDA" in opspec.registered_platforms
    assert {
        "relu",
        "sigmoid",
        "block_sum",
        "split",
        "hadamard",
        "abs_two_pass",
        "leaky_relu",
        "spike_reset",
        "exp_decay",
        "csr_matvec",
        "scale",
        "add",
    } <= set(CUDA_OPS)


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("name", CUDA_OPS)
def test_op_on_gpu_matches_numpy(name, dtype, jit, rng):
    for n in (1, int(rng.integers(2, 5000)), 300_001):
        args, attrs = CASES[name][0](rng, dtype, n)
        fn = lambda *a: getattr(opspec.ops, name)(*a, **attrs)  # noqa: E731
        check(name, args, attrs, dtype, (jax.jit(fn) if jit else fn)(*on_gpu(args)))


@pytest.mark.parametrize("name", CUDA_OPS)
def test_zero_size_launch_on_gpu(name, rng):
    args, attrs = CASES[name][0](rng, np.float32, 0)
    check(name, args, attrs, np.float32, getattr(opspec.ops, name)(*on_gpu(args), **attrs))


def test_seed_launch_configurations():
    # relu: grid=4 x block=256 for N=1024 is what launch [n] gives by default.
    x = jax.device_put(jnp.linspace(-3.0, 3.0, 1024, dtype=jnp.float32), gpu())
    np.testing.assert_array_equal(opspec.ops.relu(x), np.maximum(np.asarray(x), 0))
    # sigmoid: launch_dims=N with threads_per_block=128.
    np.testing.assert_allclose(opspec.ops.sigmoid(x), 1 / (1 + np.exp(-np.asarray(x, np.float64))), rtol=1e-6)
    # hadamard: a 2-D 64 x 64 launch.
    A = jax.device_put(jnp.arange(64 * 64, dtype=jnp.float32).reshape(64, 64), gpu())
    np.testing.assert_array_equal(opspec.ops.hadamard(A, 2 * jnp.ones_like(A)), 2 * np.asarray(A))


def test_shared_memory_block_sum():
    sums = opspec.ops.block_sum(jax.device_put(jnp.ones(1024, jnp.float32), gpu()))
    np.testing.assert_array_equal(sums, [256.0] * 4)


def test_two_kernel_pipelines(rng):
    x = jax.device_put(jnp.linspace(-5.0, 5.0, 512, dtype=jnp.float32), gpu())
    np.testing.assert_allclose(opspec.ops.abs_two_pass(x), np.abs(np.asarray(x)), rtol=1e-6)
    V = jax.device_put(jnp.asarray(rng.uniform(-75, -50, 10_000), jnp.float32), gpu())
    spikes, V_out = opspec.ops.spike_reset(V, jnp.array([-55.0], jnp.float32), jnp.array([-70.0], jnp.float32))
    expected = np.asarray(V) >= -55.0
    np.testing.assert_array_equal(spikes, expected.astype(np.int32))
    np.testing.assert_array_equal(V_out, np.where(expected, -70.0, np.asarray(V)))


def test_many_calls_in_one_jit_can_be_graph_captured(rng):
    """A loop of many calls in one executable: XLA may capture the command-buffer
    compatible handlers into a CUDA graph. The result must be the same either way."""
    x0 = jax.device_put(jnp.asarray(rng.random(4096), jnp.float32), gpu())
    s = jnp.array([0.999], jnp.float32)

    @jax.jit
    def many(x):
        for _ in range(50):
            x = opspec.ops.scale(opspec.ops.relu(x), s)
        return jax.lax.fori_loop(0, 50, lambda _, v: opspec.ops.exp_decay(v, jnp.array([0.001], jnp.float32)), x)

    want = np.asarray(x0, np.float64) * 0.999**50 * np.exp(-0.001 * 50)
    np.testing.assert_allclose(many(x0), want, rtol=1e-4)
    np.testing.assert_allclose(many(x0), want, rtol=1e-4)


def test_cpu_and_gpu_share_one_op_name(rng):
    x = rng.random(1000).astype(np.float32)
    s = np.array([2.5], np.float32)
    with jax.default_device(jax.devices("cpu")[0]):
        on_cpu = jax.jit(opspec.ops.scale)(x, s)
    on_gpu_ = opspec.ops.scale(*on_gpu((x, s)))
    assert list(on_cpu.devices())[0].platform == "cpu"
    np.testing.assert_allclose(on_cpu, np.asarray(on_gpu_), rtol=1e-6)
