"""CPU benchmark: opspec against BrainEvent's numba_kernel (the reference system: Numba
kernels behind XLA's FFI) and jnp, on the seed tutorial's workloads, in one run.

Prints a table of median ms per jitted call and the peers' ratio to opspec, and saves
bench_cpu.png. Numba compiles on first call; that is kept out of the timings (warm-up),
and reported separately as the first-call cost.
"""

import argparse
import os
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np
import scipy.sparse as sp

sys.path.insert(0, os.path.dirname(__file__))
from common import machine_line, median_ms, print_table, save_plot  # noqa: E402

import opspec  # noqa: E402

ops = opspec.ops

try:
    import numba
    from brainevent import numba_kernel

    @numba.njit(parallel=True)
    def nb_add(x, y, out):
        for i in numba.prange(out.size):
            out[i] = x[i] + y[i]

    @numba.njit(parallel=True)
    def nb_relu(x, out):
        for i in numba.prange(out.size):
            v = x[i]
            out[i] = v if v > 0.0 else 0.0

    @numba.njit
    def nb_sum(x, out):
        total = 0.0
        for i in range(x.size):
            total += x[i]
        out[0] = total

    @numba.njit
    def nb_stats(x, mean_out, std_out):
        n = x.size
        s = 0.0
        for i in range(n):
            s += x[i]
        mean = s / n
        var = 0.0
        for i in range(n):
            d = x[i] - mean
            var += d * d
        mean_out[0] = mean
        std_out[0] = (var / n) ** 0.5

    @numba.njit(parallel=True)
    def nb_lif(V, I_ext, tau_inv, V_th, V_rest, dt, V_out, spikes):
        th, vr, ti, step = V_th[0], V_rest[0], tau_inv[0], dt[0]
        for i in numba.prange(V.size):
            v_new = V[i] + step * (-(V[i] - vr) * ti + I_ext[i])
            if v_new >= th:
                spikes[i] = 1
                V_out[i] = vr
            else:
                spikes[i] = 0
                V_out[i] = v_new

    @numba.njit(parallel=True)
    def nb_csr(data, indices, indptr, x, out):
        for i in numba.prange(indptr.size - 1):
            total = out.dtype.type(0)
            for k in range(indptr[i], indptr[i + 1]):
                total += data[k] * x[indices[k]]
            out[i] = total

    @numba.njit(parallel=True)
    def nb_trace(trace, spikes, tau_inv, out):
        decay = np.exp(-tau_inv[0])
        for i in numba.prange(out.size):
            out[i] = trace[i] * decay + spikes[i]

    HAVE_PEER = True
except ImportError as e:  # the table still shows opspec vs jnp
    print(f"(BrainEvent/Numba not available: {e}; run ./run bench to install them)")
    HAVE_PEER = False


def sds(*shapes_dtypes):
    return [jax.ShapeDtypeStruct(s, d) for s, d in shapes_dtypes]


def workloads(rng):
    f32 = lambda *s: jnp.asarray(rng.uniform(-3, 3, s), jnp.float32)  # noqa: E731
    one = lambda v: jnp.array([v], jnp.float32)  # noqa: E731
    out = []
    for n in (128, 1_000_000):
        x, y = f32(n), f32(n)
        out.append((f"add n={n:g}", ops.add, lambda a, b: a + b, (nb_add, sds(((n,), jnp.float32))), (x, y)))
        out.append((f"relu n={n:g}", ops.relu, lambda a: jnp.maximum(a, 0), (nb_relu, sds(((n,), jnp.float32))), (x,)))
    x = jnp.arange(10_000, dtype=jnp.float32)
    out.append(("sum n=1e4", ops.sum, lambda a: jnp.sum(a, keepdims=True), (nb_sum, sds(((1,), jnp.float32))), (x,)))
    out.append(
        (
            "running_stats n=1e4",
            ops.running_stats,
            lambda a: (jnp.mean(a, keepdims=True), jnp.std(a, keepdims=True)),
            (nb_stats, sds(((1,), jnp.float32), ((1,), jnp.float32))),
            (x,),
        )
    )
    for n in (5_000, 1_000_000):
        V = jnp.asarray(rng.uniform(-75, -50, n), jnp.float32)
        I = jnp.asarray(rng.uniform(0, 5, n), jnp.float32)
        lif_args = (V, I, one(0.05), one(-55.0), one(-70.0), one(0.1))

        def lif_ref(V, I, ti, th, vr, dt):
            v = V + dt[0] * (-(V - vr[0]) * ti[0] + I)
            return jnp.where(v >= th[0], vr[0], v), (v >= th[0]).astype(jnp.int32)

        out.append((f"lif n={n:g}", ops.lif, lif_ref, (nb_lif, sds(((n,), jnp.float32), ((n,), jnp.int32))), lif_args))
    tr, sp_ = f32(1000) ** 2, jnp.asarray(rng.random(1000) < 0.05, jnp.float32)
    out.append(
        (
            "exp_trace n=1e3",
            ops.exp_trace,
            lambda t, s, ti: t * jnp.exp(-ti[0]) + s,
            (nb_trace, sds(((1000,), jnp.float32))),
            (tr, sp_, one(0.05)),
        )
    )
    dense = (rng.random((1000, 2000)) < 0.05) * rng.uniform(0.01, 0.5, (1000, 2000))
    m = sp.csr_matrix(dense.astype(np.float32))
    csr = (jnp.asarray(m.data), jnp.asarray(m.indices, jnp.int32), jnp.asarray(m.indptr, jnp.int32), f32(2000))
    dense_j = jnp.asarray(dense, jnp.float32)
    out.append(
        (
            "csr_matvec 1000x2000 5%",
            ops.csr_matvec,
            lambda d, i, p, v: dense_j @ v,
            (nb_csr, sds(((1000,), jnp.float32))),
            csr,
        )
    )
    return out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default="bench")
    args = parser.parse_args()
    print(f"{machine_line()}; parallel threshold {opspec.parallel_threshold()} (elements of work)")
    rng = np.random.default_rng(0)
    peers = ["opspec", "numba_kernel", "jnp"] if HAVE_PEER else ["opspec", "jnp"]
    rows, first_call = [], []
    for name, op, ref, (nb_fn, nb_outs), inputs in workloads(rng):
        t = {}
        fns = {"opspec": jax.jit(op), "jnp": jax.jit(ref)}
        if HAVE_PEER:
            kernel = numba_kernel(nb_fn, outs=nb_outs if len(nb_outs) > 1 else nb_outs[0])
            fns["numba_kernel"] = jax.jit(lambda *a, k=kernel: k(*a))
        results = {}
        for peer, fn in fns.items():
            t0 = time.perf_counter()
            results[peer] = jax.block_until_ready(fn(*inputs))
            first = (time.perf_counter() - t0) * 1e3
            if peer != "jnp":
                first_call.append((name, peer, first))
        ref_out = results["jnp"] if isinstance(results["jnp"], tuple) else (results["jnp"],)
        for peer, res in results.items():
            res = res if isinstance(res, (tuple, list)) else (res,)
            for u, v in zip(res, ref_out):
                np.testing.assert_allclose(np.asarray(u), np.asarray(v), rtol=1e-3, atol=1e-3, err_msg=f"{name} {peer}")
        for peer, fn in fns.items():
            t[peer] = median_ms(fn, *inputs)
        rows.append((name, t))
    print_table("CPU: median ms per jitted call (lower is better); ratios > 1 mean opspec is faster", rows, peers)
    print("\nFirst call (trace + compile + run), ms:")
    for name, peer, ms in first_call:
        print(f"  {name:<34} {peer:<14} {ms:10.1f}")
    save_plot(os.path.join(args.out, "bench_cpu.png"), "opspec vs numba_kernel vs jnp (CPU)", rows, peers)


if __name__ == "__main__":
    main()
