"""A roofline for every shipped op: each of specs/*.yaml at a large size, its time, the
bytes it must move (an explicit model per op, below), GB/s, and that as a share of the
machine's bandwidth measured in the same run by a STREAM-like triad the bench builds
(bench/native/triad.c, C + OpenMP, 2 threads); ratios against jnp (BCSR for CSR), SciPy
for CSR, and BrainEvent's numba_kernel (serial and prange) and Warp's jax_kernel where
those are installed (bench/requirements.txt; ./run bench installs numba and brainevent).
The "donated" rows: element-wise ops that alias their state (exp_decay, exp_trace) at 1e7
elements, the state donated and fed back each call, against jnp's donated loop: no fresh
output buffer per call. "exp_trace 1e6" and "exp_trace 1e6 donated": the hoisting target
of issue 12 (at most 1.1x jnp's time), both ways. The last rows: the first call after import, each contender in
a fresh process. For CSR,
"unchecked" is opspec with its content checks off (opspec.set_checks(False)): the index
scan the spec's `check:` asks for reads indices and indptr once more per call (on the
same threads as the kernel). "1 thread" is opspec on one thread: beside SciPy's serial
loop it bounds what two threads can reach.

Prints one table and saves bench_roofline.png. Ratios are peer time / opspec time: above
1, opspec is faster. Contenders are timed in interleaved rounds (median of the rounds),
so load from other jobs hits all alike; on a shared machine read the ratios, not the
absolute times.

The bytes model is the compulsory traffic: every input read once, every output written
once (4-byte values; int32 indices and spikes), x of a matvec read once. Ops that read
their input twice (running_stats, abs_two_pass) or use scratch are held to the same
single pass, so their share shows the cost of the second pass.
"""

import argparse
import os
import subprocess
import sys
import textwrap
import time

import jax
import jax.numpy as jnp
import numpy as np
import scipy.sparse as sp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import native  # noqa: E402
from common import machine_line  # noqa: E402

import opspec  # noqa: E402

ops = opspec.ops
F = 4  # bytes of a float32 / int32

# ---- optional peers ---------------------------------------------------------------------

try:
    import numba
    from brainevent import numba_kernel

    HAVE_NUMBA = True
except ImportError as e:
    print(f"(numba/brainevent not installed: {e}; ./run bench installs them)")
    HAVE_NUMBA = False

try:
    import warp as wp

    try:
        from warp import jax_kernel as warp_jax_kernel  # warp-lang 1.10 and later
    except ImportError:
        from warp.jax_experimental import jax_kernel as warp_jax_kernel

    HAVE_WARP = True
except Exception as e:  # not installed, or an import that fails on this machine: no column
    print(f"(no Warp column: {type(e).__name__}: {e})")
    HAVE_WARP = False


def numba_pair(body_src, name, outs):
    """The same loop compiled serial (range) and parallel (prange), each wrapped by
    numba_kernel. body_src is the function's source with RANGE for the loop."""
    made = {}
    for mode, rng_name, parallel in (("numba serial", "range", False), ("numba prange", "numba.prange", True)):
        ns = {"numba": numba, "np": np}
        exec(textwrap.dedent(body_src).replace("RANGE", rng_name), ns)
        fn = numba.njit(parallel=parallel)(ns[name])
        kernel = numba_kernel(fn, outs=outs)
        made[mode] = jax.jit(lambda *a, k=kernel: k(*a))
    return made


NUMBA_SRC = {
    "add": """
        def k(x, y, out):
            for i in RANGE(out.size):
                out[i] = x[i] + y[i]
        """,
    "relu": """
        def k(x, out):
            for i in RANGE(out.size):
                v = x[i]
                out[i] = v if v > 0 else 0
        """,
    "sigmoid": """
        def k(x, out):
            for i in RANGE(out.size):
                out[i] = 1 / (1 + np.exp(-x[i]))
        """,
    "exp_trace": """
        def k(trace, spikes, tau_inv, out):
            d = np.exp(-tau_inv[0])
            for i in RANGE(out.size):
                out[i] = trace[i] * d + spikes[i]
        """,
    "lif": """
        def k(V, I, ti, th, vr, dt, V_out, spikes):
            for i in RANGE(V.size):
                v = V[i] + dt[0] * (-(V[i] - vr[0]) * ti[0] + I[i])
                if v >= th[0]:
                    spikes[i] = 1
                    V_out[i] = vr[0]
                else:
                    spikes[i] = 0
                    V_out[i] = v
        """,
    "csr_matvec": """
        def k(data, indices, indptr, x, out):
            for i in RANGE(indptr.size - 1):
                acc = out.dtype.type(0)
                for p in range(indptr[i], indptr[i + 1]):
                    acc += data[p] * x[indices[p]]
                out[i] = acc
        """,
}


def warp_add(n):
    @wp.kernel
    def add_kernel(x: wp.array(dtype=wp.float32), y: wp.array(dtype=wp.float32), out: wp.array(dtype=wp.float32)):
        i = wp.tid()
        out[i] = x[i] + y[i]

    kernel = warp_jax_kernel(add_kernel)
    return jax.jit(lambda x, y: kernel(x, y)[0])


# ---- the workloads -------------------------------------------------------------------------


def laplacian_2d(g):
    """The 5-point 2-D Laplacian on a g x g grid, CSR (banded: 5 nonzeros per row)."""
    one = sp.diags([-1, 2, -1], [-1, 0, 1], shape=(g, g), format="csr")
    eye = sp.identity(g, format="csr")
    return (sp.kron(one, eye) + sp.kron(eye, one)).tocsr().astype(np.float32)


def random_rows(rows, cols, per_row, rng):
    """rows x cols with `per_row` nonzeros per row at random columns (sorted in a row)."""
    indices = np.sort(rng.integers(0, cols, (rows, per_row)), axis=1).astype(np.int32).ravel()
    indptr = np.arange(0, rows * per_row + 1, per_row, dtype=np.int32)
    data = rng.uniform(-1, 1, rows * per_row).astype(np.float32)
    return sp.csr_matrix((data, indices, indptr), shape=(rows, cols))


def csr_bytes(m):
    rows, cols = m.shape
    return 2 * F * m.nnz + F * (rows + 1) + F * cols + F * rows


class Case:
    def __init__(self, name, size, nbytes, op, args, jnp_fn=None, peers=None, stateful=False):
        self.name, self.size, self.nbytes, self.op, self.args = name, size, nbytes, op, args
        self.jnp_fn = jnp_fn
        self.peers = peers or {}  # label -> callable(*args) or (callable, host args)
        self.stateful = stateful  # op and jnp_fn are Donated loops, called with no arguments


class Donated:
    """f(state, *rest) with the state donated and each result fed back in: an in-place
    update, as a donated argument or a scan carry sees it. Called with no arguments.

    Where f returns several arrays, all of them are returned (and waited for) and the one
    at `state_index` is the next state: an op's other outputs are work its custom call
    always does, which XLA would drop from a jnp function whose result went unused."""

    def __init__(self, f, state, rest, state_index=None):
        self.f = jax.jit(f, donate_argnums=0)
        self.state = jnp.array(state, copy=True)
        self.rest = rest
        self.state_index = state_index

    def __call__(self):
        out = self.f(self.state, *self.rest)
        self.state = out if self.state_index is None else out[self.state_index]
        return out


DONATED_SIZE = 10_000_000
HOISTING_SIZE = 1_000_000


def trace_ref(t, s, ti):
    """exp_trace in jnp."""
    return t * jnp.exp(-ti[0]) + s


def donated_trace(name, state, spikes, tau_inv):
    """exp_trace with its trace donated and fed back, against jnp the same way."""
    size = state.shape[0]
    rest = (spikes, tau_inv)
    return Case(
        name,
        size,
        3 * F * size,
        Donated(ops.exp_trace, state, rest),
        (),
        Donated(trace_ref, state, rest),
        stateful=True,
    )


def cases(n, rng):
    f32 = lambda *s: jnp.asarray(rng.uniform(-3, 3, s), jnp.float32)  # noqa: E731
    one = lambda v: jnp.array([v], jnp.float32)  # noqa: E731
    x, y = f32(n), f32(n)
    out = [
        Case("add", n, 3 * F * n, ops.add, (x, y), lambda a, b: a + b),
        Case("parallel_add", n, 3 * F * n, ops.parallel_add, (x, y), lambda a, b: a + b),
        Case("relu", n, 2 * F * n, ops.relu, (x,), lambda a: jnp.maximum(a, 0)),
        Case("sigmoid", n, 2 * F * n, ops.sigmoid, (x,), jax.nn.sigmoid),
        Case(
            "leaky_relu",
            n,
            2 * F * n,
            lambda a: ops.leaky_relu(a, alpha=0.1),
            (x,),
            lambda a: jnp.where(a > 0, a, 0.1 * a),
        ),
        Case("scale", n, 2 * F * n, ops.scale, (x, one(1.5)), lambda a, s: a * s[0]),
        Case("split", n, 3 * F * n, ops.split, (x,), lambda a: (jnp.maximum(a, 0), jnp.minimum(a, 0))),
        Case("abs_two_pass", n, 2 * F * n, ops.abs_two_pass, (x,), jnp.abs),
        Case("sum", n, F * n, ops.sum, (x,), lambda a: jnp.sum(a, keepdims=True)),
        Case("max", n, F * n, ops.max, (x,), lambda a: jnp.max(a, keepdims=True)),
        Case(
            "running_stats",
            n,
            F * n,
            ops.running_stats,
            (x,),
            lambda a: (jnp.mean(a, keepdims=True), jnp.std(a, keepdims=True)),
        ),
        Case("block_sum", n, F * n + F * (n // 256), ops.block_sum, (x,), lambda a: a.reshape(-1, 256).sum(axis=1)),
        Case("exp_decay", n, 2 * F * n, ops.exp_decay, (x, one(0.05)), lambda a, d: a * jnp.exp(-d[0])),
    ]
    h = n // 7
    out.append(Case("hadamard", 7 * h, 3 * F * 7 * h, ops.hadamard, (f32(h, 7), f32(h, 7)), lambda a, b: a * b))
    rows = n // 32
    out.append(
        Case("matvec", rows * 33, F * (rows * 33 + 33 + rows), ops.matvec, (f32(rows, 33), f32(33)), lambda A, v: A @ v)
    )
    trace = jnp.asarray(rng.random(n), jnp.float32)
    spikes = jnp.asarray(rng.random(n) < 0.1, jnp.float32)
    out.append(Case("exp_trace", n, 3 * F * n, ops.exp_trace, (trace, spikes, one(0.05)), trace_ref))
    V = jnp.asarray(rng.uniform(-75, -50, n), jnp.float32)
    current = jnp.asarray(rng.uniform(0, 5, n), jnp.float32)

    def lif_ref(V, I, ti, th, vr, dt):
        v = V + dt[0] * (-(V - vr[0]) * ti[0] + I)
        return jnp.where(v >= th[0], vr[0], v), (v >= th[0]).astype(jnp.int32)

    out.append(Case("lif", n, 4 * F * n, ops.lif, (V, current, one(0.05), one(-55.0), one(-70.0), one(0.1)), lif_ref))
    out.append(
        Case(
            "spike_reset",
            n,
            3 * F * n,
            ops.spike_reset,
            (V, one(-55.0), one(-70.0)),
            lambda V, th, vr: ((V >= th[0]).astype(jnp.int32), jnp.where(V >= th[0], vr[0], V)),
        )
    )
    # Element-wise ops that alias their state, donated, at 1e7: no fresh output buffer
    # (and no page faults) per call. Rates of 0 keep the values steady across calls.
    big = jnp.asarray(rng.uniform(-3, 3, DONATED_SIZE), jnp.float32)
    spikes_big = jnp.asarray(rng.random(DONATED_SIZE) < 0.1, jnp.float32)
    zero = one(0.0)
    out.append(
        Case(
            "exp_decay donated",
            DONATED_SIZE,
            2 * F * DONATED_SIZE,
            Donated(ops.exp_decay, big, (zero,)),
            (),
            Donated(lambda a, d: a * jnp.exp(-d[0]), big, (zero,)),
            stateful=True,
        )
    )
    out.append(donated_trace("exp_trace donated", big, spikes_big * 0, zero))
    # The hoisting target of issue 12: exp_trace at 1e6, not donated (XLA copies the
    # aliased trace into the output first) and donated, against jnp the same way.
    small = jnp.asarray(rng.random(HOISTING_SIZE), jnp.float32)
    small_spikes = jnp.asarray(rng.random(HOISTING_SIZE) < 0.1, jnp.float32)
    out.append(
        Case(
            "exp_trace 1e6",
            HOISTING_SIZE,
            3 * F * HOISTING_SIZE,
            ops.exp_trace,
            (small, small_spikes, one(0.05)),
            trace_ref,
        )
    )
    out.append(donated_trace("exp_trace 1e6 donated", small, small_spikes * 0, zero))
    g = int(round(np.sqrt(n / 4)))
    for label, m in (
        (f"csr_matvec laplacian {g}x{g}", laplacian_2d(g)),
        ("csr_matvec random 20/row", random_rows(n // 8, n // 8, 20, rng)),
    ):
        xv = rng.uniform(-1, 1, m.shape[1]).astype(np.float32)
        args = (
            jnp.asarray(m.data),
            jnp.asarray(m.indices, jnp.int32),
            jnp.asarray(m.indptr, jnp.int32),
            jnp.asarray(xv),
        )
        from jax.experimental import sparse as jsparse

        bcsr = jsparse.BCSR((args[0], args[1], args[2]), shape=m.shape)
        case = Case(f"{label}", m.nnz, csr_bytes(m), ops.csr_matvec, args, lambda d, i, p, v, b=bcsr: b @ v)
        case.peers["scipy"] = (lambda mm, vv: mm @ vv, (m, xv))
        out.append(case)
    return out


def add_peers(case):
    """numba_kernel and Warp versions where a kernel is written for the op."""
    key = "csr_matvec" if case.name.startswith("csr_matvec") else case.name
    if HAVE_NUMBA and key in NUMBA_SRC:
        first = case.args[0]
        if key == "lif":
            outs = (jax.ShapeDtypeStruct(first.shape, jnp.float32), jax.ShapeDtypeStruct(first.shape, jnp.int32))
        elif key == "csr_matvec":
            outs = jax.ShapeDtypeStruct((case.args[2].shape[0] - 1,), jnp.float32)
        else:
            outs = jax.ShapeDtypeStruct(first.shape, jnp.float32)
        for label, fn in numba_pair(NUMBA_SRC[key], "k", outs).items():
            case.peers[label] = fn
    if HAVE_WARP and key == "add":
        try:
            case.peers["warp"] = warp_add(case.size)
        except Exception as e:  # an API this bench was not written against: say so, go on
            print(f"(warp's jax_kernel failed for add: {e})")


# ---- timing -----------------------------------------------------------------------------


def run_once(fn, args):
    return jax.block_until_ready(fn(*args))


def measure(contenders, rounds, min_seconds=0.02):
    """{label: median seconds per call}: each round times every contender once, over a
    batch of calls lasting at least min_seconds. Each round runs the contenders in a
    fresh random order (seeded): a contender is slowed by the one before it, whose
    threads may still be spinning (numba's prange workers), and in a fixed order opspec
    always came after numba prange: its CSR rows measured 25-35 % slower than the same
    call with checks off, which came second. The median takes the unlucky rounds out."""
    batches = {}
    for label, (fn, args, setup) in contenders.items():
        setup()
        run_once(fn, args)  # warm: a cold first call made the first contender's batches short
        t0 = time.perf_counter()
        run_once(fn, args)
        dt = max(time.perf_counter() - t0, 1e-6)
        batches[label] = max(1, int(min_seconds / dt))
    samples = {label: [] for label in contenders}
    labels = list(contenders)
    order = np.random.default_rng(1)
    for _ in range(rounds):
        for label in order.permutation(labels):
            fn, args, setup = contenders[label]
            setup()  # the batch before ended with block_until_ready: nothing runs now
            k = batches[label]
            t0 = time.perf_counter()
            for _ in range(k):
                out = fn(*args)
            jax.block_until_ready(out)
            samples[label].append((time.perf_counter() - t0) / k)
    return {label: float(np.median(v)) for label, v in samples.items()}


def check(case, results):
    ref = results.get("jnp")
    if ref is None:
        return
    ref = ref if isinstance(ref, (tuple, list)) else (ref,)
    for label, res in results.items():
        res = res if isinstance(res, (tuple, list)) else (res,)
        for u, v in zip(res, ref):
            u, v = np.asarray(u, np.float64), np.asarray(v, np.float64)
            tol = 1e-3 * max(1.0, float(np.abs(v).max(initial=0))) if case.name in ("sum", "running_stats") else 1e-3
            np.testing.assert_allclose(u, v, rtol=1e-3, atol=tol, err_msg=f"{case.name}: {label}")


FIRST_CALL = textwrap.dedent(
    """
    import sys, time
    t0 = time.perf_counter()
    import jax, jax.numpy as jnp
    who = sys.argv[1]
    if who == "opspec":
        import opspec
        fn = opspec.ops.add
    elif who == "jnp":
        fn = jax.jit(lambda a, b: a + b)
    elif who == "numba prange":
        import numba
        from brainevent import numba_kernel

        @numba.njit(parallel=True)
        def k(x, y, out):
            for i in numba.prange(out.size):
                out[i] = x[i] + y[i]

        kern = numba_kernel(k, outs=jax.ShapeDtypeStruct((1 << 20,), jnp.float32))
        fn = jax.jit(lambda a, b: kern(a, b))
    elif who == "warp":
        import warp as wp

        try:
            from warp import jax_kernel
        except ImportError:
            from warp.jax_experimental import jax_kernel

        @wp.kernel
        def k(x: wp.array(dtype=wp.float32), y: wp.array(dtype=wp.float32), out: wp.array(dtype=wp.float32)):
            i = wp.tid()
            out[i] = x[i] + y[i]

        kern = jax_kernel(k)
        fn = jax.jit(lambda a, b: kern(a, b)[0])
    t1 = time.perf_counter()
    x = jnp.ones(1 << 20, jnp.float32)
    jax.block_until_ready(x)
    t2 = time.perf_counter()
    jax.block_until_ready(fn(x, x))
    t3 = time.perf_counter()
    print(f"{(t1 - t0) * 1e3:.1f} {(t3 - t2) * 1e3:.1f}")
    """
)


def first_calls(labels):
    """{label: (import ms, first call ms)} for add of 1M float32, each in a fresh process."""
    out = {}
    # A file, not `python -c`: Warp reads its kernels' source from the module's file.
    script = os.path.join(native.BUILD, "first_call.py")
    os.makedirs(native.BUILD, exist_ok=True)
    with open(script, "w") as f:
        f.write(FIRST_CALL)
    for label in labels:
        r = subprocess.run([sys.executable, script, label], capture_output=True, text=True)
        if r.returncode != 0:
            print(f"(first call of {label} failed: {r.stderr.strip().splitlines()[-1:]})")
            continue
        imp, first = (float(v) for v in r.stdout.split()[-2:])  # Warp prints a banner first
        out[label] = (imp, first)
    return out


# ---- report -------------------------------------------------------------------------------


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=1 << 22, help="elements of the element-wise cases")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument(
        "--threshold",
        type=int,
        default=1,
        help="opspec's parallel threshold for the run (default 1: every loop uses the threads, as prange does)",
    )
    parser.add_argument("--only", default="", help="comma-separated case names (prefixes)")
    parser.add_argument("--out", default=os.path.dirname(os.path.abspath(__file__)))
    args = parser.parse_args(argv)

    opspec.set_cpu_threads(args.threads)
    opspec.set_parallel_threshold(args.threshold)
    triad = native.triad_gbs(threads=args.threads)
    print(
        f"{machine_line()}; "
        f"{args.threads} threads; parallel threshold {args.threshold}; "
        f"triad (C, OpenMP, {args.threads} threads, best of 10): {triad:.1f} GB/s"
    )
    rng = np.random.default_rng(0)
    all_cases = cases(args.size, rng)
    if args.only:
        wanted = args.only.split(",")
        all_cases = [c for c in all_cases if any(c.name.startswith(w) for w in wanted)]
    # "unchecked": opspec with the content checks off (set_checks(False)), CSR only.
    # "1 thread": opspec on one thread (set_cpu_threads(1)), CSR only: against SciPy's
    # serial loop it says what two threads can reach at best.
    peers = ["unchecked", "1 thread", "jnp", "scipy", "numba serial", "numba prange", "warp"]
    rows = []
    for case in all_cases:
        add_peers(case)

        def setting(checks=True, threads=args.threads):
            def setup():
                opspec.set_checks(checks)
                opspec.set_cpu_threads(threads)

            return setup

        checks_on = setting()
        op = case.op if case.stateful else jax.jit(case.op)
        contenders = {"opspec": (op, case.args, checks_on)}
        if case.name.startswith("csr_matvec"):  # the one op with content checks
            contenders["unchecked"] = (op, case.args, setting(checks=False))
            contenders["1 thread"] = (op, case.args, setting(threads=1))
        if case.jnp_fn is not None:
            contenders["jnp"] = (case.jnp_fn if case.stateful else jax.jit(case.jnp_fn), case.args, checks_on)
        for label, peer in case.peers.items():
            fn, a = peer if isinstance(peer, tuple) else (peer, case.args)
            contenders[label] = (fn, a, checks_on)
        results = {}
        for label, (fn, a, setup) in contenders.items():
            setup()
            results[label] = run_once(fn, a)
        check(case, results)
        times = measure(contenders, args.rounds)
        checks_on()
        rows.append((case, times))
        print(f"  measured {case.name}", file=sys.stderr)

    head = f"{'op':<32}{'size':>10}{'ms':>9}{'GB/s':>7}{'%triad':>7}" + "".join(f"{p + '/ops':>17}" for p in peers)
    print("\nopspec per op (ms, GB/s of the bytes model, % of triad); peers: their time / opspec's")
    print(head)
    print("-" * len(head))
    for case, t in rows:
        ms = t["opspec"] * 1e3
        gbs = case.nbytes / t["opspec"] / 1e9
        line = f"{case.name:<32}{case.size:>10}{ms:>9.3f}{gbs:>7.1f}{100 * gbs / triad:>7.0f}"
        line += "".join(f"{t[p] / t['opspec']:>17.2f}" if p in t else f"{'-':>17}" for p in peers)
        print(line)
    labels = ["opspec", "jnp"] + (["numba prange"] if HAVE_NUMBA else []) + (["warp"] if HAVE_WARP else [])
    first = first_calls(labels)
    if "opspec" in first:
        imp, ms = first["opspec"]
        line = f"{'first call: add 1M (fresh proc.)':<32}{1 << 20:>10}{ms:>9.1f}{'':>7}{'':>7}"
        line += "".join(f"{first[p][1] / ms:>17.2f}" if p in first else f"{'-':>17}" for p in peers)
        print(line)
        print(
            "  (first call: ms from the first call to its result, after imports; imports took "
            + ", ".join(f"{k} {v[0]:.0f} ms" for k, v in first.items())
            + ")"
        )
    save_plot(os.path.join(args.out, "bench_roofline.png"), rows, triad, peers)
    return rows


def save_plot(path, rows, triad, peers):
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print(f"(matplotlib not installed: no plot at {path})")
        return
    names = [c.name for c, _ in rows]
    labels = ["opspec"] + [p for p in peers if p not in ("unchecked", "1 thread") and any(p in t for _, t in rows)]
    fig, ax = plt.subplots(figsize=(max(8, 0.6 * len(names)), 4.5))
    width = 0.8 / len(labels)
    for k, label in enumerate(labels):
        share = [100 * c.nbytes / t[label] / 1e9 / triad if label in t else np.nan for c, t in rows]
        ax.bar(np.arange(len(names)) + k * width, share, width, label=label)
    ax.axhline(100, color="k", lw=0.8, ls="--")
    ax.set_xticks(np.arange(len(names)) + 0.4 - width / 2, names, rotation=35, ha="right", fontsize=7)
    ax.set_ylabel(f"% of triad bandwidth ({triad:.1f} GB/s)")
    ax.set_title("bytes model / time, as a share of the triad measured in the same run")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    print(f"plot: {path}")


if __name__ == "__main__":
    main()
