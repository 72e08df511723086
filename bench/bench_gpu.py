"""GPU benchmark: opspec's CUDA handlers against the same computation in jnp (which XLA
fuses), in one run on one device. Prints a table and saves bench_gpu.png."""

import argparse
import os
import sys

import jax
import jax.numpy as jnp
import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from common import median_ms, print_table, save_plot  # noqa: E402

import opspec  # noqa: E402

ops = opspec.ops


def cases(n, rng):
    f32 = lambda *s: jnp.asarray(rng.uniform(-3, 3, s), jnp.float32)  # noqa: E731
    x, y = f32(n), f32(n)
    one = lambda v: jnp.array([v], jnp.float32)  # noqa: E731
    V = jnp.asarray(rng.uniform(-75, -50, n), jnp.float32)
    I = jnp.asarray(rng.uniform(0, 5, n), jnp.float32)
    # 1% of 10,000 columns per row, at most 160,000 rows (16e6 stored values): drawn row by
    # row, sorted (scipy.sparse.random takes minutes at this size).
    rows, per_row = min(n // 100, 160_000), 100
    cols = np.sort(rng.integers(0, 10_000, (rows, per_row), dtype=np.int32), axis=1)
    indptr = np.arange(rows + 1, dtype=np.int32) * per_row
    csr = (f32(rows * per_row), jnp.asarray(cols.ravel()), jnp.asarray(indptr), f32(10_000))
    return [
        ("add", ops.add, lambda a, b: a + b, (x, y)),
        ("relu", ops.relu, lambda a: jnp.maximum(a, 0), (x,)),
        ("sigmoid", ops.sigmoid, jax.nn.sigmoid, (x,)),
        ("sigmoid bfloat16", ops.sigmoid, jax.nn.sigmoid, (x.astype(jnp.bfloat16),)),
        ("scale", ops.scale, lambda a, s: a * s[0], (x, one(1.5))),
        (
            "lif",
            ops.lif,
            lambda V, I, ti, th, vr, dt: (lambda v: (jnp.where(v >= th[0], vr[0], v), (v >= th[0]).astype(jnp.int32)))(
                V + dt[0] * (-(V - vr[0]) * ti[0] + I)
            ),
            (V, I, one(0.05), one(-55.0), one(-70.0), one(0.1)),
        ),
        (
            "spike_reset (2 kernels)",
            ops.spike_reset,
            lambda V, th, vr: ((V >= th[0]).astype(jnp.int32), jnp.where(V >= th[0], vr[0], V)),
            (V, one(-55.0), one(-70.0)),
        ),
        ("abs_two_pass (scratch)", ops.abs_two_pass, jnp.abs, (x,)),
        (
            f"csr_matvec {rows}x10k 1%",
            ops.csr_matvec,
            lambda d, i, p, v: jax.experimental.sparse.BCSR((d, i, p), shape=(rows, 10_000)) @ v,
            csr,
        ),
    ]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default=".")
    parser.add_argument("--sizes", default="1000000,16000000,64000000")
    args = parser.parse_args()
    import jax.experimental.sparse  # noqa: F401

    print(f"device: {jax.devices()[0].device_kind}; jax {jax.__version__}")
    rng = np.random.default_rng(0)
    rows = []
    for n in map(int, args.sizes.split(",")):
        for name, op, ref, inputs in cases(n, rng):
            f, g = jax.jit(op), jax.jit(ref)
            a, b = f(*inputs), g(*inputs)
            for u, v in zip(a if isinstance(a, tuple) else (a,), b if isinstance(b, tuple) else (b,)):
                tol = 1e-2 if u.dtype == jnp.bfloat16 else 1e-4
                np.testing.assert_allclose(np.asarray(u, np.float32), np.asarray(v, np.float32), rtol=tol, atol=tol)
            rows.append((f"{name} n={n:.0e}", {"opspec": median_ms(f, *inputs), "jnp": median_ms(g, *inputs)}))
    print_table("GPU: opspec CUDA handler vs jnp (XLA-fused), median ms per call", rows, ["opspec", "jnp"])
    save_plot(os.path.join(args.out, "bench_gpu.png"), "opspec vs jnp on GPU", rows, ["opspec", "jnp"])


if __name__ == "__main__":
    main()
