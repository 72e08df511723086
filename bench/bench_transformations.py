"""Transformations benchmark (docs/transformations.md), in one run on this machine:

1. jax.vmap over B = 64 of csr_matvec (the matrix unbatched) and of lif: native batching
   (one FFI call, unbatched inputs read in place) against `sequential` (a lax.map of one
   call per element, what ffi_call's vmap_method="sequential" does) and `broadcast_all`
   (every unbatched input copied B times first, what ffi_call's broadcast_all does).
   Time per call and XLA's planned memory (temporaries + outputs, from the compiled
   computation's memory analysis).
2. An element-wise op, a batched matvec, and two reductions (`sum`, and `matvec`
   sharded along its columns: spec key `reduce:`) on 4 virtual CPU devices: inputs
   sharded, with opspec's sharding rule (no all-gather; an all-reduce for the
   reductions) against the replicated call (inputs gathered first, every device
   computing everything).

Prints tables and saves bench_transformations.png.
"""

import argparse
import os
import sys

os.environ["XLA_FLAGS"] = os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=4"

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402
from jax.sharding import NamedSharding  # noqa: E402
from jax.sharding import PartitionSpec as P  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))
from common import machine_line, median_ms, save_plot  # noqa: E402

import opspec  # noqa: E402

ops = opspec.ops
B = 64


def planned_mb(fn, *args):
    m = jax.jit(fn).lower(*args).compile().memory_analysis()
    if m is None:
        return float("nan")
    return (m.temp_size_in_bytes + m.output_size_in_bytes) / 2**20


def vmap_methods(call, batched, unbatched):
    """The three ways to batch `call(*unbatched, x)` over the rows of `batched`."""
    native = jax.jit(jax.vmap(lambda x: call(*unbatched, x)))
    sequential = jax.jit(lambda X: jax.lax.map(lambda x: call(*unbatched, x), X))

    def broadcast_all(X):
        copies = [jnp.broadcast_to(u, (X.shape[0], *u.shape)) for u in unbatched]
        return jax.vmap(call)(*copies, X)

    return {"native": native, "sequential": sequential, "broadcast_all": jax.jit(broadcast_all)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=".")
    args = ap.parse_args()
    print(machine_line())
    rng = np.random.default_rng(0)
    rows = []

    n = 50_000
    # 20 random columns per row. (Not scipy.sparse.random: scipy 1.17 draws the positions
    # without replacement from all n * n, 20 GB here.)
    cols = np.sort(rng.integers(0, n, (n, 20)), axis=1).ravel()
    m = sp.csr_matrix((rng.standard_normal(n * 20).astype(np.float32), cols, np.arange(0, 20 * n + 1, 20)), (n, n))
    csr = (m.data, m.indices.astype(np.int32), m.indptr.astype(np.int32))
    X = rng.standard_normal((B, n)).astype(np.float32)
    want = (m @ X.T).T
    for method, fn in vmap_methods(ops.csr_matvec, X, csr).items():
        np.testing.assert_allclose(fn(X), want, rtol=1e-4, atol=1e-4)
        rows.append(
            (f"csr_matvec n={n} nnz={m.nnz} B={B}", method, median_ms(fn, X, batch=3, batches=5), planned_mb(fn, X))
        )

    N = 100_000
    V = rng.uniform(-75, -50, (B, N)).astype(np.float32)
    I = rng.uniform(0, 5, N).astype(np.float32)
    params = [np.array([v], np.float32) for v in (1 / 20, -55.0, -70.0, 0.1)]

    def lif_call(I, tau, th, rest, dt, V):
        return ops.lif(V, I, tau, th, rest, dt)

    for method, fn in vmap_methods(lif_call, V, [I, *params]).items():
        rows.append((f"lif n={N} B={B}", method, median_ms(fn, V, batch=3, batches=5), planned_mb(fn, V)))

    print(f"\njax.vmap, B = {B} (median ms per call; memory: XLA's temporaries + outputs)")
    print(f"{'case':<38}{'method':<15}{'ms':>10}{'MB':>10}{'ms / native':>14}")
    base = {case: t for case, method, t, _ in rows if method == "native"}
    for case, method, t, mb in rows:
        print(f"{case:<38}{method:<15}{t:>10.3f}{mb:>10.1f}{t / base[case]:>14.2f}")

    # Sharding on 4 virtual devices.
    mesh = jax.make_mesh((4,), ("d",), axis_types=(jax.sharding.AxisType.Auto,))
    sharded = NamedSharding(mesh, P("d"))
    replicated = NamedSharding(mesh, P())
    x = jax.device_put(rng.standard_normal(4_000_000).astype(np.float32), sharded)
    y = jax.device_put(rng.standard_normal(4_000_000).astype(np.float32), sharded)
    A = rng.standard_normal((256, 256)).astype(np.float32)
    Xs = jax.device_put(rng.standard_normal((4096, 256)).astype(np.float32), NamedSharding(mesh, P("d", None)))
    Acols = jax.device_put(rng.standard_normal((256, 65536)).astype(np.float32), NamedSharding(mesh, P(None, "d")))
    v = jax.device_put(rng.standard_normal(65536).astype(np.float32), sharded)
    cases = {
        "add n=4e6": (ops.add, (x, y)),
        "vmap matvec B=4096": (jax.vmap(ops.matvec, in_axes=(None, 0)), (A, Xs)),
        # reduce: sharded along the reduced symbol, then an all-reduce
        "sum n=4e6 (reduce)": (ops.sum, (x,)),
        "matvec 256x65536 cols": (ops.matvec, (Acols, v)),
    }
    srows = []
    print("\nsharded inputs on 4 virtual CPU devices (2 cores): opspec's rule against the replicated call")
    print(f"{'case':<26}{'sharded ms':>12}{'replicated ms':>15}{'repl/sharded':>14}{'all-gathers':>13}")
    for label, (fn, a) in cases.items():
        f_sharded = jax.jit(fn)
        # what an FFI call without a sharding rule compiles to: gather, then every device all
        f_repl = jax.jit(
            lambda *a, _fn=fn: _fn(*[jax.lax.with_sharding_constraint(v, replicated) for v in a]),
            out_shardings=replicated,
        )
        t_s = median_ms(f_sharded, *a, batch=5, batches=5)
        t_r = median_ms(f_repl, *a, batch=5, batches=5)
        gathers = f_sharded.lower(*a).compile().as_text().count("all-gather")
        print(f"{label:<26}{t_s:>12.3f}{t_r:>15.3f}{t_r / t_s:>14.2f}{gathers:>13}")
        srows.append((label, {"sharded": t_s, "replicated": t_r}))

    plot_rows = [(f"{c.split()[0]} {m}", {"ms": t}) for c, m, t, _ in rows] + [
        (f"{c} {k}", {"ms": v}) for c, d in srows for k, v in d.items()
    ]
    save_plot(os.path.join(args.out, "bench_transformations.png"), "transformations (ms per call)", plot_rows, ["ms"])


if __name__ == "__main__":
    main()
