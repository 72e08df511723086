"""The example ML ops of the library (issue 29, item 4) against the jnp a user would write
in their place: every dtype each spec lists (tolerances scaled to the dtype), eager and
jitted, under vmap, their gradients against jnp's and against central differences
(float64), and the CUDA kernels of three of them on the CUDA simulator. Small shapes and
fresh random data (the rng fixture prints its seed). opspec.testing.check_op runs on each
in test_check_op.py (every shipped op, from cases.py, with NumPy references)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import opspec

ops = opspec.ops
DTYPES = [np.float32, np.float64, np.float16, jnp.bfloat16]
IDS = ["f32", "f64", "f16", "bf16"]


# What a user writes in jnp for each op.
def jnp_rms_norm(x, w, eps=1e-6):
    return x * jax.lax.rsqrt(jnp.mean(x * x, axis=-1, keepdims=True) + eps) * w


def jnp_layer_norm(x, gamma, beta, eps=1e-5):
    mu = jnp.mean(x, axis=-1, keepdims=True)
    var = jnp.mean((x - mu) ** 2, axis=-1, keepdims=True)
    return (x - mu) * jax.lax.rsqrt(var + eps) * gamma + beta


def jnp_cross_entropy(logits, labels):
    picked = jnp.take_along_axis(logits, labels[..., None], axis=-1)[..., 0]
    return jax.nn.logsumexp(logits, axis=-1) - picked


def jnp_rope(x, cosines, sines):
    a, b = jnp.split(x, 2, axis=-1)
    c, s = cosines[:, None, :], sines[:, None, :]
    return jnp.concatenate([a * c - b * s, b * c + a * s], axis=-1)


def jnp_embedding_bag(table, indices):
    return table[indices].sum(axis=1)


def jnp_scatter_add(indices, grad, vocab):
    return jnp.zeros((vocab, grad.shape[1]), grad.dtype).at[indices].add(grad[:, None, :])


def tables(rng, seq, half):
    angles = np.arange(seq)[:, None] * rng.uniform(0.01, 1.0, half)[None, :]
    return np.cos(angles), np.sin(angles)


# name -> (the jnp version, make(rng) -> (float64 NumPy args, attrs)); the int inputs stay int32.
CASES = {
    "rms_norm": (
        jnp_rms_norm,
        lambda r: ((r.normal(size=(2, 5, 48)), r.uniform(0.5, 1.5, 48)), {"eps": 1e-5}),
    ),
    "layer_norm": (
        jnp_layer_norm,
        lambda r: ((r.normal(1, 2, (2, 5, 40)), r.uniform(0.5, 1.5, 40), r.normal(size=40)), {}),
    ),
    "gelu_tanh": (lambda x: jax.nn.gelu(x, approximate=True), lambda r: ((r.normal(0, 2, (7, 33)),), {})),
    "silu": (jax.nn.silu, lambda r: ((r.normal(0, 2, (7, 33)),), {})),
    "softmax": (lambda x: jax.nn.softmax(x, axis=-1), lambda r: ((r.normal(0, 2, (3, 6, 37)),), {})),
    "softmax_cross_entropy": (
        jnp_cross_entropy,
        lambda r: ((r.normal(0, 2, (9, 50)), r.integers(0, 50, 9).astype(np.int32)), {}),
    ),
    "rope": (jnp_rope, lambda r: ((r.normal(size=(2, 6, 3, 16)), *tables(r, 6, 8)), {})),
    "embedding_bag": (
        jnp_embedding_bag,
        lambda r: ((r.normal(size=(13, 40)), r.integers(0, 13, (6, 4)).astype(np.int32)), {}),
    ),
    "embedding_scatter_add": (
        jnp_scatter_add,
        lambda r: ((r.integers(0, 13, (6, 4)).astype(np.int32), r.normal(size=(6, 40))), {"vocab": 13}),
    ),
}
NAMES = sorted(CASES)


def cast(args, dtype):
    return tuple(jnp.asarray(a, dtype) if a.dtype.kind == "f" else jnp.asarray(a) for a in args)


def close(got, want, dtype, k=1.0):
    """Within a few roundings of the dtype, relative to the output's scale."""
    eps = {"float64": 1e-12, "float32": 4e-6, "float16": 2e-3, "bfloat16": 1.6e-2}[np.dtype(dtype).name]
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    scale = max(1.0, float(np.abs(want).max(initial=0)))
    np.testing.assert_allclose(got, want, rtol=4 * k * eps, atol=4 * k * eps * scale)


def test_every_ml_op_is_shipped_with_the_dtypes_it_lists():
    for name in NAMES:
        assert name in ops.__all__
        record = getattr(ops, f"_op_{name}")
        assert record.types["T"] == ("float32", "float64", "float16", "bfloat16"), name


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
@pytest.mark.parametrize("dtype", DTYPES, ids=IDS)
@pytest.mark.parametrize("name", NAMES)
def test_matches_the_jnp_a_user_would_write(name, dtype, jit, rng):
    user, make = CASES[name]
    args, attrs = make(rng)
    args = cast(args, dtype)
    op = getattr(ops, name)
    got = (jax.jit(lambda *a: op(*a, **attrs)) if jit else lambda *a: op(*a, **attrs))(*args)
    assert got.dtype == dtype
    # In float64 the jnp version of the same inputs is the reference; in the other dtypes,
    # jnp in the dtype itself rounds more than the kernels (which accumulate in double),
    # so the reference is jnp in float64 on the same (rounded) inputs, cast to the dtype.
    wide = tuple(a.astype(jnp.float64) if jnp.issubdtype(a.dtype, jnp.floating) else a for a in args)
    want = user(*wide, **attrs).astype(dtype)
    assert got.shape == want.shape
    close(got, want, dtype)
    if dtype in (np.float32, np.float64):  # and against jnp in the dtype itself
        close(got, user(*args, **attrs), dtype, k=4)


@pytest.mark.parametrize("name", NAMES)
def test_vmap_matches_jnp(name, rng):
    user, make = CASES[name]
    batch = [make(rng) for _ in range(3)]
    attrs = batch[0][1]
    stacked = tuple(jnp.asarray(np.stack(a)) for a in zip(*(b[0] for b in batch)))
    got = jax.vmap(lambda *a: getattr(ops, name)(*a, **attrs))(*stacked)
    want = jax.vmap(lambda *a: user(*a, **attrs))(*stacked)
    close(got, want, np.float64)


def float_inputs(name, args):
    return [i for i, a in enumerate(args) if np.asarray(a).dtype.kind == "f"]


@pytest.mark.parametrize("name", NAMES)
def test_grad_matches_jnp_and_central_differences(name, rng):
    user, make = CASES[name]
    args, attrs = make(rng)
    args = cast(args, np.float64)
    op = getattr(ops, name)
    out_bar = jnp.asarray(rng.normal(size=np.shape(user(*args, **attrs))))
    positions = float_inputs(name, args)

    def loss(fn, *a):
        return jnp.sum(fn(*a, **attrs) * out_bar)

    got = jax.grad(lambda *a: loss(op, *a), argnums=positions)(*args)
    want = jax.grad(lambda *a: loss(user, *a), argnums=positions)(*args)
    for g, w in zip(got, want):
        close(g, w, np.float64, k=1e3)
    # Central differences along a random direction of every float input together.
    directions = {i: jnp.asarray(rng.normal(size=args[i].shape)) for i in positions}

    def moved(h):
        return tuple(a + h * directions[i] if i in directions else a for i, a in enumerate(args))

    h = 1e-6
    numeric = (loss(op, *moved(h)) - loss(op, *moved(-h))) / (2 * h)
    analytic = sum(jnp.vdot(g, directions[i]) for g, i in zip(got, positions))
    np.testing.assert_allclose(float(numeric), float(analytic), rtol=1e-6, atol=1e-6)


@pytest.mark.cuda_sim
@pytest.mark.skipif(not opspec.has_cuda_sim, reason="built without the CUDA simulator")
@pytest.mark.parametrize("dtype", [np.float32, np.float16, jnp.bfloat16], ids=["f32", "f16", "bf16"])
@pytest.mark.parametrize("name", ["rms_norm", "rope", "softmax"])
def test_cuda_kernels_on_the_simulator(name, dtype, rng):
    """The portable kernels as CUDA runs them (T = __half, __nv_bfloat16 in float16 and
    bfloat16), on the CUDA simulator, against jnp in float64."""
    user, make = CASES[name]
    args, attrs = make(rng)
    args = cast(args, dtype)
    got = getattr(ops, name)(*args, **attrs, backend="cuda_sim")
    assert got.dtype == dtype
    wide = tuple(a.astype(jnp.float64) for a in args)
    close(got, user(*wide, **attrs).astype(dtype), dtype, k=2)


def test_bad_labels_and_indices_are_errors_naming_the_position():
    logits = jnp.zeros((3, 5), jnp.float32)
    with pytest.raises(Exception, match=r"input 'labels'\[1\] = 5 is out of range"):
        jax.block_until_ready(ops.softmax_cross_entropy(logits, jnp.array([0, 5, 1], jnp.int32)))
    table = jnp.ones((4, 8), jnp.float32)
    with pytest.raises(Exception, match=r"input 'indices'\[\d+\] = -1 is out of range"):
        jax.block_until_ready(ops.embedding_bag(table, jnp.array([[0, 1], [2, -1]], jnp.int32)))
    with pytest.raises(Exception, match=r"input 'indices'\[\d+\] = 4 is out of range"):
        grad = jnp.ones((2, 8), jnp.float32)
        jax.block_until_ready(ops.embedding_scatter_add(jnp.array([[0, 4], [2, 1]], jnp.int32), grad, vocab=4))


def test_rope_requires_an_even_head_dim():
    x = jnp.zeros((2, 3, 7), jnp.float32)
    c = jnp.zeros((2, 3), jnp.float32)
    with pytest.raises(TypeError, match=r"require 'dim == 2 \* half'"):
        ops.rope(x, c, c)


def test_bad_indices_with_checks_off_are_rejected_by_the_bodies(checks_off):
    """With checks off no scan runs before the body: the bodies check each label and
    index they read (in_kernel) and fail the call instead of reading or writing there."""
    rejected = "the kernel rejected a value of an input checked in_kernel"
    with pytest.raises(Exception, match=rejected):
        jax.block_until_ready(ops.softmax_cross_entropy(jnp.zeros((2, 5)), jnp.array([7, 0], jnp.int32)))
    with pytest.raises(Exception, match=rejected):
        jax.block_until_ready(ops.embedding_bag(jnp.ones((4, 8)), jnp.array([[0, 9]], jnp.int32)))
    with pytest.raises(Exception, match=rejected):
        jax.block_until_ready(ops.embedding_scatter_add(jnp.array([[0, -3]], jnp.int32), jnp.ones((1, 8)), vocab=4))


@pytest.mark.parametrize("dtype", DTYPES, ids=IDS)
def test_scatter_add_of_one_pair_is_that_row_and_minus_zero_sums_to_plus_zero(dtype, rng):
    """A table row that one pair adds to is the grad row itself, exact in every dtype, as
    its sum in double rounded back is; a -0 in it becomes +0, as 0 + (-0) does in jnp's
    scatter-add. Rows that several pairs add to, and rows none does, as before."""
    grad = rng.normal(size=(5, 16)).astype(dtype)
    grad[0, :4] = -0.0
    # rows 0, 2, 4 and 6 get one pair each (bags 0, 4, 2, 3), 1 two, 3 four, 5 and 7 none
    indices = np.array([[0, 3], [3, 3], [1, 4], [6, 3], [2, 1]], np.int32)
    got = np.asarray(ops.embedding_scatter_add(indices, jnp.asarray(grad), vocab=8))
    assert got.dtype == dtype
    for row, bag in [(0, 0), (4, 2), (6, 3), (2, 4)]:
        want = np.asarray(grad[bag], np.float64) + 0.0  # -0 + 0 = +0
        np.testing.assert_array_equal(got[row], want.astype(dtype))
        assert not np.signbit(got[row]).any() or np.signbit(want).any()
    assert not np.signbit(got[0, :4]).any(), "a -0 alone in its row stayed -0"
    np.testing.assert_array_equal(got[[5, 7]], 0)
    wide = np.asarray(grad, np.float64)
    close(got[1], wide[2] + wide[4], dtype)
    close(got[3], wide[0] + 2 * wide[1] + wide[3], dtype)
