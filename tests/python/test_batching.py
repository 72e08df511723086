"""Native batching (docs/transformations.md): jax.vmap of any op is one FFI call that
reads unbatched inputs in place. References are NumPy loops on fresh random data."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.sparse as sp
from cases import CASES, reference

import opspec

ops = opspec.ops


def _ffi_calls(fn, *args):
    hlo = jax.jit(fn).lower(*args).as_text()
    return hlo.count("stablehlo.custom_call @opspec_")


@pytest.mark.parametrize("name", sorted(CASES))
def test_vmap_over_every_input_combination_is_one_call(name, rng):
    """Every op, batched over each non-empty subset of its inputs (others unbatched),
    against a loop of the op's reference."""
    B = 3
    args, attrs = CASES[name][0](rng, np.float64, 17)
    fn = getattr(ops, name)
    n = len(args)
    for mask in range(1, 1 << n):
        axes = tuple(0 if mask >> i & 1 else None for i in range(n))

        # B variants of each batched input: floats moved by fresh noise (a float input's
        # valid range is the case's), integers (CSR structure) repeated
        def variant(a, b):
            a = np.asarray(a)
            if a.dtype.kind != "f":
                return a
            return a * rng.uniform(0.9, 1.1, a.shape) + (b - 1) * 0.01 * np.abs(a).max(initial=0)

        batched = [np.stack([variant(args[i], b) for b in range(B)]) if axes[i] == 0 else args[i] for i in range(n)]
        out = jax.vmap(lambda *a: fn(*a, **attrs), in_axes=axes)(*batched)
        out = out if isinstance(out, tuple) else (out,)
        for b in range(B):
            one = [batched[i][b] if axes[i] == 0 else args[i] for i in range(n)]
            want = reference(name, one, attrs, np.float64)
            for got, w in zip(out, want):
                np.testing.assert_allclose(np.asarray(got)[b], w, rtol=1e-10, atol=1e-12, err_msg=f"{name} {axes}")
        assert _ffi_calls(jax.vmap(lambda *a: fn(*a, **attrs), in_axes=axes), *batched) == 1


def test_unbatched_csr_matrix_is_read_in_place(rng):
    """vmap of csr_matvec over 64 vectors with the matrix unbatched: one call, and the
    compiled computation never broadcasts the matrix."""
    m = sp.random(200, 100, density=0.05, random_state=int(rng.integers(1 << 31)), format="csr")
    data, indices, indptr = m.data, m.indices.astype(np.int32), m.indptr.astype(np.int32)
    X = rng.standard_normal((64, 100))
    f = jax.vmap(lambda x: ops.csr_matvec(data, indices, indptr, x))
    np.testing.assert_allclose(f(X), (m @ X.T).T, rtol=1e-12, atol=1e-12)
    hlo = jax.jit(f).lower(X).compile().as_text()
    assert f"f64[{data.size}]" in hlo and f"f64[64,{data.size}]" not in hlo


def test_nested_vmap_and_in_axes(rng):
    A = rng.standard_normal((2, 4, 7))
    X = rng.standard_normal((7, 5))  # vectors along axis 1
    out = jax.vmap(jax.vmap(ops.matvec, in_axes=(None, 1)), in_axes=(0, None))(A, X)
    np.testing.assert_allclose(out, np.einsum("aij,jb->abi", A, X), rtol=1e-12, atol=1e-12)
    assert _ffi_calls(jax.vmap(jax.vmap(ops.matvec, in_axes=(None, 1)), in_axes=(0, None)), A, X) == 1
    # out_axes and a batched attribute-free op inside jit
    Y = jax.jit(jax.vmap(ops.sigmoid, in_axes=1, out_axes=1))(X)
    np.testing.assert_allclose(Y, 1 / (1 + np.exp(-X)), rtol=1e-12)


def test_batched_aliased_op_with_donation(rng):
    """exp_trace aliases out to trace: batched, an unbatched trace is the one input that
    gets every batch dim (its output is its memory); donated, it updates in place."""
    trace, spikes, tau = rng.random((4, 9)), rng.random((4, 9)), np.array([0.5])
    f = jax.jit(jax.vmap(ops.exp_trace, in_axes=(0, 0, None)), donate_argnums=0)
    out = f(jnp.asarray(trace), spikes, tau)
    np.testing.assert_allclose(out, trace * np.exp(-0.5) + spikes, rtol=1e-12)
    out = jax.vmap(ops.exp_trace, in_axes=(None, 0, None))(trace[0], spikes, tau)
    np.testing.assert_allclose(out, trace[0] * np.exp(-0.5) + spikes, rtol=1e-12)


def test_scan_of_vmapped_op(rng):
    V = rng.uniform(-75, -50, (3, 10))
    I = rng.uniform(0, 5, (3, 10))
    p = [np.array([v]) for v in (1 / 20, -55.0, -70.0, 0.1)]

    def step(V, _):
        V2, s = jax.vmap(lambda V, I: ops.lif(V, I, *p))(V, I)
        return V2, s

    V_end, S = jax.lax.scan(step, V, None, length=5)
    Vr = V.copy()
    for t in range(5):
        v = Vr + 0.1 * (-(Vr + 70) / 20 + I)
        np.testing.assert_array_equal(S[t], (v >= -55).astype(np.int32))
        Vr = np.where(v >= -55, -70.0, v)
    np.testing.assert_allclose(V_end, Vr, rtol=1e-12)


@pytest.mark.parametrize("method", ["sequential", "sequential_unrolled", "broadcast_all", "expand_dims"])
def test_vmap_overrides(method, rng):
    """A spec's vmap: other than native: the record of add with that method instead."""
    import dataclasses

    from opspec import _runtime
    from opspec.testing import op_record

    record = dataclasses.replace(op_record(ops.add), vmap_method=method)
    X, y = rng.standard_normal((4, 6)), rng.standard_normal(6)
    in_axes = (0, 0) if method == "expand_dims" else (0, None)  # expand_dims needs equal '...' groups
    Y = X[::-1].copy() if method == "expand_dims" else y
    out = jax.vmap(lambda a, b: _runtime.call(record, (a, b), {}), in_axes=in_axes)(X, Y)
    np.testing.assert_allclose(out, X + Y, rtol=1e-12)
    calls = jax.jit(jax.vmap(lambda a, b: _runtime.call(record, (a, b), {}), in_axes=in_axes)).lower(X, Y).as_text()
    if method.startswith("sequential"):
        assert "while" in calls or calls.count("custom_call @opspec_add") == 1  # a loop of single calls
        assert "opspec_batch" not in calls


def test_vmap_none_refuses(rng):
    import dataclasses

    from opspec import _runtime
    from opspec.testing import op_record

    record = dataclasses.replace(op_record(ops.add), vmap_method="none")
    with pytest.raises(NotImplementedError, match=r"opspec\.ops\.add: vmap method 'none'"):
        jax.vmap(lambda a: _runtime.call(record, (a, a), {}))(rng.standard_normal((2, 3)))
