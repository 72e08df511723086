"""Threads by work (runtime/src/handler.c): a portable loop goes parallel, and is cut into
chunks, by the work of its call, the larger of its launch trips, the elements of its
largest buffer and its spec's `bytes:`/`flops:` in units of float32 `add`'s element, not
by its trips alone. A row-wise op over few long rows (one trip per
row) uses every thread; an element-wise op decides as before, in every dtype.

What the handler decided is read from the native module's counter
(`<package>._opspec.parallel_stats()`: loops and chunks handed to more than one thread,
docs/performance.md)."""

import jax
import numpy as np
import pytest

import opspec

THRESHOLD = 2**18  # the built-in default, whatever this machine's saved value is


@pytest.fixture
def default_threshold():
    before = opspec.parallel_threshold()
    opspec.set_parallel_threshold(THRESHOLD)
    opspec.set_cpu_pool("opspec")
    yield
    opspec.set_parallel_threshold(before)


def threads(native) -> int:
    n = native.cpu_threads()
    if n < 2:
        pytest.skip("one thread only: no loop goes parallel")
    return n


def stats_of(native, call):
    """(loops, chunks) handed to more than one thread while `call()` ran, and its result."""
    loops, chunks = native.parallel_stats()
    out = jax.block_until_ready(call())
    after = native.parallel_stats()
    return (after[0] - loops, after[1] - chunks), out


def expected_chunks(work: int, positions: int, nthreads: int) -> int:
    """The chunks handler.c cuts `positions` launch positions of `work` elements into:
    about 8 per thread, each at least 4,096 elements of work."""
    per_position = work // positions
    chunk_work = max(work // (nthreads * 8), 4096)
    chunk = max(chunk_work // per_position, 1)
    return (positions - 1) // chunk + 1


def rms_norm(x, eps=1e-6):
    x = np.asarray(x, np.float64)
    return x / np.sqrt((x * x).mean(axis=1, keepdims=True) + eps)


def test_a_users_row_wise_op_over_few_long_rows_uses_every_thread(reading_package, rng, default_threshold):
    """16 rows of 40,000: 16 trips, far below the threshold, but 640,000 elements of work
    (each trip loops over a row): parallel, one row per chunk, equal to NumPy."""
    import reading

    nthreads = threads(reading._opspec)
    before = reading.parallel_threshold()  # the package's own knob, apart from opspec's
    reading.set_parallel_threshold(THRESHOLD)
    try:
        for dtype, rtol in [(np.float32, 2e-6), (np.float64, 1e-13)]:
            x = rng.standard_normal((16, 40_000)).astype(dtype)
            (loops, chunks), y = stats_of(reading._opspec, lambda x=x: jax.jit(reading.ops.row_rms_norm)(x))
            assert (loops, chunks) == (1, expected_chunks(16 * 40_000, 16, nthreads)), dtype
            assert chunks >= nthreads
            np.testing.assert_allclose(np.asarray(y), rms_norm(x), rtol=rtol, atol=0)
            # A small call stays on one thread: 16 rows of 1,000 are 16,000 elements.
            small = x[:, :1000]
            (loops, _), y = stats_of(reading._opspec, lambda s=small: reading.ops.row_rms_norm(s))
            assert loops == 0
            np.testing.assert_allclose(np.asarray(y), rms_norm(small), rtol=rtol, atol=0)
    finally:
        reading.set_parallel_threshold(before)


def test_shipped_matvec_over_few_long_rows_goes_parallel(rng, default_threshold):
    """matvec has one trip per row: 64 rows of 50,000 columns went serial by trips."""
    native = opspec._opspec
    nthreads = threads(native)
    A = rng.standard_normal((64, 50_000)).astype(np.float32)
    x = rng.standard_normal(50_000).astype(np.float32)
    (loops, chunks), out = stats_of(native, lambda: jax.jit(opspec.ops.matvec)(A, x))
    assert (loops, chunks) == (1, expected_chunks(64 * 50_000, 64, nthreads))
    np.testing.assert_allclose(np.asarray(out), A.astype(np.float64) @ x, rtol=1e-4, atol=1e-3)
    # Natively batched: 3 matrices of 64 rows, the batch's launch as one index space.
    As = rng.standard_normal((3, 64, 50_000)).astype(np.float32)
    (loops, chunks), out = stats_of(native, lambda: jax.jit(jax.vmap(opspec.ops.matvec, (0, None)))(As, x))
    assert (loops, chunks) == (1, expected_chunks(3 * 64 * 50_000, 3 * 64, nthreads))
    np.testing.assert_allclose(np.asarray(out), As.astype(np.float64) @ x, rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("dtype, per_element", [(np.float32, 1), (np.float64, 2), (np.float16, 1)])
def test_element_wise_decisions_count_bytes(rng, dtype, per_element, default_threshold):
    """`add`: serial one element below the threshold, parallel from it, in the chunks
    trips alone gave (one trip per element, and no buffer has more elements), for
    float32 and float16; float64 moves 24 bytes an element, two elements of float32 work
    by its spec's `bytes:` (handler.c), so it goes parallel from half the threshold."""
    native = opspec._opspec
    nthreads = threads(native)
    add = jax.jit(opspec.ops.add)
    first = -(-THRESHOLD // per_element)  # the first parallel size
    for n, parallel in [(first - 1, False), (first, True), (3 * THRESHOLD + 5, True)]:
        x = (rng.standard_normal(n) * 100).astype(dtype)
        y = (rng.standard_normal(n) * 100).astype(dtype)
        (loops, chunks), out = stats_of(native, lambda x=x, y=y: add(x, y))
        want = (1, expected_chunks(n * per_element, n, nthreads)) if parallel else (0, 0)
        assert (loops, chunks) == want, n
        np.testing.assert_array_equal(np.asarray(out), x + y)
