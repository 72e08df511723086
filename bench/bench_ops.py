"""Every shipped op against jnp at 64k, 1M and 4M float32 elements (issue 21), with
opspec's defaults as a user gets them (parallel threshold, thread pool, 2 CPUs), both
sides jitted; numba (BrainEvent's numba_kernel, serial and prange) and Warp where
bench_roofline.py has a kernel for the op. Ratios are peer time / opspec time: above 1,
opspec is faster. Contenders run in interleaved rounds, in a fresh random order each
round (bench_roofline.measure); each figure is the median of the rounds.

Ops that alias an input (exp_decay, exp_trace, lif, lif_surrogate, spike_reset) get a
second row, "donated": the aliased input donated and fed back each call, as a scan
carry is, against jnp the same way. Without donation XLA copies the aliased input into
the output buffer before each call (its copy, not the kernel).

Last, the 2-D clipped STDP update (specs/stdp_update.yaml, w[n_pre, n_post] aliased)
inside a donated lax.scan of 20 steps against the jnp one-liner in the same scan.

Prints one table and saves bench_ops.png.
"""

import argparse
import datetime
import os
import platform
import sys

import jax
import jax.numpy as jnp
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_roofline as roof  # noqa: E402
from common import save_plot  # noqa: E402

import opspec  # noqa: E402

ops = opspec.ops
SIZES = (65_536, 1_048_576, 4_194_304)
A_PLUS, A_MINUS = 0.01, 0.012
STDP_STEPS = 20


def extra_cases(n, rng):
    """The shipped ops bench_roofline does not time, and donated rows for aliased ops."""
    f32 = lambda *s: jnp.asarray(rng.uniform(-3, 3, s), jnp.float32)  # noqa: E731
    one = lambda v: jnp.array([v], jnp.float32)  # noqa: E731
    out = []
    V = jnp.asarray(rng.uniform(-75, -50, n), jnp.float32)
    current = jnp.asarray(rng.uniform(0, 5, n), jnp.float32)
    consts = (one(0.05), one(-55.0), one(-70.0), one(0.1))

    def surrogate_ref(V, I, ti, th, vr, dt):
        v = V + dt[0] * (-(V - vr[0]) * ti[0] + I)
        return jnp.where(v >= th[0], vr[0], v), (v >= th[0]).astype(jnp.float32)

    out.append(roof.Case("lif_surrogate", n, 4 * 4 * n, ops.lif_surrogate, (V, current, *consts), surrogate_ref))
    # csr_rmatvec: the transpose of a random CSR matrix of n // 8 rows, 8 per row.
    m = roof.random_rows(n // 8, n // 8, 8, rng)
    y = jnp.asarray(rng.uniform(-1, 1, m.shape[0]), jnp.float32)
    args = (jnp.asarray(m.data), jnp.asarray(m.indices, jnp.int32), jnp.asarray(m.indptr, jnp.int32), y)
    from jax.experimental import sparse as jsparse

    bcsr_t = jsparse.BCSR.from_scipy_sparse(m.T.tocsr())  # jnp's side: A.T @ y, as BCSR
    out.append(
        roof.Case(
            "csr_rmatvec",
            m.nnz,
            roof.csr_bytes(m),
            lambda d, i, p, v: ops.csr_rmatvec(d, i, p, v, n=m.shape[1]),
            args,
            lambda d, i, p, v, b=bcsr_t: b @ v,
        )
    )
    # stdp_update as a plain call: [n / 1024, 1024].
    rows = n // 1024
    w = jnp.asarray(rng.uniform(0, 1, (rows, 1024)), jnp.float32)
    pre = (jnp.asarray(rng.random(rows), jnp.float32), jnp.asarray(rng.random(rows) < 0.1, jnp.float32))
    post = (jnp.asarray(rng.random(1024), jnp.float32), jnp.asarray(rng.random(1024) < 0.1, jnp.float32))
    out.append(roof.Case("stdp_update", n, 2 * 4 * n, ops.stdp_update, (w, *pre, *post), stdp_ref))
    # Donated: the aliased state fed back, as a scan carry (the other inputs fixed).
    x = f32(n)
    trace = jnp.asarray(rng.random(n), jnp.float32)
    spikes = jnp.asarray(rng.random(n) < 0.1, jnp.float32) * 0
    zero = one(0.0)
    donated = [
        ("exp_decay", ops.exp_decay, lambda a, d: a * jnp.exp(-d[0]), x, (zero,), 2),
        ("exp_trace", ops.exp_trace, roof.trace_ref, trace, (spikes, zero), 3),
        ("lif", lambda *a: ops.lif(*a)[0], lambda *a: lif_ref(*a)[0], V, (current, *consts), 4),
        (
            "lif_surrogate",
            lambda *a: ops.lif_surrogate(*a)[0],
            lambda *a: surrogate_ref(*a)[0],
            V,
            (current, *consts),
            4,
        ),
        (
            "spike_reset",
            lambda *a: ops.spike_reset(*a)[1],
            lambda V, th, vr: jnp.where(V >= th[0], vr[0], V),
            V,
            consts[1:3],
            3,
        ),
        ("stdp_update", ops.stdp_update, stdp_ref, w, (*pre, *post), 2),
    ]
    for name, op, ref, state, rest, words in donated:
        out.append(
            roof.Case(
                f"{name} donated",
                n,
                words * 4 * n,
                roof.Donated(op, state, rest),
                (),
                roof.Donated(ref, state, rest),
                stateful=True,
            )
        )
    return out


def lif_ref(V, I, ti, th, vr, dt):
    v = V + dt[0] * (-(V - vr[0]) * ti[0] + I)
    return jnp.where(v >= th[0], vr[0], v), (v >= th[0]).astype(jnp.int32)


def stdp_ref(w, pre_trace, pre_spike, post_trace, post_spike):
    dw = A_PLUS * jnp.outer(pre_trace, post_spike) - A_MINUS * jnp.outer(pre_spike, post_trace)
    return jnp.clip(w + dw, 0.0, 1.0)


def stdp_scan_case(n_pre, n_post, rng):
    """stdp_update inside a donated lax.scan of STDP_STEPS steps, against jnp's update in
    the same scan: traces and spikes differ per step (scanned over)."""
    w0 = jnp.asarray(rng.uniform(0, 1, (n_pre, n_post)), jnp.float32)
    xs = (
        jnp.asarray(rng.random((STDP_STEPS, n_pre)), jnp.float32),
        jnp.asarray(rng.random((STDP_STEPS, n_pre)) < 0.05, jnp.float32),
        jnp.asarray(rng.random((STDP_STEPS, n_post)), jnp.float32),
        jnp.asarray(rng.random((STDP_STEPS, n_post)) < 0.05, jnp.float32),
    )

    def scanned(update):
        def run(w, xs):
            return jax.lax.scan(lambda w, x: (update(w, *x), None), w, xs)[0]

        return run

    size = n_pre * n_post
    return roof.Case(
        f"stdp_update scan {n_pre}x{n_post}",
        size,
        2 * 4 * size * STDP_STEPS,
        roof.Donated(scanned(ops.stdp_update), w0, (xs,)),
        (),
        roof.Donated(scanned(stdp_ref), w0, (xs,)),
        stateful=True,
    )


def all_cases(n, rng):
    skip = ("donated", "1e6")
    base = [c for c in roof.cases(n, rng) if not any(s in c.name for s in skip)]
    for c in base:
        if c.name.startswith("csr_matvec"):
            c.peers.pop("scipy", None)  # bench_roofline compares CSR with SciPy
        roof.add_peers(c)
    return base + extra_cases(n, rng)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--out", default=os.path.dirname(os.path.abspath(__file__)))
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)))
    parser.add_argument("--only", default="", help="comma-separated op names (default: all)")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    only = set(filter(None, args.only.split(",")))
    rng = np.random.default_rng(0)
    now = datetime.datetime.now().strftime("%Y-%m-%d %H:%M")
    print(
        f"{now}; {os.cpu_count()} CPUs ({platform.processor() or platform.machine()}); jax {jax.__version__}; "
        f"opspec {opspec.__version__}; opspec defaults: threshold {opspec.parallel_threshold()} "
        f"({opspec.parallel_threshold_source()}), median of {args.rounds} interleaved rounds"
    )
    peers = ["jnp", "numba serial", "numba prange", "warp"]
    head = f"{'op':<30}{'elements':>10}{'opspec ms':>11}" + "".join(f"{p + '/ops':>17}" for p in peers)
    print(head)
    print("-" * len(head))
    plot_rows = []
    cases = [(n, c) for n in sizes for c in all_cases(n, rng)]
    cases.append((0, stdp_scan_case(1000, 1000, rng)))
    for _, case in cases:
        if only and case.name.split()[0] not in only:
            continue
        contenders = {}
        if case.stateful:
            contenders["opspec"] = (case.op, (), lambda: None)
            contenders["jnp"] = (case.jnp_fn, (), lambda: None)
        else:
            contenders["opspec"] = (jax.jit(case.op), case.args, lambda: None)
            contenders["jnp"] = (jax.jit(case.jnp_fn), case.args, lambda: None)
            for label, peer in case.peers.items():
                fn, pargs = peer if isinstance(peer, tuple) else (peer, case.args)
                contenders[label] = (fn, pargs, lambda: None)
            roof.check(case, {k: roof.run_once(fn, a) for k, (fn, a, _) in contenders.items()})
        t = roof.measure(contenders, args.rounds)
        line = f"{case.name:<30}{case.size:>10}{t['opspec'] * 1e3:>11.4f}"
        line += "".join(f"{t[p] / t['opspec']:>17.2f}" if p in t else f"{'-':>17}" for p in peers)
        print(line, flush=True)
        plot_rows.append((f"{case.name} {case.size}", {k: v * 1e3 for k, v in t.items()}))
    save_plot(
        os.path.join(args.out, "bench_ops.png"), "every op against jnp (ms per call)", plot_rows, ["opspec", *peers]
    )


if __name__ == "__main__":
    main()
