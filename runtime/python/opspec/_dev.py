"""``opspec dev [COMMAND...]``: develop mode for a package of one's own (docs/user-project.md,
"Develop mode").

Builds the project in the current folder with plain CMake into a kept build folder
(``build/dev``), for the CPU only unless asked (``--cuda``, ``--cuda-sim``), without
link-time optimisation, then runs COMMAND (e.g. ``python -m pytest -q tests``) with the
build's package first on ``PYTHONPATH``. A rerun after an edit regenerates from the specs
(opspec-gen rewrites only the files whose text changed), recompiles only what those files
feed, relinks, and runs COMMAND in a new process, which imports the new build.
``--watch`` does that on every change to specs/ or CMakeLists.txt.

Why not pip: ``pip install`` copies the build into a wheel and the wheel into the
environment on every edit, and under pip the compiler's output arrives after CMake's and
pip's. Here the configure step runs once, its output is shown only on failure, and a
failed build prints the compiler's error alone.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import time

from opspec._paths import cmake_dir

STEP = re.compile(r"^\[\d+/\d+\] (.*)$")


def say(message: str) -> None:
    print(f"opspec dev: {message}", file=sys.stderr, flush=True)


def configure_args(project: pathlib.Path, build: pathlib.Path, cuda: bool, cuda_sim: bool) -> list[str]:
    args = ["cmake", "-S", str(project), "-B", str(build)]
    if shutil.which("ninja"):
        args += ["-G", "Ninja"]
    return args + [
        f"-Dopspec_DIR={cmake_dir()}",
        f"-DPython3_EXECUTABLE={sys.executable}",
        "-DCMAKE_BUILD_TYPE=Release",
        f"-DOPSPEC_CUDA={'ON' if cuda else 'OFF'}",
        f"-DOPSPEC_CUDA_SIM={'ON' if cuda_sim else 'OFF'}",
        "-DOPSPEC_LTO=OFF",
    ]


def configure(args: list[str], build: pathlib.Path) -> bool:
    """Runs CMake's configure step when the build folder is new or the options changed."""
    record = build / "opspec-dev.json"
    if (build / "CMakeCache.txt").exists() and record.exists() and json.loads(record.read_text()) == args:
        return True
    say(
        f"configuring {build} ({'CUDA' if '-DOPSPEC_CUDA=ON' in args else 'CPU only'}"
        f"{', CUDA simulator' if '-DOPSPEC_CUDA_SIM=ON' in args else ''})"
    )
    r = subprocess.run(args, capture_output=True, text=True)
    if r.returncode != 0:
        sys.stderr.write(r.stdout + r.stderr)
        say("CMake's configure step failed")
        return False
    record.write_text(json.dumps(args))
    return True


def failure(output: str) -> str:
    """The build's output from its first failed step, without the step's command line:
    what the compiler or opspec-gen said."""
    lines = output.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith("FAILED: ")), None)
    if start is None:
        return output
    shown = []
    for line in lines[start + 2 :]:
        if line.startswith(("ninja: build stopped", "FAILED: ")) or STEP.match(line):
            break
        shown.append(line)
    return "\n".join(shown) + "\n"


def build(build_dir: pathlib.Path, jobs: int | None) -> bool:
    start = time.perf_counter()
    args = ["cmake", "--build", str(build_dir)] + (["-j", str(jobs)] if jobs else [])
    # On a terminal, the step running now on one line that is rewritten (a first build
    # takes a while); the output is kept for the summary or the failure.
    live = sys.stderr.isatty()
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert proc.stdout is not None
    lines = []
    for line in proc.stdout:
        lines.append(line)
        if live and STEP.match(line):
            sys.stderr.write(f"\r\033[K  {line.rstrip()[:100]}")
            sys.stderr.flush()
    returncode = proc.wait()
    if live:
        sys.stderr.write("\r\033[K")
    output = "".join(lines)
    seconds = time.perf_counter() - start
    if returncode != 0:
        sys.stderr.write(failure(output))
        say(f"the build failed ({seconds:.1f} s)")
        return False
    steps = [m.group(1) for m in map(STEP.match, output.splitlines()) if m]
    compiled = [pathlib.Path(s.split()[-1]).name.removesuffix(".o") for s in steps if s.startswith("Building ")]
    what = f"compiled {', '.join(compiled)}" if 0 < len(compiled) <= 5 else f"compiled {len(compiled)} sources"
    if not compiled:
        what = "nothing to compile"
    say(f"built in {seconds:.1f} s ({what})")
    return True


def watched(project: pathlib.Path) -> dict:
    files = [project / "CMakeLists.txt", *sorted((project / "specs").glob("*.yaml"))]
    return {str(f): f.stat().st_mtime_ns for f in files if f.exists()}


DESCRIPTION = (
    "Build the package in this folder for development (CPU only, kept build folder) and run "
    "COMMAND with it first on PYTHONPATH."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The arguments of `opspec dev` (opspec.__main__ holds the one parser)."""
    parser.add_argument("--build-dir", type=pathlib.Path, help="the kept build folder (default: build/dev)")
    parser.add_argument("--cuda", action="store_true", help="build the CUDA handlers too (needs nvcc)")
    parser.add_argument("--cuda-sim", action="store_true", help="build the CUDA simulator too (backend='cuda_sim')")
    parser.add_argument("--jobs", "-j", type=int, help="parallel compile jobs (default: the build tool's)")
    parser.add_argument("--watch", action="store_true", help="rebuild and rerun COMMAND on every spec change")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="what to run after a build, e.g. pytest -q tests")


def run(args: argparse.Namespace) -> int:
    """`opspec dev` with parsed `args`: build, then run the command; 2 outside a project."""
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    project = pathlib.Path.cwd()
    if not (project / "CMakeLists.txt").exists():
        say(f"no CMakeLists.txt in {project}: run it in the package's folder")
        return 2
    build_dir = (args.build_dir or project / "build" / "dev").resolve()
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(build_dir / "python"), *filter(None, [env.get("PYTHONPATH")])])

    def once() -> int:
        if not configure(configure_args(project, build_dir, args.cuda, args.cuda_sim), build_dir):
            return 1
        if not build(build_dir, args.jobs):
            return 1
        if not command:
            return 0
        return subprocess.run(command, env=env).returncode

    # Taken before each build, so that an edit made while it or COMMAND runs starts the
    # next one.
    seen = watched(project)
    status = once()
    if not args.watch:
        return status
    say("watching specs/ and CMakeLists.txt (Ctrl-C stops)")
    try:
        while True:
            now = watched(project)
            if now != seen:
                seen = now
                once()
            else:
                time.sleep(0.2)
    except KeyboardInterrupt:
        return 0
