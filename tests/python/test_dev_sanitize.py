"""`opspec dev --sanitize` (docs/user-project.md, "When an op gives wrong numbers"): a
user package's kernels, CPU and simulated CUDA, built with AddressSanitizer and
UndefinedBehaviorSanitizer, and the command run under them. The mistakes of issue 30 that
gave wrong numbers with no error each stop the command with a report that names the op
and the spec's line: a body reading `x[i + 1]`, a weight declared `[dim]` (a symbol of its
own) while the body loops to `d`, called with 10 weights for d = 64 (on the simulator),
and a shift past the width of int. A correct call under the same build runs clean, and
gives NumPy's numbers.

Also here, on the same build (issue 30's smaller ones): with checks off, a body's own
check names the package's knob, `sanpkg.set_checks(True)`, not opspec's."""

import os
import subprocess
import sys

import pytest
from builds import cmake_dir, write_package

SHIFT = """\
op: shift
doc: The next element, y[i] = x[i + 1], which reads past x for the last i.
inputs:
  - {name: x, dtype: float32, shape: [n]}
outputs:
  - {name: y, dtype: float32, shape: [n]}
launch: [n]
kernel: |
  y[i] = x[i + 1];
"""

# `w` has a symbol of its own, `dim`, which nothing ties to `d`: 10 weights pass every
# check, and the body reads 64.
WEIGHTED = """\
op: weighted
doc: Row sums of x weighted by w.
inputs:
  - {name: x, dtype: float32, shape: [n, d]}
  - {name: w, dtype: float32, shape: [dim]}
outputs:
  - {name: y, dtype: float32, shape: [n]}
launch: [n]
kernel: |
  float acc = 0;
  for (int64_t j = 0; j < d; ++j) acc += x[i * d + j] * w[j];
  y[i] = acc;
"""

SHL = """\
op: shl
doc: x shifted left by s bits (undefined from s = 32 on).
inputs:
  - {name: x, dtype: int32, shape: [n]}
outputs:
  - {name: y, dtype: int32, shape: [n]}
attrs:
  - {name: s, type: int64}
launch: [n]
kernel: |
  y[i] = x[i] << s;
"""

PICK = """\
op: pick
doc: y[i] = x[idx[i]], each index checked by the body as it reads it.
inputs:
  - {name: x, dtype: float32, shape: [n]}
  - {name: idx, dtype: int32, shape: [m], check: {min: 0, max: n - 1, in_kernel: true}}
outputs:
  - {name: y, dtype: float32, shape: [m]}
launch: [m]
kernel: |
  const int32_t k = idx[i];
  if (k < 0 || k >= n) {
    opspec_reject();
    y[i] = 0;
  } else {
    y[i] = x[k];
  }
"""

SETUP = "import numpy as np, sanpkg; rng = np.random.default_rng(7); "

# Each mistake stops its process: one command per mistake.
MISTAKES = {
    "shift": (
        "x = rng.standard_normal(33).astype(np.float32); print(np.asarray(sanpkg.ops.shift(x)))",
        "heap-buffer-overflow (read of 4 bytes) in op shift's body at specs/shift.yaml:9",
    ),
    "weighted": (
        "x = rng.standard_normal((3, 64)).astype(np.float32); w = np.ones(10, np.float32); "
        "print(np.asarray(sanpkg.ops.weighted(x, w, backend='cuda_sim')))",
        "heap-buffer-overflow (read of 4 bytes) in op weighted's body at specs/weighted.yaml:11",
    ),
    "shl": (
        "print(np.asarray(sanpkg.ops.shl(np.ones(4, np.int32), s=40)))",
        "undefined behaviour in op shl's body at specs/shl.yaml:11: shift exponent 40 is too large",
    ),
}

CLEAN = """\
x = rng.standard_normal((3, 64)).astype(np.float32)
w = rng.standard_normal(64).astype(np.float32)
for backend in ("cpu", "cuda_sim"):
    np.testing.assert_allclose(sanpkg.ops.weighted(x, w, backend=backend), x @ w, rtol=1e-5, atol=1e-5)
v = rng.standard_normal(8).astype(np.float32)
idx = rng.integers(0, 8, 5).astype(np.int32)
np.testing.assert_array_equal(sanpkg.ops.pick(v, idx), v[idx])
sanpkg.set_checks(False)
for backend in ("cpu", "cuda_sim"):
    try:
        np.asarray(sanpkg.ops.pick(v, np.array([1, 9], np.int32), backend=backend))
    except Exception as e:
        print(backend, "refused:", e)
print("clean")
"""


def has_gcc_asan() -> bool:
    r = subprocess.run(["cc", "-print-file-name=libasan.so"], capture_output=True, text=True)
    return r.returncode == 0 and os.path.isabs(r.stdout.strip())


def dev_sanitize(project, code):
    command = [sys.executable, "-m", "opspec", "dev", "--sanitize", "--cuda-sim", "--", sys.executable, "-c", code]
    return subprocess.run(command, cwd=project, capture_output=True, text=True)


@pytest.mark.slow  # builds a package (measured: 61 s on a loaded 2-core machine, 23 s of CPU)
def test_opspec_dev_sanitize_names_the_op_and_the_spec_line(tmp_path):
    cmake_dir()  # skips unless opspec is pip-installed
    if not has_gcc_asan():
        pytest.skip("the C compiler has no shared AddressSanitizer runtime (libasan.so)")
    project = tmp_path / "sanpkg"
    write_package(project, "sanpkg", {"shift": SHIFT, "weighted": WEIGHTED, "shl": SHL, "pick": PICK})
    r = subprocess.run(
        [sys.executable, "-m", "opspec", "dev", "--sanitize", "--cuda"], cwd=project, capture_output=True, text=True
    )
    assert r.returncode == 2 and "not with --cuda" in r.stderr, r.stderr

    r = dev_sanitize(project, SETUP + CLEAN)  # builds, then runs clean
    assert r.returncode == 0, r.stdout + r.stderr[-4000:]
    assert "AddressSanitizer + UndefinedBehaviorSanitizer" in r.stderr
    assert r.stdout.splitlines()[-1] == "clean", r.stdout
    # The package's own knob, not opspec's.
    for backend in ("cpu", "cuda_sim"):
        refusal = next(line for line in r.stdout.splitlines() if line.startswith(f"{backend} refused:"))
        assert "sanpkg pick: the kernel rejected a value of an input checked in_kernel (checks are off: " in refusal
        assert "sanpkg.set_checks(True) names the position)" in refusal, r.stdout
    assert "opspec.set_checks" not in r.stdout

    for op, (code, summary) in MISTAKES.items():
        r = dev_sanitize(project, SETUP + code)
        assert r.returncode != 0, f"{op}: {r.stdout}{r.stderr[-4000:]}"
        assert f"opspec dev: {summary}" in r.stderr, f"{op}: {r.stderr[-4000:]}"
        # The sanitizer's own report is shown too, with the body's frame at the spec.
        assert f"specs/{op}.yaml:" in r.stderr.split("opspec dev: built")[-1]


# Reports as GCC 12's sanitizers wrote them for the ops above (cut).
ASAN_REPORT = """\
==20175==ERROR: AddressSanitizer: heap-buffer-overflow on address 0x6090000000d4 at pc 0x7f3c11e87281
WRITE of size 8 at 0x6090000000d4 thread T0
    #0 0x7f3c11e87280 in opspec_shift_cpu_default {spec}:9
    #1 0x7f3c11e79065 in opspec_run_launch /site-packages/opspec_cmake/src/handler.c:229
"""
UBSAN_REPORT = """\
specs/shl.yaml:11:15: runtime error: shift exponent 40 is too large for 32-bit type 'int'
    #0 0x7f6bb6b919c7 in opspec_shl_cpu_default specs/shl.yaml:11
"""


def test_sanitizer_report_summaries(tmp_path):
    """What `opspec dev --sanitize` says of a report, without a build: the op, the kind of
    finding and the spec's line, relative to the project where the spec is in it."""
    from opspec import _sanitize

    absolute = str(tmp_path / "specs" / "shift.yaml")
    for spec in ("specs/shift.yaml", absolute):
        got = _sanitize.summary(ASAN_REPORT.format(spec=spec), tmp_path)
        where = "specs/shift.yaml" if spec == absolute else spec
        assert (
            got
            == f"heap-buffer-overflow (write of 8 bytes) in op shift's body at {where}:9 (in opspec_shift_cpu_default)"
        )
    assert _sanitize.summary(UBSAN_REPORT, tmp_path) == (
        "undefined behaviour in op shl's body at specs/shl.yaml:11: shift exponent 40 is too large for 32-bit type 'int'"
    )
    assert (
        _sanitize.summary("==1==ERROR: AddressSanitizer: SEGV on unknown address\n    #0 0x1 in main x.c:3\n", tmp_path)
        is None
    )
    (tmp_path / "reports").mkdir()
    (tmp_path / "reports" / "report.42").write_text(UBSAN_REPORT)
    (tmp_path / "reports" / "report.43").write_text("==43==ERROR: AddressSanitizer: SEGV\n")
    lines = [line for _, line in _sanitize.reports(tmp_path / "reports", tmp_path)]
    assert lines[0].startswith("undefined behaviour in op shl's body")
    assert lines[1] == "a sanitizer stopped the command (report.43), outside any op's body"


def test_sanitizer_environment_keeps_the_users_options(tmp_path):
    from opspec import _sanitize

    env = _sanitize.environment(
        {"ASAN_OPTIONS": "detect_leaks=1", "LD_PRELOAD": "/mine.so"}, ["/libasan.so", "/libstdc++.so"], tmp_path
    )
    assert env["LD_PRELOAD"] == "/libasan.so /libstdc++.so /mine.so"  # ASan's runtime first, as it requires
    assert env["ASAN_OPTIONS"] == f"detect_leaks=0:log_path={tmp_path / 'report'}:detect_leaks=1"  # the last wins
    assert env["UBSAN_OPTIONS"] == "print_stacktrace=1"
    assert env[_sanitize.REPORTS_ENV] == str(tmp_path / "report")
