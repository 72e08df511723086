"""The parallel threshold: where portable CPU loops go from one thread to several.

Where it comes from, first match wins:

1. ``OPSPEC_PARALLEL_THRESHOLD`` in the environment (a trip count);
2. the value ``python -m opspec tune`` measured on this machine and saved under the
   user's cache folder (``$XDG_CACHE_HOME/opspec/``, else ``~/.cache/opspec/``), in a file
   named after the host and its CPU count;
3. the built-in default of the C runtime (``OPSPEC_DEFAULT_PARALLEL_THRESHOLD``).

``set_parallel_threshold()`` changes it later in the process, whatever it started from.
Every package built with opspec (``opspec`` and users' packages) reads the same value at
import. Nothing here imports JAX except :func:`tune`.
"""

from __future__ import annotations

import json
import os
import socket
import statistics
import time
import warnings
from collections.abc import Callable
from types import ModuleType
from typing import Any

ENV = "OPSPEC_PARALLEL_THRESHOLD"
# Where parallel loops' helpers come from (runtime/include/opspec/parallel.h), by name.
POOL_ENV = "OPSPEC_CPU_POOL"
POOLS = {"opspec": 0, "xla": 1, "openmp": 2}
# Saved files carry this; a file of another format version is ignored.
FORMAT = 1
# Multi-threaded must beat single-threaded by this factor, at a size and at every larger
# size measured, for that size to become the threshold.
MARGIN = 1.10
# The threshold saved when more threads never won: loops stay serial.
NEVER = 2**62

# package -> where its threshold came from ("environment", the cache file, "default").
SOURCES: dict[str, str] = {}


def cpu_count() -> int:
    """CPUs this process may run on (what OpenMP's default team uses)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def cache_dir() -> str:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "opspec")


def cache_file() -> str:
    """This machine's file: the host name and the CPU count are in its name, so a home
    folder shared by several machines keeps one value each."""
    host = "".join(c if c.isalnum() or c in "-_." else "_" for c in socket.gethostname()) or "host"
    return os.path.join(cache_dir(), f"parallel-threshold-{host}-{cpu_count()}cpu.json")


def _positive_int(value: Any) -> int | None:
    try:
        n = int(value)
    except (TypeError, ValueError):
        return None
    return n if n >= 1 else None


def saved_threshold(path: str | None = None) -> int | None:
    """The threshold saved for this machine, or None (no file, or not a valid one)."""
    path = path or cache_file()
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        return None
    return _positive_int(data.get("parallel_threshold"))


def pool_number(name: str) -> int:
    """The C runtime's number for a pool name; ValueError naming the choices."""
    if name not in POOLS:
        raise ValueError(f"unknown CPU pool {name!r}: expected one of {', '.join(map(repr, POOLS))}")
    return POOLS[name]


def pool_name(number: int) -> str:
    return next(name for name, n in POOLS.items() if n == number)


def apply(package: str, native: ModuleType) -> None:
    """Sets `native`'s pool from OPSPEC_CPU_POOL, and its threshold from the environment
    or this machine's saved value (leaves the built-in defaults otherwise), and records
    where the threshold came from."""
    pool = os.environ.get(POOL_ENV, "").strip().lower()
    if pool and hasattr(native, "set_cpu_pool"):  # packages built by opspec 0.1.0 have none
        if pool in POOLS:
            native.set_cpu_pool(POOLS[pool])
        else:
            warnings.warn(
                f"{POOL_ENV}={pool!r} is not one of {', '.join(POOLS)}: ignored", RuntimeWarning, stacklevel=3
            )
    text = os.environ.get(ENV, "").strip()
    if text:
        n = _positive_int(text)
        if n is not None:
            native.set_parallel_threshold(n)
            SOURCES[package] = f"environment ({ENV})"
            return
        warnings.warn(f"{ENV}={text!r} is not a positive integer: ignored", RuntimeWarning, stacklevel=3)
    saved = saved_threshold()
    if saved is not None:
        native.set_parallel_threshold(saved)
        SOURCES[package] = cache_file()
        return
    SOURCES[package] = "default"


def pick_threshold(rows: list[dict]) -> int:
    """The smallest measured size from which on more threads win by MARGIN at every
    larger size too; NEVER if they do not win at the largest. rows: dicts with `size`,
    `serial_ms` and `parallel_ms`, any order."""
    rows = sorted(rows, key=lambda r: r["size"])
    threshold = NEVER
    for row in reversed(rows):
        if row["serial_ms"] < MARGIN * row["parallel_ms"]:
            break
        threshold = row["size"]
    return threshold


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


def measure(
    sizes: list[int] | None = None, rounds: int = 9, min_seconds: float = 0.004, log: Callable[[str], None] = print
) -> list[dict]:
    """Times opspec's element-wise `add` (float32) with the loop forced serial and forced
    parallel (every thread, in the pool in use: opspec.cpu_pool()), interleaved, at each
    size: one row per size with the medians in ms."""
    import jax
    import jax.numpy as jnp

    import opspec

    sizes = sizes or [2**k for k in range(12, 24)]
    add = jax.jit(opspec.ops.add)
    before = opspec.parallel_threshold()
    rows = []
    try:
        for n in sizes:
            x = jnp.ones(n, jnp.float32)
            y = jnp.ones(n, jnp.float32)

            def call() -> None:
                jax.block_until_ready(add(x, y))

            times: dict[str, list[float]] = {"serial": [], "parallel": []}
            for mode in ("serial", "parallel"):  # warm up, the helper threads included
                opspec.set_parallel_threshold(NEVER if mode == "serial" else 1)
                _time_calls(call, min_seconds)
            for _ in range(rounds):
                for mode in ("serial", "parallel"):
                    opspec.set_parallel_threshold(NEVER if mode == "serial" else 1)
                    times[mode].append(_time_calls(call, min_seconds) * 1e3)
            row = {
                "size": n,
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
    """Measures this machine's crossover, and saves it (unless save is False) where
    every later ``import opspec`` on this machine reads it. Returns what it saved."""
    import opspec

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
        log(f"timing `add` (float32), serial against {threads} threads, median of {rounds} interleaved rounds:")
        result["rows"] = measure(sizes=sizes, rounds=rounds, min_seconds=min_seconds, log=log)
        result["parallel_threshold"] = pick_threshold(result["rows"])
    if result["parallel_threshold"] == NEVER:
        log("more threads never won by 10%: portable loops will stay serial")
    else:
        log(f"parallel threshold: {result['parallel_threshold']} trips")
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
