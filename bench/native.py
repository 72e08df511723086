"""Native helpers the benchmarks build themselves (not part of the wheel): a bare C XLA
FFI handler to measure call overhead against, and a STREAM-like triad for the machine's
bandwidth. Compiled with
the system's cc into bench/.build/ (ignored by git) on first use.
"""

import ctypes
import hashlib
import os
import subprocess

import jax
import jaxlib

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
BUILD = os.path.join(HERE, ".build")


def _jaxlib_include() -> str:
    return os.path.join(os.path.dirname(jaxlib.__file__), "include")


def build(source: str, flags: tuple = (), extra: tuple = ()) -> ctypes.CDLL:
    """Compiles bench/native/<source> (with `extra` sources, paths relative to the
    repository) into a shared library, cached by contents and flags, and loads it."""
    paths = [os.path.join(HERE, "native", source), *(os.path.join(ROOT, e) for e in extra)]
    # The jaxlib header's folder too: another jaxlib may name the FFI API differently.
    digest = hashlib.sha256(repr((flags, _jaxlib_include())).encode())
    for p in paths:
        with open(p, "rb") as f:
            digest.update(f.read())
    key = digest.hexdigest()[:12]
    os.makedirs(BUILD, exist_ok=True)
    lib = os.path.join(BUILD, f"{os.path.splitext(source)[0]}-{key}.so")
    if not os.path.exists(lib):
        cmd = [
            os.environ.get("CC", "cc"),
            "-std=c11",
            "-O2",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-fPIC",
            "-shared",
            "-I",
            _jaxlib_include(),
            "-I",  # opspec/ffi_compat.h
            os.path.join(ROOT, "runtime", "include"),
            *flags,
            *paths,
            "-o",
            lib + ".tmp",
        ]
        subprocess.run(cmd, check=True)
        os.replace(lib + ".tmp", lib)
    return ctypes.CDLL(lib)


_bare: dict = {}


def bare_add(omp_if: bool = False):
    """A jax-callable bare FFI add of two float32 arrays (bench/native/bare_add.c); with
    omp_if, its loop is `#pragma omp parallel for if (n >= 32768)`."""
    if omp_if not in _bare:
        lib = build("bare_add.c", ("-fopenmp", "-DBARE_OMP_IF") if omp_if else ())
        target = "bench_bare_add_f32" + ("_omp_if" if omp_if else "")
        jax.ffi.register_ffi_target(target, jax.ffi.pycapsule(lib.bare_add_f32), platform="cpu")

        def call(x, y):
            return jax.ffi.ffi_call(target, jax.ShapeDtypeStruct(x.shape, x.dtype))(x, y)

        _bare[omp_if] = call
    return _bare[omp_if]


def triad_gbs(n: int = 1 << 24, reps: int = 10, threads: int = 2) -> float:
    """Best-of-`reps` triad bandwidth (GB/s) over three arrays of n doubles, `threads`
    OpenMP threads (bench/native/triad.c)."""
    lib = build("triad.c", ("-O3", "-fopenmp"))
    lib.triad_gbs.restype = ctypes.c_double
    lib.triad_gbs.argtypes = (ctypes.c_int64, ctypes.c_int, ctypes.c_int)
    return float(lib.triad_gbs(n, reps, threads))
