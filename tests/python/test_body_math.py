"""A body's math on T in a package built as a user builds it (opspec/math.h, vmath.h):
float32 within XLA:CPU's budgets of the correctly rounded result (the ulp distance
tests/c/test_vmath.c measures over every float32), float64 within libmvec's 4 ulp,
float16 within one float16 ulp, against NumPy's float64 functions on random inputs over
each function's whole range (tiny, huge, subnormal, near the edges)."""

import math
import sys

import builds
import numpy as np
import pytest

# op: (body, float64 reference, XLA's float32 budget in ulps)
FUNCTIONS = {
    "exp": ("exp(x[i])", np.exp, 6),
    "log": ("log(x[i])", np.log, 1),
    "log1p": ("log1p(x[i])", np.log1p, 1),
    "tanh": ("tanh(x[i])", np.tanh, 3),
    "erf": ("erf(x[i])", np.vectorize(math.erf), 2),
    "sigmoid": ("(T)1 / ((T)1 + exp(-x[i]))", lambda x: 1 / (1 + np.exp(-x)), 6),
}

SPEC = """\
op: bm_{name}
types: {{T: [float32, float64, float16]}}
inputs:
  - {{name: x, dtype: T, shape: [n]}}
outputs:
  - {{name: out, dtype: T, shape: [n]}}
launch: [n]
kernel: |
  out[i] = {body};
"""


@pytest.fixture(scope="module")
def bodymath(tmp_path_factory):
    folder = tmp_path_factory.mktemp("bodymath")
    project = folder / "bodymath"
    specs = {f"bm_{name}": SPEC.format(name=name, body=body) for name, (body, _, _) in FUNCTIONS.items()}
    installed = builds.has_cmake_package()
    builds.write_package(project, "bodymath", specs, "CUDA OFF CUDA_SIM OFF", vendor=not installed)
    package = [f"-Dopspec_DIR={builds.cmake_dir()}"] if installed else []
    builds.configure(project, project / "build", "-DOPSPEC_CUDA=OFF", "-DBUILD_TESTING=OFF", *package)
    builds.cmake_build(project / "build", "bodymath_opspec")
    sys.path.insert(0, str(project / "build" / "python"))
    import bodymath

    return bodymath


def inputs(name, rng, n=20000):
    """Random values over the function's range: log-spaced magnitudes from subnormal to
    huge for log, near -1 and tiny for log1p, both signs for the rest."""
    mags = 10.0 ** rng.uniform(-44, 38, n)
    if name == "log":
        x = mags
    elif name == "log1p":
        x = np.concatenate(
            [
                -rng.uniform(0, 1, n // 4),
                rng.choice([-1, 1], n // 4) * 10.0 ** rng.uniform(-30, 0, n // 4),
                10.0 ** rng.uniform(0, 38, n - n // 2),
            ]
        )
    elif name in ("exp", "sigmoid"):
        x = rng.uniform(-104, 89, n)
    else:
        x = np.concatenate([rng.standard_normal(n // 2) * 3, rng.choice([-1, 1], n - n // 2) * mags[: n - n // 2]])
    return x.astype(np.float32)


def ulps(y, ref, dtype, itype):
    """Distance in representable steps between y and ref rounded to dtype (-0 == +0)."""

    def ordinal(v):
        with np.errstate(over="ignore"):  # a reference past the dtype's range is its infinity
            i = v.astype(dtype).view(itype).astype(np.int64)
        return np.where(i < 0, -(i & np.iinfo(itype).max), i)

    return np.abs(ordinal(y) - ordinal(ref))


@pytest.mark.parametrize("name", list(FUNCTIONS))
def test_body_math_within_budget(bodymath, name, rng):
    _, reference, budget = FUNCTIONS[name]
    op = getattr(bodymath.ops, f"bm_{name}")
    x32 = inputs(name, rng)
    for dtype, itype, allowed in ((np.float32, np.int32, budget), (np.float64, np.int64, 4), (np.float16, np.int16, 1)):
        with np.errstate(all="ignore"):  # float16 overflows to inf; log(0) = -inf
            x = x32.astype(dtype)
            ref = reference(x.astype(np.float64))
        y = np.asarray(op(x))
        assert y.dtype == dtype
        # XLA runs the handler with subnormals flushed to zero, inputs (a subnormal x is 0)
        # and results alike, as it runs jnp's own code: both are left out here (the
        # C test measures them outside XLA).
        tiny = np.finfo(dtype).tiny
        keep = (np.abs(ref) >= tiny) & ((np.abs(x) >= tiny) | (x == 0) | (dtype == np.float16))
        distance = ulps(y[keep], ref[keep], dtype, itype)
        worst = int(distance.max())
        where = x[keep][distance.argmax()]
        assert worst <= allowed, f"{name} {np.dtype(dtype).name}: {worst} ulp at x = {where!r} (allowed {allowed})"


def test_subnormal_inputs_are_zero_as_in_jnp(bodymath):
    """Under XLA a subnormal input reads as 0 in opspec's log as in jnp.log: -inf."""
    import jax.numpy as jnp

    x = np.array([1.15e-38, 1e-45, -1e-40, 1.0], np.float32)
    np.testing.assert_array_equal(np.asarray(bodymath.ops.bm_log(x)), np.asarray(jnp.log(x)))
