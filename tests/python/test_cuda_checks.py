"""A spec's `check:` on the CUDA path (issue 24): the check kernel before the op's
kernels, the in_kernel flag read after them, the same named errors as on CPU. Run on the
CUDA simulator (under ASan by `./run sanitize`, where the audit found 11 of 32 CSR faults
reading out of bounds); the same handler code runs on a GPU. csr_rmatvec has no CUDA
kernel (a CPU-only scatter), so only csr_matvec has a CUDA path to check.
"""

import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.sparse as sp
from test_csr_checks import COLS, ROWS, corrupt, csr, expected_error

import opspec
from opspec import ops

pytestmark = [
    pytest.mark.cuda_sim,
    pytest.mark.skipif(not opspec.has_cuda_sim, reason="built without the CUDA simulator (OPSPEC_CUDA_SIM=OFF)"),
]

CPU = jax.devices("cpu")[0]


def matvec(backend, *args):
    return np.asarray(jax.block_until_ready(ops.csr_matvec(*args, backend=backend)))


def error_of(backend, *args):
    """The call's error message from `opspec <op>:` on, or None when it succeeded."""
    try:
        matvec(backend, *args)
    except Exception as e:  # noqa: BLE001 - XlaRuntimeError or its subclass, as JAX raises it
        text = str(e)
        return text[text.index("opspec ") :]
    return None


def test_good_data_matches_scipy(rng):
    for rows, cols in [(1, 1), (ROWS, COLS), (300, 200)]:
        data, indices, indptr, m = csr(rng, rows, cols)
        x = rng.standard_normal(cols)
        np.testing.assert_allclose(matvec("cuda_sim", data, indices, indptr, x), m @ x, rtol=1e-12, atol=1e-12)


def test_the_audit_faults_give_the_cpu_error(rng):
    """Indices out of range both ways, indptr unsorted, out of range, negative, past nnz:
    the simulator names the same position with the same words as the CPU."""
    kinds = set()
    for _ in range(80):
        data, indices, indptr, m = csr(rng, ROWS, COLS)
        x = rng.standard_normal(COLS)
        kinds.add(corrupt(rng, indices, indptr, COLS))
        want = expected_error("csr_matvec", indices, indptr, COLS, ROWS)
        got = error_of("cuda_sim", data, indices, indptr, x)
        assert got == error_of("cpu", data, indices, indptr, x)
        if want is None:
            assert got is None
            np.testing.assert_allclose(matvec("cuda_sim", data, indices, indptr, x), m @ x, rtol=1e-12, atol=1e-12)
        else:
            assert got is not None
            assert re.fullmatch(want, got), (want, got)
    assert len(kinds) == 6


def test_the_first_bad_position_of_a_large_input(rng):
    """Many blocks of the check kernel find bad values at once: the least position wins."""
    data, indices, indptr, _ = csr(rng, 2000, 300)
    x = rng.standard_normal(300)
    bad = np.sort(rng.choice(len(indices), 50, replace=False))
    indices[bad] = 300 + rng.integers(0, 100, 50)
    assert error_of("cuda_sim", data, indices, indptr, x) == error_of("cpu", data, indices, indptr, x)
    assert f"'indices'[{bad[0]}]" in error_of("cuda_sim", data, indices, indptr, x)
    indices[bad] = 0
    indptr[1500:] = indptr[1499] - 1  # unsorted at 1500 (later values equal: sorted)
    assert f"'indptr'[1500] = {indptr[1500]} is less than indptr[1499]" in error_of(
        "cuda_sim", data, indices, indptr, x
    )


def test_batched_under_vmap(rng):
    """vmap over the matrix and the vector: one launch for the batch, the error names the
    position within the first bad element, as on CPU."""
    B = 4
    mats = [csr(rng, ROWS, COLS) for _ in range(B)]
    nnz = min(len(m[1]) for m in mats)
    data = np.stack([m[0][:nnz] for m in mats])
    indices = np.stack([m[1][:nnz] for m in mats])
    indptr = np.stack([np.minimum(m[2], nnz) for m in mats]).astype(np.int32)
    X = rng.standard_normal((B, COLS))
    f = jax.vmap(lambda d, i, p, x, backend: ops.csr_matvec(d, i, p, x, backend=backend), in_axes=(0, 0, 0, 0, None))

    def run(backend, indices, indptr):
        try:
            return np.asarray(jax.block_until_ready(f(data, indices, indptr, X, backend))), None
        except Exception as e:  # noqa: BLE001
            return None, str(e)[str(e).index("opspec ") :]

    good, err = run("cuda_sim", indices, indptr)
    assert err is None
    for b in range(B):
        ref = sp.csr_matrix((data[b], indices[b], indptr[b]), shape=(ROWS, COLS)) @ X[b]
        np.testing.assert_allclose(good[b], ref, rtol=1e-12)
    for _ in range(20):
        bi, bp = indices.copy(), indptr.copy()
        k = int(rng.integers(1, B))
        corrupt(rng, bi[k], bp[k], COLS)
        assert run("cuda_sim", bi, bp)[1] == run("cpu", bi, bp)[1]


def test_one_check_kernel_per_checked_input(rng):
    """The cost: with checks on, one check kernel before the op's (indptr; indices is
    in_kernel); with checks off, none. The launch log shows every kernel launched."""
    data, indices, indptr, _ = csr(rng, ROWS, COLS)
    x = rng.standard_normal(COLS)
    opspec.cuda_sim_launches()
    matvec("cuda_sim", data, indices, indptr, x)
    assert [r["block"] for r in opspec.cuda_sim_launches()][0] == (256, 1, 1)  # the check kernel first
    opspec.set_checks(False)
    try:
        matvec("cuda_sim", data, indices, indptr, x)
        assert len(opspec.cuda_sim_launches()) == 1  # the op's kernel only
    finally:
        opspec.set_checks(True)
    # vmap over x only: the shared indptr is scanned once for the batch, not per element.
    X = rng.standard_normal((5, COLS))
    jax.block_until_ready(jax.vmap(lambda x: ops.csr_matvec(data, indices, indptr, x, backend="cuda_sim"))(X))
    assert len(opspec.cuda_sim_launches()) == 2
    # vmap over indptr too: each element's is scanned.
    P = np.stack([indptr] * 5)
    jax.block_until_ready(jax.vmap(lambda p, x: ops.csr_matvec(data, indices, p, x, backend="cuda_sim"))(P, X))
    assert len(opspec.cuda_sim_launches()) == 6


def test_checks_off_never_reads_out_of_bounds(rng, checks_off):
    """Garbage or the body's own rejection (the message the CPU gives): under ASan, no
    report."""
    rejected = results = 0
    for _ in range(200):
        data, indices, indptr, _ = csr(rng, ROWS, COLS)
        x = rng.standard_normal(COLS)
        for _ in range(int(rng.integers(1, 4))):
            corrupt(rng, indices, indptr, COLS)
        err = error_of("cuda_sim", data, indices, indptr, x)
        if err is None:
            results += 1
        else:
            assert err == error_of("cpu", data, indices, indptr, x)
            assert "the kernel rejected a value of an input checked in_kernel (checks are off" in err
            rejected += 1
    assert rejected and results


def test_jit_and_grad_on_the_simulator(rng):
    """Checks run inside jit as well; the gradient with respect to data is a jnp gather
    (no CUDA kernel), but the forward call still checks."""
    data, indices, indptr, m = csr(rng, ROWS, COLS)
    x = jnp.asarray(rng.standard_normal(COLS))
    f = jax.jit(lambda i: ops.csr_matvec(data, i, indptr, x, backend="cuda_sim"))
    np.testing.assert_allclose(f(indices), m @ np.asarray(x), rtol=1e-12, atol=1e-12)
    bad = indices.copy()
    bad[-1] = -7
    with pytest.raises(Exception, match=rf"opspec csr_matvec: input 'indices'\[{len(bad) - 1}\] = -7 is out of range"):
        jax.block_until_ready(f(bad))
