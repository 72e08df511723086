"""`fastmath: true` never makes a loop scalar that vectorises without it (issue 31 F8):
an fmin/fmax body under fastmath once went scalar, because GCC inlines no function
compiled with other optimisation options and opspec/math.h's fmin/fmax came before the
fastmath pragma. Each body below is generated with and without the key and compiled as
the extension compiles it, with GCC's vectoriser report (scripts/vec_report.py)."""

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
    "clamp": "fmin(fmax(x[i], y[i]), (T)1)",
    "fmin_only": "fmin(x[i], y[i])",
    "fmax_only": "fmax(x[i], (T)0) * y[i]",
    "absroot": "sqrt(fabs(x[i])) + fabs(y[i])",
    "select": "x[i] > y[i] ? x[i] : y[i]",
}


@pytest.mark.skipif(shutil.which("gcc") is None, reason="the report is GCC's")
@pytest.mark.parametrize("form", ["x86-64", "x86-64-v3", "x86-64-v4"])
def test_fastmath_keeps_every_loop_that_vectorises_without_it(tmp_path, form):
    gen = os.environ.get("OPSPEC_GEN", str(ROOT / "build" / "generator" / "opspec-gen"))
    if not os.path.exists(gen):
        pytest.skip("opspec-gen not built")
    vectorized = vec_report.report_bodies(BODIES, gen, tmp_path, form)
    assert len(vectorized) == 4 * len(BODIES), vectorized
    lost = [
        f"{key} {dtype}"
        for key in BODIES
        for dtype in ("float32", "float64")
        if vectorized[(f"{key}_plain", dtype)] and not vectorized[(f"{key}_fm", dtype)]
    ]
    assert not lost, f"vectorised without fastmath, scalar with it ({form}): {lost}"
    # fmin and fmax are a compare and a select: each of these vectorises in both forms.
    assert all(
        vectorized[(f"{key}_fm", dtype)]
        for key in ("clamp", "fmin_only", "fmax_only")
        for dtype in ("float32", "float64")
    )
