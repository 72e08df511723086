"""myops against NumPy on fresh random data, next to opspec's own ops in one process."""

import os

import jax
import numpy as np
import pytest

jax.config.update("jax_enable_x64", True)

import myops  # noqa: E402

import opspec  # noqa: E402

DTYPES = [np.float32, np.float64]


@pytest.fixture
def rng():
    seed = int.from_bytes(os.urandom(4), "little")
    print(f"random seed {seed}")  # shown on failure, to replay
    return np.random.default_rng(seed)


def tol(dtype):
    return dict(rtol=2e-5, atol=2e-6) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("dtype", DTYPES)
def test_add(rng, dtype):
    x, y = rng.standard_normal((2, 3, 257)).astype(dtype)
    np.testing.assert_allclose(myops.ops.add(x, y), x + y, **tol(dtype))
    out = jax.jit(myops.ops.add, static_argnames="alpha")(x, y, alpha=-2.5)
    np.testing.assert_allclose(out, x - 2.5 * y, **tol(dtype))


@pytest.mark.parametrize("dtype", DTYPES)
def test_softplus(rng, dtype):
    x = (rng.standard_normal(10_000) * 30).astype(dtype)  # large |x|: no overflow
    for beta in (1.0, 0.5):
        want = np.logaddexp(0, beta * x.astype(np.float64)) / beta
        np.testing.assert_allclose(myops.ops.softplus(x, beta=beta), want.astype(dtype), **tol(dtype))


@pytest.mark.parametrize("dtype", DTYPES)
def test_row_norms(rng, dtype):
    x = rng.standard_normal((50, 33)).astype(dtype)
    np.testing.assert_allclose(jax.jit(myops.ops.row_norms)(x), np.linalg.norm(x, axis=1), **tol(dtype))
    batched = jax.vmap(myops.ops.row_norms)(np.stack([x, 2 * x]))
    np.testing.assert_allclose(
        batched, np.stack([np.linalg.norm(x, axis=1), 2 * np.linalg.norm(x, axis=1)]), **tol(dtype)
    )


def test_two_adds_in_one_process(rng):
    """opspec ships an `add` too; each package's op runs its own handler."""
    x, y = rng.standard_normal((2, 1000)).astype(np.float32)
    assert (myops.target_name("add"), opspec.target_name("add")) == ("myops_add", "opspec_add")
    both = jax.jit(lambda a, b: opspec.ops.add(myops.ops.add(a, b, alpha=3.0), b))(x, y)
    np.testing.assert_allclose(both, x + 4 * y, rtol=2e-5, atol=2e-6)
    np.testing.assert_allclose(opspec.ops.add(x, y), x + y, rtol=2e-5, atol=2e-6)


def test_calls_are_checked():
    with pytest.raises(TypeError, match=r"^myops\.ops\.row_norms: input 'x': expected rank 2"):
        myops.ops.row_norms(np.ones(3, np.float32))
    with pytest.raises(TypeError, match=r"^myops\.ops\.add: input 'y': expected dtype float32"):
        myops.ops.add(np.ones(3, np.float32), np.ones(3, np.float64))


def test_package_metadata():
    info = myops.build_info()
    assert info["package"] == "myops" and myops.__version__ == "0.1.0"
    assert info["opspec"] == opspec.__version__ and info["ffi_api"] == "0.1"
    assert "cpu" in myops.registered_platforms
