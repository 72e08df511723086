"""Each math function a body calls on T (opspec/math.h, opspec/vmath.h) vectorises in every
CPU form (issue 29 item 3): a one-function body per function is generated, with and
without `fastmath: true`, and compiled as the extension compiles it, with GCC's
vectoriser report (scripts/vec_report.py). Their accuracy: tests/c/test_vmath.c."""

import importlib.util
import os
import pathlib
import shutil
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("vec_report", ROOT / "scripts" / "vec_report.py")
vec_report = importlib.util.module_from_spec(_spec)
sys.modules["vec_report"] = vec_report  # its dataclasses look their module up
_spec.loader.exec_module(vec_report)

BODIES = {
    "exp": "exp(x[i])",
    "log": "log(x[i])",
    "log1p": "log1p(x[i])",
    "tanh": "tanh(x[i])",
    "erf": "erf(x[i])",
    "sigmoid": "(T)1 / ((T)1 + exp(-x[i]))",
    "sqrt": "sqrt(x[i])",
    "rsqrt": "(T)1 / sqrt(x[i])",
    "fmin": "fmin(x[i], y[i])",
    "fmax": "fmax(x[i], y[i])",
}
# float64: glibc's scalar log1p and erf (docs/performance.md, "Math functions").
SCALAR_DOUBLE = {"log1p", "erf"}


@pytest.mark.skipif(shutil.which("gcc") is None, reason="the report is GCC's")
@pytest.mark.parametrize("form", ["x86-64", "x86-64-v3", "x86-64-v4"])
def test_every_math_function_vectorises(tmp_path, form):
    gen = os.environ.get("OPSPEC_GEN", str(ROOT / "build" / "generator" / "opspec-gen"))
    if not os.path.exists(gen):
        pytest.skip("opspec-gen not built")
    vectorized = vec_report.report_bodies(BODIES, gen, tmp_path, form)
    assert len(vectorized) == 4 * len(BODIES), vectorized
    scalar = sorted(f"{op} {dtype}" for (op, dtype), done in vectorized.items() if not done)
    expected = sorted(f"{key}_{fm} float64" for key in SCALAR_DOUBLE for fm in ("fm", "plain"))
    assert scalar == expected, f"{form}: scalar loops {scalar}, expected only {expected}"
