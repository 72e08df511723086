"""The CPU forms of the generated kernels, compared in one process on the same buffers.

Compiles a few shipped ops' generated `<op>_cpu.c` (as the extension compiles them, clones
off: `-DOPSPEC_NO_CPU_CLONES`) once per form into a shared library each, `-march=x86-64-v3`
(AVX2, FMA, F16C), `-march=x86-64-v4` (AVX-512F/BW/CD/DQ/VL, which GCC 12 vectorises
with 512-bit vectors, as the x86-64-v4 clone of the build) and `-march=x86-64-v4
-mprefer-vector-width=256` (AVX-512 instructions on 256-bit vectors, which some Intel CPUs
run without lowering their clock), then calls each
op's range kernel (the `opspec_<op>_cpu_variants` table) through ctypes over its whole
launch on one thread, for every type variant the op lists, on identical random data,
at 64k, 1M and 16M elements. Rounds interleave the forms (so a change in the machine's
load hits every form) and each row is the median of the rounds, in ms per call, with the
ratio of each form's time to x86-64-v3's (below 1: faster than x86-64-v3). The forms that
this CPU cannot run are left out (AVX-512 needs `avx512f`... in /proc/cpuinfo).

A bfloat16 or float16 variant is timed on the arrays its kernel reads: the dtype's own
2-byte values where it converts in its loop (`OPSPEC_STORAGE_T uint16_t`) or runs on
float16 tiles, float ones where the handler widens them. The tiles' widening and narrowing
(runtime/src/lowp_tiles.c) choose their instructions by CPUID, not by the form's -march:
on an AVX-512 machine every form's float16 tiles convert with 16-lane F16C.

    .venv/bin/python bench/bench_forms.py [--out DIR] [--sizes N ...] [--rounds R] [--ops OP ...]

A smoke run: `--sizes 4096 --rounds 1`.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import pathlib
import re
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import save_plot  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[1]
GENERATED = ROOT / "generated"
# As cmake/OpspecExtension.cmake compiles kernels (release: -O3), clones off.
FLAGS = ["-std=c11", "-O3", "-fno-math-errno", "-fno-trapping-math", "-fopenmp", "-fPIC", "-DOPSPEC_NO_CPU_CLONES"]
# name, -march flags, the /proc/cpuinfo flags it needs
FORMS = [
    ("x86-64-v3", ["-march=x86-64-v3"], {"avx2", "fma", "f16c"}),
    ("x86-64-v4", ["-march=x86-64-v4"], {"avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"}),
    (
        "x86-64-v4/256",
        ["-march=x86-64-v4", "-mprefer-vector-width=256"],
        {"avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"},
    ),
]
OPS = ["sigmoid", "add", "relu", "gelu_tanh", "rms_norm", "softmax", "csr_matvec", "exp_trace"]
ROW = 1024  # the row length of the row-wise ops (rms_norm, softmax)
NNZ_PER_ROW = 16  # csr_matvec's rows
MAX_RANK = 8  # runtime/include/opspec/limits.h
# Runtime functions a kernel may call, for the bench's library alone: no handler runs
# them, so there is one thread, no parallel loop and nothing to reject.
STUBS = """
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
int opspec_cpu_threads(void) { return 1; }
bool opspec_cpu_parallel(int64_t trips) { (void)trips; return false; }
void opspec_cpu_zero(void *data, size_t bytes) { if (bytes) memset(data, 0, bytes); }
"""
C_TYPES = {
    "float": np.float32,
    "double": np.float64,
    "opspec_float16": np.float16,
    "_Float16": np.float16,
    "opspec_bfloat16": np.uint16,
}


class Array(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("size", ctypes.c_int64), ("shape", ctypes.c_int64 * MAX_RANK)]


SCALARS = {
    "int64_t": ctypes.c_int64,
    "int32_t": ctypes.c_int32,
    "double": ctypes.c_double,
    "float": ctypes.c_float,
    "int *": ctypes.c_void_p,
    "int*": ctypes.c_void_p,
}
FIELD = re.compile(r"^\s*(opspec_array|int64_t|int32_t|double|float|int \*|int\*)\s*(\w+);", re.M)
KERNEL = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64)


def cpu_flags() -> set[str]:
    try:
        text = pathlib.Path("/proc/cpuinfo").read_text()
    except OSError:
        return set()
    m = re.search(r"^flags\s*:(.*)$", text, re.M)
    return set(m[1].split()) if m else set()


def args_struct(op: str) -> type[ctypes.Structure]:
    """The ctypes twin of `opspec_<op>_args` (generated/ops/<op>.h)."""
    header = (GENERATED / "ops" / f"{op}.h").read_text()
    body = re.search(rf"typedef struct opspec_{op}_args \{{(.*?)\}} opspec_{op}_args;", header, re.S)
    if body is None:
        raise SystemExit(f"{op}: no args struct in generated/ops/{op}.h")
    fields = [(name, Array if kind == "opspec_array" else SCALARS[kind]) for kind, name in FIELD.findall(body[1])]
    return type(f"{op}_args", (ctypes.Structure,), {"_fields_": fields})


def variants(op: str) -> list[tuple[str, type]]:
    """(dtype, NumPy storage type) of each entry of `opspec_<op>_cpu_variants`, in order:
    a 2-byte variant that converts in its loop (`OPSPEC_STORAGE_T uint16_t`) or runs on
    float16 tiles reads the dtype's own bits (float16 as NumPy's float16, bfloat16 as
    uint16), one the handler widens reads float."""
    source = (GENERATED / "ops" / f"{op}_cpu.c").read_text()
    found = {
        dtype: (ctype, storage)
        for dtype, ctype, storage in re.findall(
            rf"#define OPSPEC_CPU_VARIANT opspec_{op}_cpu_(\w+)\s+#define OPSPEC_CPU_T\s+(\w+)"
            r"(?:\s+#define OPSPEC_STORAGE_T\s+(\w+))?",
            source,
        )
    }
    for dtype in re.findall(rf"static void opspec_{op}_cpu_(\w+)\(const void \*opspec_argp", source):
        found[dtype] = ("float", "uint16_t")  # a float16 tile loop (opspec/lowp.h)
    table = re.search(rf"opspec_{op}_cpu_variants\[\d+\] = \{{(.*?)\}};", source, re.S)
    out = []
    for dtype in re.findall(rf"opspec_{op}_cpu_(\w+),", table.group(1)):
        ctype, storage = found[dtype]
        if storage == "uint16_t":
            out.append((dtype, np.float16 if dtype == "float16" else np.uint16))
        else:
            out.append((dtype, C_TYPES[ctype]))
    return out


def compile_form(folder: pathlib.Path, name: str, flags: list[str], ops: list[str]) -> str:
    """A shared library of `ops`' kernels in form `name`: glibc's vector math on, as the
    extension builds them with GCC (cmake/OpspecExtension.cmake)."""
    import jaxlib

    xla = pathlib.Path(jaxlib.__file__).parent / "include"
    stubs = folder / "stubs.c"
    stubs.write_text(STUBS)
    lib = folder / f"{name.replace('/', '-')}.so"
    cmd = [
        "gcc",
        *FLAGS,
        *flags,
        "-DOPSPEC_LIBMVEC",
        f"-I{ROOT / 'runtime' / 'include'}",
        f"-I{GENERATED}",
        f"-I{xla}",
        "-shared",
        "-o",
        str(lib),
        str(stubs),
        # float16's vector conversions, which a kernel's loop calls, and the tiles'
        # conversions, which pick their own form by CPUID (opspec/lowp.h)
        str(ROOT / "runtime" / "src" / "lowp_vector.c"),
        str(ROOT / "runtime" / "src" / "lowp_f16c.c"),
        str(ROOT / "runtime" / "src" / "lowp_tiles.c"),
        *(str(GENERATED / "ops" / f"{op}_cpu.c") for op in ops),
        "-lmvec",
        "-lm",
    ]
    subprocess.run(cmd, check=True)
    return str(lib)


def arr(a: np.ndarray) -> Array:
    shape = (ctypes.c_int64 * MAX_RANK)(*([*a.shape] + [1] * (MAX_RANK - a.ndim)))
    return Array(a.ctypes.data, a.size, shape)


def random_of(rng, shape, store, lo=-4.0, hi=4.0):
    x = rng.uniform(lo, hi, size=shape).astype(np.float32)
    if store is np.uint16:  # bfloat16 bits: the top half of each float32
        return (x.view(np.uint32) >> 16).astype(np.uint16)
    return x.astype(store)


def case(op: str, n: int, store, rng):
    """(the args' arrays and scalars by field name, launch trips) of `op` at n elements."""
    if op in ("sigmoid", "relu", "gelu_tanh"):
        return {"x": random_of(rng, n, store), "out": np.zeros(n, store)}, n
    if op == "add":
        return {"x": random_of(rng, n, store), "y": random_of(rng, n, store), "out": np.zeros(n, store)}, n
    if op in ("rms_norm", "softmax"):
        rows = max(n // ROW, 1)
        fields = {"x": random_of(rng, (rows, ROW), store), "out": np.zeros((rows, ROW), store), "n": ROW}
        if op == "rms_norm":
            fields |= {"w": random_of(rng, ROW, store, 0.5, 1.5), "eps": 1e-6}
        return fields, rows
    if op == "exp_trace":
        spikes = (rng.random(n) < 0.1).astype(store)
        tau = random_of(rng, 1, store, 0.04, 0.06)
        return {
            "trace": random_of(rng, n, store, 0, 1),
            "spikes": spikes,
            "tau_inv": tau,
            "out": np.zeros(n, store),
            "n": n,
        }, n
    if op == "csr_matvec":
        rows = max(n // NNZ_PER_ROW, 1)
        nnz = rows * NNZ_PER_ROW
        return {
            "data": random_of(rng, nnz, store),
            "indices": rng.integers(0, rows, nnz, dtype=np.int32),
            "indptr": (np.arange(rows + 1, dtype=np.int32) * NNZ_PER_ROW),
            "x": random_of(rng, rows, store),
            "y": np.zeros(rows, store),
            "nnz": nnz,
            "rows_p1": rows + 1,
            "n": rows,
            "opspec_rejected": np.zeros(1, np.int32),
        }, rows
    raise SystemExit(f"no case for {op}")


def build_args(struct, fields):
    args = struct()
    for name, kind in struct._fields_:
        value = fields[name]
        if kind is Array:
            setattr(args, name, arr(value))
        elif isinstance(value, np.ndarray):  # a pointer field (opspec_rejected)
            setattr(args, name, value.ctypes.data)
        else:
            setattr(args, name, value)
    return args


def time_call(kernel, args, trips: int, target_s: float = 2e-3) -> float:
    """ms per call: a batch of calls long enough to time (at least target_s)."""
    kernel(ctypes.addressof(args), 0, trips)
    t0 = time.perf_counter()
    kernel(ctypes.addressof(args), 0, trips)
    once = max(time.perf_counter() - t0, 1e-7)
    batch = max(1, min(1000, int(target_s / once)))
    t0 = time.perf_counter()
    for _ in range(batch):
        kernel(ctypes.addressof(args), 0, trips)
    return (time.perf_counter() - t0) / batch * 1e3


def same_results(op: str, dtype: str, n: int, kernels, call, fields, trips: int) -> None:
    """Each form's output equals the first form's (the forms reorder a row's sums, and
    their vector math differs in the last bits): a form that computes something else
    would time nothing worth comparing."""
    outputs = [name for name in ("out", "y") if name in fields]
    first = None
    for name, kernel in kernels.items():
        kernel(ctypes.addressof(call), 0, trips)
        got = [fields[o].astype(np.float64) if fields[o].dtype != np.uint16 else bf16(fields[o]) for o in outputs]
        if first is None:
            first = got
            continue
        for a, b in zip(first, got):
            if not np.allclose(a, b, rtol=2e-2, atol=1e-3, equal_nan=True):
                raise SystemExit(f"{op} {dtype} {n}: {name} disagrees with {next(iter(kernels))}")


def bf16(bits: np.ndarray) -> np.ndarray:
    return (bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64)


def print_rows(title: str, rows, names: list[str]) -> None:
    print(f"\n{title}")
    head = f"{'case':<32}" + "".join(f"{n + ' ms':>18}" for n in names) + "".join(f"{n:>16}" for n in names[1:])
    print(head)
    print("-" * len(head))
    for case_name, t in rows:
        line = f"{case_name:<32}" + "".join(f"{t[n]:>18.4f}" for n in names)
        print(line + "".join(f"{t[n] / t[names[0]]:>16.2f}" for n in names[1:]))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=None, help="folder for the plot (bench_forms.png)")
    parser.add_argument("--sizes", type=int, nargs="+", default=[65536, 1048576, 16777216])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--ops", nargs="+", default=OPS)
    args = parser.parse_args(argv)
    have = cpu_flags()
    forms = [(name, flags) for name, flags, needs in FORMS if needs <= have]
    skipped = [name for name, _, needs in FORMS if not needs <= have]
    if skipped:
        print(f"this CPU cannot run {', '.join(skipped)}: left out")
    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory() as tmp:
        libs = {name: ctypes.CDLL(compile_form(pathlib.Path(tmp), name, flags, args.ops)) for name, flags in forms}
        rows = []
        for op in args.ops:
            struct = args_struct(op)
            for index, (dtype, store) in enumerate(variants(op)):
                kernels = {
                    name: KERNEL(
                        ctypes.cast(getattr(lib, f"opspec_{op}_cpu_variants"), ctypes.POINTER(ctypes.c_void_p))[index]
                    )
                    for name, lib in libs.items()
                }
                for n in args.sizes:
                    fields, trips = case(op, n, store, rng)
                    call = build_args(struct, fields)
                    same_results(op, dtype, n, kernels, call, fields, trips)
                    times: dict[str, list[float]] = {name: [] for name in kernels}
                    for r in range(args.rounds):
                        order = list(kernels) if r % 2 == 0 else list(reversed(kernels))
                        for name in order:
                            times[name].append(time_call(kernels[name], call, trips))
                    rows.append((f"{op} {dtype} {n}", {name: float(np.median(t)) for name, t in times.items()}))
    names = [name for name, _ in forms]
    cpu = re.search(r"^model name\s*:(.*)$", pathlib.Path("/proc/cpuinfo").read_text(), re.M)
    title = f"CPU forms, one thread, ms per call (median of {args.rounds}), then each form's time / {names[0]}'s"
    print(f"{time.strftime('%Y-%m-%d %H:%M')} {cpu[1].strip() if cpu else ''}")
    print_rows(title, rows, names)
    if args.out:
        save_plot(os.path.join(args.out, "bench_forms.png"), "CPU forms of the generated kernels", rows, names)
    return 0


if __name__ == "__main__":
    sys.exit(main())
