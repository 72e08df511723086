"""The CUDA simulator's float16 and bfloat16 (runtime/include/opspec/cuda_sim_half.h)
take what nvcc's __half and __nv_bfloat16 take and reject what they reject: each case
below is compiled as the simulator compiles kernels (host C++17 against runtime/sim),
and its verdict is the one nvcc 13.0 gave for the same source as CUDA on an H200."""

import os
import pathlib
import shutil
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
CXX = os.environ.get("CXX") or shutil.which("g++") or shutil.which("c++") or shutil.which("clang++")

SOURCE = """\
#include <cuda_runtime.h>
#include "opspec/dtypes.h"
#include "opspec/math.h"
float ok(opspec_float16 a, opspec_bfloat16 b) {
  opspec_float16 z = 0; opspec_bfloat16 w = 0.5f;
  z += a; w = w * b; z = a > (opspec_float16)0 ? a : -a; z = a; w = b;
  float acc = 0; acc += (float)a; acc += (float)b; acc = exp(a) + sqrt(b) + log(a) + tanh(b) + fabs(a);
  double d = (double)a; float f = a; (void)d; z = 1.5f; z = 2; w = 0.25;
  return acc + f + (float)z + (float)w + (a == a) + (b < b);
}
"""

# (case, accepted by nvcc 13.0)
CASES = [
    ("", True),
    ("bool bad(opspec_float16 a) { return a > 0; }", False),
    ("opspec_bfloat16 bad(opspec_bfloat16 a) { return a * 2.0f; }", False),
    ("bool bad(opspec_float16 a) { return a > 0.0f; }", False),
    ("opspec_float16 bad(opspec_float16 a) { return a * 2; }", False),
    ("bool bad(opspec_bfloat16 a) { return a < 1; }", False),
    ("opspec_float16 bad(opspec_float16 a) { return a + 1.0; }", False),
    ("float bad(opspec_float16 a) { float acc = 0; acc += a; return acc; }", False),
    ("float bad(opspec_bfloat16 a) { return 1.0f * a; }", False),
    ("int bad(opspec_float16 a) { return (int)a + (a != a); }", True),
]


@pytest.mark.skipif(CXX is None, reason="no C++ compiler")
@pytest.mark.parametrize(("case", "nvcc_accepts"), CASES, ids=[f"case{i}" for i in range(len(CASES))])
def test_the_simulator_takes_what_nvcc_takes(case, nvcc_accepts, tmp_path):
    source = tmp_path / "probe.cpp"
    source.write_text(SOURCE + case + "\n")
    include = ["-I", str(ROOT / "runtime" / "sim"), "-I", str(ROOT / "runtime" / "include")]
    r = subprocess.run([CXX, "-std=c++17", "-fsyntax-only", *include, str(source)], capture_output=True, text=True)
    if nvcc_accepts:
        assert r.returncode == 0, r.stderr
    else:
        assert r.returncode != 0 and "ambiguous" in r.stderr, r.stderr
