"""Develop mode's edit-to-test time (docs/user-project.md, "Develop mode"): a one-line
kernel edit in a five-op package of one's own, then `opspec dev -- pytest`, timed from the
edit to the test's result.

The package (made in a temporary folder) has five of opspec's shipped specs: csr_matvec
(the edited op), csr_rmatvec, block_sum (raw CUDA kernels with shared memory), exp_trace
and lif. Its test compares csr_matvec with K * A @ x in NumPy, where K is the factor the
round wrote into the kernel: the test passes only if the new kernel runs. Each round
prints the whole time, the build's share (as `opspec dev` reports it), which generated
files changed (by modification time) and what was compiled.

    python bench/bench_dev_loop.py [--rounds 3] [--keep]

Two ways: `opspec dev -- pytest ...` run once per edit (two new Python processes, each
importing JAX), and `opspec dev --watch -- pytest ...` left running (the test process
only). The script exits non-zero when a --watch round takes more than 10 s.

Needs opspec pip-installed (its CMake package), CMake and a C compiler.
"""

import argparse
import os
import pathlib
import queue
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
OPS = ["csr_matvec", "csr_rmatvec", "block_sum", "exp_trace", "lif"]
EDITED_LINE = "  y[i] = acc;\n"

TEST = """\
import pathlib

import numpy as np

import devloop


def test_csr_matvec_runs_the_edited_kernel():
    k = float(pathlib.Path(__file__).with_name("factor.txt").read_text())
    rng = np.random.default_rng()
    dense = rng.standard_normal((40, 50)) * (rng.random((40, 50)) < 0.2)
    rows, cols = np.nonzero(dense)
    indptr = np.searchsorted(rows, np.arange(41)).astype(np.int32)
    x = rng.standard_normal(50).astype(np.float32)
    y = devloop.ops.csr_matvec(dense[rows, cols].astype(np.float32), cols.astype(np.int32), indptr, x)
    np.testing.assert_allclose(y, k * (dense.astype(np.float32) @ x), rtol=1e-4, atol=1e-4)
"""


def make_project(folder: pathlib.Path) -> None:
    (folder / "specs").mkdir(parents=True)
    (folder / "tests").mkdir()
    for op in OPS:
        shutil.copy(ROOT / "specs" / f"{op}.yaml", folder / "specs" / f"{op}.yaml")
    assert EDITED_LINE in (folder / "specs" / "csr_matvec.yaml").read_text()
    (folder / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.24)\nproject(devloop LANGUAGES C)\nfind_package(opspec CONFIG REQUIRED)\n"
        "opspec_add_extension(devloop SPECS ${CMAKE_CURRENT_SOURCE_DIR}/specs)\n"
    )
    (folder / "tests" / "test_devloop.py").write_text(TEST)
    (folder / "tests" / "factor.txt").write_text("1")


def mtimes(folder: pathlib.Path) -> dict:
    return {p.relative_to(folder).as_posix(): p.stat().st_mtime_ns for p in folder.rglob("*") if p.is_file()}


def expect(project: pathlib.Path, factor: int) -> None:
    """What the test expects: written before the timed edit."""
    (project / "tests" / "factor.txt").write_text(str(factor))


def edit(project: pathlib.Path, factor: int) -> None:
    spec = project / "specs" / "csr_matvec.yaml"
    text = re.sub(r"  y\[i\] = (\(T\)\d+ \* )?acc;\n", f"  y[i] = (T){factor} * acc;\n", spec.read_text())
    spec.write_text(text)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--keep", action="store_true", help="keep the temporary project")
    args = parser.parse_args()
    project = pathlib.Path(tempfile.mkdtemp(prefix="opspec-devloop-"))
    make_project(project)
    dev = [sys.executable, "-m", "opspec", "dev"]
    test = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"]
    env = dict(os.environ)
    print(f"project: {project} ({len(OPS)} ops: {', '.join(OPS)}); {os.cpu_count()} CPUs", flush=True)

    start = time.perf_counter()
    r = subprocess.run([*dev, "--", *test], cwd=project, env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    print(f"first build (configure, all five ops, the runtime) + test: {time.perf_counter() - start:.1f} s", flush=True)
    generated = project / "build" / "dev" / "opspec_generated" / "devloop"

    # The test alone, with nothing to rebuild: the floor of every round.
    start = time.perf_counter()
    r = subprocess.run([*dev, "--", *test], cwd=project, env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    noop = time.perf_counter() - start
    print(f"no edit, opspec dev + test: {noop:.1f} s ({r.stderr.strip().splitlines()[-1]})", flush=True)

    times = []
    for factor in range(2, 2 + args.rounds):
        before = mtimes(generated)
        expect(project, factor)
        start = time.perf_counter()
        edit(project, factor)
        r = subprocess.run([*dev, "--", *test], cwd=project, env=env, capture_output=True, text=True)
        seconds = time.perf_counter() - start
        assert r.returncode == 0, r.stdout + r.stderr
        assert "1 passed" in r.stdout, r.stdout
        after = mtimes(generated)
        changed = sorted(f for f in after if before.get(f) != after[f])
        built = [line for line in r.stderr.splitlines() if "built in" in line]
        times.append(seconds)
        print(f"edit (T){factor} * acc -> test passed: {seconds:.1f} s", flush=True)
        print(f"    {built[-1] if built else r.stderr.strip()}")
        print(f"    generated files rewritten: {', '.join(changed)}")
    print(
        f"opspec dev -- pytest, {args.rounds} rounds: median {statistics.median(times):.1f} s, max {max(times):.1f} s\n",
        flush=True,
    )

    watch_times = watch_rounds(project, dev, test, env, args.rounds)
    print(
        f"opspec dev --watch -- pytest, {args.rounds} rounds: median {statistics.median(watch_times):.1f} s, "
        f"max {max(watch_times):.1f} s (target: at most 10 s)"
    )
    if not args.keep:
        shutil.rmtree(project)
    return 0 if max(watch_times) <= 10 else 1


def watch_rounds(project: pathlib.Path, dev: list, test: list, env: dict, rounds: int) -> list:
    """The same edits under `opspec dev --watch`: one process watches the specs, rebuilds
    and reruns the test; timed from the edit to the test's result line."""
    lines: queue.Queue = queue.Queue()
    expect(project, 1)
    edit(project, 1)
    proc = subprocess.Popen(
        [*dev, "--watch", "--", *test],
        cwd=project,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    threading.Thread(target=lambda: [lines.put(line) for line in proc.stdout], daemon=True).start()

    def until_result(timeout: float = 120) -> tuple:
        seen = []
        while True:
            try:
                line = lines.get(timeout=timeout)
            except queue.Empty:
                raise TimeoutError("no test result; the output was:\n" + "\n".join(seen)) from None
            seen.append(line.rstrip())
            if re.search(r"\d+ (passed|failed)|error", line):
                return line.rstrip(), seen

    result, _ = until_result()
    assert "1 passed" in result, result
    times = []
    try:
        for factor in range(10, 10 + rounds):
            time.sleep(1.0)  # the watcher is polling again
            expect(project, factor)
            start = time.perf_counter()
            edit(project, factor)
            result, seen = until_result()
            seconds = time.perf_counter() - start
            assert "1 passed" in result, "\n".join(seen)
            times.append(seconds)
            built = [line for line in seen if "built in" in line]
            print(f"watch: edit (T){factor} * acc -> test passed: {seconds:.1f} s ({built[-1] if built else ''})")
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=30)
    return times


if __name__ == "__main__":
    sys.exit(main())
