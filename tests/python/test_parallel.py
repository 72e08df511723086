"""Parallel CPU loops through JAX (runtime/src/parallel.c, runtime/src/handler.c): every
op with every loop parallel (threshold 1), in each pool, one call and natively batched
(ranges that cross from one batch element into the next), against NumPy; and calls from
several Python threads at once. The pool's own protocol is tested in C
(tests/c/test_parallel.c)."""

import threading

import jax
import numpy as np
import pytest
from cases import CASES, reference
from conftest import tol
from test_ops import check, run

import opspec

POOLS = ["opspec", "xla", "openmp"]


@pytest.fixture
def every_loop_parallel():
    """Threshold 1 and three threads (more than this 2-core machine has: worker numbers
    past the cores), restored after the test."""
    before = opspec.parallel_threshold()
    opspec.set_parallel_threshold(1)
    opspec.set_cpu_threads(3)
    yield
    opspec.set_parallel_threshold(before)
    opspec.set_cpu_threads(0)
    opspec.set_cpu_pool("opspec")


def test_pool_names():
    assert opspec.cpu_pool() == "opspec"
    for name in POOLS:
        opspec.set_cpu_pool(name)
        assert opspec.cpu_pool() == name
    opspec.set_cpu_pool("opspec")
    with pytest.raises(ValueError, match="unknown CPU pool 'gomp': expected one of 'opspec', 'xla', 'openmp'"):
        opspec.set_cpu_pool("gomp")


@pytest.mark.parametrize("pool", POOLS)
@pytest.mark.parametrize("name", sorted(CASES))
def test_every_op_with_every_loop_parallel(name, pool, rng, every_loop_parallel):
    opspec.set_cpu_pool(pool)
    # one chunk; a few with a partial last one; many (the smallest chunk is 4096 trips)
    for n in (1, 4097, int(rng.integers(60_000, 80_000))):
        args, attrs = CASES[name][0](rng, np.float64, n)
        check(name, args, attrs, np.float64, run(name, args, attrs, jit=n > 1))


@pytest.mark.parametrize("pool", POOLS)
@pytest.mark.parametrize("name", sorted(CASES))
def test_batched_ranges_cross_elements(name, pool, rng, every_loop_parallel):
    """vmap over 5 elements of an odd size: the handler runs the launch of all five as
    one index space, so chunks start and end inside elements. Batched over every input,
    and over the first one only (the others read in place)."""
    opspec.set_cpu_pool(pool)
    B = 5
    args, attrs = CASES[name][0](rng, np.float64, 10_007)
    n = len(args)
    for axes in [(0,) * n, (0,) + (None,) * (n - 1)]:
        batched = [
            np.stack([np.asarray(a) * (1 + 0.03 * b) if np.asarray(a).dtype.kind == "f" else a for b in range(B)])
            if axes[i] == 0
            else a
            for i, a in enumerate(args)
        ]
        out = jax.jit(jax.vmap(lambda *a: getattr(opspec.ops, name)(*a, **attrs), in_axes=axes))(*batched)
        out = out if isinstance(out, tuple) else (out,)
        for b in range(B):
            one = [batched[i][b] if axes[i] == 0 else args[i] for i in range(n)]
            for got, want in zip(out, reference(name, one, attrs, np.float64)):
                np.testing.assert_allclose(np.asarray(got)[b], want, **tol(np.float64), err_msg=f"{name} {axes}")


@pytest.mark.parametrize("pool", POOLS)
def test_calls_from_several_threads_at_once(pool, rng, every_loop_parallel):
    """Four Python threads call jitted ops at once: one call's loop has the helpers, the
    others run theirs alone; every result is right."""
    opspec.set_cpu_pool(pool)
    x, y = rng.standard_normal(50_000), rng.standard_normal(50_000)
    add = jax.jit(opspec.ops.add)
    matvec = jax.jit(opspec.ops.matvec)
    A = rng.standard_normal((300, 200))
    v = rng.standard_normal(200)
    failures = []

    def work():
        try:
            for _ in range(30):
                np.testing.assert_allclose(add(x, y), x + y)
                np.testing.assert_allclose(matvec(A, v), A @ v, rtol=1e-10, atol=1e-10)
        except Exception as e:  # noqa: BLE001 (reported below, in the test's thread)
            failures.append(e)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures, failures[0]


@pytest.mark.parametrize("pool", POOLS)
def test_one_thread_runs_the_loop_alone(pool, rng):
    """A cap of one thread: every loop runs on the calling thread, whatever the pool."""
    before = opspec.parallel_threshold()
    opspec.set_cpu_pool(pool)
    x, y = rng.standard_normal(30_000), rng.standard_normal(30_000)
    try:
        opspec.set_cpu_threads(1)
        opspec.set_parallel_threshold(1)
        np.testing.assert_allclose(opspec.ops.add(x, y), x + y)
        np.testing.assert_allclose(jax.vmap(opspec.ops.add)(x.reshape(6, -1), y.reshape(6, -1)), (x + y).reshape(6, -1))
    finally:
        opspec.set_cpu_threads(0)
        opspec.set_parallel_threshold(before)
        opspec.set_cpu_pool("opspec")


SCAN_CHUNK = 1 << 16  # elements per chunk of a parallel content check (runtime/src/contents.c)


@pytest.mark.parametrize("pool", POOLS)
def test_content_checks_run_in_parallel_and_report_the_first_bad_position(pool, rng, every_loop_parallel):
    """csr_matvec's `check:` on inputs of several scan chunks, on the pool: good data
    computes, and of several bad positions in different chunks the first is named, as a
    serial scan names it, also where the order breaks right at a chunk's first element."""
    import scipy.sparse as sp

    opspec.set_cpu_pool(pool)
    rows, cols, per_row = int(rng.integers(3, 4) * SCAN_CHUNK + rng.integers(1, 999)), 5000, 3
    indices = np.sort(rng.integers(0, cols, (rows, per_row)), axis=1).astype(np.int32).ravel()
    indptr = np.arange(0, rows * per_row + 1, per_row, dtype=np.int32)
    data = rng.uniform(-1, 1, rows * per_row)
    x = rng.uniform(-1, 1, cols)
    fn = jax.jit(opspec.ops.csr_matvec)
    want = sp.csr_matrix((data, indices, indptr), shape=(rows, cols)) @ x
    np.testing.assert_allclose(fn(data, indices, indptr, x), want, rtol=1e-12, atol=1e-12)

    def refused(pattern, indices, indptr):
        with pytest.raises(Exception, match=pattern):
            jax.block_until_ready(fn(data, indices, indptr, x))

    nnz = len(indices)
    for trial in range(4):
        # a bad index in each of three different chunks, none in the first one
        chunks = np.sort(rng.choice(np.arange(1, nnz // SCAN_CHUNK), 3, replace=False))
        spots = chunks * SCAN_CHUNK + rng.integers(0, SCAN_CHUNK, 3)
        bad = indices.copy()
        bad[spots] = [cols, -1, cols + 7] if trial % 2 else [-5, cols + 1, -1]
        refused(
            rf"input 'indices'\[{spots[0]}\] = {bad[spots[0]]} is out of range: expected 0 <= value <= n - 1 = {cols - 1}",
            bad,
            indptr,
        )
    # the last position alone
    bad = indices.copy()
    bad[-1] = cols
    refused(rf"input 'indices'\[{nnz - 1}\] = {cols} is out of range", bad, indptr)
    # out of order exactly where a chunk starts: the chunk compares with the one before it
    at = SCAN_CHUNK * int(rng.integers(1, len(indptr) // SCAN_CHUNK + 1))
    unsorted = indptr.copy()
    unsorted[at] = unsorted[at - 1] - 1
    refused(
        rf"input 'indptr'\[{at}\] = {unsorted[at]} is less than indptr\[{at - 1}\] = {unsorted[at - 1]}: "
        r"expected non-decreasing values",
        indices,
        unsorted,
    )
    # and good data still computes after the failures
    np.testing.assert_allclose(fn(data, indices, indptr, x), want, rtol=1e-12, atol=1e-12)
