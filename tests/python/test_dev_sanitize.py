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
