"""``opspec dev [COMMAND...]``: develop mode for a package of one's own (docs/user-project.md,
"Develop mode").

Builds the project in the current folder with plain CMake into a kept build folder
(``build/dev``), for the CPU only unless asked (``--cuda``, ``--cuda-sim``), without
link-time optimisation, then runs COMMAND (e.g. ``python -m pytest -q tests``) with the
build's package first on ``PYTHONPATH``. A rerun after an edit regenerates from the specs
(opspec-gen rewrites only the files whose text changed), recompiles only what those files
feed, relinks, and runs COMMAND in a new process, which imports the new build.
``--watch`` does that on every change to specs/ or CMakeLists.txt.

``--sanitize`` builds into ``build/dev-sanitize`` with AddressSanitizer and
UndefinedBehaviorSanitizer (the kernels, CPU and simulated CUDA, and the runtime around
them) and runs COMMAND with the sanitizers' runtime preloaded (Python itself is not built
with them), so that a body reading or writing past an array stops at that access; the
report is shown after COMMAND, with the op and the spec's line it stopped at.

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
import tempfile
import time
import tomllib

from opspec import _sanitize
from opspec._paths import cmake_dir

STEP = re.compile(r"^\[\d+/\d+\] (.*)$")


def say(message: str) -> None:
    print(f"opspec dev: {message}", file=sys.stderr, flush=True)


def project_version(project: pathlib.Path) -> str | None:
    """The static `version` of `project`'s pyproject.toml, or None (no file, no such key,
    a dynamic version, or a file tomllib cannot read)."""
    try:
        with open(project / "pyproject.toml", "rb") as f:
            version = tomllib.load(f).get("project", {}).get("version")
    except (OSError, tomllib.TOMLDecodeError):
        return None
    return version if isinstance(version, str) else None


def configure_args(
    project: pathlib.Path, build: pathlib.Path, cuda: bool, cuda_sim: bool, sanitize: bool = False
) -> list[str]:
    args = ["cmake", "-S", str(project), "-B", str(build)]
    if shutil.which("ninja"):
        args += ["-G", "Ninja"]
    args += [
        f"-Dopspec_DIR={cmake_dir()}",
        f"-DPython3_EXECUTABLE={sys.executable}",
        "-DCMAKE_BUILD_TYPE=Release",
        f"-DOPSPEC_CUDA={'ON' if cuda else 'OFF'}",
        f"-DOPSPEC_CUDA_SIM={'ON' if cuda_sim else 'OFF'}",
        "-DOPSPEC_LTO=OFF",
    ]
    if sanitize:
        args.append("-DOPSPEC_SANITIZE=ON")
    # The package's version as pip's build gives it (scikit-build-core reads the same key),
    # for <package>.__version__ and build_info() under develop mode too.
    version = project_version(project)
    if version is not None:
        args.append(f"-DOPSPEC_PACKAGE_VERSION={version}")
    return args


def configure(args: list[str], build: pathlib.Path) -> bool:
    """Runs CMake's configure step when the build folder is new or the options changed."""
    record = build / "opspec-dev.json"
    if (build / "CMakeCache.txt").exists() and record.exists() and json.loads(record.read_text()) == args:
        return True
    say(
        f"configuring {build} ({'CUDA' if '-DOPSPEC_CUDA=ON' in args else 'CPU only'}"
        f"{', CUDA simulator' if '-DOPSPEC_CUDA_SIM=ON' in args else ''}"
        f"{', AddressSanitizer + UndefinedBehaviorSanitizer' if '-DOPSPEC_SANITIZE=ON' in args else ''})"
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


def run_sanitized(command: list[str], env: dict, build_dir: pathlib.Path, project: pathlib.Path) -> int:
    """COMMAND under the sanitizers (opspec._sanitize); each report it left is shown after
    it, then the op and the spec's line it names. Non-zero when there was one."""
    preload = _sanitize.runtime_libraries(build_dir)
    if preload is None:
        say("--sanitize needs the compiler's shared AddressSanitizer runtime (libasan.so, as GCC has): none found")
        return 1
    with tempfile.TemporaryDirectory(prefix="opspec-dev-sanitize-") as folder:
        reports = pathlib.Path(folder)
        status = subprocess.run(command, env=_sanitize.environment(env, preload, reports)).returncode
        found = _sanitize.reports(reports, project)
        for text, line in found:
            sys.stderr.write(text if text.endswith("\n") else text + "\n")
            say(line)
    return status or (1 if found else 0)


def watched(project: pathlib.Path) -> dict:
    files = [project / "CMakeLists.txt", *sorted((project / "specs").glob("*.yaml"))]
    return {str(f): f.stat().st_mtime_ns for f in files if f.exists()}


DESCRIPTION = (
    "Build the package in this folder for development (CPU only, kept build folder) and run "
    "COMMAND with it first on PYTHONPATH."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The arguments of `opspec dev` (opspec.__main__ holds the one parser)."""
    parser.add_argument(
        "--build-dir",
        type=pathlib.Path,
        help="the kept build folder (default: build/dev; build/dev-sanitize with --sanitize)",
    )
    parser.add_argument("--cuda", action="store_true", help="build the CUDA handlers too (needs nvcc)")
    parser.add_argument("--cuda-sim", action="store_true", help="build the CUDA simulator too (backend='cuda_sim')")
    parser.add_argument(
        "--sanitize",
        action="store_true",
        help="build with AddressSanitizer + UndefinedBehaviorSanitizer (into build/dev-sanitize) and run COMMAND "
        "under them: a body that reads or writes out of bounds stops with the op and the spec's line",
    )
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
    if args.sanitize and args.cuda:
        # nvcc's code is not instrumented, and the CUDA runtime needs ASan options of its own.
        say(
            "--sanitize checks the CPU kernels and, with --cuda-sim, the CUDA kernels on the simulator, not with --cuda"
        )
        return 2
    default_dir = project / "build" / ("dev-sanitize" if args.sanitize else "dev")
    build_dir = (args.build_dir or default_dir).resolve()
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(build_dir / "python"), *filter(None, [env.get("PYTHONPATH")])])

    def once() -> int:
        if not configure(configure_args(project, build_dir, args.cuda, args.cuda_sim, args.sanitize), build_dir):
            return 1
        if not build(build_dir, args.jobs):
            return 1
        if not command:
            return 0
        if args.sanitize:
            return run_sanitized(command, env, build_dir, project.resolve())
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
