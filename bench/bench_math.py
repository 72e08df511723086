"""Vector math in a kernel body against jnp (docs/performance.md, "Math functions"): one op
per function, whose body is that function alone (`out[i] = exp(x[i]);`), timed against
the jnp a user would write (`jnp.exp(x)`), both jitted, in float32 at 64k (L2) and 1M
(L3) elements by default.

The ops are built as a user builds their own (`opspec dev` in a temporary package, the
first run takes a minute or two); the timing runs inside that package's build. Rounds
are interleaved: each round times a batch of calls of every case, opspec then jnp, and
the table shows the median over the rounds. Measure on a quiet machine.

The timing process runs with glibc's allocator keeping what it frees (MALLOC_ARENA_MAX=1,
MALLOC_MMAP_THRESHOLD_=1 GiB, MALLOC_TRIM_THRESHOLD_=4 GiB; `--default-malloc` runs
without): otherwise a fresh 4 MiB output is mmapped or taken from the heap depending on
what the calls before it freed, and its page faults (1,024 of them for 1M float32, on
either side) can decide a row more than the function does. bench_chain.py
measures those faults and the settings; here they are kept out, and the page faults per
call of each side are printed after the table, so that a row that still has them shows it.

    python bench/bench_math.py [--sizes 65536 1048576] [--rounds 7] [--batch 20] [--keep]
                               [--default-malloc]

Their accuracy over every float32: tests/c/test_vmath.c (ctest test_vmath).
"""

import argparse
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

# name: (body, jnp expression of x and y, the inputs' range)
FUNCTIONS = {
    "exp": ("exp(x[i])", "jnp.exp(x)", (-10.0, 10.0)),
    "log": ("log(x[i])", "jnp.log(x)", (1e-3, 1e3)),
    "log1p": ("log1p(x[i])", "jnp.log1p(x)", (-0.5, 10.0)),
    "tanh": ("tanh(x[i])", "jnp.tanh(x)", (-10.0, 10.0)),
    "erf": ("erf(x[i])", "jax.scipy.special.erf(x)", (-4.0, 4.0)),
    "sigmoid": ("(T)1 / ((T)1 + exp(-x[i]))", "jax.nn.sigmoid(x)", (-10.0, 10.0)),
    "sqrt": ("sqrt(x[i])", "jnp.sqrt(x)", (0.0, 1e3)),
    "rsqrt": ("(T)1 / sqrt(x[i])", "jax.lax.rsqrt(x)", (1e-3, 1e3)),
    "fmin": ("fmin(x[i], y[i])", "jnp.fmin(x, y)", (-10.0, 10.0)),
    "fmax": ("fmax(x[i], y[i])", "jnp.fmax(x, y)", (-10.0, 10.0)),
}

SPEC = """\
op: m_{name}
doc: {name} alone in a body, for bench/bench_math.py.
types: {{T: [float32]}}
inputs:
  - {{name: x, dtype: T, shape: [n]}}
  - {{name: y, dtype: T, shape: [n]}}
outputs:
  - {{name: out, dtype: T, shape: [n]}}
launch: [n]
kernel: |
  out[i] = {body};
"""

# Runs inside the built package (`opspec dev -- python timing.py ARGS`).
TIMING = """\
import resource
import sys
import time

import jax
import jax.numpy as jnp
import jax.scipy.special
import numpy as np

import mathbench

sys.path.insert(0, {bench!r})
from common import print_table  # noqa: E402

FUNCTIONS = {functions!r}
sizes, rounds, batch = {sizes!r}, {rounds!r}, {batch!r}
rng = np.random.default_rng(0)
cases = []
for n in sizes:
    for name, (_, expr, (lo, hi)) in FUNCTIONS.items():
        x = jnp.asarray(rng.uniform(lo, hi, n).astype(np.float32))
        y = jnp.asarray(rng.uniform(lo, hi, n).astype(np.float32))
        ours = jax.jit(getattr(mathbench.ops, "m_" + name))
        theirs = jax.jit(eval("lambda x, y: " + expr))
        np.testing.assert_allclose(ours(x, y), theirs(x, y), rtol=2e-6, atol=1e-30, err_msg=name)
        cases.append((f"{{name}} {{n}}", {{"opspec": (ours, x, y), "jnp": (theirs, x, y)}}))
times = {{(case, side): [] for case, sides in cases for side in sides}}
faults = {{(case, side): 0 for case, sides in cases for side in sides}}
for r in range(rounds + 1):  # the first round warms up and is dropped
    for case, sides in cases:
        for side, (fn, x, y) in sides.items():
            f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
            t0 = time.perf_counter()
            for _ in range(batch):
                out = fn(x, y)
            jax.block_until_ready(out)
            times[(case, side)].append((time.perf_counter() - t0) / batch * 1e3)
            if r:
                faults[(case, side)] += resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0
rows = [(case, {{side: float(np.median(times[(case, side)][1:])) for side in sides}}) for case, sides in cases]
print_table(
    f"one-function bodies against jnp, float32, median of {{rounds}} interleaved rounds of {{batch}} calls",
    rows,
    ["opspec", "jnp"],
)
print("page faults per call (opspec / jnp): " + ", ".join(
    f"{{case}} {{faults[(case, 'opspec')] / (rounds * batch):.0f}}/{{faults[(case, 'jnp')] / (rounds * batch):.0f}}"
    for case, _ in cases))
"""


def make_project(folder: pathlib.Path, sizes, rounds, batch) -> None:
    (folder / "specs").mkdir(parents=True)
    for name, (body, _, _) in FUNCTIONS.items():
        (folder / "specs" / f"m_{name}.yaml").write_text(SPEC.format(name=name, body=body))
    (folder / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.24)\nproject(mathbench LANGUAGES C)\nfind_package(opspec CONFIG REQUIRED)\n"
        "opspec_add_extension(mathbench SPECS ${CMAKE_CURRENT_SOURCE_DIR}/specs)\n"
    )
    bench = str(pathlib.Path(__file__).resolve().parent)
    (folder / "timing.py").write_text(
        TIMING.format(bench=bench, functions=FUNCTIONS, sizes=sizes, rounds=rounds, batch=batch)
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[65536, 1048576])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--batch", type=int, default=20)
    parser.add_argument("--keep", action="store_true", help="keep the temporary package")
    parser.add_argument("--default-malloc", action="store_true", help="glibc's allocator as it starts (see above)")
    args = parser.parse_args()
    project = pathlib.Path(tempfile.mkdtemp(prefix="opspec-mathbench-"))
    try:
        make_project(project, args.sizes, args.rounds, args.batch)
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        from common import STEADY_MALLOC, machine_line

        env = dict(os.environ) if args.default_malloc else {**os.environ, **STEADY_MALLOC}
        malloc = "default" if args.default_malloc else " ".join(f"{k}={v}" for k, v in STEADY_MALLOC.items())
        print(f"{machine_line()}; malloc: {malloc}; package: {project}; building {len(FUNCTIONS)} ops", flush=True)
        r = subprocess.run(
            [sys.executable, "-m", "opspec", "dev", "--", sys.executable, "timing.py"], cwd=project, text=True, env=env
        )
        return r.returncode
    finally:
        if not args.keep:
            shutil.rmtree(project, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
