"""What the input contents checks cost: csr_matvec with opspec.set_checks(True) and
(False), in one run, on CSR matrices from 10k to 4M stored entries.

csr_matvec's spec checks `indices` (0 <= value <= n - 1) and `indptr` (0 <= value <=
nnz, non-decreasing) before the kernel runs: one pass over nnz + rows + 1 int32s. The
table gives the median ms per jitted call both ways, the ratio, and the scan's cost per
checked element (the difference over the elements scanned).
"""

import argparse
import os
import sys

import jax
import jax.numpy as jnp
import numpy as np
import scipy.sparse as sp

sys.path.insert(0, os.path.dirname(__file__))
from common import median_ms  # noqa: E402

import opspec  # noqa: E402

# rows, cols, density: from cache-resident to well past the last-level cache.
SIZES = [
    (1_000, 1_000, 0.01),
    (10_000, 10_000, 0.001),
    (2_000, 2_000, 0.1),
    (100_000, 100_000, 0.0001),
    (20_000, 20_000, 0.01),
]


def csr(rng, rows, cols, density):
    m = sp.random(rows, cols, density=density, format="csr", dtype=np.float32, random_state=rng)
    x = rng.uniform(-1, 1, cols).astype(np.float32)
    return m, (jnp.asarray(m.data), jnp.asarray(m.indices, jnp.int32), jnp.asarray(m.indptr, jnp.int32), jnp.asarray(x))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--batches", type=int, default=7)
    args = parser.parse_args()
    print(
        f"CPU: {os.cpu_count()} cores; jax {jax.__version__}; parallel threshold {opspec.parallel_threshold()} (elements of work)"
    )
    rng = np.random.default_rng(0)
    fn = jax.jit(opspec.ops.csr_matvec)
    rows_out = []
    initially = opspec.checks_enabled()
    try:
        for rows, cols, density in SIZES:
            m, inputs = csr(rng, rows, cols, density)
            want = m @ np.asarray(inputs[3])
            t = {}
            for enabled in (True, False):
                opspec.set_checks(enabled)
                np.testing.assert_allclose(np.asarray(fn(*inputs)), want, rtol=1e-4, atol=1e-4)
                # Fewer calls per batch for the big cases: every call is already ms long.
                t[enabled] = median_ms(fn, *inputs, batch=20 if m.nnz < 1_000_000 else 5, batches=args.batches)
            scanned = m.nnz + rows + 1
            rows_out.append((f"{rows}x{cols} nnz={m.nnz}", scanned, t[True], t[False]))
    finally:
        opspec.set_checks(initially)

    print("\ncsr_matvec on CPU: median ms per jitted call (lower is better)")
    head = (
        f"{'case':<30}{'checked elems':>15}{'checks on ms':>15}{'checks off ms':>15}{'on/off':>10}{'ns per elem':>13}"
    )
    print(head)
    print("-" * len(head))
    for case, scanned, on, off in rows_out:
        print(f"{case:<30}{scanned:>15}{on:>15.4f}{off:>15.4f}{on / off:>10.2f}{(on - off) * 1e6 / scanned:>13.3f}")


if __name__ == "__main__":
    main()
