"""The golden test of the generated code: one representative op's spec
(tests/golden/gather_scale.yaml: a type variable, an attribute with a default and a doc,
a checked index input, a portable kernel) beside every file opspec-gen makes of it
(tests/golden/gather_scale/). A change to the emitters or templates shows up here as a
diff a reviewer reads next to its input, as in Argument Clinic's and torchgen's tests.

To accept an intended change: OPSPEC_UPDATE_GOLDEN=1 pytest tests/python/test_golden.py
"""

import os
import pathlib
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
GEN = os.path.abspath(os.environ.get("OPSPEC_GEN", str(ROOT / "build" / "generator" / "opspec-gen")))
GOLDEN = ROOT / "tests" / "golden"
EXPECTED = "tests/golden/gather_scale"

pytestmark = pytest.mark.skipif(not os.path.exists(GEN), reason="opspec-gen not built (OPSPEC_REGENERATE=OFF)")


def test_generated_code_of_the_representative_op_is_the_golden_copy(tmp_path):
    out = EXPECTED if os.environ.get("OPSPEC_UPDATE_GOLDEN") else str(tmp_path)
    r = subprocess.run(
        [GEN, "--out", out, "--templates", "templates", "tests/golden/gather_scale.yaml"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr
    made = {
        p.relative_to(ROOT / out if not os.path.isabs(out) else out)
        for p in pathlib.Path(ROOT / out).rglob("*")
        if p.is_file()
    }
    golden = {p.relative_to(GOLDEN / "gather_scale") for p in (GOLDEN / "gather_scale").rglob("*") if p.is_file()}
    assert made == golden
    for rel in sorted(golden):
        # #line directives name the output folder; everything else must be identical.
        got = (pathlib.Path(ROOT / out) / rel).read_text().replace(str(tmp_path), EXPECTED)
        assert got == (GOLDEN / "gather_scale" / rel).read_text(), f"{rel} differs from the golden copy"
