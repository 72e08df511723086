"""Hostile calls: raw `jax.ffi.ffi_call`s that skip the Python stub's checks, bad sparse
data, many threads, many calls. The handler must refuse with an exception naming the op
(and the argument, the expression or the position), never crash, never run a kernel on
sizes it has not checked, and never leak.

Sizes that divide by zero, overflow or go negative need ops whose shapes depend on
attributes; the tests for those build one small extra project (`extra_build`), once.
"""

import os
import pathlib
import shutil
import subprocess
import sys
import textwrap
import threading

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.sparse as sp
from builds import register_tree_specs

import opspec

ROOT = pathlib.Path(__file__).resolve().parents[2]
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


def raw(name, outs, *args, **attrs):
    """The op's FFI target, called directly: only the handler checks this call."""
    return jax.block_until_ready(jax.ffi.ffi_call(opspec.target_name(name), outs)(*args, **attrs))


def refused(pattern, name, outs, *args, **attrs):
    with pytest.raises(Exception, match=pattern) as info:
        raw(name, outs, *args, **attrs)
    assert f"opspec {name}: " in str(info.value)
    return str(info.value)


# ---- the arithmetic the handlers compute sizes with -------------------------------

_HELPERS_MAIN = r"""
#include <inttypes.h>
#include <stdio.h>
#ifdef OPSPEC_TEST_DEVICE_BRANCH
/* Host stand-in for the CUDA intrinsic, so the device-side overflow tests run here. */
static inline long long __mul64hi(long long a, long long b) { return (long long)(((__int128)a * b) >> 64); }
#endif
#include "opspec/ffi.h"

int main(void) {
  long long a, b;
  while (scanf("%lld %lld", &a, &b) == 2)
    printf("%" PRId64 " %" PRId64 " %" PRId64 " %" PRId64 " %" PRId64 " %" PRId64 " %" PRId64 " %" PRId64 " %" PRId64
           " %" PRId64 "\n",
           opspec_safe_add(a, b), opspec_safe_sub(a, b), opspec_safe_mul(a, b), opspec_safe_div(a, b),
           opspec_safe_mod(a, b), opspec_safe_neg(a), opspec_safe_min(a, b), opspec_safe_max(a, b),
           opspec_safe_cdiv(a, b), b != 0 && a != INT64_MIN && b != INT64_MIN ? opspec_cdiv(a, b) : 0);
  return 0;
}
"""


def _checked(value):
    return INT64_MIN if not INT64_MIN <= value <= INT64_MAX else value


def _reference(a, b):
    """What the helpers must give, from Python's unbounded integers."""
    bad = a == INT64_MIN or b == INT64_MIN
    inv = lambda v: INT64_MIN if bad else _checked(v)  # noqa: E731
    trunc = None if b == 0 else (abs(a) // abs(b)) * (1 if (a < 0) == (b < 0) else -1)
    ceil = None if b == 0 else -((-a) // b)
    return [
        inv(a + b),
        inv(a - b),
        inv(a * b),
        INT64_MIN if bad or b == 0 else _checked(trunc),
        INT64_MIN if bad or b == 0 else a - b * trunc,
        INT64_MIN if a == INT64_MIN else -a,
        INT64_MIN if bad else min(a, b),
        INT64_MIN if bad else max(a, b),
        INT64_MIN if bad or b == 0 else ceil,
        0 if b == 0 or bad else ceil,
    ]


@pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler")
@pytest.mark.parametrize("branch", ["host", "device"])
def test_safe_size_helpers_match_unbounded_integers(tmp_path, rng, branch):
    source = tmp_path / "helpers.c"
    source.write_text(_HELPERS_MAIN)
    exe = tmp_path / "helpers"
    flags = ["-DOPSPEC_TEST_DEVICE_BRANCH", "-D__CUDA_ARCH__=800"] if branch == "device" else []
    cc = subprocess.run(
        [
            "cc",
            "-std=c11",
            "-O2",
            "-Wall",
            "-Wextra",
            "-Werror",
            *flags,
            "-I",
            str(ROOT / "runtime" / "include"),
            "-I",
            jax.ffi.include_dir(),
            str(source),
            "-o",
            str(exe),
        ],
        capture_output=True,
        text=True,
    )
    assert cc.returncode == 0, cc.stderr
    edges = [
        0,
        1,
        -1,
        2,
        -2,
        3,
        7,
        -7,
        255,
        2**31,
        -(2**31),
        2**32,
        3037000499,
        3037000500,
        -3037000500,
        2**62,
        -(2**62),
        2**62 + 1,
        INT64_MAX,
        INT64_MAX - 1,
        INT64_MIN,
        INT64_MIN + 1,
    ]
    pairs = [(a, b) for a in edges for b in edges]
    pairs += [(int(a), int(b)) for a, b in rng.integers(INT64_MIN, INT64_MAX, (2000, 2), dtype=np.int64, endpoint=True)]
    pairs += [(int(a), int(b)) for a, b in rng.integers(-(2**32), 2**32, (2000, 2), dtype=np.int64)]
    pairs += [(int(a), int(b)) for a, b in rng.integers(-20, 20, (500, 2), dtype=np.int64)]
    run = subprocess.run([str(exe)], input="".join(f"{a} {b}\n" for a, b in pairs), capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    names = ["add", "sub", "mul", "div", "mod", "neg", "min", "max", "cdiv", "plain cdiv"]
    for (a, b), line in zip(pairs, run.stdout.splitlines(), strict=True):
        got = [int(v) for v in line.split()]
        for name, g, w in zip(names, got, _reference(a, b)):
            assert g == w, f"opspec_safe_{name}({a}, {b}) = {g}, expected {w} ({branch} branch)"


# ---- sizes through shipped ops -----------------------------------------------------


def test_negative_output_dim_is_refused_before_anything_uses_it():
    # csr_matvec's y has rows_p1 - 1 rows: an empty indptr makes that -1, whatever
    # shape the raw call claims for y. (XLA skips a call whose outputs are all empty.)
    empty = jnp.zeros(0, jnp.int32)
    x = jnp.ones(3, jnp.float32)
    for claimed in (1, 5):
        refused(
            r"opspec csr_matvec: output 'y' dim 0 = 'rows_p1 - 1' is -1, expected at least 0",
            "csr_matvec",
            jax.ShapeDtypeStruct((claimed,), jnp.float32),
            jnp.zeros(0, jnp.float32),
            empty,
            empty,
            x,
        )


# ---- messages that name everything -------------------------------------------------


def test_missing_and_unexpected_attributes_are_named():
    x = jnp.ones(8, jnp.float32)
    out = jax.ShapeDtypeStruct((8,), jnp.float32)
    refused(r"opspec leaky_relu: missing attribute 'alpha' \(float64\)(?:\n|$)", "leaky_relu", out, x)
    refused(
        r"opspec leaky_relu: unexpected attribute 'beta' \(expected attributes: alpha \(float64\)\)",
        "leaky_relu",
        out,
        x,
        alpha=np.float64(0.1),
        beta=np.float64(0.1),
    )
    refused(
        r"opspec leaky_relu: missing attribute 'alpha' \(float64\); unexpected attributes 'aa', 'beta' "
        r"\(expected attributes: alpha \(float64\)\)",
        "leaky_relu",
        out,
        x,
        beta=np.float64(1),
        aa=np.int32(1),
    )
    refused(
        r"opspec relu: unexpected attribute 'alpha' \(expected no attributes\)", "relu", out, x, alpha=np.float64(0.1)
    )
    # Names are compared byte for byte, to the end of both: a prefix or an extension of an
    # attribute's name, or of opspec_kernel's, is another name.
    for name in ["alph", "alphaa", "opspec_kerne", "opspec_kernel0"]:
        refused(
            rf"opspec leaky_relu: missing attribute 'alpha' \(float64\); unexpected attribute '{name}' "
            r"\(expected attributes: alpha \(float64\)\)",
            "leaky_relu",
            out,
            x,
            **{name: np.float64(0.1)},
        )
    refused(
        r"opspec leaky_relu: attribute 'alpha': expected a float64 scalar, got an array",
        "leaky_relu",
        out,
        x,
        alpha=np.ones(2),
    )


def test_counts_dtypes_and_ranks_are_named():
    x = jnp.ones(8, jnp.float32)
    out = jax.ShapeDtypeStruct((8,), jnp.float32)
    refused(r"opspec add: expected 2 inputs and 1 outputs, got 1 and 1 \(inputs: x, y; outputs: out\)", "add", out, x)
    refused(
        r"opspec add: input 'y': expected dtype float32 \(type T, as input 'x'\), got float64",
        "add",
        out,
        x,
        jnp.ones(8, jnp.float64),
    )
    refused(
        r"opspec add: output 'out': expected dtype float32 \(type T, as input 'x'\), got int32",
        "add",
        jax.ShapeDtypeStruct((8,), jnp.int32),
        x,
        x,
    )
    refused(r"opspec matvec: input 'A': expected rank 2 \(shape \[rows, cols\]\), got shape \[8\]", "matvec", out, x, x)
    refused(
        r"opspec csr_matvec: output 'y': expected rank 1 \(shape \[3\]\), got shape \[3, 1\]",
        "csr_matvec",
        jax.ShapeDtypeStruct((3, 1), jnp.float32),
        x,
        jnp.zeros(8, jnp.int32),
        jnp.zeros(4, jnp.int32),
        x,
    )


# ---- sparse data that would read out of bounds --------------------------------------


def _csr(rng, dtype, rows=None, cols=None, nnz=None):
    """A random CSR matrix (exactly `nnz` entries if given), a vector, and the dense matrix."""
    rows = rows or int(rng.integers(20, 60))
    cols = cols or int(rng.integers(20, 60))
    nnz = int(rng.integers(1, rows * cols // 3)) if nnz is None else nnz
    dense = np.zeros((rows, cols))
    dense.flat[rng.choice(rows * cols, nnz, replace=False)] = rng.uniform(0.5, 2.0, nnz)
    m = sp.csr_matrix(dense.astype(dtype))
    x = rng.uniform(-1, 1, cols).astype(dtype)
    return m.data, m.indices.astype(np.int32), m.indptr.astype(np.int32), x, dense


_MATVEC = jax.jit(opspec.ops.csr_matvec)


def _matvec(data, indices, indptr, x):
    return _MATVEC(data, indices, indptr, x)


def _bad_csr(pattern, data, indices, indptr, x):
    with pytest.raises(Exception, match=pattern) as info:
        jax.block_until_ready(_matvec(data, indices, indptr, x))
    return str(info.value)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_csr_column_index_out_of_range(rng, dtype):
    # Enough rows that the scan crosses its 4096-element blocks.
    data, indices, indptr, x, _ = _csr(rng, dtype, rows=int(rng.integers(150, 300)), cols=int(rng.integers(100, 200)))
    n, nnz = len(x), len(indices)
    first, later = sorted(rng.choice(nnz, 2, replace=False))
    indices[first] = n + int(rng.integers(0, 5))
    indices[later] = n + 100  # only the first bad position is reported
    _bad_csr(
        rf"opspec csr_matvec: input 'indices'\[{first}\] = {indices[first]} is out of range: "
        rf"expected 0 <= value <= n - 1 = {n - 1}",
        data,
        indices,
        indptr,
        x,
    )


def test_csr_negative_column_index(rng):
    data, indices, indptr, x, _ = _csr(rng, np.float32)
    p = int(rng.integers(len(indices)))
    indices[p] = -int(rng.integers(1, 2**31 - 1))
    _bad_csr(
        rf"opspec csr_matvec: input 'indices'\[{p}\] = {indices[p]} is out of range: expected 0 <= value <= n - 1 = {len(x) - 1}",
        data,
        indices,
        indptr,
        x,
    )


def test_csr_decreasing_row_pointers(rng):
    data, indices, indptr, x, _ = _csr(rng, np.float64)
    # Swap two neighbours that differ: still within [0, nnz], but no longer sorted.
    r = int(rng.choice(np.flatnonzero(np.diff(indptr) > 0)))
    indptr[r], indptr[r + 1] = indptr[r + 1], indptr[r]
    _bad_csr(
        rf"opspec csr_matvec: input 'indptr'\[{r + 1}\] = {indptr[r + 1]} is less than indptr\[{r}\] = {indptr[r]}: "
        r"expected non-decreasing values",
        data,
        indices,
        indptr,
        x,
    )


def test_csr_row_pointer_past_the_data(rng):
    data, indices, indptr, x, _ = _csr(rng, np.float32)
    nnz = len(indices)
    indptr[-1] = nnz + int(rng.integers(1, 1000))
    _bad_csr(
        rf"opspec csr_matvec: input 'indptr'\[{len(indptr) - 1}\] = {indptr[-1]} is out of range: "
        rf"expected 0 <= value <= nnz = {nnz}",
        data,
        indices,
        indptr,
        x,
    )


def test_csr_checks_can_be_turned_off_for_good_data(rng):
    assert opspec.checks_enabled()
    data, indices, indptr, x, dense = _csr(rng, np.float64)
    try:
        opspec.set_checks(False)
        assert not opspec.checks_enabled()
        np.testing.assert_allclose(_matvec(data, indices, indptr, x), dense @ x, rtol=1e-12, atol=1e-12)
    finally:
        opspec.set_checks(True)
    assert opspec.checks_enabled()
    indices[0] = len(x)
    _bad_csr(r"input 'indices'\[0\]", data, indices, indptr, x)  # back on: refused again


@pytest.mark.parametrize("value, enabled", [("0", False), ("off", False), ("1", True), ("", True)])
def test_checks_environment_variable(value, enabled):
    env = dict(os.environ, OPSPEC_CHECKS=value)
    r = subprocess.run(
        [sys.executable, "-c", "import opspec; print(opspec.checks_enabled())"], env=env, capture_output=True, text=True
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == str(enabled)


# ---- many threads, many calls -------------------------------------------------------


def test_concurrent_calls_from_many_threads(rng):
    add = jax.jit(opspec.ops.add)
    seeds = rng.integers(0, 2**32, 8)
    failures = []

    def worker(seed):
        # Fixed shapes (one compilation each), fresh values on every call.
        r = np.random.default_rng(seed)
        try:
            for k in range(250):
                if k % 2:
                    x, y = r.random(1000).astype(np.float32), r.random(1000).astype(np.float32)
                    np.testing.assert_allclose(add(x, y), x + y, rtol=1e-6)
                else:
                    data, indices, indptr, x, dense = _csr(r, np.float64, rows=40, cols=30, nnz=200)
                    np.testing.assert_allclose(_matvec(data, indices, indptr, x), dense @ x, rtol=1e-12, atol=1e-12)
        except Exception as e:  # reported from the main thread
            failures.append(e)

    threads = [threading.Thread(target=worker, args=(int(s),)) for s in seeds]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures, failures[0]


def _rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="needs /proc")
def test_no_memory_growth_over_many_calls(rng):
    # abs_two_pass mallocs scratch each call; csr_matvec scans its indices; the raw call
    # fails in the handler. A leak of one buffer per call would show as megabytes.
    x = jnp.asarray(rng.uniform(-2, 2, 4096))
    data, indices, indptr, v, _ = (jnp.asarray(a) for a in _csr(rng, np.float64))
    scratch_op, matvec = jax.jit(opspec.ops.abs_two_pass), _MATVEC
    bad = jax.jit(
        lambda a: jax.ffi.ffi_call(opspec.target_name("leaky_relu"), jax.ShapeDtypeStruct(a.shape, a.dtype))(a)
    )

    def calls(n):
        for _ in range(n):
            out = scratch_op(x)
            out = matvec(data, indices, indptr, v)
        jax.block_until_ready(out)
        for _ in range(n // 20):
            with pytest.raises(Exception, match="missing attribute 'alpha'"):
                jax.block_until_ready(bad(x))

    calls(1000)  # warm-up: compilation, allocator pools
    before = _rss_bytes()
    calls(10_000)
    growth = _rss_bytes() - before
    assert growth < 4 << 20, f"RSS grew by {growth / 2**20:.1f} MiB over 20,000 calls"
    np.testing.assert_allclose(scratch_op(x), np.abs(np.asarray(x)), rtol=1e-12)


# ---- ops whose sizes a call can break: one extra build ------------------------------

EXTRA_SPECS = {
    "hard_sizes": """\
        op: hard_sizes
        doc: Sums runs of `parts` elements of x, read through a scratch copy of the first n - drop.
        inputs:
          - {name: x, dtype: float64, shape: [n]}
        outputs:
          - {name: y, dtype: float64, shape: [n / parts]}
        scratch:
          - {name: tmp, dtype: float64, shape: [n - drop]}
        attrs:
          - {name: parts, type: int64, default: 1}
          - {name: drop, type: int64, default: 0}
        cpu: |
          /* The handler refuses negative sizes; were one to get through, this stops the process. */
          if (tmp_size < 0 || y_size < 0) __builtin_trap();
          for (int64_t p = 0; p < tmp_size; ++p) tmp[p] = x[p];
          for (int64_t b = 0; b < y_size; ++b) {
            double acc = 0;
            for (int64_t q = b * parts; q < (b + 1) * parts; ++q) acc += q < tmp_size ? tmp[q] : x[q];
            y[b] = acc;
          }
        """,
    "hard_repeat": """\
        op: hard_repeat
        doc: x repeated `reps` times.
        types: {T: [float32, int32]}
        inputs:
          - {name: x, dtype: T, shape: [n]}
        outputs:
          - {name: y, dtype: T, shape: [reps * n]}
        attrs:
          - {name: reps, type: int64}
        launch: [y_size]
        kernel: |
          y[i] = x[i % n];
        """,
    "hard_gate": """\
        op: hard_gate
        doc: y = x + 1 and count = cols when `on` is 1; with on = 0 the launch is empty.
        types: {T: [float32, float64]}
        inputs:
          - {name: x, dtype: T, shape: [rows, cols]}
        outputs:
          - {name: y, dtype: T, shape: [rows, cols]}
          - {name: count, dtype: int32, shape: [rows]}
        attrs:
          - {name: on, type: int32, default: 1}
        launch: ["rows * min(on, 1)", cols]
        kernel: |
          y[i * cols + j] = x[i * cols + j] + 1;
          if (j == 0) count[i] = (int32_t)cols;
        """,
    "hard_lookup": """\
        op: hard_lookup
        doc: y = table[idx]; marks and caps are only checked.
        types: {T: [float32], I: [int8, int16, int32, int64, uint8, uint16, uint32, uint64]}
        inputs:
          - {name: table, dtype: T, shape: [m]}
          - {name: idx, dtype: I, shape: [count], check: {min: 0, max: m - 1}}
          - {name: marks, dtype: I, shape: [nmarks], check: {min: lo, sorted: true}}
          - {name: caps, dtype: I, shape: [ncaps], check: {max: m}}
        outputs:
          - {name: y, dtype: T, shape: [count]}
        attrs:
          - {name: lo, type: int64, default: 0}
        launch: [count]
        kernel: |
          y[i] = table[idx[i]];
        """,
    "hard_gather": """\
        op: hard_gather
        doc: y = table[idx], idx checked by the kernel as it reads (in_kernel); `strict` makes the
          body refuse the top `strict` values too, which the spec's check allows.
        types: {T: [float32, float64]}
        inputs:
          - {name: table, dtype: T, shape: [m]}
          - {name: idx, dtype: int32, shape: [count], check: {min: 0, max: m - 1, in_kernel: true}}
          - {name: starts, dtype: int32, shape: [nstarts], check: {min: 0, sorted: true}}
        outputs:
          - {name: y, dtype: T, shape: [count]}
        attrs:
          - {name: strict, type: int32, default: 0}
        launch: [count]
        kernel: |
          const int32_t at = idx[i];
          if (at < 0 || at >= m - strict) {
            opspec_reject();
            y[i] = 0;
          } else {
            y[i] = table[at];
          }
        """,
    "hard_gather_raw": """\
        op: hard_gather_raw
        doc: The same gather as a raw cpu body with its own loop.
        inputs:
          - {name: table, dtype: float64, shape: [m]}
          - {name: idx, dtype: int64, shape: [count], check: {min: 0, max: m - 1, in_kernel: true}}
        outputs:
          - {name: y, dtype: float64, shape: [count]}
        cpu: |
          for (int64_t i = 0; i < count; ++i) {
            if (idx[i] < 0 || idx[i] >= m) { opspec_reject(); return; }
            y[i] = table[idx[i]];
          }
        """,
}


register_tree_specs(__name__, EXTRA_SPECS)


@pytest.fixture
def extra_build(tree_build):
    """The build of the project with EXTRA_SPECS, built as a user would (CUDA too where
    nvcc is): the session's one copy of the tree (builds.py), shared with the other
    modules that register specs there."""
    return tree_build[1]


_PRELUDE = """\
import re
import numpy as np, jax, jax.numpy as jnp, opspec
jax.config.update("jax_enable_x64", True)
ops = opspec.ops
rng = np.random.default_rng(SEED)

def raw(name, outs, *args, **attrs):
    return jax.block_until_ready(jax.ffi.ffi_call(opspec.target_name(name), outs)(*args, **attrs))

def refused(pattern, fn, *args, **kwargs):
    try:
        jax.block_until_ready(fn(*args, **kwargs))  # a failed call raises when its result is ready
    except Exception as e:
        assert re.search(pattern, str(e)), str(e)
    else:
        raise AssertionError("accepted: " + pattern)
"""


_ON_BACKEND = """\
import functools, types
ops = types.SimpleNamespace(hard_lookup=functools.partial(opspec.ops.hard_lookup, backend="{backend}"),
                            hard_gather=functools.partial(opspec.ops.hard_gather, backend="{backend}"),
                            hard_gather_raw=None)
"""

# The CUDA backends the value checks run on besides the CPU (the checks are the same).
_CHECK_BACKENDS = ["cpu"] + (["cuda_sim"] if opspec.has_cuda_sim else [])


def run_extra(build, rng, code, backend="cpu"):
    """Runs `code` against the extra build in a fresh interpreter: a crash fails the test
    instead of killing pytest. Its `rng` is seeded from the test's (whose seed pytest
    prints on failure). With another `backend`, `ops.hard_lookup` and `ops.hard_gather`
    run there, and `ops.hard_gather_raw` (CPU only) is None. Returns stdout; the code
    prints "ok" at its end."""
    env = dict(os.environ, PYTHONPATH=str(build / "python"))
    program = f"SEED = {int(rng.integers(2**32))}\n" + _PRELUDE + textwrap.dedent(code) + "\nprint('ok')\n"
    if backend != "cpu":
        program = program.replace("ops = opspec.ops\n", _ON_BACKEND.format(backend=backend), 1)
    r = subprocess.run([sys.executable, "-c", program], env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, f"exit status {r.returncode}\n{r.stderr[-4000:]}"
    assert r.stdout.rstrip().endswith("ok"), r.stdout
    return r.stdout


@pytest.mark.slow
def test_division_by_zero_in_an_output_dim(extra_build, rng):
    run_extra(
        extra_build,
        rng,
        """\
        x = jnp.asarray(rng.random(12))
        for n_out in (1, 12):  # whatever output shape the raw call claims (XLA skips all-empty outputs)
            refused(r"opspec hard_sizes: output 'y' dim 0 = 'n / parts' divides by zero or overflows int64",
                    raw, "hard_sizes", jax.ShapeDtypeStruct((n_out,), jnp.float64), x, parts=np.int64(0), drop=np.int64(0))
        # A good call right after: the process and the op are fine.
        for parts in (1, 3, 5):
            k = 12 // parts
            want = np.asarray(x)[: k * parts].reshape(k, parts).sum(axis=1)
            np.testing.assert_allclose(ops.hard_sizes(x, parts=parts, drop=int(rng.integers(0, 13))), want, rtol=1e-12)
        """,
    )


@pytest.mark.slow
def test_negative_sizes_never_reach_the_body(extra_build, rng):
    # The body traps on a negative size: a check that let one through kills the process.
    run_extra(
        extra_build,
        rng,
        """\
        n = int(rng.integers(4, 40))
        x = jnp.asarray(rng.random(n))
        out = jax.ShapeDtypeStruct((n,), jnp.float64)
        drop = n + int(rng.integers(1, 100))
        refused(rf"opspec hard_sizes: scratch 'tmp' dim 0 = 'n - drop' is {n - drop}, expected at least 0",
                raw, "hard_sizes", out, x, parts=np.int64(1), drop=np.int64(drop))
        refused(rf"opspec hard_sizes: output 'y' dim 0 = 'n / parts' is -{n // 2}, expected at least 0",
                raw, "hard_sizes", out, x, parts=np.int64(-2), drop=np.int64(0))
        refused(rf"opspec hard_repeat: output 'y' dim 0 = 'reps \\* n' is -{3 * n}, expected at least 0",
                raw, "hard_repeat", jax.ShapeDtypeStruct((1,), jnp.float32), jnp.ones(n, jnp.float32), reps=np.int64(-3))
        refused(r"opspec hard_gate: launch extent 0 = 'rows \\* min\\(on, 1\\)' is -3, expected at least 0",
                raw, "hard_gate", (jax.ShapeDtypeStruct((3, 4), jnp.float32), jax.ShapeDtypeStruct((3,), jnp.int32)),
                jnp.ones((3, 4), jnp.float32), on=np.int32(-1))
        """,
    )


@pytest.mark.slow
def test_sizes_that_overflow_int64(extra_build, rng):
    run_extra(
        extra_build,
        rng,
        """\
        x = jnp.asarray(rng.random(8))
        out = jax.ShapeDtypeStruct((8,), jnp.float64)
        # n - drop past int64
        refused(r"opspec hard_sizes: scratch 'tmp' dim 0 = 'n - drop' divides by zero or overflows int64",
                raw, "hard_sizes", out, x, parts=np.int64(1), drop=np.int64(-(2**63 - 1)))
        # a size that fits int64 but whose bytes do not fit the address space
        refused(r"opspec hard_sizes: scratch 'tmp': 4611686018427387912 elements of 8 bytes overflow the address space",
                raw, "hard_sizes", out, x, parts=np.int64(1), drop=np.int64(-(2**62)))
        # bytes that fit, memory that does not exist: refused, not a NULL pointer in the body
        refused(r"opspec hard_sizes: cannot allocate 2305843009213694016 bytes for scratch 'tmp'",
                raw, "hard_sizes", out, x, parts=np.int64(1), drop=np.int64(-(2**58)))
        # reps * n past int64
        for reps in (2**62, 2**63 - 1, -(2**62)):
            refused(r"opspec hard_repeat: output 'y' dim 0 = 'reps \\* n' divides by zero or overflows int64",
                    raw, "hard_repeat", jax.ShapeDtypeStruct((8,), jnp.int32), jnp.ones(8, jnp.int32), reps=np.int64(reps))
        xi = rng.integers(-100, 100, 7).astype(np.int32)
        np.testing.assert_array_equal(ops.hard_repeat(xi, reps=3), np.tile(xi, 3))
        np.testing.assert_array_equal(ops.hard_repeat(xi, reps=0), np.zeros(0, np.int32))
        """,
    )


@pytest.mark.slow
def test_empty_launch_zero_fills_every_output_on_cpu(extra_build, rng):
    # Between calls the allocator hands back buffers that held earlier results, so
    # unwritten outputs would show old values.
    run_extra(
        extra_build,
        rng,
        """\
        for trial in range(20):
            dtype = (np.float32, np.float64)[trial % 2]
            rows, cols = int(rng.integers(1, 60)), int(rng.integers(1, 60))
            x = rng.uniform(1, 2, (rows, cols)).astype(dtype)
            y, count = ops.hard_gate(x, on=1)
            np.testing.assert_allclose(y, x + 1, rtol=1e-6)
            np.testing.assert_array_equal(count, np.full(rows, cols, np.int32))
            del y, count
            y, count = ops.hard_gate(x, on=0)
            assert y.shape == (rows, cols) and count.shape == (rows,)
            assert not np.asarray(y).any() and not np.asarray(count).any(), trial
        """,
    )


@pytest.mark.slow
@pytest.mark.parametrize("backend", _CHECK_BACKENDS)
def test_value_checks_for_every_integer_dtype(extra_build, rng, backend):
    run_extra(
        extra_build,
        rng,
        """\
        m = int(rng.integers(5, 120))  # below 128: every dtype holds m + 1
        table = rng.random(m).astype(np.float32)
        for dt in (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64):
            info = np.iinfo(dt)
            idx = rng.integers(0, m, 5000).astype(dt)  # crosses the scan's 4096-element blocks
            marks = np.sort(rng.integers(1, info.max // 2, 300)).astype(dt)
            caps = rng.integers(0, m + 1, 9).astype(dt)
            want = table[idx.astype(np.int64)]
            np.testing.assert_array_equal(ops.hard_lookup(table, idx, marks, caps), want)

            # both bounds: the dtype's largest value, then (signed) -1; the first position wins
            p, q = sorted(rng.choice(len(idx), 2, replace=False))
            bad = idx.copy()
            bad[p], bad[q] = info.max, info.max
            refused(rf"opspec hard_lookup: input 'idx'\\[{p}\\] = {info.max} is out of range: "
                    rf"expected 0 <= value <= m - 1 = {m - 1}(?:\\n|$)", ops.hard_lookup, table, bad, marks, caps)
            if info.min < 0:
                bad = idx.copy()
                bad[q] = -1
                refused(rf"input 'idx'\\[{q}\\] = -1 is out of range", ops.hard_lookup, table, bad, marks, caps)

            # sorted, with a min
            r = int(rng.integers(1, len(marks)))
            unsorted = marks.copy()
            unsorted[r] = unsorted[r - 1] - 1
            refused(rf"opspec hard_lookup: input 'marks'\\[{r}\\] = {unsorted[r]} is less than marks\\[{r - 1}\\] = "
                    rf"{unsorted[r - 1]}: expected non-decreasing values", ops.hard_lookup, table, idx, unsorted, caps)
            if info.max < 100000:  # a min no value of the dtype meets: position 0 fails
                refused(rf"input 'marks'\\[0\\] = {marks[0]} is out of range: expected value >= lo = 100000",
                        ops.hard_lookup, table, idx, marks, caps, lo=100000)
            # a min below the dtype's range checks nothing
            np.testing.assert_array_equal(ops.hard_lookup(table, idx, marks, caps, lo=-(2**62)), want)

            # max only
            bad_caps = caps.copy()
            bad_caps[-1] = m + 1
            refused(rf"input 'caps'\\[{len(caps) - 1}\\] = {m + 1} is out of range: expected value <= m = {m}(?:\\n|$)",
                    ops.hard_lookup, table, idx, marks, bad_caps)

        # uint64 values above int64: out of range, printed unsigned
        idx = np.zeros(10, np.uint64)
        idx[7] = 2**64 - 1
        refused(rf"input 'idx'\\[7\\] = 18446744073709551615 is out of range: expected 0 <= value <= m - 1 = {m - 1}",
                ops.hard_lookup, table, idx, np.zeros(3, np.uint64), np.zeros(2, np.uint64))
        # the switch off: good data still computes right
        opspec.set_checks(False)
        idx = rng.integers(0, m, 50).astype(np.int16)
        np.testing.assert_array_equal(ops.hard_lookup(table, idx, np.zeros(2, np.int16), np.zeros(2, np.int16)), table[idx])
        """,
        backend,
    )


@pytest.mark.slow
@pytest.mark.parametrize("backend", _CHECK_BACKENDS)
def test_checks_in_the_kernel(extra_build, rng, backend):
    """in_kernel checks: the body rejects a bad value as it reads it, and the handler
    then names the first bad position, as its scan before the kernel would have: one
    call, batched (positions within the element), in parallel, in a raw `cpu:` body.
    The other checks still run before the kernel. A body that rejects what the check
    allows is reported as such; with checks off a rejection still fails the call."""
    run_extra(
        extra_build,
        rng,
        """\
        m = int(rng.integers(50, 200))
        table = rng.standard_normal(m)
        for n in (int(rng.integers(5, 40)), int(rng.integers(70_000, 90_000))):  # serial; parallel chunks
            opspec.set_parallel_threshold(1 if n > 1000 else 1 << 18)
            idx = rng.integers(0, m, n).astype(np.int32)
            starts = np.sort(rng.integers(0, 9, 4)).astype(np.int32)
            np.testing.assert_array_equal(ops.hard_gather(table, idx, starts), table[idx])
            if ops.hard_gather_raw:
                np.testing.assert_array_equal(ops.hard_gather_raw(table, idx.astype(np.int64)), table[idx])
            for trial in range(3):
                spots = np.sort(rng.choice(n, 3, replace=False))
                bad = idx.copy()
                bad[spots] = [m + int(rng.integers(0, 9)), -1 - int(rng.integers(0, 9)), m]
                pattern = (rf"opspec hard_gather: input 'idx'\\[{spots[0]}\\] = {bad[spots[0]]} is out of range: "
                           rf"expected 0 <= value <= m - 1 = {m - 1}(?:\\n|$)")
                refused(pattern, ops.hard_gather, table, bad, starts)
                if ops.hard_gather_raw:
                    refused(pattern.replace("hard_gather", "hard_gather_raw"), ops.hard_gather_raw, table,
                            bad.astype(np.int64))
            # the other check still runs before the kernel
            unsorted = starts.copy()
            unsorted[1], unsorted[2] = 9, 0
            refused(r"input 'starts'\\[2\\] = 0 is less than starts\\[1\\] = 9", ops.hard_gather, table, idx, unsorted)
        opspec.set_parallel_threshold(1 << 18)

        # batched: the position within the element that holds it
        idx = rng.integers(0, m, (4, 30)).astype(np.int32)
        np.testing.assert_array_equal(jax.vmap(ops.hard_gather, in_axes=(None, 0, None))(table, idx, starts), table[idx])
        bad = idx.copy()
        bad[2, 17] = m
        refused(rf"input 'idx'\\[17\\] = {m} is out of range", jax.vmap(ops.hard_gather, in_axes=(None, 0, None)),
                table, bad, starts)

        # a body stricter than its check: rejected, and said so
        top = idx[0].copy()
        top[5] = m - 1
        refused(r"opspec hard_gather: the kernel called opspec_reject\\(\\), but every input checked in_kernel meets "
                r"its check: the body rejects what the spec's check allows", ops.hard_gather, table, top, starts, strict=1)
        np.testing.assert_array_equal(ops.hard_gather(table, top, starts, strict=0), table[top])

        # checks off: the kernel still refuses, without the scan for the position
        opspec.set_checks(False)
        refused(r"opspec hard_gather: the kernel rejected a value of an input checked in_kernel \\(checks are off: "
                r"opspec.set_checks\\(True\\) names the position\\)", ops.hard_gather, table, bad[0] * 0 + m, starts)
        np.testing.assert_array_equal(ops.hard_gather(table, idx[0], starts), table[idx[0]])
        opspec.set_checks(True)
        """,
        backend,
    )
