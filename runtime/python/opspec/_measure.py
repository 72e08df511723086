"""``python -m opspec tune``: measure where CPU loops should go parallel on this machine,
in elements of work, for a representative set of ops (OPS): `add`'s crossover is the
package's threshold, another op's its own where it differs. Saves them where every later
``import opspec`` reads them (opspec._tune reads them; docs/performance.md, "The
threshold")."""

from __future__ import annotations

import json
import os
import socket
import statistics
import time
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp

import opspec
from opspec._tune import ENV, FORMAT, MARGIN, NEVER, cache_file, cpu_count, pick_threshold


def _busy() -> str:
    """Why this machine looks busy (other runnable threads), or ""."""
    try:
        with open("/proc/loadavg", encoding="ascii") as f:
            fields = f.read().split()
        running = int(fields[3].split("/")[0]) - 1  # not counting this reader
    except (OSError, ValueError, IndexError):
        return ""
    return f"{running} other threads are running on {cpu_count()} CPUs" if running >= cpu_count() else ""


def _time_calls(fn: Callable[[], Any], min_seconds: float) -> float:
    """Seconds per call of fn (which blocks until done): a batch of at least
    `min_seconds`."""
    calls, t0 = 0, time.perf_counter()
    while True:
        fn()
        calls += 1
        elapsed = time.perf_counter() - t0
        if elapsed >= min_seconds:
            return elapsed / calls


# Rows of the row-wise ops `tune` times: few, so that their trips are far below any
# threshold and only their work (rows x columns) can make them parallel.
ROW_WISE_ROWS = 64


def _element_wise(fn: Callable[..., Any], inputs: int, work_per_element: float) -> Callable[[int], Callable[[], Any]]:
    """The call of element-wise `fn` (float32, `inputs` arrays) at about n elements of
    work: n / work_per_element elements (its `flops:` / 2 an element where they count
    more than its elements: runtime/src/handler.c)."""

    def make(n: int) -> Callable[[], Any]:
        jitted = jax.jit(fn)
        args = [jnp.ones(max(1, int(n / work_per_element)), jnp.float32) for _ in range(inputs)]
        return lambda: jax.block_until_ready(jitted(*args))

    return make


def _row_wise(fn: Callable[..., Any], weights: bool, work_per_element: float) -> Callable[[int], Callable[[], Any]]:
    """The call of row-wise `fn` (float32) over ROW_WISE_ROWS rows of about
    n / (ROW_WISE_ROWS * work_per_element) columns, with a vector of one weight per column
    where `weights` (matvec's x, rms_norm's w): one trip per row, n elements of work."""

    def make(n: int) -> Callable[[], Any]:
        jitted = jax.jit(fn)
        cols = max(1, int(n / (ROW_WISE_ROWS * work_per_element)))
        args = [jnp.ones((ROW_WISE_ROWS, cols), jnp.float32)] + ([jnp.ones(cols, jnp.float32)] if weights else [])
        return lambda: jax.block_until_ready(jitted(*args))

    return make


# What `tune` times, by name: (the call at a size in elements of work, what it is). Not
# every shipped op: a representative set of the kinds of loop (memory-bound and
# compute-bound element-wise, work counted by `flops:`, row-wise reductions), each built
# from ones of float32, so that the whole run stays within about a minute on 2 cores.
# `add`'s crossover is the package's threshold; another op's is saved as its own
# threshold where it differs from `add`'s.
OPS: dict[str, tuple[Callable[[int], Callable[[], Any]], str]] = {
    "add": (_element_wise(opspec.ops.add, 2, 1), "`add` (float32, element-wise)"),
    "sigmoid": (_element_wise(opspec.ops.sigmoid, 1, 2), "`sigmoid` (float32, element-wise, an `exp` each)"),
    "gelu_tanh": (
        _element_wise(opspec.ops.gelu_tanh, 1, 4.5),
        "`gelu_tanh` (float32, element-wise, its work counted by its `flops:`)",
    ),
    "matvec": (_row_wise(opspec.ops.matvec, True, 1), f"`matvec` (float32, {ROW_WISE_ROWS} rows: row-wise)"),
    "rms_norm": (_row_wise(opspec.ops.rms_norm, True, 2), f"`rms_norm` (float32, {ROW_WISE_ROWS} rows: row-wise)"),
    "softmax": (_row_wise(opspec.ops.softmax, False, 2.5), f"`softmax` (float32, {ROW_WISE_ROWS} rows: row-wise)"),
}


def _force(op: str, mode: str) -> None:
    """Makes `op`'s loops serial or parallel (every thread) through its own threshold."""
    opspec.set_parallel_threshold(NEVER if mode == "serial" else 1, op=op)


def measure(
    sizes: list[int] | None = None,
    rounds: int = 9,
    min_seconds: float = 0.004,
    log: Callable[[str], None] = print,
    op: str = "add",
) -> list[dict]:
    """Times one of OPS (`add` by default) with the loop forced serial and forced
    parallel (every thread, in the pool in use: opspec.cpu_pool()), interleaved, at each
    size in elements of work (docs/performance.md, "The threshold"): one row per size
    with the medians in ms and the work the handler counted."""
    sizes = sizes or [2**k for k in range(12, 24)]
    make_call = OPS[op][0]
    own = opspec._opspec.op_parallel_threshold(op)  # put back after: 0 for none
    rows = []
    try:
        for n in sizes:
            call = make_call(n)
            times: dict[str, list[float]] = {"serial": [], "parallel": []}
            for mode in ("serial", "parallel"):  # warm up, the helper threads included
                _force(op, mode)
                _time_calls(call, min_seconds)
            for _ in range(rounds):
                for mode in ("serial", "parallel"):
                    _force(op, mode)
                    times[mode].append(_time_calls(call, min_seconds) * 1e3)
            opspec._opspec.last_work()  # forget the calls above: read one call's work
            call()
            row = {
                "size": n,
                "work": opspec._opspec.last_work()[2],  # what the handler counted: about n
                "serial_ms": statistics.median(times["serial"]),
                "parallel_ms": statistics.median(times["parallel"]),
            }
            rows.append(row)
            log(
                f"  {row['work']:>10}  serial {row['serial_ms']:9.4f} ms  parallel {row['parallel_ms']:9.4f} ms"
                f"  serial/parallel {row['serial_ms'] / row['parallel_ms']:5.2f}"
            )
    finally:
        opspec.set_parallel_threshold(own or None, op=op)
    return rows


def _crossover_text(work: int) -> str:
    return "never" if work == NEVER else f"{work} elements of work"


def tune(
    save: bool = True,
    rounds: int = 9,
    sizes: list[int] | None = None,
    min_seconds: float = 0.004,
    log: Callable[[str], None] = print,
    ops: list[str] | None = None,
) -> dict:
    """Measures this machine's crossover in elements of work for each of `ops` (of OPS;
    all by default, `add` always): `add`'s becomes opspec's threshold, and each other
    op's, where it differs, that op's own. Saves them (unless save is False) where every
    later ``import opspec`` on this machine reads them, and applies them to this process.
    Returns what it saved."""
    unknown = sorted(set(ops or []) - set(OPS))
    if unknown:
        raise ValueError(f"tune: no timing for {', '.join(map(repr, unknown))}: expected some of {', '.join(OPS)}")
    timed = ["add"] + [op for op in (ops or OPS) if op != "add"]
    threads = opspec._opspec.cpu_threads()
    result: dict[str, Any] = {
        "format": FORMAT,
        "host": socket.gethostname(),
        "cpus": cpu_count(),
        "threads": threads,
        "op": "add float32",
        "pool": opspec.cpu_pool(),
        "margin": MARGIN,
        "measured": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "opspec": opspec.__version__,
    }
    own: dict[str, int] = {}
    if threads < 2:
        log("one thread only: loops stay serial")
        result["rows"] = []
        result["parallel_threshold"] = NEVER
    else:
        busy = _busy()
        if busy:
            log(f"warning: {busy}; what is measured now is the load, and the result will say so")
        log(f"timing {len(timed)} of opspec's ops, a representative set: {', '.join(timed)}")
        # Each crossover in the same unit, the work the handler counted for each row.
        result["crossovers"] = {}
        for op in timed:
            log(f"timing {OPS[op][1]}, serial against {threads} threads, median of {rounds} interleaved rounds:")
            rows = measure(sizes=sizes, rounds=rounds, min_seconds=min_seconds, log=log, op=op)
            result["rows" if op == "add" else f"{op}_rows"] = rows
            result["crossovers"][op] = pick_threshold([{**r, "size": r["work"]} for r in rows])
        result["parallel_threshold"] = result["crossovers"]["add"]
        for op in timed[1:]:
            crossover = result["crossovers"][op]
            if crossover != result["parallel_threshold"]:
                own[op] = crossover
            log(f"`{op}` crossover: {_crossover_text(crossover)}{' (its own threshold)' if op in own else ''}")
    result["op_thresholds"] = {"opspec": own}
    if result["parallel_threshold"] == NEVER:
        log("more threads never won by 10% on `add`: portable loops will stay serial")
    else:
        log(f"parallel threshold: {result['parallel_threshold']} elements of work")
    if save:
        path = cache_file()
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(result, f, indent=1)
            f.write("\n")
        os.replace(tmp, path)
        opspec.set_parallel_threshold(result["parallel_threshold"])
        for op in OPS:
            opspec.set_parallel_threshold(own.get(op), op=op)
        log(f"saved: {path} (every `import opspec` on this machine reads it; {ENV} overrides it)")
    return result
