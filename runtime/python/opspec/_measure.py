"""``python -m opspec tune``: measure where CPU loops should go parallel on this machine,
in elements of work, for a representative set of ops (OPS): `add`'s crossover is the
package's threshold, another op's its own where it is lower. Saves them where every later
``import opspec`` reads them (opspec._tune reads them; docs/performance.md, "The
threshold")."""

from __future__ import annotations

import importlib
import inspect
import json
import math
import os
import socket
import statistics
import time
from collections.abc import Callable
from types import ModuleType
from typing import Any

import jax
import jax.numpy as jnp

import opspec
from opspec._tune import ENV, FORMAT, MARGIN, NEVER, cache_file, cpu_count, pick_threshold, saved_data


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


# A size whose call takes longer on one thread ends an op's rows: larger ones would take
# long and tell nothing new (`add` at 8M elements took 22 ms; a body whose work the
# handler undercounts may take seconds).
LONGEST_CALL_MS = 50

# What `tune` times, by name: (the call at a size in elements of work, what it is). Not
# every shipped op: a representative set of the kinds of loop (memory-bound and
# compute-bound element-wise, work counted by `flops:`, row-wise reductions), each built
# from ones of float32, so that the whole run stays within about a minute on 2 cores.
# `add`'s crossover is the package's threshold; another op's is saved as its own
# threshold where it is lower than `add`'s, as below.
# An op's own threshold only where its crossover is below the package's: an op never
# waits for more work than the package's threshold before going parallel. Two quiet runs
# of `tune` on the 2-core machine (2026-11-27) put `sigmoid` at 131,072 and 4,194,304 and
# `gelu_tanh` at 262,143 and 8,388,607 (its largest size lost once, and a crossover is
# where two threads win at every larger size): saved, that would have run them serial
# where two threads were 1.8x faster.

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


def measure(
    sizes: list[int] | None = None,
    rounds: int = 9,
    min_seconds: float = 0.004,
    log: Callable[[str], None] = print,
    op: str = "add",
    package: ModuleType = opspec,
    make_call: Callable[[int], Callable[[], Any]] | None = None,
) -> list[dict]:
    """Times op `op` of `package` (one of OPS, `add` by default, or any op `make_call`
    builds a call of at a size) with the loop forced serial and forced parallel (every
    thread, in the pool in use), through the op's own threshold, interleaved, at each
    size in elements of work (docs/performance.md, "The threshold"): one row per size
    with the medians in ms and the work the handler counted (the size where it counted
    none: a raw `cpu:` body)."""
    sizes = sizes or [2**k for k in range(12, 24)]
    make_call = make_call or OPS[op][0]
    native = package._opspec
    own = native.op_parallel_threshold(op)  # put back after: 0 for none
    rows = []
    try:
        for n in sizes:
            call = make_call(n)
            times: dict[str, list[float]] = {"serial": [], "parallel": []}
            for mode in ("serial", "parallel"):  # warm up, the helper threads included
                package.set_parallel_threshold(NEVER if mode == "serial" else 1, op=op)
                _time_calls(call, min_seconds)
            for _ in range(rounds):
                for mode in ("serial", "parallel"):
                    package.set_parallel_threshold(NEVER if mode == "serial" else 1, op=op)
                    times[mode].append(_time_calls(call, min_seconds) * 1e3)
            native.last_work()  # forget the calls above: read one call's work
            call()
            work = native.last_work()[2]
            row = {
                "size": n,
                "work": work if work >= 0 else n,  # what the handler counted: about n
                "serial_ms": statistics.median(times["serial"]),
                "parallel_ms": statistics.median(times["parallel"]),
            }
            rows.append(row)
            log(
                f"  {row['work']:>10}  serial {row['serial_ms']:9.4f} ms  parallel {row['parallel_ms']:9.4f} ms"
                f"  serial/parallel {row['serial_ms'] / row['parallel_ms']:5.2f}"
            )
            if row["serial_ms"] > LONGEST_CALL_MS and n != sizes[-1]:
                log(f"  (larger sizes left out: a call takes over {LONGEST_CALL_MS} ms on one thread)")
                break
    finally:
        package.set_parallel_threshold(own or None, op=op)
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
    op's, where it is lower, that op's own. Saves them (unless save is False) where every
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
            if crossover < result["parallel_threshold"]:
                own[op] = crossover
            log(f"`{op}` crossover: {_crossover_text(crossover)}{' (its own threshold)' if op in own else ''}")
    result["op_thresholds"] = {"opspec": own}
    if result["parallel_threshold"] == NEVER:
        log("more threads never won by 10% on `add`: portable loops will stay serial")
    else:
        log(f"parallel threshold: {result['parallel_threshold']} elements of work")
    if save:
        # Other packages' values (`tune --package`) stay.
        saved = _saved_data()
        result["op_thresholds"] = {**saved.get("op_thresholds", {}), **result["op_thresholds"]}
        if "packages" in saved:
            result["packages"] = saved["packages"]
        path = _write(result)
        opspec.set_parallel_threshold(result["parallel_threshold"])
        for op in OPS:
            opspec.set_parallel_threshold(own.get(op), op=op)
        log(f"saved: {path} (every `import opspec` on this machine reads it; {ENV} overrides it)")
    return result


def _saved_data() -> dict:
    """The saved file's contents where it is one `tune` reads ({} otherwise), with an
    `op_thresholds` mapping."""
    data = saved_data() or {}
    if data and not isinstance(data.get("op_thresholds"), dict):
        data["op_thresholds"] = {}
    return data


def _write(data: dict) -> str:
    """Writes `data` as this machine's file (atomically); returns its path."""
    path = cache_file()
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=1)
        f.write("\n")
    os.replace(tmp, path)
    return path


def _is_float32(op: Any, dtype: str) -> bool:
    return "float32" in op.types.get(dtype, (dtype,))


def generic_call(
    ops: ModuleType, name: str, native: ModuleType
) -> tuple[Callable[[int], Callable[[], Any]] | None, str]:
    """A maker of calls of op `name` of the ops module `ops` (whose package's native module
    is `native`) at about n elements of work, with arrays of ones in float32, or None and
    why not: every input float32-capable and unchecked, every attribute with a default, a
    shape symbol or a '...' group. Symbols get
    ROW_WISE_ROWS each but the last, which grows with n, and a '...' group ROW_WISE_ROWS
    rows (or n elements where the inputs have no symbol); the growing dim is scaled once
    by the work the handler counted for a first call."""
    fn, op = getattr(ops, name, None), getattr(ops, f"_op_{name}", None)
    if fn is None or op is None:
        return None, "not an op of the module"
    required = [
        p.name
        for p in inspect.signature(fn).parameters.values()
        if p.kind is p.KEYWORD_ONLY and p.default is inspect.Parameter.empty
    ]
    if required:
        return None, f"attribute {required[0]!r} has no default"
    symbols: list[str] = []
    for a in op.inputs:
        if a.check is not None:
            return None, f"input {a.name!r} has a contents check"
        if not _is_float32(op, a.dtype):
            return None, f"input {a.name!r} is not float32"
        for d in a.fixed:
            if not isinstance(d, (str, int)):
                return None, f"a dim of input {a.name!r} is an expression"
            if isinstance(d, str) and d not in symbols:
                symbols.append(d)
    grouped = any(a.has_ellipsis for a in op.inputs)
    if not symbols and not grouped:
        return None, "its inputs have fixed shapes"
    # The dims that grow with n: the last symbol's, or the '...' group's where none.
    fixed_count = len(symbols) if grouped and symbols else max(0, len(symbols) - 1)
    others = ROW_WISE_ROWS**fixed_count

    def arrays(last: int) -> list:
        values = {s: ROW_WISE_ROWS for s in symbols[:-1]} | ({symbols[-1]: max(1, last)} if symbols else {})
        batch = ((ROW_WISE_ROWS,) if symbols else (max(1, last),)) if grouped else ()
        shape = lambda a: (batch if a.has_ellipsis else ()) + tuple(values.get(d, d) for d in a.fixed)  # noqa: E731
        return [jnp.ones(shape(a), jnp.float32) for a in op.inputs]

    def make(n: int) -> Callable[[], Any]:
        jitted = jax.jit(fn)
        last = max(1, n // others)
        native.last_work()
        jax.block_until_ready(jitted(*arrays(last)))
        work = native.last_work()[2]
        if work > 0:  # a portable kernel: scale its last symbol to n elements of work
            last = max(1, math.floor(last * n / work))
        args = arrays(last)
        return lambda: jax.block_until_ready(jitted(*args))

    return make, ""


def tune_package(
    package: str,
    save: bool = True,
    rounds: int = 9,
    sizes: list[int] | None = None,
    min_seconds: float = 0.004,
    log: Callable[[str], None] = print,
) -> dict:
    """`tune --package NAME`: times every op of package `package` that generic_call can
    build inputs for, and saves each crossover that is lower than the package's threshold
    (the saved one, or the default) as that op's own, under the package's name in the
    file's `op_thresholds`, which ``import <package>`` applies. Returns what it found."""
    try:
        pkg = importlib.import_module(package)
        ops = importlib.import_module(f"{package}.ops")
    except ImportError as e:
        raise ValueError(f"cannot import package {package!r} or its ops: {e}") from e
    if not hasattr(getattr(pkg, "_opspec", None), "op_parallel_threshold"):
        raise ValueError(f"{package!r} is not a package built with this opspec (no ops' own thresholds)")
    threads = pkg._opspec.cpu_threads()
    threshold = pkg.parallel_threshold()
    found: dict[str, Any] = {"crossovers": {}, "rows": {}, "skipped": {}, "threshold": threshold}
    makers = {}
    for name in getattr(ops, "__all__", []):
        make, why = generic_call(ops, name, pkg._opspec)
        if make is None:
            found["skipped"][name] = why
            log(f"`{name}`: not timed ({why}); set its own with {package}.set_parallel_threshold(work, op=...)")
        else:
            makers[name] = make
    own: dict[str, int] = {}
    if threads < 2:
        log("one thread only: loops stay serial")
    for name, make in makers.items() if threads >= 2 else ():
        log(f"timing {package}.ops.{name} (float32, ones), serial against {threads} threads:")
        try:
            rows = measure(sizes, rounds, min_seconds, log, name, pkg, make)
        except Exception as e:  # a shape its `require:` refuses, a body that fails on ones
            found["skipped"][name] = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
            log(f"`{name}`: not timed ({found['skipped'][name]})")
            continue
        found["rows"][name] = rows
        crossover = found["crossovers"][name] = pick_threshold([{**r, "size": r["work"]} for r in rows])
        if crossover < threshold:
            own[name] = crossover
        log(f"`{name}` crossover: {_crossover_text(crossover)}{' (its own threshold)' if name in own else ''}")
    found["op_thresholds"] = own
    if save:
        data = _saved_data() or {"format": FORMAT, "op_thresholds": {}}
        data["format"] = FORMAT
        data["op_thresholds"][package] = own
        data.setdefault("packages", {})[package] = {
            "measured": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "threshold": threshold,
            "crossovers": found["crossovers"],
            "rows": found["rows"],
            "skipped": found["skipped"],
        }
        path = _write(data)
        for name in ops.__all__:
            if name in makers:
                pkg.set_parallel_threshold(own.get(name), op=name)
        log(f"saved: {path} (every `import {package}` on this machine reads it; {ENV} overrides it)")
    return found
