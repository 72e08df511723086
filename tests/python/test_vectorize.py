"""Every portable kernel's innermost loop vectorises (issue 21): the shipped kernels
compiled as the extension compiles them, with GCC's vectoriser report
(scripts/vec_report.py; compile only, a few seconds). A loop that did not vectorise
fails the test with its op, dtype, CPU form and GCC's reason, unless it is one of the
known cases below, each with the reason it cannot."""

import importlib.util
import os
import pathlib
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("vec_report", ROOT / "scripts" / "vec_report.py")
vec_report = importlib.util.module_from_spec(_spec)
sys.modules["vec_report"] = vec_report  # its dataclasses look their module up
_spec.loader.exec_module(vec_report)

# (op, dtype, form) -> why its innermost loop stays scalar; dtype/form None: all. Seen with
# GCC KNOWN_GCC.
KNOWN_GCC = 12
KNOWN = {
    # The in-kernel index check leaves the row loop early, and each x[col] is a gather:
    # no vector form at all (its time is the gathers' latency: docs/performance.md, CSR).
    ("csr_matvec", None, None): "data-dependent exit and indexed gather",
    # int32 spikes from a double compare: SSE2 has no packing of 2-lane double masks into
    # int32 lanes for GCC 12; the AVX2 form (x86-64-v3) vectorises both.
    ("lif", "float64", "x86-64"): "double compare stored as int32 (SSE2)",
    ("spike_reset", "float64", "x86-64"): "double compare stored as int32 (SSE2)",
    # Its body nests loops: the blocks of 32 columns, and the bag's rows, which leave early
    # on a bad index, are outer loops (the report counts every body loop as innermost);
    # the inner loops over the columns of a block vectorise.
    ("embedding_bag", None, None): "outer loops of a nested body (the inner ones vectorise)",
}


def known(loop) -> bool:
    return any(
        op == loop.op and dtype in (None, loop.dtype) and form in (None, loop.form) for (op, dtype, form) in KNOWN
    )


@pytest.mark.skipif(shutil.which("gcc") is None, reason="the report is GCC's")
@pytest.mark.parametrize("form", ["x86-64", "x86-64-v3", "x86-64-v4"])
def test_every_portable_kernel_loop_vectorises(form):
    includes = [str(ROOT / "runtime" / "include"), str(ROOT / "generated"), vec_report.xla_include()]
    sources = sorted((ROOT / "generated" / "ops").glob("*_cpu.c"))
    with ThreadPoolExecutor(max_workers=2) as pool:
        reports = pool.map(lambda s: vec_report.report(s, "gcc", includes, [], form), sources)
    loops = [lp for r in reports for lp in r]
    portable = {lp.op for lp in loops if lp.required}
    assert {"add", "sigmoid", "matvec", "hadamard", "lif", "stdp_update"} <= portable, portable
    missed = [lp for lp in loops if lp.required and not lp.vectorized and not known(lp)]
    assert not missed, "\n".join(f"{lp.op} {lp.dtype} ({form}) {lp.where}: {'; '.join(lp.reasons)}" for lp in missed)
    # The width of the form's vectors (the report's bytes per vector): SSE2's 16 bytes,
    # AVX2's 32, and AVX-512's 64 in the x86-64-v4 form (GCC 12's tuning for it takes
    # 512-bit vectors; a loop of few trips may keep 32).
    widths = {lp.vector_bytes for lp in loops if lp.required and lp.vectorized}
    assert max(widths) == {"x86-64": 16, "x86-64-v3": 32, "x86-64-v4": 64}[form], widths
    # The known cases are still what they say: a case that vectorises now leaves the list.
    # The list is GCC 12's (Debian bookworm, where CI runs); a later GCC vectorises more
    # (GCC 13.3 on the lent GPU machine does the two SSE2 compares), which is no defect.
    if vec_report.gcc_major("gcc") != KNOWN_GCC:
        return
    stale = [
        k
        for k in KNOWN
        if k[2] in (None, form) and all(lp.vectorized for lp in loops if lp.required and known(lp) and lp.op == k[0])
    ]
    assert not stale, f"these loops vectorise now: remove them from KNOWN: {stale}"


@pytest.mark.skipif(shutil.which("gcc") is None, reason="the report is GCC's")
def test_fastmath_is_what_vectorises_matvecs_row_sum(tmp_path):
    # The same spec without `fastmath: true`: its row sum is a float reduction, which C
    # forbids reassociating, so GCC vectorises it at best in order (the report's MISSED);
    # with the key (the shipped spec, checked above) it is a vector reduction.
    gen = os.environ.get("OPSPEC_GEN", str(ROOT / "build" / "generator" / "opspec-gen"))
    if not os.path.exists(gen):
        pytest.skip("opspec-gen not built")
    spec = (ROOT / "specs" / "matvec.yaml").read_text()
    assert "\nfastmath: true" in spec
    (tmp_path / "matvec.yaml").write_text(spec.replace("\nfastmath: true", "\nfastmath: false"))
    subprocess.run([gen, "--quiet", "--out", str(tmp_path / "gen"), str(tmp_path / "matvec.yaml")], check=True)
    includes = [str(ROOT / "runtime" / "include"), str(tmp_path / "gen"), vec_report.xla_include()]
    loops = vec_report.report(tmp_path / "gen" / "ops" / "matvec_cpu.c", "gcc", includes, [], "x86-64-v3")
    body = [lp for lp in loops if lp.required]
    assert body and all(lp.in_order and not lp.vectorized for lp in body), body


@pytest.mark.skipif(shutil.which("gcc") is None, reason="the report is GCC's")
@pytest.mark.parametrize("form", ["x86-64", "x86-64-v3"])
@pytest.mark.parametrize("op", ["sigmoid", "relu", "rms_norm", "gelu_tanh"])
def test_two_byte_variants_vectorise_converting_in_the_loop(op, form):
    # bfloat16 and float16 compute in float, each element converted as it is loaded and
    # stored (opspec/lowp.h): the same loops as float32's vectorise, with no widening pass
    # in the handler (the descriptor does not ask for one).
    includes = [str(ROOT / "runtime" / "include"), str(ROOT / "generated"), vec_report.xla_include()]
    loops = vec_report.report(ROOT / "generated" / "ops" / f"{op}_cpu.c", "gcc", includes, [], form)
    for dtype in ("bfloat16", "float16"):
        required = [lp for lp in loops if lp.dtype == dtype and lp.required]
        assert required, f"{op} {dtype}: no loop required (is it the in-loop path?)"
        missed = [f"{lp.where}: {'; '.join(lp.reasons)}" for lp in required if not lp.vectorized]
        assert not missed, f"{op} {dtype} ({form}): " + "\n".join(missed)
    assert "widens_bfloat16" not in (ROOT / "generated" / "ops" / f"{op}_ffi.c").read_text()
