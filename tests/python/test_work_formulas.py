"""The spec's `bytes:`/`flops:` as the work of a call (runtime/src/handler.c): the C the
generator writes for them (`opspec_<op>_cost` in generated/ops/<op>_ffi.c) against the
Python formulas of opspec.cost on random shapes, and the decision they feed: for every
shipped op at the bench's sizes, the work that decides its threads is at least the work
counted without the formulas, so no op goes parallel later than before.

What a call counted is read from the native module (`opspec._opspec.last_work()`:
bytes, flops, the work that decided, the work without the formulas; -2 for none)."""

import jax
import numpy as np
import pytest
from cases import CASES

import opspec

NONE = -2  # last_work(): no portable call since the last read
DTYPES = [np.float32, np.float64, np.float16]


def dtypes_of(name):
    """The dtypes of DTYPES the op takes (its spec's type variable's choices)."""
    fn = getattr(opspec.ops, name)
    return [d for d in DTYPES if _accepts(name, fn, d)]


def _accepts(name, fn, dtype):
    try:
        args, attrs = CASES[name][0](np.random.default_rng(0), dtype, 3)
        opspec.cost(fn, *args, **_int_attrs(attrs))
    except Exception:  # the op's error for a dtype it does not list
        return False
    return True


def _int_attrs(attrs):
    return {k: v for k, v in attrs.items() if isinstance(v, int)}


def run(name, dtype, n, rng):
    """(the C work record of one call of `name` on n-sized random inputs, opspec.cost's)."""
    fn = getattr(opspec.ops, name)
    args, attrs = CASES[name][0](rng, dtype, n)
    opspec._opspec.last_work()  # clear
    jax.block_until_ready(fn(*args, **attrs))
    return opspec._opspec.last_work(), opspec.cost(fn, *args, **_int_attrs(attrs))


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_c_formulas_equal_the_python_ones_on_random_shapes(name):
    rng = np.random.default_rng(abs(hash(name)) % 2**32)
    for dtype in dtypes_of(name):
        for n in rng.integers(1, 3000, 3):
            (bytes_, flops, work, _), cost = run(name, dtype, int(n), rng)
            if work == NONE:  # a raw `cpu:` body: it decides its own threads
                continue
            want = [-1 if cost[k] is None else cost[k] for k in ("bytes", "flops")]
            assert [bytes_, flops] == want, (name, np.dtype(dtype).name, int(n))


# The sizes bench/bench_ops.py times (64k, 1M elements), where a case's arrays stay
# under some 40 MB (CSR cases build a dense matrix of n x 40 first: 64k only).
def bench_sizes(name):
    return [65_536] if name.startswith("csr") else [65_536, 1_048_576]


@pytest.mark.parametrize("name", sorted(CASES))
def test_no_shipped_op_counts_less_work_than_without_the_formulas(name):
    rng = np.random.default_rng(1)
    for dtype in dtypes_of(name):
        for n in bench_sizes(name):
            (bytes_, flops, work, without), _ = run(name, dtype, n, rng)
            if work == NONE:
                continue
            # The threshold compares with the work, and the chunks grow with it: more work,
            # the same or more threads.
            assert work >= without, (name, np.dtype(dtype).name, n, work, without)
            if bytes_ >= 0 or flops >= 0:  # the formulas in units of float32 add (handler.c)
                assert work == max(without, bytes_ // 12, flops // 2), (name, work, without, bytes_, flops)
