"""Bad CSR data for csr_matvec and csr_rmatvec, drawn at random: with checks on, the
error the CPU scan names (the first bad position); with checks off, an error or garbage
but never a read or write out of bounds (issue 24: csr_rmatvec's scatter wrote through
unchecked indices). Run under ASan by `./run sanitize` (test_cuda_checks.py holds the
same faults on the CUDA simulator).
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.sparse as sp

from opspec import ops

INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1


def csr(rng, rows, cols, dtype=np.float64):
    """A random CSR matrix with rows x cols entries, some rows empty."""
    m = sp.random(rows, cols, density=0.3, random_state=rng, dtype=dtype, format="csr")
    return m.data, m.indices.astype(np.int32), m.indptr.astype(np.int32), m


def corrupt(rng, indices, indptr, n):
    """One of the audit's faults, in place: a name for failure messages."""
    nnz = len(indices)
    kind = rng.choice(["index_high", "index_low", "indptr_unsorted", "indptr_high", "indptr_negative", "indptr_last"])
    if kind == "index_high" and nnz:
        indices[rng.integers(nnz)] = rng.choice([n, n + int(rng.integers(1, 1000)), INT32_MAX])
    elif kind == "index_low" and nnz:
        indices[rng.integers(nnz)] = rng.choice([-1, -int(rng.integers(2, 1000)), INT32_MIN])
    elif kind == "indptr_unsorted":
        r = int(rng.integers(1, len(indptr)))
        indptr[r] = max(int(indptr[r - 1]) - int(rng.integers(1, 5)), INT32_MIN)
    elif kind == "indptr_high":
        indptr[rng.integers(len(indptr))] = rng.choice([nnz + 1, nnz + int(rng.integers(2, 10**6)), INT32_MAX])
    elif kind == "indptr_negative":
        indptr[rng.integers(len(indptr))] = rng.choice([-1, -int(rng.integers(2, 1000)), INT32_MIN])
    else:
        indptr[-1] = nnz + int(rng.integers(1, 50))
    return str(kind)


def expected_error(op, indices, indptr, n, rows_read):
    """The CPU's message for this data, or None when the call is valid: indptr is scanned
    before the body; indices only when the body reads a bad one (in_kernel), and then
    the scan names its first bad position anywhere."""
    nnz = len(indices)
    for i, v in enumerate(indptr):
        if v < 0 or v > nnz:
            return rf"opspec {op}: input 'indptr'\[{i}\] = {v} is out of range: expected 0 <= value <= nnz = {nnz}"
        if i and v < indptr[i - 1]:
            return (
                rf"opspec {op}: input 'indptr'\[{i}\] = {v} is less than indptr\[{i - 1}\] = {indptr[i - 1]}: "
                r"expected non-decreasing values"
            )
    read = [p for r in range(rows_read) for p in range(indptr[r], indptr[r + 1])]
    if not any(indices[p] < 0 or indices[p] >= n for p in read):
        return None
    first = next(p for p, v in enumerate(indices) if v < 0 or v >= n)
    return (
        rf"opspec {op}: input 'indices'\[{first}\] = {indices[first]} is out of range: "
        rf"expected 0 <= value <= n - 1 = {n - 1}"
    )


ROWS, COLS = 9, 7
MATVEC = jax.jit(ops.csr_matvec)
RMATVEC = jax.jit(ops.csr_rmatvec, static_argnames="n")


def call(op, data, indices, indptr, v, **kwargs):
    f = {"csr_matvec": MATVEC, "csr_rmatvec": RMATVEC}[op]
    return np.asarray(
        jax.block_until_ready(f(data, indices, indptr, v, **({"n": COLS} if op == "csr_rmatvec" else {})))
    )


def reference(op, m, v):
    return m @ v if op == "csr_matvec" else m.T @ v


@pytest.mark.parametrize("op", ["csr_matvec", "csr_rmatvec"])
def test_bad_csr_with_checks_on_is_the_named_error(rng, op):
    for _ in range(60):
        data, indices, indptr, m = csr(rng, ROWS, COLS)
        v = rng.standard_normal(COLS if op == "csr_matvec" else ROWS)
        kind = corrupt(rng, indices, indptr, COLS)
        want = expected_error(op, indices, indptr, COLS, ROWS)
        if want is None:  # a bad index no row reads: the call is valid
            np.testing.assert_allclose(
                call(op, data, indices, indptr, v), reference(op, m, v), rtol=1e-12, err_msg=kind
            )
            continue
        with pytest.raises(Exception, match=want):
            call(op, data, indices, indptr, v)


@pytest.mark.parametrize("op", ["csr_matvec", "csr_rmatvec"])
def test_bad_csr_with_checks_off_never_reads_or_writes_out_of_bounds(rng, op, checks_off):
    """Garbage or the body's own rejection; under ASan, no report. Larger faults too:
    indices and row pointers near the int32 limits."""
    rejected = results = 0
    for _ in range(300):
        data, indices, indptr, _ = csr(rng, ROWS, COLS)
        v = rng.standard_normal(COLS if op == "csr_matvec" else ROWS)
        for _ in range(int(rng.integers(1, 4))):
            corrupt(rng, indices, indptr, COLS)
        try:
            out = call(op, data, indices, indptr, v)
        except Exception as e:  # noqa: BLE001 - the one error checks off may still give
            assert "the kernel rejected a value of an input checked in_kernel (checks are off" in str(e), str(e)
            rejected += 1
        else:
            assert out.shape == (ROWS if op == "csr_matvec" else COLS,)
            results += 1
    assert rejected and results  # both outcomes were exercised


GRAD_X = jax.jit(jax.grad(lambda x, data, indices, indptr: ops.csr_matvec(data, indices, indptr, x).sum()))


def test_gradient_through_csr_rmatvec_with_bad_indices_and_checks_off(rng, checks_off):
    """jax.grad of csr_matvec with respect to x runs csr_rmatvec on the same indices."""
    for _ in range(30):
        data, indices, indptr, _ = csr(rng, ROWS, COLS)
        if not len(indices):
            continue
        indices[rng.integers(len(indices))] = rng.choice([COLS, 10**6, INT32_MAX, -1, INT32_MIN])
        x = jnp.asarray(rng.standard_normal(COLS))
        with pytest.raises(Exception, match="the kernel rejected a value of an input checked in_kernel"):
            jax.block_until_ready(GRAD_X(x, data, indices, indptr))


def test_gradient_through_csr_rmatvec_checks_on(rng):
    data, indices, indptr, m = csr(rng, ROWS, COLS)
    x = jnp.asarray(rng.standard_normal(COLS))
    grad = jax.grad(lambda x: ops.csr_matvec(data, indices, indptr, x).sum())
    np.testing.assert_allclose(grad(x), m.T @ np.ones(ROWS), rtol=1e-12)
    bad = indices.copy()
    p = int(rng.integers(len(bad)))
    bad[p] = COLS + 3
    # The forward call or its transpose (csr_rmatvec) names it, whichever XLA runs first.
    with pytest.raises(Exception, match=rf"opspec csr_r?matvec: input 'indices'\[{p}\] = {COLS + 3} is out of range"):
        jax.block_until_ready(jax.grad(lambda x: ops.csr_matvec(data, bad, indptr, x).sum())(x))
