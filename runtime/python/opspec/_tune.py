"""The parallel threshold: where portable CPU loops go from one thread to several.

Where it comes from, first match wins:

1. ``OPSPEC_PARALLEL_THRESHOLD`` in the environment (elements of work: docs/performance.md);
2. the value ``python -m opspec tune`` measured on this machine and saved under the
   user's cache folder (``$XDG_CACHE_HOME/opspec/``, else ``~/.cache/opspec/``), in a file
   named after the host and its CPU count;
3. the built-in default of the C runtime (``OPSPEC_DEFAULT_PARALLEL_THRESHOLD``).

``set_parallel_threshold()`` changes it later in the process, whatever it started from.
Every package built with opspec (``opspec`` and users' packages) reads the same value at
import. Besides it, the saved file may hold ops' own thresholds (``op_thresholds``, per
package, per op: what ``tune`` measured where an op's crossover is below `add`'s),
which a package applies at import unless the environment sets the threshold; an op's own
value replaces the package's for its calls (``set_parallel_threshold(work, op=...)``).
Nothing here imports JAX; ``python -m opspec tune`` measures (opspec._measure).
"""

from __future__ import annotations

import difflib
import json
import operator
import os
import socket
import warnings
from types import ModuleType
from typing import Any

ENV = "OPSPEC_PARALLEL_THRESHOLD"
# Where parallel loops' helpers come from (runtime/include/opspec/parallel.h), by name.
POOL_ENV = "OPSPEC_CPU_POOL"
POOLS = {"opspec": 0, "xla": 1, "openmp": 2}
# Saved files carry this; a file of another format version is ignored, except
# FORMAT 1's (the package threshold alone), which is still read.
FORMAT = 2
READ_FORMATS = (1, 2)
# Multi-threaded must beat single-threaded by this factor, at a size and at every larger
# size measured, for that size to become the threshold.
MARGIN = 1.10
# The threshold saved when more threads never won: loops stay serial.
NEVER = 2**62
MAX_WORK = 2**63 - 1  # the runtime holds work in an int64: a larger value becomes this

# package -> where its threshold came from ("environment", the cache file, "default").
SOURCES: dict[str, str] = {}
# package -> op -> where the op's own starting threshold came from (the cache file).
OP_SOURCES: dict[str, dict[str, str]] = {}


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
    return min(n, MAX_WORK) if n >= 1 else None


def saved_data(path: str | None = None) -> dict | None:
    """The saved file's contents, or None (no file, not JSON, or a format not read)."""
    try:
        with open(path or cache_file(), encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("format") not in READ_FORMATS:
        return None
    return data


def _threshold_in(data: dict | None) -> int | None:
    return None if data is None else _positive_int(data.get("parallel_threshold"))


def _op_thresholds_in(data: dict | None, package: str) -> dict[str, int]:
    ops = data.get("op_thresholds", {}) if data else {}
    ops = ops.get(package, {}) if isinstance(ops, dict) else {}
    if not isinstance(ops, dict):
        return {}
    values = {op: _positive_int(v) for op, v in ops.items() if isinstance(op, str)}
    return {op: v for op, v in values.items() if v is not None}


def saved_threshold(path: str | None = None) -> int | None:
    """The threshold saved for this machine, or None (no file, or not a valid one)."""
    return _threshold_in(saved_data(path))


def saved_op_thresholds(package: str, path: str | None = None) -> dict[str, int]:
    """The ops' own thresholds saved for `package` on this machine (op name -> work);
    entries that are not a positive integer are left out. Empty for a FORMAT 1 file."""
    return _op_thresholds_in(saved_data(path), package)


def as_integer(value: Any) -> int | None:
    """`value` as an int where it is an integer (not a bool) or a float with an integer
    value; None otherwise."""
    if isinstance(value, bool):
        return None
    if isinstance(value, float):
        return int(value) if value.is_integer() else None
    try:
        return operator.index(value)
    except TypeError:
        return None


def work_value(work: Any, where: str) -> int:
    """`work` (an integer, or a float with an integer value) as an int from 1 to MAX_WORK:
    smaller values become 1, larger ones MAX_WORK; TypeError naming `where` otherwise."""
    value = as_integer(work)
    if value is not None:
        return max(1, min(value, MAX_WORK))
    raise TypeError(f"{where}: expected an integer (elements of work), got {work!r} ({type(work).__name__})")


def op_names(native: ModuleType) -> list[str]:
    """The names of the ops of the package whose native module is `native`."""
    return [entry[0] for entry in native.handlers()]


def op_name(package: str, native: ModuleType, op: Any) -> str:
    """The name of op `op` of `package` (its name, or its op function); ValueError for an
    op the package does not have, TypeError for neither a name nor a function."""
    if not hasattr(native, "set_op_parallel_threshold"):
        raise RuntimeError(f"{package} was built before ops had thresholds of their own: rebuild it")
    if isinstance(op, str):
        name = op
    elif callable(op) and isinstance(getattr(op, "__name__", None), str):
        name, module = op.__name__, getattr(op, "__module__", None) or ""
        owner = module[: -len(".ops")] if module.endswith(".ops") else None
        if owner is not None and owner != package:
            raise ValueError(
                f"{owner}.ops.{name} is an op of package {owner!r}, not of {package!r}: "
                f"use {owner}.set_parallel_threshold(work, op=...)"
            )
    else:
        raise TypeError(f"{package}: op= expects an op's name (str) or op function, got {op!r} ({type(op).__name__})")
    names = op_names(native)
    if name not in names:
        close = difflib.get_close_matches(name, names, n=3)
        hint = f"; did you mean {', '.join(map(repr, close))}?" if close else f" ({package}.ops.__all__ lists them)"
        raise ValueError(f"{package} has no op {name!r}: expected the name of one of its ops{hint}")
    return name


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
    path = cache_file()
    data = saved_data(path)  # read once, for the threshold and the ops' own
    saved = _threshold_in(data)
    SOURCES[package] = path if saved is not None else "default"
    if saved is not None:
        native.set_parallel_threshold(saved)
    ops = _op_thresholds_in(data, package)
    if ops and hasattr(native, "set_op_parallel_threshold"):  # packages built before per-op values have none
        known = set(op_names(native))
        for op, work in ops.items():
            if op in known:  # an op the package no longer has is left out
                native.set_op_parallel_threshold(op, work)
                OP_SOURCES.setdefault(package, {})[op] = path


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
