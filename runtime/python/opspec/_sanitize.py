"""``opspec dev --sanitize``: a package's kernels built with AddressSanitizer and
UndefinedBehaviorSanitizer (OPSPEC_SANITIZE=ON, cmake/OpspecExtension.cmake), and the
command run under them (docs/user-project.md, "When an op gives wrong numbers").

Python is not built with the sanitizers, so their runtime is preloaded; their reports go
to files in a folder of opspec dev's, which shows them after the command with the op and
the spec's line that each names (the generated code's #line directives put the spec's
lines into the debug information).
"""

from __future__ import annotations

import os
import pathlib
import re
import subprocess

# Where a sanitizer writes its reports (a path prefix: one file per process, <path>.<pid>).
REPORTS_ENV = "OPSPEC_DEV_SANITIZER_REPORTS"

# A frame of a sanitizer's stack trace in a spec, as the #line directives put it there:
# "    #0 0x7f... in opspec_shift_cpu_float32 /path/specs/shift.yaml:12:5".
SPEC_FRAME = re.compile(r"#\d+ 0x[0-9a-f]+ in (\S+) (\S*?([^/\s]+)\.yaml):(\d+)")
# A runtime error of UndefinedBehaviorSanitizer: "specs/shift.yaml:12:5: runtime error: ...".
SPEC_UB = re.compile(r"(\S*?([^/\s]+)\.yaml):(\d+):\d+: runtime error: (.*)")


def cmake_cache(build_dir: pathlib.Path, key: str) -> str | None:
    for line in (build_dir / "CMakeCache.txt").read_text().splitlines():
        name, _, value = line.partition("=")
        if name.split(":")[0] == key:
            return value
    return None


def runtime_libraries(build_dir: pathlib.Path) -> list[str] | None:
    """What to preload for a sanitized build run by an uninstrumented Python: the
    compiler's libasan (first, as ASan requires), and libstdc++, or ASan finds no
    __cxa_throw to intercept when jaxlib throws (as ./run sanitize does for opspec's own
    extension). None when the compiler has no shared libasan (GCC's has one)."""
    compiler = cmake_cache(build_dir, "CMAKE_CXX_COMPILER") or cmake_cache(build_dir, "CMAKE_C_COMPILER") or "cc"
    libraries = []
    for name in ("libasan.so", "libstdc++.so"):
        r = subprocess.run([compiler, f"-print-file-name={name}"], capture_output=True, text=True)
        path = r.stdout.strip()
        if r.returncode != 0 or not os.path.isabs(path):
            if name == "libasan.so":
                return None
            continue
        libraries.append(path)
    return libraries


def environment(env: dict, preload: list[str], reports: pathlib.Path) -> dict:
    """`env` with the sanitizers' runtime preloaded and their reports written into
    `reports` (one file per process that stopped), to be shown after the command: a
    report printed to the standard error of a test that pytest captures would be lost
    with the process. Leaks are not reported: Python and JAX keep memory to the end on
    purpose. The user's own ASAN_OPTIONS and UBSAN_OPTIONS come last, so that theirs win."""
    env = dict(env)
    env["LD_PRELOAD"] = " ".join([*preload, *filter(None, [env.get("LD_PRELOAD")])])
    path = str(reports / "report")
    env["ASAN_OPTIONS"] = ":".join(filter(None, ["detect_leaks=0", f"log_path={path}", env.get("ASAN_OPTIONS")]))
    env["UBSAN_OPTIONS"] = ":".join(filter(None, ["print_stacktrace=1", env.get("UBSAN_OPTIONS")]))
    env[REPORTS_ENV] = path
    return env


def route_ubsan_reports() -> None:
    """Sends UndefinedBehaviorSanitizer's reports where AddressSanitizer's go (called by
    every package's import, opspec._face.install, under `opspec dev --sanitize`). GCC's
    UBSan runtime is a library of its own beside ASan's: at its start it sets its report
    path through a symbol that resolves to ASan's copy, and so keeps writing to the
    standard error. Its own copy, asked for by its own handle, takes the path."""
    path = os.environ.get(REPORTS_ENV)
    if not path:
        return
    with open("/proc/self/maps") as maps:
        libraries = [line.split()[-1] for line in maps if "/libubsan.so" in line]
    if not libraries:
        return
    import ctypes

    runtime = ctypes.CDLL(libraries[0], mode=os.RTLD_NOLOAD | os.RTLD_LAZY)
    getattr(runtime, "__sanitizer_set_report_path")(path.encode())


def spec_location(project: pathlib.Path, path: str) -> str:
    """A spec's path as a report has it, relative to the project where it is inside."""
    try:
        return str(pathlib.Path(path).resolve().relative_to(project))
    except ValueError:
        return path


def summary(report: str, project: pathlib.Path) -> str | None:
    """One line naming the op and the spec's line where a sanitizer stopped: the first
    frame of the report that is in a spec (the body's line), or UBSan's own location."""
    kind = re.search(r"ERROR: AddressSanitizer: (\S+)", report)
    access = re.search(r"^(READ|WRITE) of size (\d+)", report, re.MULTILINE)
    ub = SPEC_UB.search(report)
    frame = SPEC_FRAME.search(report)
    if frame and (kind or not ub):
        what = kind.group(1) if kind else "a sanitizer's finding"
        if access:
            what += f" ({access.group(1).lower()} of {access.group(2)} bytes)"
        where = f"{spec_location(project, frame.group(2))}:{frame.group(4)}"
        return f"{what} in op {frame.group(3)}'s body at {where} (in {frame.group(1)})"
    if ub:
        return f"undefined behaviour in op {ub.group(2)}'s body at {spec_location(project, ub.group(1))}:{ub.group(3)}: {ub.group(4)}"
    return None


def reports(folder: pathlib.Path, project: pathlib.Path) -> list[tuple[str, str]]:
    """Each report the command's processes left in `folder`, with the line that says what
    it names."""
    found = []
    for path in sorted(folder.glob("report*")):
        text = path.read_text(errors="replace")
        found.append(
            (text, summary(text, project) or f"a sanitizer stopped the command ({path.name}), outside any op's body")
        )
    return found
