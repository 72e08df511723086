"""Shared setup for the end-to-end tests: real JAX, the built extension, fresh data."""

import os
import tempfile

import jax

# The suite runs with opspec's defaults, whatever this machine's user tuned or set: no
# saved parallel threshold (python -m opspec tune) and no override from the environment.
os.environ["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="opspec-test-cache-")
os.environ.pop("OPSPEC_PARALLEL_THRESHOLD", None)

# float64 specializations are part of every op: test them.
jax.config.update("jax_enable_x64", True)

import numpy as np  # noqa: E402
import pytest  # noqa: E402


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs a CUDA GPU visible to JAX")
    config.addinivalue_line("markers", "cuda_sim: runs CUDA kernels on the CUDA simulator (docs/cuda-simulator.md)")
    config.addinivalue_line("markers", "slow: builds the project again")


def has_gpu() -> bool:
    # Not jax.devices("gpu") inside `except RuntimeError`: that also swallowed a backend
    # that failed to start (e.g. XLA refusing every handler for its FFI API version),
    # which must fail the run loudly, with XLA's message, not turn into skipped GPU tests
    # and a hundred NOT_FOUND failures.
    return jax.default_backend() == "gpu"


def pytest_collection_modifyitems(config, items):
    if has_gpu():
        return
    skip = pytest.mark.skip(reason="no CUDA GPU visible to JAX")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def reading_package(tmp_path_factory):
    """The folder holding the test-only package `reading` (reading_ops.py), built once per
    session and put on sys.path; tests that start processes put it on PYTHONPATH."""
    import sys

    import reading_ops

    folder = reading_ops.build(tmp_path_factory.mktemp("reading"))
    sys.path.insert(0, str(folder))
    return folder


@pytest.fixture(scope="session")
def tree_build(tmp_path_factory):
    """(project, build folder): one copy of the source tree holding every spec the
    collected test modules registered (builds.register_tree_specs), built once per
    session as a user builds opspec after adding specs. Tests only read it."""
    import builds

    return builds.build_tree(tmp_path_factory.mktemp("tree"))


@pytest.fixture
def checks_off():
    """Data checks off (opspec.set_checks(False)) for one test, back on after it."""
    import opspec

    opspec.set_checks(False)
    try:
        yield
    finally:
        opspec.set_checks(True)


@pytest.fixture
def rng(request):
    # Fresh data every run; the seed is printed on failure so a run can be replayed.
    seed = int.from_bytes(os.urandom(4), "little")
    request.node.user_properties.append(("seed", seed))
    print(f"random seed {seed}")
    return np.random.default_rng(seed)


def tol(dtype):
    if np.dtype(dtype) == np.float16:  # 2 ulp at 1 (float16 has 11 significant bits)
        return dict(rtol=2e-3, atol=2e-3)
    if np.dtype(dtype).name == "bfloat16":  # 1 ulp (8 significant bits): a float result rounded once more
        return dict(rtol=8e-3, atol=1e-6)
    return dict(rtol=2e-5, atol=2e-5) if np.dtype(dtype) == np.float32 else dict(rtol=1e-12, atol=1e-12)
