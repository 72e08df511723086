"""Timing and reporting shared by the benchmarks: medians of repeated batches, a text
table, a bar plot of the ratios (saved next to the table), and the header line that says
when and on what a table was taken."""

import os
import platform
import sys
import time

import jax
import numpy as np


def cpu_model():
    """The CPU's model name (/proc/cpuinfo on Linux), else what platform knows."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine_line():
    """The date (UTC), the CPU model and its count, jax's and opspec's versions: the start
    of every bench's header, so that a table pasted elsewhere says where it came from."""
    import opspec  # here: common is imported before some benches set up jax's flags

    now = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    return f"{now}; {cpu_model()}, {os.cpu_count()} CPUs; jax {jax.__version__}; opspec {opspec.__version__}"


# glibc's allocator keeping what it frees: every thread allocates from the main heap
# (one arena), no block up to 1 GiB is mmapped, and the heap is not trimmed below 4 GiB
# free. Fresh outputs then reuse freed memory instead of faulting in new pages
# (bench_chain.py measures the difference). Read by glibc when a process starts.
STEADY_MALLOC = {
    "MALLOC_ARENA_MAX": "1",
    "MALLOC_MMAP_THRESHOLD_": str(1 << 30),
    "MALLOC_TRIM_THRESHOLD_": str(4 << 30),
}


def malloc_line():
    """How this process's allocator was set: "default", or STEADY_MALLOC's variables."""
    set_ = {k: os.environ[k] for k in STEADY_MALLOC if k in os.environ}
    return " ".join(f"{k}={v}" for k, v in set_.items()) if set_ else "default"


def rerun_with_steady_malloc():
    """Replaces this process by the same command under STEADY_MALLOC, unless it runs so
    already: glibc reads the variables only at process start."""
    if any(os.environ.get(k) != v for k, v in STEADY_MALLOC.items()):
        os.execve(sys.executable, [sys.executable, *sys.argv], {**os.environ, **STEADY_MALLOC})


def median_ms(fn, *args, batch=20, batches=7):
    """Median time per call in ms over `batches` batches after one warm-up batch."""
    times = []
    for b in range(batches + 1):
        t0 = time.perf_counter()
        for _ in range(batch):
            out = fn(*args)
        jax.block_until_ready(out)
        if b:
            times.append((time.perf_counter() - t0) / batch * 1e3)
    return float(np.median(times))


def print_table(title, rows, peers):
    """rows: (case, {peer: ms}); the first peer is opspec, ratios are peer / opspec."""
    print(f"\n{title}")
    head = (
        f"{'case':<34}"
        + "".join(f"{p + ' ms':>18}" for p in peers)
        + "".join(f"{p + '/opspec':>22}" for p in peers[1:])
    )
    print(head)
    print("-" * len(head))
    for case, t in rows:
        line = f"{case:<34}" + "".join(f"{t[p]:>18.4f}" if p in t else f"{'-':>18}" for p in peers)
        line += "".join(f"{t[p] / t[peers[0]]:>22.2f}" if p in t else f"{'-':>22}" for p in peers[1:])
        print(line)


def save_plot(path, title, rows, peers):
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print(f"(matplotlib not installed: no plot at {path})")
        return
    cases = [c for c, _ in rows]
    fig, ax = plt.subplots(figsize=(max(6, 0.9 * len(cases)), 4))
    width = 0.8 / len(peers)
    for k, p in enumerate(peers):
        ax.bar(np.arange(len(cases)) + k * width, [t.get(p, np.nan) for _, t in rows], width, label=p)
    ax.set_xticks(np.arange(len(cases)) + 0.4 - width / 2, cases, rotation=30, ha="right", fontsize=8)
    ax.set_ylabel("ms per call (median)")
    ax.set_yscale("log")
    ax.set_title(title)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    print(f"plot: {path}")
