"""Every shipped op against jnp at 64k, 1M and 16M elements (issues 21 and 29), in every
dtype its spec lists (float32, float64, float16, bfloat16), with opspec's defaults as a
user gets them (parallel threshold, thread pool, 2 CPUs), both sides jitted; numba
(BrainEvent's numba_kernel, serial and prange) and Warp in float32 where bench_roofline.py
has a kernel for the op. 64k float32 sits in L2, 1M in L3, 16M in DRAM; 4M float32 (in +
out 32 MiB, this machine's L3) swung 10x from run to run and is not timed. Ratios are
peer time / opspec time: above 1, opspec is faster. Contenders run in interleaved rounds,
in a fresh random order each round (bench_roofline.measure); each figure is the median of
the rounds.

The example ML ops (rms_norm ... embedding_scatter_add) run at shapes of about the same
element counts: rows of 1024 for the row ops, 32000 classes for the cross-entropy, heads
of 64 for rope; bench_ml.py times them at its own shapes against the same jnp.

Ops that alias an input (exp_decay, exp_trace, lif, lif_surrogate, spike_reset,
stdp_update) get a second row, "donated": the aliased input donated and fed back each
call, as a scan carry is, against jnp the same way; an op with several outputs returns
all of them on both sides (XLA would drop a jnp output nobody uses, while the custom
call always writes its own). Without donation the call writes a fresh output
(docs/spec.md, `aliases`).

Last, the 2-D clipped STDP update (specs/stdp_update.yaml, w[n_pre, n_post] aliased)
inside a donated lax.scan of 20 steps against the jnp one-liner in the same scan.

`--steady-malloc` runs the process with glibc's allocator keeping what it frees
(common.STEADY_MALLOC), so that no side pays the page faults of a fresh output; the
header says which allocator setting ran.

Prints one table and saves bench_ops.png. `--quick` runs tiny sizes for one round (a
smoke test of the script, not a measurement).
"""

import argparse
import os
import sys

import jax

jax.config.update("jax_enable_x64", True)  # float64 rows; every other array is typed explicitly

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_ml as ml  # noqa: E402
import bench_roofline as roof  # noqa: E402
from common import machine_line, malloc_line, rerun_with_steady_malloc, save_plot  # noqa: E402

import opspec  # noqa: E402
import opspec.testing  # noqa: E402

ops = opspec.ops
SIZES = (65_536, 1_048_576, 16_777_216)
QUICK_SIZES = (4096,)
DTYPES = ("float32", "float64", "float16", "bfloat16")
A_PLUS, A_MINUS = 0.01, 0.012
STDP_STEPS = 20


def listed(name, dtype):
    """Whether the op's spec lists `dtype` (for its type variable T)."""
    types = opspec.testing.op_record(getattr(ops, name)).types
    return any(dtype in choices for choices in types.values())


def cast(args, dtype):
    """`args` with every floating array in `dtype` (indices and counts stay as they are)."""
    t = jnp.dtype(dtype)
    return tuple(jnp.asarray(a, t) if jnp.issubdtype(jnp.asarray(a).dtype, jnp.floating) else a for a in args)


def lif_ref(V, I, ti, th, vr, dt):
    v = V + dt[0] * (-(V - vr[0]) * ti[0] + I)
    return jnp.where(v >= th[0], vr[0], v), (v >= th[0]).astype(jnp.int32)


def surrogate_ref(V, I, ti, th, vr, dt):
    v = V + dt[0] * (-(V - vr[0]) * ti[0] + I)
    return jnp.where(v >= th[0], vr[0], v), (v >= th[0]).astype(V.dtype)


def stdp_ref(w, pre_trace, pre_spike, post_trace, post_spike):
    dw = A_PLUS * jnp.outer(pre_trace, post_spike) - A_MINUS * jnp.outer(pre_spike, post_trace)
    return jnp.clip(w + dw, 0.0, 1.0)


def csr_jnp(rows, cols):
    """jnp's side of a CSR product, as BCSR from the call's own arrays (in their dtype)."""
    from jax.experimental import sparse as jsparse

    return lambda d, i, p, v: jsparse.BCSR((d, i, p), shape=(rows, cols)) @ v


def csr_transposed_jnp(m, dtype):
    """jnp's side of csr_rmatvec (A.T @ y): BCSR of the transpose of SciPy matrix `m`, in
    `dtype` (BCSR has no transpose of its own)."""
    from jax.experimental import sparse as jsparse

    t = m.T.tocsr()
    arrays = (jnp.asarray(t.data, dtype), jnp.asarray(t.indices, jnp.int32), jnp.asarray(t.indptr, jnp.int32))
    a = jsparse.BCSR(arrays, shape=t.shape)
    return lambda d, i, p, v: a @ v


def float32_cases(n, rng):
    """(plain cases, donated rows) at n elements in float32: bench_roofline's cases without
    its donated and 1e6 rows, the ops it does not time, and (name, op, ref, state, rest)
    for each op that aliases its state."""
    skip = ("donated", "1e6")
    plain = [c for c in roof.cases(n, rng) if not any(s in c.name for s in skip)]
    for c in plain:
        if c.name.startswith("csr_matvec"):
            c.peers.pop("scipy", None)  # bench_roofline compares CSR with SciPy
            c.jnp_fn = csr_jnp(c.args[2].shape[0] - 1, c.args[3].shape[0])
        roof.add_peers(c)
    f32 = lambda *s: jnp.asarray(rng.uniform(-3, 3, s), jnp.float32)  # noqa: E731
    one = lambda v: jnp.array([v], jnp.float32)  # noqa: E731
    V = jnp.asarray(rng.uniform(-75, -50, n), jnp.float32)
    current = jnp.asarray(rng.uniform(0, 5, n), jnp.float32)
    consts = (one(0.05), one(-55.0), one(-70.0), one(0.1))
    plain.append(roof.Case("lif_surrogate", n, 4 * 4 * n, ops.lif_surrogate, (V, current, *consts), surrogate_ref))
    # csr_rmatvec: the transpose of a random CSR matrix of n // 8 rows, 8 per row.
    m = roof.random_rows(n // 8, n // 8, 8, rng)
    y = jnp.asarray(rng.uniform(-1, 1, m.shape[0]), jnp.float32)
    args = (jnp.asarray(m.data, jnp.float32), jnp.asarray(m.indices, jnp.int32), jnp.asarray(m.indptr, jnp.int32), y)
    rmatvec = roof.Case(
        "csr_rmatvec",
        m.nnz,
        roof.csr_bytes(m),
        lambda d, i, p, v: ops.csr_rmatvec(d, i, p, v, n=m.shape[1]),
        args,
        csr_transposed_jnp(m, jnp.float32),
    )
    rmatvec.matrix = m  # typed_cases makes jnp's transpose in each dtype
    plain.append(rmatvec)
    # stdp_update as a plain call: [n / 1024, 1024].
    rows = max(1, n // 1024)
    w = jnp.asarray(rng.uniform(0, 1, (rows, 1024)), jnp.float32)
    pre = (jnp.asarray(rng.random(rows), jnp.float32), jnp.asarray(rng.random(rows) < 0.1, jnp.float32))
    post = (jnp.asarray(rng.random(1024), jnp.float32), jnp.asarray(rng.random(1024) < 0.1, jnp.float32))
    plain.append(
        roof.Case("stdp_update", rows * 1024, 2 * 4 * rows * 1024, ops.stdp_update, (w, *pre, *post), stdp_ref)
    )
    # Donated: the aliased state fed back, as a scan carry (the other inputs fixed).
    x = f32(n)
    trace = jnp.asarray(rng.random(n), jnp.float32)
    spikes = jnp.zeros(n, jnp.float32)
    zero = one(0.0)
    # An op with several outputs returns all of them on both sides, the state at the index
    # given: jnp's spikes, unused, would be dropped by XLA, while the custom call writes
    # its own (a fresh output whose pages fault, at 1M).
    donated = [
        ("exp_decay", ops.exp_decay, lambda a, d: a * jnp.exp(-d[0]), x, (zero,), 2, None),
        ("exp_trace", ops.exp_trace, roof.trace_ref, trace, (spikes, zero), 3, None),
        ("lif", ops.lif, lif_ref, V, (current, *consts), 4, 0),
        ("lif_surrogate", ops.lif_surrogate, surrogate_ref, V, (current, *consts), 4, 0),
        (
            "spike_reset",
            ops.spike_reset,
            lambda V, th, vr: ((V >= th[0]).astype(jnp.int32), jnp.where(V >= th[0], vr[0], V)),
            V,
            consts[1:3],
            3,
            1,
        ),
        ("stdp_update", ops.stdp_update, stdp_ref, w, (*pre, *post), 2, None),
    ]
    return plain, donated


def typed_cases(plain, donated, dtype):
    """The cases in `dtype`: the float32 ones as they are; in another dtype each plain case
    with its float arrays cast (no numba, Warp or SciPy peer: their kernels are float32)
    and each donated row built anew from its cast state."""
    if dtype == "float32":
        out = list(plain)
    else:
        out = [
            roof.Case(
                c.name,
                c.size,
                c.nbytes,
                c.op,
                cast(c.args, dtype),
                csr_transposed_jnp(c.matrix, dtype) if hasattr(c, "matrix") else c.jnp_fn,
            )
            for c in plain
        ]
    for name, op, ref, state, rest, words, state_index in donated:
        state, *rest = cast((state, *rest), dtype)
        rest = tuple(rest)
        out.append(
            roof.Case(
                f"{name} donated",
                state.size,
                words * jnp.dtype(dtype).itemsize * state.size,
                roof.Donated(op, state, rest, state_index),
                (),
                roof.Donated(ref, state, rest, state_index),
                stateful=True,
            )
        )
    return out


def ml_cases(n, dtype, rng):
    """The example ML ops at about n elements each, against bench_ml's jnp."""
    t = jnp.dtype(dtype)
    arr = lambda *shape, lo=-3.0, hi=3.0: jnp.asarray(rng.uniform(lo, hi, shape), t)  # noqa: E731
    cols = 1024
    rows = max(1, n // cols)
    x, w, beta = arr(rows, cols), arr(cols, lo=0.5, hi=1.5), arr(cols, lo=-1, hi=1)
    flat = arr(n)
    classes = 32000
    ce_rows = max(1, n // classes)
    logits, labels = arr(ce_rows, classes), jnp.asarray(rng.integers(0, classes, ce_rows), jnp.int32)
    heads, dim = 16, 64
    seq = max(1, n // (heads * dim))
    angles = np.arange(seq)[:, None] * rng.uniform(0.01, 1.0, dim // 2)[None, :]
    q, cosines, sines = arr(1, seq, heads, dim), jnp.asarray(np.cos(angles), t), jnp.asarray(np.sin(angles), t)
    edim, bag = 128, 4
    vocab, bags = max(1, n // edim), max(1, n // (edim * bag))
    table, indices = arr(vocab, edim), jnp.asarray(rng.integers(0, vocab, (bags, bag)), jnp.int32)
    grad = arr(bags, edim)
    return [
        roof.Case("rms_norm", x.size, 0, ops.rms_norm, (x, w), ml.jnp_rms_norm),
        roof.Case("layer_norm", x.size, 0, ops.layer_norm, (x, w, beta), ml.jnp_layer_norm),
        roof.Case("softmax", x.size, 0, ops.softmax, (x,), lambda v: jax.nn.softmax(v, axis=-1)),
        roof.Case(
            "softmax_cross_entropy", logits.size, 0, ops.softmax_cross_entropy, (logits, labels), ml.jnp_cross_entropy
        ),
        roof.Case("gelu_tanh", n, 0, ops.gelu_tanh, (flat,), lambda v: jax.nn.gelu(v, approximate=True)),
        roof.Case("silu", n, 0, ops.silu, (flat,), jax.nn.silu),
        roof.Case("rope", q.size, 0, ops.rope, (q, cosines, sines), ml.jnp_rope),
        roof.Case("embedding_bag", bags * bag * edim, 0, ops.embedding_bag, (table, indices), ml.jnp_embedding_bag),
        roof.Case(
            "embedding_scatter_add",
            bags * bag * edim,
            0,
            lambda i, g: ops.embedding_scatter_add(i, g, vocab=vocab),
            (indices, grad),
            lambda i, g: jnp.zeros((vocab, edim), g.dtype).at[i].add(g[:, None, :]),
        ),
    ]


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


def agree(case, dtype, results):
    """Every contender gives jnp's numbers within the dtype's rounding (a bench that times a
    wrong kernel measures nothing); sums are held to the size of what they add."""
    eps = {"float32": 1e-3, "float64": 1e-6, "float16": 1e-2, "bfloat16": 6e-2}[dtype]
    want = results["jnp"] if isinstance(results["jnp"], (tuple, list)) else (results["jnp"],)
    for label, got in results.items():
        got = got if isinstance(got, (tuple, list)) else (got,)
        for u, v in zip(got, want):
            u, v = np.asarray(u, np.float64), np.asarray(v, np.float64)
            scale = max(1.0, float(np.abs(v).max(initial=0)))
            if case.name in ("sum", "running_stats", "block_sum", "embedding_bag", "embedding_scatter_add"):
                scale *= 16
            np.testing.assert_allclose(u, v, rtol=eps, atol=eps * scale, err_msg=f"{case.name} {dtype}: {label}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--out", default=os.path.dirname(os.path.abspath(__file__)))
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)))
    parser.add_argument("--dtypes", default=",".join(DTYPES), help="comma-separated (each op runs in those it lists)")
    parser.add_argument("--only", default="", help="comma-separated op names (default: all)")
    parser.add_argument("--quick", action="store_true", help="tiny sizes, one round: a smoke test, no measurement")
    parser.add_argument("--steady-malloc", action="store_true", help="glibc's allocator keeping what it frees")
    args = parser.parse_args()
    if args.steady_malloc:
        rerun_with_steady_malloc()
    sizes = QUICK_SIZES if args.quick else [int(s) for s in args.sizes.split(",")]
    rounds = 1 if args.quick else args.rounds
    dtypes = args.dtypes.split(",")
    only = set(filter(None, args.only.split(",")))
    rng = np.random.default_rng(0)
    print(
        f"{machine_line()}; opspec defaults: threshold {opspec.parallel_threshold()} "
        f"({opspec.parallel_threshold_source()}); sizes {', '.join(map(str, sizes))}; dtypes {', '.join(dtypes)}; "
        f"median of {rounds} interleaved rounds; malloc: {malloc_line()}"
    )
    peers = ["jnp", "numba serial", "numba prange", "warp"]
    head = f"{'op':<30}{'dtype':<10}{'elements':>10}{'opspec ms':>11}" + "".join(f"{p + '/ops':>17}" for p in peers)
    print(head)
    print("-" * len(head))
    plot_rows = []

    def run(case, dtype):
        if only and case.name.split()[0] not in only:
            return
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
            agree(case, dtype, {k: roof.run_once(fn, a) for k, (fn, a, _) in contenders.items()})
        t = roof.measure(contenders, rounds)
        line = f"{case.name:<30}{dtype:<10}{case.size:>10}{t['opspec'] * 1e3:>11.4f}"
        line += "".join(f"{t[p] / t['opspec']:>17.2f}" if p in t else f"{'-':>17}" for p in peers)
        print(line, flush=True)
        plot_rows.append((f"{case.name} {dtype} {case.size}", {k: v * 1e3 for k, v in t.items()}))

    for n in sizes:
        plain, donated = float32_cases(n, rng)
        for dtype in dtypes:
            for case in typed_cases(plain, donated, dtype) + ml_cases(n, dtype, rng):
                if listed(case.name.split()[0], dtype):
                    run(case, dtype)
    if "float32" in dtypes:
        run(stdp_scan_case(100, 100, rng) if args.quick else stdp_scan_case(1000, 1000, rng), "float32")
    save_plot(
        os.path.join(args.out, "bench_ops.png"), "every op against jnp (ms per call)", plot_rows, ["opspec", *peers]
    )


if __name__ == "__main__":
    main()
