"""The counts and lists of ops and generated files that README.md and docs/ state are
the code's: each is computed here from specs/ and from what opspec-gen writes, never
written down a second time, so a new spec or a new generated file fails this test until
the docs say so."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
GEN = os.path.abspath(
    os.environ.get("OPSPEC_GEN")
    or shutil.which("opspec-gen", path=os.path.dirname(sys.executable))
    or str(ROOT / "build" / "generator" / "opspec-gen")
)
SPECS = sorted((ROOT / "specs").glob("*.yaml"))
OPS = [p.stem for p in SPECS]  # the checker requires file name == op name

needs_gen = pytest.mark.skipif(not os.path.exists(GEN), reason="opspec-gen not built (OPSPEC_REGENERATE=OFF)")


def doc(name: str) -> str:
    return (ROOT / name).read_text()


def section(text: str, heading: str) -> str:
    start = text.index(heading)
    end = text.find("\n## ", start + len(heading))
    return text[start : end if end >= 0 else None]


def generate(tmp_path: Path, specs: list, package: str = "opspec") -> tuple:
    """(opspec-gen's summary line, the files it wrote relative to the output folder)."""
    out = tmp_path / f"gen{len(specs)}"
    r = subprocess.run(
        [GEN, "--package", package, "--out", str(out), *map(str, specs)], capture_output=True, text=True, cwd=ROOT
    )
    assert r.returncode == 0, r.stderr
    files = sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file())
    return r.stdout.strip(), files


@needs_gen
def test_spec_md_check_line():
    r = subprocess.run([GEN, "--check", *map(str, SPECS)], capture_output=True, text=True, cwd=ROOT)
    printed = r.stdout.strip()
    assert printed == f"opspec-gen: {len(OPS)} specs OK"
    assert f'# prints "{printed}"' in doc("docs/spec.md")


def test_tutorial_cpu_lists_every_op():
    listed = re.search(r"^ops +: (.*)$", section(doc("docs/tutorial-cpu.md"), "## 2."), re.M)
    assert listed is not None
    assert listed.group(1).split(", ") == OPS  # ops.__all__ is sorted


def test_readme_counts_the_ops():
    assert f"the shipped op library, {len(OPS)} ops:" in doc("README.md")


@needs_gen
def test_generated_files_of_one_op_and_of_the_library(tmp_path):
    one_line, one = generate(tmp_path, [ROOT / "specs" / "add.yaml"], package="myops")
    two_line, two = generate(tmp_path, [ROOT / "specs" / "add.yaml", ROOT / "specs" / "relu.yaml"], package="myops")
    per_op, fixed = len(two) - len(one), 2 * len(one) - len(two)
    assert one_line.startswith(f"opspec-gen: 1 op, {len(one)} files")

    # user-project.md section 7 names every file of one op and counts them.
    s7 = section(doc("docs/user-project.md"), "## 7.")
    named = {n.replace("<op>", "add") for n in re.findall(r"`((?:ops|python)/[\w<>.]+|registry\.c)`", s7)}
    assert named == set(one), (sorted(named), one)
    assert f"{len(one)} files for one op" in s7
    assert f"(1 op, {len(one)} files)" in s7

    # reviewing-generated-code.md: the formula, the library's total and the regeneration line.
    line, everything = generate(tmp_path, SPECS)
    n, total = len(OPS), len(everything)
    assert total == per_op * n + fixed
    assert line == f"opspec-gen: {n} ops, {total} files ({total} changed, 0 stale removed) in {tmp_path / f'gen{n}'}"
    review = doc("docs/reviewing-generated-code.md")
    assert f"N specs give {per_op}N + {fixed} files ({total} for the {n} shipped specs)" in review
    assert f"# opspec-gen: {n} ops, {total} files (0 changed, 0 stale removed) in generated" in review


def test_tutorial_cuda_names_the_ops_with_cuda_kernels():
    """The ops with a CUDA handler, as the committed registry has them (a NULL CUDA
    handler: CPU only), and the rest, as tutorial-cuda.md section 2 lists them."""
    registry = doc("generated/registry.c")
    rows = re.findall(r'^\s*\{"(\w+)", \w+, (NULL|OPSPEC_CUDA_HANDLER)', registry, re.M)
    assert [name for name, _ in rows] == OPS
    cuda = [name for name, handler in rows if handler != "NULL"]
    cpu_only = [name for name, handler in rows if handler == "NULL"]
    s2 = section(doc("docs/tutorial-cuda.md"), "## 2.")
    listed = s2[s2.index("These ops get a CUDA handler") : s2.index("so they are CPU-only")]
    with_cuda, without = listed.split("have only a raw")[0].split(").")
    assert re.findall(r"`(\w+)`", with_cuda) == cuda
    assert re.findall(r"`(\w+)`", without) == cpu_only
