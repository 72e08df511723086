"""``python -m opspec tune``: measure where portable CPU loops should go parallel on this
machine, in elements of work, and save it where every later ``import opspec`` reads it
(opspec._tune reads it; docs/performance.md, "The threshold")."""

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


# Rows of the row-wise op `tune` times: few, so that its trips are far below any
# threshold and only its work (rows x columns) can make it parallel.
ROW_WISE_ROWS = 64


def _add_call(n: int) -> Callable[[], Any]:
    """opspec's element-wise `add` of n float32 elements: n trips, n elements of work."""
    add = jax.jit(opspec.ops.add)
    x = jnp.ones(n, jnp.float32)
    y = jnp.ones(n, jnp.float32)
    return lambda: jax.block_until_ready(add(x, y))


def _matvec_call(n: int) -> Callable[[], Any]:
    """opspec's row-wise `matvec` (float32) of ROW_WISE_ROWS rows and n / ROW_WISE_ROWS
    columns: one trip per row, n elements of work."""
    matvec = jax.jit(opspec.ops.matvec)
    cols = max(1, n // ROW_WISE_ROWS)
    A = jnp.ones((ROW_WISE_ROWS, cols), jnp.float32)
    x = jnp.ones(cols, jnp.float32)
    return lambda: jax.block_until_ready(matvec(A, x))


def _gelu_tanh_call(n: int) -> Callable[[], Any]:
    """opspec's element-wise `gelu_tanh` (float32) of 2n / 9 elements: its spec's 9 flops
    an element count 4.5 elements of work each (runtime/src/handler.c), n in all."""
    gelu = jax.jit(opspec.ops.gelu_tanh)
    x = jnp.ones(max(1, 2 * n // 9), jnp.float32)
    return lambda: jax.block_until_ready(gelu(x))


# What `tune` times, by name: (the call at a size in elements of work, what it is).
OPS: dict[str, tuple[Callable[[int], Callable[[], Any]], str]] = {
    "add": (_add_call, "`add` (float32, element-wise)"),
    "matvec": (_matvec_call, f"`matvec` (float32, {ROW_WISE_ROWS} rows: row-wise)"),
    "gelu_tanh": (_gelu_tanh_call, "`gelu_tanh` (float32, element-wise, its work counted by its `flops:`)"),
}


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
    with the medians in ms."""
    sizes = sizes or [2**k for k in range(12, 24)]
    make_call = OPS[op][0]
    before = opspec.parallel_threshold()
    rows = []
    try:
        for n in sizes:
            call = make_call(n)
            times: dict[str, list[float]] = {"serial": [], "parallel": []}
            for mode in ("serial", "parallel"):  # warm up, the helper threads included
                opspec.set_parallel_threshold(NEVER if mode == "serial" else 1)
                _time_calls(call, min_seconds)
            for _ in range(rounds):
                for mode in ("serial", "parallel"):
                    opspec.set_parallel_threshold(NEVER if mode == "serial" else 1)
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
                f"  {n:>10}  serial {row['serial_ms']:9.4f} ms  parallel {row['parallel_ms']:9.4f} ms"
                f"  serial/parallel {row['serial_ms'] / row['parallel_ms']:5.2f}"
            )
    finally:
        opspec.set_parallel_threshold(before)
    return rows


def tune(
    save: bool = True,
    rounds: int = 9,
    sizes: list[int] | None = None,
    min_seconds: float = 0.004,
    log: Callable[[str], None] = print,
) -> dict:
    """Measures this machine's crossover in elements of work (`add`'s, and the row-wise
    `matvec`'s for comparison), and saves `add`'s (unless save is False) where every
    later ``import opspec`` on this machine reads it. Returns what it saved."""
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
    if threads < 2:
        log("one thread only: loops stay serial")
        result["rows"] = []
        result["parallel_threshold"] = NEVER
    else:
        busy = _busy()
        if busy:
            log(f"warning: {busy}; what is measured now is the load, and the result will say so")
        # The threshold is `add`'s crossover, as before work counted (for `add` work is
        # its trips); the others' crossovers, in the same unit (the work the handler
        # counted for each row), are saved beside it, to show how well one threshold in
        # elements of work fits a body that loops over a row (`matvec`) and one whose
        # work its `flops:` counts (`gelu_tanh`).
        result["crossovers"] = {}
        for op, (_, what) in OPS.items():
            log(f"timing {what}, serial against {threads} threads, median of {rounds} interleaved rounds:")
            rows = measure(sizes=sizes, rounds=rounds, min_seconds=min_seconds, log=log, op=op)
            result["rows" if op == "add" else f"{op}_rows"] = rows
            result["crossovers"][op] = pick_threshold([{**r, "size": r["work"]} for r in rows])
        result["parallel_threshold"] = result["crossovers"]["add"]
        for op in OPS:
            if op != "add":
                crossover = result["crossovers"][op]
                log(f"`{op}` crossover: {'never' if crossover == NEVER else crossover} elements of work")
    if result["parallel_threshold"] == NEVER:
        log("more threads never won by 10%: portable loops will stay serial")
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
        log(f"saved: {path} (every `import opspec` on this machine reads it; {ENV} overrides it)")
    return result
