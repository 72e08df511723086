"""The CUDA handlers against NumPy, on every CUDA backend this process has.

The tests are the same for each; only the `backend` parameter changes:

- ``cuda_sim``: every op's CUDA kernels and launcher, compiled for the CUDA simulator,
  run on the CPU platform (docs/cuda-simulator.md). Runs wherever the extension was
  built with the simulator (the default), so in CI.
- ``cuda``: the same kernels on a real GPU. Marked ``gpu``; skipped where JAX sees none.

Only the GPU ones: pytest -m gpu tests/python. Only the simulated ones: -m cuda_sim.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from cases import CASES, reference
from conftest import tol

import opspec
from opspec import _opspec

# Every op with CUDA kernels, whichever backends this build has.
CUDA_OPS = sorted(
    {name for name, _, cuda in _opspec.handlers() if cuda is not None}
    | {name for name, _ in _opspec.cuda_sim_handlers()}
)


@pytest.fixture(
    params=[pytest.param("cuda_sim", marks=pytest.mark.cuda_sim), pytest.param("cuda", marks=pytest.mark.gpu)]
)
def backend(request):
    if request.param == "cuda_sim" and not opspec.has_cuda_sim:
        pytest.skip("built without the CUDA simulator (OPSPEC_CUDA_SIM=OFF)")
    return request.param


def platform(backend):
    """Where the backend runs: the simulator on the CPU platform."""
    return "gpu" if backend == "cuda" else "cpu"


def put(args, backend):
    device = jax.devices(platform(backend))[0]
    return tuple(jax.device_put(a, device) for a in args)


def run(name, args, attrs, backend, jit=False):
    fn = lambda *a: getattr(opspec.ops, name)(*a, **attrs, backend=backend)  # noqa: E731
    return (jax.jit(fn) if jit else fn)(*put(args, backend))


def check(name, args, attrs, dtype, out, backend):
    out = out if isinstance(out, tuple) else (out,)
    for got, exp in zip(out, reference(name, args, attrs, dtype)):
        assert list(got.devices())[0].platform == platform(backend)
        got = np.asarray(got)
        if got.dtype.kind in "iub":
            np.testing.assert_array_equal(got, exp)
        else:
            np.testing.assert_allclose(got.astype(np.float64), np.asarray(exp).astype(np.float64), **tol(dtype))


def test_cuda_registered(backend):
    assert backend in opspec.backends
    if backend == "cuda":
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
def test_op_on_gpu_matches_numpy(name, dtype, jit, backend, rng):
    # 1 thread; a few blocks, the last one partial; over a thousand blocks.
    for n in (1, int(rng.integers(2, 5000)), 300_001):
        args, attrs = CASES[name][0](rng, dtype, n)
        check(name, args, attrs, dtype, run(name, args, attrs, backend, jit), backend)


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
@pytest.mark.parametrize("dtype", [np.float16, jnp.bfloat16], ids=["float16", "bfloat16"])
@pytest.mark.parametrize("name", ["add", "relu", "scale", "sigmoid"])
def test_low_precision_op_on_gpu_matches_numpy(name, dtype, jit, backend, rng):
    # float16 and bfloat16: __half and __nv_bfloat16 under nvcc, on the simulator classes
    # with their operators that compute in float (opspec/cuda_sim_half.h).
    for n in (1, int(rng.integers(2, 5000)), 300_001):
        args, attrs = CASES[name][0](rng, dtype, n)
        check(name, args, attrs, dtype, run(name, args, attrs, backend, jit), backend)


@pytest.mark.parametrize("name", CUDA_OPS)
def test_zero_size_launch_on_gpu(name, backend, rng):
    args, attrs = CASES[name][0](rng, np.float32, 0)
    check(name, args, attrs, np.float32, run(name, args, attrs, backend), backend)


def test_seed_launch_configurations(backend):
    (x,) = put((jnp.linspace(-3.0, 3.0, 1024, dtype=jnp.float32),), backend)
    # relu: grid=4 x block=256 for N=1024 is what launch [n] gives by default.
    np.testing.assert_array_equal(opspec.ops.relu(x, backend=backend), np.maximum(np.asarray(x), 0))
    # sigmoid: launch_dims=N with threads_per_block=128.
    np.testing.assert_allclose(
        opspec.ops.sigmoid(x, backend=backend), 1 / (1 + np.exp(-np.asarray(x, np.float64))), rtol=1e-6
    )
    # hadamard: a 2-D 64 x 64 launch.
    A, B = put((jnp.arange(64 * 64, dtype=jnp.float32).reshape(64, 64), jnp.full((64, 64), 2.0, jnp.float32)), backend)
    np.testing.assert_array_equal(opspec.ops.hadamard(A, B, backend=backend), 2 * np.asarray(A))


def test_2d_launch_past_65535_blocks_along_y(backend, rng):
    """hadamard's rows run along y, where a grid has at most 65535 blocks (of 16 rows):
    past 1,048,560 rows each thread loops over several."""
    rows = 65535 * 16 + 1001
    A, B = rng.random((rows, 3), np.float32), rng.random((rows, 3), np.float32)
    np.testing.assert_array_equal(opspec.ops.hadamard(*put((A, B), backend), backend=backend), A * B)


def test_shared_memory_block_sum(backend):
    (x,) = put((jnp.ones(1024, jnp.float32),), backend)
    np.testing.assert_array_equal(opspec.ops.block_sum(x, backend=backend), [256.0] * 4)


def test_two_kernel_pipelines(backend, rng):
    (x,) = put((jnp.linspace(-5.0, 5.0, 512, dtype=jnp.float32),), backend)
    np.testing.assert_allclose(opspec.ops.abs_two_pass(x, backend=backend), np.abs(np.asarray(x)), rtol=1e-6)
    V, V_th, V_rest = put(
        (
            jnp.asarray(rng.uniform(-75, -50, 10_000), jnp.float32),
            jnp.array([-55.0], jnp.float32),
            jnp.array([-70.0], jnp.float32),
        ),
        backend,
    )
    spikes, V_out = opspec.ops.spike_reset(V, V_th, V_rest, backend=backend)
    expected = np.asarray(V) >= -55.0
    np.testing.assert_array_equal(spikes, expected.astype(np.int32))
    np.testing.assert_array_equal(V_out, np.where(expected, -70.0, np.asarray(V)))


def test_many_calls_in_one_jit_can_be_graph_captured(backend, rng):
    """A loop of many calls in one executable: XLA may capture the command-buffer
    compatible handlers into a CUDA graph. The result must be the same either way."""
    x0, s, d = put(
        (jnp.asarray(rng.random(4096), jnp.float32), jnp.array([0.999], jnp.float32), jnp.array([0.001], jnp.float32)),
        backend,
    )

    @jax.jit
    def many(x, s, d):
        for _ in range(50):
            x = opspec.ops.scale(opspec.ops.relu(x, backend=backend), s, backend=backend)
        return jax.lax.fori_loop(0, 50, lambda _, v: opspec.ops.exp_decay(v, d, backend=backend), x)

    want = np.asarray(x0, np.float64) * 0.999**50 * np.exp(-0.001 * 50)
    np.testing.assert_allclose(many(x0, s, d), want, rtol=1e-4)
    np.testing.assert_allclose(many(x0, s, d), want, rtol=1e-4)


def test_every_device(backend, rng):
    """Each device of the backend's platform runs the op there (several GPUs need the
    handler to make XLA's device current; test_cuda_sim.py simulates three)."""
    x = rng.standard_normal(10_000).astype(np.float32)
    for device in jax.devices(platform(backend)):
        y = opspec.ops.relu(jax.device_put(x, device), backend=backend)
        assert list(y.devices()) == [device]
        np.testing.assert_array_equal(y, np.maximum(x, 0))


def test_cpu_and_gpu_share_one_op_name(backend, rng):
    x = rng.random(1000).astype(np.float32)
    s = np.array([2.5], np.float32)
    with jax.default_device(jax.devices("cpu")[0]):
        on_cpu = jax.jit(opspec.ops.scale)(x, s)
    on_gpu_ = opspec.ops.scale(*put((x, s), backend), backend=backend)
    assert list(on_cpu.devices())[0].platform == "cpu"
    np.testing.assert_allclose(on_cpu, np.asarray(on_gpu_), rtol=1e-6)


def _batch_masks(n):
    """Which inputs a vmap test batches: each one alone, all, and all but the first."""
    masks = {1 << i for i in range(n)} | {(1 << n) - 1}
    if n > 1:
        masks.add((1 << n) - 2)
    return sorted(masks)


@pytest.mark.parametrize("name", CUDA_OPS)
def test_vmap_on_gpu_is_one_call(name, backend, rng):
    """jax.vmap of every CUDA op, over several subsets of its inputs (the others read in
    place), against a loop of the op's NumPy reference: one FFI call each."""
    B = 3
    args, attrs = CASES[name][0](rng, np.float64, 300)
    n = len(args)
    for mask in _batch_masks(n):
        axes = tuple(0 if mask >> i & 1 else None for i in range(n))
        batched = [
            np.stack([np.asarray(a) * (1 + 0.05 * b) if np.asarray(a).dtype.kind == "f" else a for b in range(B)])
            if axes[i] == 0
            else a
            for i, a in enumerate(args)
        ]
        fn = jax.vmap(lambda *a: getattr(opspec.ops, name)(*a, **attrs, backend=backend), in_axes=axes)
        out = jax.jit(fn)(*put(batched, backend))
        out = out if isinstance(out, tuple) else (out,)
        for b in range(B):
            one = [batched[i][b] if axes[i] == 0 else args[i] for i in range(n)]
            for got, want in zip(out, reference(name, one, attrs, np.float64)):
                np.testing.assert_allclose(np.asarray(got)[b], want, **tol(np.float64), err_msg=f"{name} {axes}")
        hlo = jax.jit(fn).lower(*put(batched, backend)).as_text()
        assert hlo.count("stablehlo.custom_call @opspec_") == 1


def _launches(backend):
    return opspec.cuda_sim_launches() if backend == "cuda_sim" else None


def test_vmap_of_a_portable_kernel_is_one_launch_along_z(backend, rng):
    """A portable kernel runs a whole batch in one launch, the elements along the grid's z;
    a raw `cuda:` kernel (block_sum) runs once per element, all from one FFI call."""
    if backend != "cuda_sim":
        pytest.skip("launches are recorded by the simulator only")
    x = rng.standard_normal((5, 3, 1000)).astype(np.float32)
    _launches(backend)
    got = jax.block_until_ready(jax.vmap(jax.vmap(lambda v: opspec.ops.relu(v, backend=backend)))(*put((x,), backend)))
    np.testing.assert_array_equal(got, np.maximum(x, 0))
    # 1000 indices along x: one block of 256 threads, 4 indices each (opspec/launch.h)
    assert [(r["grid"], r["block"]) for r in _launches(backend)] == [((1, 1, 15), (256, 1, 1))]
    y = rng.standard_normal((5, 1024)).astype(np.float32)
    got = jax.block_until_ready(jax.vmap(lambda v: opspec.ops.block_sum(v, backend=backend))(*put((y,), backend)))
    # float32 sums of 256 values that may cancel: an absolute tolerance beside the relative one
    np.testing.assert_allclose(got, y.astype(np.float64).reshape(5, 4, 256).sum(-1), rtol=1e-5, atol=1e-4)
    assert len(_launches(backend)) == 5


def test_vmap_past_65535_elements_along_z(backend, rng):
    """A grid has at most 65535 blocks along z: past that each thread loops over several
    batch elements (with one batched input, the other read in place)."""
    B = 65535 + 1234
    x = rng.standard_normal((B, 2)).astype(np.float32)
    y = rng.standard_normal(2).astype(np.float32)
    fn = jax.vmap(lambda a: opspec.ops.add(a, y, backend=backend))
    np.testing.assert_array_equal(jax.jit(fn)(*put((x,), backend)), x + y)
