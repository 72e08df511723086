"""Which CPU form of the kernels runs (opspec/cpu.h, docs/performance.md "CPU forms"):
opspec.cpu_form() against the CPU's flags in /proc/cpuinfo, read independently of the
runtime's CPUID test, and the forms the build made."""

import pathlib
import platform

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import opspec

# The features of each x86-64 ISA level (the psABI's list), as Linux names them in
# /proc/cpuinfo (`pni` is SSE3, `abm` LZCNT, `lahf_lm` LAHF/SAHF in 64-bit mode).
LEVELS = {
    "x86-64-v2": {"cx16", "lahf_lm", "popcnt", "pni", "sse4_1", "sse4_2", "ssse3"},
    "x86-64-v3": {"avx", "avx2", "bmi1", "bmi2", "f16c", "fma", "abm", "movbe", "xsave"},
    "x86-64-v4": {"avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"},
}


def cpu_flags() -> set[str]:
    for line in pathlib.Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("flags"):
            return set(line.split(":", 1)[1].split())
    return set()


def best_level(flags: set[str]) -> str:
    """The highest ISA level whose features (and every lower level's) the CPU has."""
    level, needed = "x86-64", set()
    for name, features in LEVELS.items():
        needed |= features
        if not needed <= flags:
            break
        level = name
    return level


def test_best_level_reads_the_levels_in_order():
    v3 = LEVELS["x86-64-v2"] | LEVELS["x86-64-v3"]
    assert best_level(set()) == "x86-64"
    assert best_level(v3) == "x86-64-v3"
    assert best_level(v3 | LEVELS["x86-64-v4"]) == "x86-64-v4"
    # AVX-512 without a v3 feature (an emulator, a hypervisor that hides one) is not v4.
    assert best_level((v3 - {"movbe"}) | LEVELS["x86-64-v4"]) == "x86-64-v2"


@pytest.mark.skipif(platform.machine() != "x86_64" or not pathlib.Path("/proc/cpuinfo").exists(), reason="x86-64 Linux")
def test_the_form_that_runs_is_the_best_one_this_cpu_has():
    forms = opspec._opspec.cpu_forms().split(",")
    if forms in (["native"], ["default"]):
        assert opspec.cpu_form() == forms[0]
        return
    assert forms[:2] == ["x86-64", "x86-64-v3"], forms  # every clone build has both
    best = best_level(cpu_flags())
    # The best form built that this CPU runs: forms are built for "x86-64", "x86-64-v3"
    # and "x86-64-v4" (GCC, unless OPSPEC_CPU_V4=OFF); a v2-only CPU runs "x86-64".
    order = ["x86-64", "x86-64-v2", "x86-64-v3", "x86-64-v4"]
    expected = max((f for f in forms if order.index(f) <= order.index(best)), key=order.index)
    assert opspec.cpu_form() == expected, (opspec.cpu_form(), best, forms)


def test_the_form_that_runs_computes_what_numpy_does():
    # Whichever form runs here (x86-64-v4 on an AVX-512 machine): an element-wise op with
    # vector math, a row reduction under fastmath, each on a tail that no vector fills.
    rng = np.random.default_rng(7)
    x = rng.standard_normal((37, 1003)).astype(np.float32)
    got = np.asarray(jax.jit(opspec.ops.sigmoid)(jnp.asarray(x)))
    np.testing.assert_allclose(got, 1 / (1 + np.exp(-x.astype(np.float64))), rtol=2e-6, atol=1e-7)
    sm = np.asarray(jax.jit(opspec.ops.softmax)(jnp.asarray(x)))
    e = np.exp(x.astype(np.float64) - x.max(axis=-1, keepdims=True))
    np.testing.assert_allclose(sm, e / e.sum(axis=-1, keepdims=True), rtol=2e-5, atol=1e-7)
