"""Every shipped op against its NumPy reference: eager, jitted, both dtypes, sizes on
both sides of the CPU parallel threshold, chained with jnp, and under vmap."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from cases import CASES, reference
from conftest import tol

import opspec

OPS = sorted(CASES)
DTYPES = [np.float32, np.float64]


def run(name, args, attrs, jit):
    fn = getattr(opspec.ops, name)
    call = lambda *a: fn(*a, **attrs)
    out = jax.jit(call)(*args) if jit else call(*args)
    return out if isinstance(out, tuple) else (out,)


def check(name, args, attrs, dtype, out):
    want = reference(name, args, attrs, dtype)
    assert len(out) == len(want)
    for got, exp in zip(out, want):
        got = np.asarray(got)
        assert got.shape == np.shape(exp)
        if got.dtype.kind in "iub":
            np.testing.assert_array_equal(got, exp)
        else:
            assert got.dtype == dtype
            np.testing.assert_allclose(got.astype(np.float64), np.asarray(exp).astype(np.float64), **tol(dtype))


def test_every_spec_has_a_case():
    assert set(opspec.ops.__all__) == set(CASES)


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
@pytest.mark.parametrize("dtype", DTYPES, ids=["f32", "f64"])
@pytest.mark.parametrize("name", OPS)
def test_op_matches_numpy(name, dtype, jit, rng):
    n = int(rng.integers(1, 3000))
    args, attrs = CASES[name][0](rng, dtype, n)
    check(name, args, attrs, dtype, run(name, args, attrs, jit))


# The ops whose specs list float16: _Float16 on CPU (computed in float, rounded on store).
FLOAT16_OPS = sorted(n for n in OPS if "float16" in getattr(opspec.ops, f"_op_{n}").types.get("T", ()))


# The ops whose specs list bfloat16: widened to float around a float kernel on CPU.
BFLOAT16_OPS = sorted(n for n in OPS if "bfloat16" in getattr(opspec.ops, f"_op_{n}").types.get("T", ()))
LOW_PRECISION = [(np.float16, n) for n in FLOAT16_OPS] + [(jnp.bfloat16, n) for n in BFLOAT16_OPS]


def test_low_precision_ops_are_the_documented_ones():
    ml = ["embedding_bag", "embedding_scatter_add", "gelu_tanh", "layer_norm", "rms_norm", "rope", "silu", "softmax"]
    assert FLOAT16_OPS == BFLOAT16_OPS == sorted(["add", "relu", "scale", "sigmoid", "softmax_cross_entropy", *ml])


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
@pytest.mark.parametrize("dtype,name", LOW_PRECISION, ids=[f"{np.dtype(t).name}-{n}" for t, n in LOW_PRECISION])
def test_low_precision_op_matches_numpy(dtype, name, jit, rng):
    # Fresh random data each run (the rng fixture's seed is printed); both sides of the
    # parallel threshold. float16 is _Float16 on CPU; bfloat16 is widened to float copies.
    for n in (int(rng.integers(1, 3000)), max(2 * opspec.parallel_threshold(), 70_000)):
        args, attrs = CASES[name][0](rng, dtype, n)
        assert all(a.dtype == dtype for a in args if a.dtype.kind not in "iu")
        check(name, args, attrs, dtype, run(name, args, attrs, jit))
        # jnp arrays are accepted as well as NumPy's (ml_dtypes' for bfloat16).
        check(name, args, attrs, dtype, run(name, [jnp.asarray(a, a.dtype) for a in args], attrs, jit))


def test_bfloat16_rounds_to_nearest_even_and_keeps_specials():
    """The handler narrows float results to bfloat16 as ml_dtypes (and XLA) do: to nearest,
    ties to even; NaN stays NaN, infinities stay infinite."""
    one = 1.0
    x = np.array([one, one + 2**-7, -(one + 2**-7), 3.0, np.nan, np.inf, -np.inf, 0.0], jnp.bfloat16)
    y = np.array([2**-8, 2**-8, -(2**-8), 2**-7, 1.0, 1.0, -1.0, -0.0], jnp.bfloat16)
    want = (x.astype(np.float32) + y.astype(np.float32)).astype(jnp.bfloat16)
    got = np.asarray(opspec.ops.add(x, y))
    assert got.dtype == jnp.bfloat16
    np.testing.assert_array_equal(got.view(np.uint16), want.view(np.uint16))
    assert [float(v) for v in got[:2]] == [1.0, 1.0 + 2**-6]  # a tie to even each way


@pytest.mark.parametrize("threshold", [1, None], ids=["parallel", "default"])
def test_bfloat16_batched_and_in_parallel(threshold, rng):
    """vmap of a bfloat16 op with one input batched and one read in place: the handler
    widens whole batched buffers, their steps doubled; every loop parallel or not."""
    before = opspec.parallel_threshold()
    try:
        if threshold:
            opspec.set_parallel_threshold(threshold)
        X = rng.uniform(-3, 3, (5, 10_007)).astype(jnp.bfloat16)
        y = rng.uniform(-3, 3, 10_007).astype(jnp.bfloat16)
        s = np.array([1.5], jnp.bfloat16)
        got = jax.jit(jax.vmap(opspec.ops.add, in_axes=(0, None)))(X, y)
        want = (X.astype(np.float32) + y.astype(np.float32)).astype(jnp.bfloat16)
        np.testing.assert_array_equal(np.asarray(got).view(np.uint16), want.view(np.uint16))
        got = jax.vmap(opspec.ops.scale, in_axes=(0, None))(X, s)
        want = (X.astype(np.float32) * np.float32(1.5)).astype(jnp.bfloat16)
        np.testing.assert_array_equal(np.asarray(got).view(np.uint16), want.view(np.uint16))
    finally:
        opspec.set_parallel_threshold(before)


def test_bfloat16_is_refused_where_the_spec_lists_none():
    x = jnp.ones((4, 4), jnp.bfloat16)
    with pytest.raises(TypeError, match="expected dtype float32 or float64 \\(type T\\), got bfloat16"):
        opspec.ops.hadamard(x, x)


@pytest.mark.parametrize("name", ["add", "relu", "sigmoid", "split", "exp_decay", "lif", "csr_matvec", "sum"])
def test_large_inputs_take_the_parallel_path(name, rng):
    # The threshold is set here, not read: a machine's tuned value may be far larger.
    before = opspec.parallel_threshold()
    opspec.set_parallel_threshold(4096)
    try:
        args, attrs = CASES[name][0](rng, np.float32, 70_000)
        check(name, args, attrs, np.float32, run(name, args, attrs, True))
    finally:
        opspec.set_parallel_threshold(before)


def test_thread_cap_and_threshold_keep_results(rng):
    x, y = rng.random(100_000), rng.random(100_000)
    before = opspec.parallel_threshold()
    try:
        for threads, threshold in [(1, 1), (2, 1), (0, 10**9)]:
            opspec.set_cpu_threads(threads)
            opspec.set_parallel_threshold(threshold)
            np.testing.assert_allclose(opspec.ops.add(x, y), x + y)
            np.testing.assert_allclose(opspec.ops.parallel_add(x, y), x + y)
            a, b = x.reshape(400, 250), y.reshape(400, 250)  # a collapsed 2-D loop nest
            np.testing.assert_allclose(opspec.ops.hadamard(a, b), a * b)
    finally:
        opspec.set_cpu_threads(0)
        opspec.set_parallel_threshold(before)


@pytest.mark.parametrize("dtype", DTYPES, ids=["f32", "f64"])
def test_chained_with_jnp_under_jit(dtype, rng):
    a, b = rng.random(128).astype(dtype), rng.random(128).astype(dtype)

    @jax.jit
    def pipeline(a, b):
        t = opspec.ops.add(a, b)
        t = jnp.sin(t) * jnp.sqrt(jnp.abs(t) + 1.0)
        return opspec.ops.relu(t - 0.5)

    t = np.sin(a.astype(np.float64) + b) * np.sqrt(np.abs(a.astype(np.float64) + b) + 1.0)
    np.testing.assert_allclose(pipeline(a, b), np.maximum(t - 0.5, 0), **tol(dtype))
    np.testing.assert_allclose(pipeline(2 * a, 0.5 * b), np.asarray(pipeline(2 * a, 0.5 * b)))


def test_any_shape_for_elementwise_ops(rng):
    x = rng.normal(size=(3, 4, 5))
    np.testing.assert_allclose(opspec.ops.relu(x), np.maximum(x, 0))
    pos, neg = opspec.ops.split(x)
    np.testing.assert_allclose(pos + neg, x)
    assert pos.shape == (3, 4, 5)


def test_attr_default_and_explicit(rng):
    x = rng.normal(size=300)
    np.testing.assert_allclose(opspec.ops.leaky_relu(x), np.where(x > 0, x, 0.01 * x))
    np.testing.assert_allclose(opspec.ops.leaky_relu(x, alpha=0.25), np.where(x > 0, x, 0.25 * x))
    np.testing.assert_allclose(opspec.ops.leaky_relu(x, alpha=np.float32(0.5)), np.where(x > 0, x, 0.5 * x))
    f = jax.jit(opspec.ops.leaky_relu, static_argnames="alpha")
    np.testing.assert_allclose(f(x, alpha=0.1), np.where(x > 0, x, 0.1 * x))


@pytest.mark.parametrize("name", ["add", "relu", "leaky_relu", "split", "sigmoid"])
def test_vmap_broadcast_all(name, rng):
    args, attrs = CASES[name][0](rng, np.float64, 50)
    batched = tuple(np.stack([a, 2 * a]) for a in args)
    out = jax.vmap(lambda *a: getattr(opspec.ops, name)(*a, **attrs))(*batched)
    out = out if isinstance(out, tuple) else (out,)
    for k in range(2):
        want = reference(name, tuple(b[k] for b in batched), attrs, np.float64)
        for got, exp in zip(out, want):
            np.testing.assert_allclose(np.asarray(got)[k], exp, rtol=1e-12)


def test_vmap_sequential_with_unbatched_args(rng):
    A = rng.normal(size=(4, 6, 5))
    x = rng.normal(size=5)
    out = jax.vmap(opspec.ops.matvec, in_axes=(0, None))(A, x)
    np.testing.assert_allclose(out, A @ x, rtol=1e-12, atol=1e-12)
    s = rng.normal(size=(3, 1))
    xs = rng.normal(size=(3, 10))
    np.testing.assert_allclose(jax.vmap(opspec.ops.scale)(xs, s), xs * s, rtol=1e-12)


@pytest.mark.parametrize(
    "name",
    [
        "add",
        "relu",
        "sigmoid",
        "split",
        "scale",
        "exp_decay",
        "matvec",
        "csr_matvec",
        "abs_two_pass",
        "block_sum",
        "lif",
        "spike_reset",
        "sum",
        "running_stats",
    ],
)
def test_zero_size_inputs(name, rng):
    args, attrs = CASES[name][0](rng, np.float64, 0)
    out = run(name, args, attrs, True)
    if name == "running_stats":
        assert all(np.isnan(np.asarray(o)).all() and o.shape == (1,) for o in out)
        return
    check(name, args, attrs, np.float64, out)


def test_hadamard_2d_launch_seed_numbers():
    # The GPU tutorial's 64 x 64 example.
    A = jnp.arange(64 * 64, dtype=jnp.float32).reshape(64, 64)
    B = jnp.ones((64, 64), dtype=jnp.float32) * 2.0
    np.testing.assert_array_equal(opspec.ops.hadamard(A, B), np.asarray(A) * 2)


def test_every_op_declares_its_cost():
    for name in OPS:
        record = getattr(opspec.ops, f"_op_{name}")
        assert record.bytes is not None and record.flops is not None, name


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64], ids=["f16", "f32", "f64"])
def test_cost_follows_the_shapes_and_the_element_size(dtype, rng):
    n = int(rng.integers(1, 10_000))
    x = np.zeros((2, n), dtype)
    size = np.dtype(dtype).itemsize
    assert opspec.cost(opspec.ops.add, x, x) == {"bytes": 3 * 2 * n * size, "flops": 2 * n}
    assert opspec.cost(opspec.ops.scale, x[0], x[0, :1]) == {"bytes": (2 * n + 1) * size, "flops": n}


def test_cost_of_csr_matvec_counts_the_index_arrays(rng):
    args, attrs = CASES["csr_matvec"][0](rng, np.float64, 50)
    data, indices, indptr, x = args
    nnz, rows = len(data), len(indptr) - 1
    want = nnz * (8 + 4) + (rows + 1) * 4 + len(x) * 8 + rows * 8
    assert opspec.cost(opspec.ops.csr_matvec, *args, **attrs) == {"bytes": want, "flops": 2 * nnz}


def _ulps(got, want):
    """|got - want| in float32 ulps of want (want in float64)."""
    spacing = np.spacing(np.abs(want).astype(np.float32)).astype(np.float64)
    return np.abs(got.astype(np.float64) - want) / np.maximum(spacing, 2.0**-149)


def test_float32_math_is_float_math_and_vectorised_within_its_ulps(rng):
    # sigmoid's body is exp of T: float32 calls expf (libmvec's vector form where the
    # build links it: docs/spec.md, "Math in bodies"), not exp of double. Against the
    # float64 formula: a few ulp, the edges (NaN, infinities, overflow of exp, tiny and
    # subnormal values) as IEEE gives them, over random values of every magnitude.
    edges = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-45, -1e-45, 88.72, -88.72, 89.0, -89.0, 104.0, -104.0, 1e30, -1e30]
    magnitudes = rng.uniform(-40, 7, 4096)
    x = np.concatenate([edges, np.sign(rng.uniform(-1, 1, 4096)) * 2.0**magnitudes]).astype(np.float32)
    got = np.asarray(jax.jit(opspec.ops.sigmoid)(x))
    with np.errstate(over="ignore"):
        want = 1 / (1 + np.exp(-x.astype(np.float64)))
    assert np.array_equal(np.isnan(got), np.isnan(want))
    # XLA runs kernels with subnormals flushed to zero (jnp's sigmoid gives 0 there too).
    flushed = np.abs(want) < np.finfo(np.float32).tiny
    assert np.all(got[flushed] == 0)
    normal = ~np.isnan(want) & ~flushed
    assert _ulps(got[normal], want[normal]).max() <= 4, x[normal][np.argmax(_ulps(got[normal], want[normal]))]
    # exp_decay's prologue: exp of a float32 attribute-like input in float.
    d = np.array([0.3], np.float32)
    y = np.asarray(opspec.ops.exp_decay(np.ones(8, np.float32), d))
    assert _ulps(y, np.full(8, np.exp(-0.3))).max() <= 4
