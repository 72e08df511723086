"""The parallel threshold: where portable CPU loops go from one thread to several.

Where it comes from, first match wins:

1. ``OPSPEC_PARALLEL_THRESHOLD`` in the environment (elements of work: docs/performance.md);
2. the value ``python -m opspec tune`` measured on this machine and saved under the
   user's cache folder (``$XDG_CACHE_HOME/opspec/``, else ``~/.cache/opspec/``), in a file
   named after the host and its CPU count;
3. the built-in default of the C runtime (``OPSPEC_DEFAULT_PARALLEL_THRESHOLD``).

``set_parallel_threshold()`` changes it later in the process, whatever it started from.
Every package built with opspec (``opspec`` and users' packages) reads the same value at
import. Nothing here imports JAX; ``python -m opspec tune`` measures (opspec._measure).
"""

from __future__ import annotations

import json
import os
import socket
import warnings
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
