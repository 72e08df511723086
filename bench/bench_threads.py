"""Parallel CPU loops against one thread, on an idle and on a loaded machine.

For element-wise `add` (memory-bound) and `sigmoid` (an `exp` per element), and the
row-wise `matvec` (64 rows of size / 64 columns: 64 trips, whose work is its elements,
docs/performance.md "Work, not trips"), at sizes from 4,096 to 8M float32 elements of
work, jitted, one call at a time, this prints the time of one
thread and, as a ratio to it, the time of every loop parallel (threshold 1) in each pool
(opspec's own threads, XLA's intra-op pool, an OpenMP team) and of opspec's defaults
(the default threshold, opspec's pool). A ratio above 1 is slower than one thread.
"Loaded" runs one busy process per CPU beside the benchmark, as other jobs would.
Rounds interleave the configurations, so a change in the load hits all of them; each
configuration runs untimed for 10 ms before it is timed, so that the threads of the one
before it (an OpenMP team spins after its last loop) have gone quiet. "default" is
"opspec pool" at sizes from the threshold on: where the two differ, that is the noise.

    .venv/bin/python bench/bench_threads.py [--out DIR] [--quick] [--sizes N ...]
"""

import argparse
import os
import statistics
import subprocess
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np

import opspec

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import machine_line  # noqa: E402

NEVER = 2**62
ROWS = 64  # of the row-wise case
SETTLE_SECONDS = 0.01
CONFIGS = [
    # name, pool, threads (0: every CPU), threshold (None: opspec's default)
    ("1 thread", "opspec", 1, NEVER),
    ("opspec pool", "opspec", 0, 1),
    ("xla pool", "xla", 0, 1),
    ("openmp", "openmp", 0, 1),
    ("default", "opspec", 0, None),
]


def time_call(fn, min_seconds):
    calls, t0 = 0, time.perf_counter()
    while True:
        jax.block_until_ready(fn())
        calls += 1
        elapsed = time.perf_counter() - t0
        if elapsed >= min_seconds:
            return elapsed / calls * 1e3


def configure(pool, threads, threshold, default_threshold):
    opspec.set_cpu_pool(pool)
    opspec.set_cpu_threads(threads)
    opspec.set_parallel_threshold(default_threshold if threshold is None else threshold)


def make_call(op, n):
    """The jitted call of `op` at n elements of work."""
    rng = np.random.default_rng(n)
    if op == "matvec":
        cols = max(1, n // ROWS)
        A = jnp.asarray(rng.standard_normal((ROWS, cols)), jnp.float32)
        v = jnp.asarray(rng.standard_normal(cols), jnp.float32)
        matvec = jax.jit(opspec.ops.matvec)
        return lambda: matvec(A, v)
    x = jnp.asarray(rng.standard_normal(n), jnp.float32)
    y = jnp.asarray(rng.standard_normal(n), jnp.float32)
    fn = jax.jit(opspec.ops.add) if op == "add" else jax.jit(opspec.ops.sigmoid)
    return (lambda: fn(x, y)) if op == "add" else (lambda: fn(x))


def measure(op, sizes, rounds, min_seconds, default_threshold):
    rows = []
    for n in sizes:
        call = make_call(op, n)
        times = {name: [] for name, *_ in CONFIGS}
        for _name, pool, threads, threshold in CONFIGS:  # warm up every pool's threads
            configure(pool, threads, threshold, default_threshold)
            time_call(call, min_seconds)
        for _ in range(rounds):
            for name, pool, threads, threshold in CONFIGS:
                configure(pool, threads, threshold, default_threshold)
                # Untimed first: the threads of the configuration before (OpenMP's team
                # spins for a while after its last loop) must not be timed with this one.
                time_call(call, SETTLE_SECONDS)
                times[name].append(time_call(call, min_seconds))
        rows.append((n, {name: statistics.median(t) for name, t in times.items()}))
    return rows


def start_load():
    """One busy process per CPU (a Python loop that never sleeps)."""
    return [
        subprocess.Popen([sys.executable, "-c", "while True: pass"], stdout=subprocess.DEVNULL)
        for _ in range(os.cpu_count() or 1)
    ]


def print_rows(title, rows):
    names = [name for name, *_ in CONFIGS]
    print(f"\n{title}")
    head = f"{'elements':>10} {'1 thread ms':>12}" + "".join(f"{n + ' /1':>16}" for n in names[1:])
    print(head)
    print("-" * len(head))
    for n, t in rows:
        one = t["1 thread"]
        print(f"{n:>10} {one:>12.4f}" + "".join(f"{t[name] / one:>16.2f}" for name in names[1:]))


def save_plot(path, tables):
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print(f"(matplotlib not installed: no plot at {path})")
        return
    fig, axes = plt.subplots(1, len(tables), figsize=(5 * len(tables), 4), sharey=True)
    for ax, (title, rows) in zip(np.atleast_1d(axes), tables):
        sizes = [n for n, _ in rows]
        for name, *_ in CONFIGS[1:]:
            ax.plot(sizes, [t[name] / t["1 thread"] for _, t in rows], marker="o", label=name)
        ax.axhline(1.0, color="gray", lw=0.8)
        ax.axhline(1.05, color="gray", lw=0.8, ls="--")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("elements (float32)")
        ax.set_title(title, fontsize=9)
    np.atleast_1d(axes)[0].set_ylabel("time / one thread's")
    np.atleast_1d(axes)[0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    print(f"plot: {path}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=None, help="folder for the plot (bench_threads.png)")
    parser.add_argument("--quick", action="store_true", help="fewer sizes and rounds")
    parser.add_argument("--sizes", type=int, nargs="+", help="elements of work to time (a smoke run: small ones)")
    args = parser.parse_args()
    sizes = [2**12, 2**16, 2**20, 2**23] if args.quick else [2**12, 2**14, 2**16, 2**18, 2**20, 2**21, 2**22, 2**23]
    sizes = args.sizes or sizes
    rounds, min_seconds = (3, 0.01) if args.quick else (9, 0.02)
    default_threshold = opspec.parallel_threshold()
    print(
        f"{machine_line()}; default threshold {default_threshold} ({opspec.parallel_threshold_source()}); "
        f"median of {rounds} interleaved rounds"
    )
    tables = []
    try:
        for load in ("idle", "loaded"):
            procs = start_load() if load == "loaded" else []
            try:
                time.sleep(0.5 if procs else 0)
                for op in ("add", "sigmoid", "matvec"):
                    rows = measure(op, sizes, rounds, min_seconds, default_threshold)
                    title = f"{op}, {load} machine" + (f" ({len(procs)} busy processes)" if procs else "")
                    print_rows(title, rows)
                    tables.append((title, rows))
            finally:
                for p in procs:
                    p.kill()
                    p.wait()
    finally:
        configure("opspec", 0, None, default_threshold)
    if args.out:
        save_plot(os.path.join(args.out, "bench_threads.png"), tables)


if __name__ == "__main__":
    main()
