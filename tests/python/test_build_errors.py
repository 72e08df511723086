"""A body that does not compile, in a package of one's own: the build reports the
compiler's first error once, at specs/<op>.yaml:line:col with the spec's line under it,
and stops there; neither the CUDA simulator's C++ compile nor the full CPU compile runs
to repeat it (cmake/OpspecExtension.cmake, "each op's bodies, checked before anything of
the op compiles"). Plain CMake, CPU and the simulator (no nvcc needed)."""

import re
import subprocess

import pytest
from builds import cmake_dir, configure, generator, write_package

# A portable kernel with an undeclared name (line 10, column 22).
BAD_KERNEL = """\
op: bad_kernel
types: {T: [float32, float64]}
inputs:
  - {name: x, dtype: T, shape: [n]}
outputs:
  - {name: y, dtype: T, shape: [n]}
launch: [n]
kernel: |
  const T v = x[i];
  y[i] = v * scale;
"""

# A raw CUDA kernel with an undeclared name: only the CUDA source holds it (line 14, column 32).
BAD_CUDA = """\
op: bad_cuda
inputs:
  - {name: x, dtype: float32, shape: [n]}
outputs:
  - {name: y, dtype: float32, shape: [n]}
cpu: |
  for (int64_t i = 0; i < n; ++i) y[i] = x[i];
cuda:
  - name: copy
    grid: ["cdiv(n, 128)"]
    block: [128]
    body: |
      const int64_t i = opspec_grid_x();
      if (i < n) y[i] = x[i] * gain;
"""


@pytest.mark.slow
def test_a_body_error_is_reported_once_at_the_spec(tmp_path):
    project = tmp_path / "badpkg"
    write_package(project, "badpkg", {"bad_kernel": BAD_KERNEL, "bad_cuda": BAD_CUDA}, "CUDA OFF CUDA_SIM ON")
    build = project / "build"
    configure(project, build, f"-Dopspec_DIR={cmake_dir()}")
    # Keep going past the first failure, so that anything that would repeat an error
    # gets its chance to.
    keep_going = ["--", "-k", "0"] if generator() else ["--", "-k"]
    r = subprocess.run(["cmake", "--build", str(build), "-j", "2", *keep_going], capture_output=True, text=True)
    out = r.stdout + r.stderr
    print(out)
    assert r.returncode != 0
    errors = [line for line in out.splitlines() if re.search(r"\berror\b", line) and "FAILED" not in line]
    kernel = [e for e in errors if e.startswith("specs/bad_kernel.yaml:")]
    cuda = [e for e in errors if e.startswith("specs/bad_cuda.yaml:")]
    assert len(kernel) == 1 and kernel[0].startswith("specs/bad_kernel.yaml:10:14: error:"), errors
    assert "scale" in kernel[0]
    assert len(cuda) == 1 and cuda[0].startswith("specs/bad_cuda.yaml:14:32: error:"), errors
    assert "gain" in cuda[0]
    # Nothing else reported an error: no follow-on errors, no build-folder paths.
    others = [e for e in errors if e not in kernel + cuda and not e.startswith("ninja: build stopped")]
    assert others == [], others
    # The spec's line, under the error, as the compiler quotes it.
    assert "   10 |   y[i] = v * scale;" in out
    assert "   14 |       if (i < n) y[i] = x[i] * gain;" in out
    # The ops' objects never compiled.
    assert "bad_kernel_cpu.c.o" not in out and "bad_cuda_cuda_sim.cpp.o" not in out


# A float16 comparison with a bare literal: C's _Float16 takes it, nvcc's __half does not
# (the half operator and the built-in float one both match), and neither does the CUDA
# simulator's float16 (opspec/cuda_sim_half.h), so a CPU-only build shows nvcc's error
# at the spec (line 8), as does `v * 2.0f` on bfloat16 (line 10).
HALF_LITERAL = """\
op: half_literal
types: {T: [float32, float16]}
inputs:
  - {name: x, dtype: T, shape: [n]}
outputs:
  - {name: y, dtype: T, shape: [n]}
launch: [n]
kernel: "y[i] = x[i] > 0 ? x[i] : (T)0;"
"""

BF16_LITERAL = """\
op: bf16_literal
types: {T: [float32, bfloat16]}
inputs:
  - {name: x, dtype: T, shape: [n]}
outputs:
  - {name: y, dtype: T, shape: [n]}
launch: [n]
kernel: |
  const T v = x[i];
  y[i] = v * 2.0f;
"""


@pytest.mark.slow
def test_half_operators_the_simulator_rejects_as_nvcc_does(tmp_path):
    project = tmp_path / "halfpkg"
    specs = {"half_literal": HALF_LITERAL, "bf16_literal": BF16_LITERAL}
    write_package(project, "halfpkg", specs, "CUDA OFF CUDA_SIM ON")
    build = project / "build"
    configure(project, build, f"-Dopspec_DIR={cmake_dir()}")
    keep_going = ["--", "-k", "0"] if generator() else ["--", "-k"]
    r = subprocess.run(["cmake", "--build", str(build), "-j", "2", *keep_going], capture_output=True, text=True)
    out = r.stdout + r.stderr
    print(out)
    assert r.returncode != 0
    errors = [line for line in out.splitlines() if re.search(r"\berror\b", line) and "FAILED" not in line]
    half = [e for e in errors if e.startswith("specs/half_literal.yaml:")]
    bf16 = [e for e in errors if e.startswith("specs/bf16_literal.yaml:")]
    assert len(half) == 1 and half[0].startswith("specs/half_literal.yaml:8:"), errors
    assert "ambiguous" in half[0] and "operator>" in half[0]
    assert len(bf16) == 1 and bf16[0].startswith("specs/bf16_literal.yaml:10:"), errors
    assert "ambiguous" in bf16[0] and "operator*" in bf16[0]
    # The CPU kernels (C: float16 and bfloat16 computed in float) were never the problem.
    assert not [e for e in errors if e not in half + bf16 and not e.startswith("ninja: build stopped")], errors
