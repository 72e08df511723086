"""The vectorisation report of generated CPU kernels (docs/performance.md, "Loops that
vectorise").

Compiles each `<op>_cpu.c` of a generated folder with GCC as the extension compiles it
(`-O3 -fno-math-errno -fno-trapping-math -fopenmp`, glibc's vector math declared; see
cmake/OpspecExtension.cmake) plus `-fopt-info-vec-all`, and prints one row per loop of
each type variant (named by GCC's dump of the vectoriser pass, `-fdump-tree-vect`: the
variants are one function in the source, which the file compiles once per variant): op, dtype, where the loop is (the spec's line for loops of the body,
the generated file's for the launch loops), whether it vectorised, and GCC's reason
when it did not. Compile only: a few seconds for every shipped op.

Each kernel is compiled once per CPU form the build makes (target_clones in
opspec/cpu.h): baseline x86-64 (SSE2), x86-64-v3 (AVX2, FMA, F16C) and x86-64-v4
(AVX-512; --forms picks others). A vectorised loop shows the width of its vectors in
bytes (`vectorized/32B`): 16 in the baseline form, 32 in x86-64-v3 and 64 in x86-64-v4
(GCC 12, whose generic tuning there takes 512-bit vectors; `-- -mprefer-vector-width=256`
shows the 256-bit form of AVX-512 code).

Required, and the exit status is 1 when one is missed: the innermost loop of every
portable kernel (`kernel:`), for its float32, float64, float16 and bfloat16 variants in
every form: the innermost launch loop when the body has no loop of its own, else the
body's loops. The 2-byte variants compute in float and convert each element in the loop
(opspec/lowp.h). Reported only: raw `cpu:` bodies, and a 2-byte variant whose body uses
an array other than element by element (opspec-gen's note: it computes in _Float16,
which GCC 12 vectorises nowhere below AVX512-FP16, or on widened float copies).

    python scripts/vec_report.py [--generated generated] [--specs specs] [--cc gcc] [-- extra flags]
"""

from __future__ import annotations

import argparse
import dataclasses
import pathlib
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

ROOT = pathlib.Path(__file__).resolve().parents[1]
FLAGS = ["-std=c11", "-O3", "-fno-math-errno", "-fno-trapping-math", "-fopenmp", "-DOPSPEC_LIBMVEC"]
# A GCC message: file:line:col: kind: text
MESSAGE = re.compile(r"^(?P<file>[^:\s]+):(?P<line>\d+):(?P<col>\d+): (?P<kind>optimized|missed|note): (?P<text>.*)$")
# The dump's header of each function: ";; Function opspec_<op>_cpu_<dtype> (...)"; any other
# name is an OpenMP region that a raw `cpu:` body outlined.
FUNCTION = re.compile(r"^;; Function (?P<name>\S+) ")
VARIANT = re.compile(r"^opspec_(?P<op>\w+?)_cpu_(?P<dtype>float16|bfloat16|float32|float64|\w+)$")
DONE = re.compile(r"vectorized (\d+) loops in function")
WIDTH = re.compile(r"using (\d+) byte vectors")


@dataclasses.dataclass
class Loop:
    op: str
    dtype: str
    where: str  # file:line
    vectorized: bool = False
    in_order: bool = False  # vectorised, but its reduction adds lane by lane, in order
    reasons: list[str] = dataclasses.field(default_factory=list)
    required: bool = False
    form: str = ""
    vector_bytes: int = 0  # the widest vectors GCC used for it (its main loop), 0: none


def xla_include() -> str:
    import jaxlib

    return str(pathlib.Path(jaxlib.__file__).parent / "include")


def gcc_major(cc: str) -> int:
    """The major version of the GCC named cc (-dumpversion prints "12" or "13.3.0")."""
    out = subprocess.run([cc, "-dumpversion"], capture_output=True, text=True, check=True).stdout
    return int(out.strip().split(".")[0])


def variant(function: str, op: str) -> tuple[str, str]:
    """(op, dtype) of a function GCC compiled: a variant's, or (op, "omp") for an OpenMP region."""
    m = VARIANT.match(function)
    return (m["op"], m["dtype"]) if m else (op, "omp")


def relative(path: pathlib.Path) -> str:
    """`path` relative to the repository when it lies in it, for GCC's messages."""
    try:
        return str(path.resolve().relative_to(ROOT))
    except ValueError:
        return str(path)


def body_has_loop(body: pathlib.Path) -> bool:
    code = re.sub(r"/\*.*?\*/|//[^\n]*", "", body.read_text(), flags=re.S)
    return re.search(r"\b(for|while|do)\b", code) is not None


def report(source: pathlib.Path, cc: str, includes: list[str], extra: list[str], form: str) -> list[Loop]:
    """Every loop GCC reports in `source` compiled for `-march=form`, per variant function."""
    # Relative, so that GCC names the launch loops generated/ops/<op>_cpu.c:<line>; the
    # include folders too: the kernel is the file included by itself, found through them.
    name = relative(source)
    # One form at a time: the report of target_clones' three clones could not be told apart.
    cmd = [
        cc,
        *FLAGS,
        f"-march={form}",
        "-DOPSPEC_NO_CPU_CLONES",
        *extra,
        *(f"-I{relative(pathlib.Path(i))}" for i in includes),
        "-fopt-info-vec-all-internals",
        "-fdump-tree-vect-details=stdout",
        "-c",
        name,
        "-o",
        "/dev/null",
    ]
    out = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    if out.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{out.stderr}")
    # The messages (stderr) do not name their function; the dump (stdout) heads each
    # function's part with its name. The pass ends each function with the same note in
    # both, in the same order: the k-th note is the k-th function's.
    function = ""
    finished: list[str] = []
    for text in out.stdout.splitlines():
        f = FUNCTION.match(text)
        if f:
            function = f["name"]
        elif DONE.search(text):
            finished.append(function)
    portable = (source.parent / source.name.replace("_cpu.c", "_body.inc")).exists() and "opspec_begin" in (
        source.read_text()
    )
    body_loops = body_has_loop(source.parent / source.name.replace("_cpu.c", "_body.inc"))
    lowp = "#define OPSPEC_CPU_LOWP" in source.read_text()
    # A float16 variant on row spans (generator/plan/spans.h) has loops of its own around the
    # body's: over a block's rows to find the spans, and over the rows. The body's loops
    # (the spans' and a row's fallback, reported at the body's lines) are the ones to vectorise.
    spans = "#define OPSPEC_CPU_SPANS" in source.read_text()
    loops: list[Loop] = []
    pending: list[Loop] = []  # the current function's loops, until its closing note
    current: Loop | None = None
    in_order: set[str] = set()  # loops GCC vectorised with an in-order (fold-left) reduction
    for text in out.stderr.splitlines():
        m = MESSAGE.match(text)
        if not m:
            continue
        where, kind, msg = f"{m['file']}:{m['line']}", m["kind"], m["text"]
        if "in-order (fold-left) reduction" in msg:
            in_order.add(where)
        done = DONE.search(msg)
        if done:
            op, dtype = variant(finished.pop(0), source.name[: -len("_cpu.c")])
            # A 2-byte variant converts in its loop where its body allows (OPSPEC_CPU_LOWP in
            # the kernel's defines); otherwise float16 is _Float16 arithmetic, which GCC 12
            # vectorises nowhere below AVX512-FP16.
            wanted = ("float32", "float64") + (("float16", "bfloat16") if lowp else ())
            # One loop can be reported twice (the main loop, then its vector epilogue).
            merged: dict[str, Loop] = {}
            for loop in pending:
                seen = merged.setdefault(loop.where, Loop(op, dtype, loop.where, form=form))
                seen.vectorized |= loop.vectorized
                seen.vector_bytes = max(seen.vector_bytes, loop.vector_bytes)
                seen.reasons += [r for r in loop.reasons if r not in seen.reasons]
            for loop in merged.values():
                in_body = "_cpu.c:" not in loop.where
                innermost = in_body if body_loops else True
                loop.required = portable and innermost and dtype in wanted
                loop.form = form
                if loop.vectorized:
                    loop.reasons = []
                if loop.vectorized and loop.where in in_order:
                    # Vector loads and multiplies, but one add after another: as slow
                    # as the scalar loop where the adds are the chain.
                    loop.in_order, loop.vectorized = True, False
                    loop.reasons = [
                        "in-order (fold-left) reduction: C forbids reassociating it; `fastmath: true` allows it"
                    ]
            if portable and not body_loops and spans and dtype == "float16":
                for lp in merged.values():
                    lp.required = lp.required and "_cpu.c:" not in lp.where
            elif portable and not body_loops:
                # Launch loops: only the innermost (the last reported of the function) counts.
                launch = [lp for lp in merged.values()]
                for lp in launch[:-1]:
                    lp.required = False
            loops += merged.values()
            pending, current, in_order = [], None, set()
            continue
        if kind == "optimized" and msg.startswith("loop vectorized"):
            width = WIDTH.search(msg)
            current = Loop("", "", where, vectorized=True, vector_bytes=int(width[1]) if width else 0)
            pending.append(current)
        elif kind == "missed" and msg.startswith("couldn't vectorize loop"):
            current = Loop("", "", where)
            pending.append(current)
        elif kind == "missed" and current is not None and not current.vectorized and not msg.startswith(" "):
            current.reasons.append(f"{where}: {msg.strip()}")
    return loops


ONE_LINE_SPEC = """\
op: {name}
types: {{T: [float32, float64]}}
inputs:
  - {{name: x, dtype: T, shape: [n]}}
  - {{name: y, dtype: T, shape: [n]}}
outputs:
  - {{name: out, dtype: T, shape: [n]}}
launch: [n]
fastmath: {fastmath}
kernel: |
  out[i] = {body};
"""


def report_bodies(bodies: dict[str, str], gen: str, folder: pathlib.Path, form: str) -> dict[tuple[str, str], bool]:
    """Whether the loop of each one-line body (`out[i] = body` over x and y of type T)
    vectorises: {(op, dtype): vectorised}, for ops `<key>_plain` and `<key>_fm` (the same
    body without and with `fastmath: true`), float32 and float64, generated by `gen`
    into `folder` and compiled in CPU form `form`. The tests of body math and fastmath
    use it."""
    specs = []
    for key, body in bodies.items():
        for fastmath, suffix in (("false", "plain"), ("true", "fm")):
            path = folder / f"{key}_{suffix}.yaml"
            path.write_text(ONE_LINE_SPEC.format(name=f"{key}_{suffix}", fastmath=fastmath, body=body))
            specs.append(str(path))
    subprocess.run([gen, "--quiet", "--out", str(folder / "gen"), *specs], check=True)
    includes = [str(ROOT / "runtime" / "include"), str(folder / "gen"), xla_include()]
    vectorized = {}
    for source in sorted((folder / "gen" / "ops").glob("*_cpu.c")):
        for loop in report(source, "gcc", includes, [], form):
            if loop.required:
                vectorized[(loop.op, loop.dtype)] = loop.vectorized
    return vectorized


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--generated", default=str(ROOT / "generated"))
    parser.add_argument("--cc", default="gcc")
    parser.add_argument(
        "--forms",
        default="x86-64,x86-64-v3,x86-64-v4",
        help="-march values, comma-separated (the CPU forms the build makes)",
    )
    parser.add_argument("--quiet", action="store_true", help="print only the required loops that missed")
    parser.add_argument("extra", nargs="*", help="more compiler flags (after --), e.g. -mavx2")
    args = parser.parse_args(argv)
    gen = pathlib.Path(args.generated)
    includes = [str(ROOT / "runtime" / "include"), str(gen), xla_include()]
    jobs = [(s, f) for f in args.forms.split(",") for s in sorted((gen / "ops").glob("*_cpu.c"))]
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(lambda j: report(j[0], args.cc, includes, args.extra, j[1]), jobs))
    failed = 0
    for loops in results:
        for loop in loops:
            status = "MISSED" if loop.required else "scalar"
            if loop.vectorized:
                status = f"vectorized/{loop.vector_bytes}B" if loop.vector_bytes else "vectorized"
            failed += loop.required and not loop.vectorized
            if args.quiet and not (loop.required and not loop.vectorized):
                continue
            why = "; ".join(loop.reasons[:2])
            print(f"{loop.op:15} {loop.dtype:8} {loop.form:9} {loop.where:34} {status:14} {why}")
    print(f"{failed} required loop(s) not vectorised", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
