"""The CUDA simulator (docs/cuda-simulator.md) beyond the tests it shares with a GPU
(test_gpu.py): what only it can show (each launch as launched, the device it ran on),
how backend= picks an implementation, and that a broken kernel fails the GPU suite.
"""

import os
import pathlib
import subprocess
import sys
import textwrap

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from builds import register_tree_specs, shipped_spec_edited

import opspec
from opspec._load import framework_ffi_api
from opspec._runtime import OpError

ROOT = pathlib.Path(__file__).resolve().parents[2]

pytestmark = [
    pytest.mark.cuda_sim,
    pytest.mark.skipif(not opspec.has_cuda_sim, reason="built without the CUDA simulator (OPSPEC_CUDA_SIM=OFF)"),
]


def on_cpu(*args):
    return tuple(jax.device_put(a, jax.devices("cpu")[0]) for a in args)


def test_seed_launch_configurations_as_launched(rng):
    """The grid, block and shared memory each launcher computes, as the kernels got them."""
    opspec.cuda_sim_launches()  # forget earlier launches
    (x,) = on_cpu(jnp.linspace(-3.0, 3.0, 1024, dtype=jnp.float32))
    A, B = on_cpu(jnp.ones((64, 64), jnp.float32), jnp.ones((64, 64), jnp.float32))
    V, V_th, V_rest = on_cpu(
        jnp.asarray(rng.uniform(-75, -50, 10_000), jnp.float32),
        jnp.array([-55.0], jnp.float32),
        jnp.array([-70.0], jnp.float32),
    )
    # JAX dispatches asynchronously: each call must be done before the log is read.
    jax.block_until_ready([opspec.ops.relu(x, backend="cuda_sim"), opspec.ops.sigmoid(x, backend="cuda_sim")])
    jax.block_until_ready(opspec.ops.hadamard(A, B, backend="cuda_sim"))
    jax.block_until_ready(opspec.ops.block_sum(x, backend="cuda_sim"))
    jax.block_until_ready(opspec.ops.abs_two_pass(x[:512], backend="cuda_sim"))
    jax.block_until_ready(opspec.ops.spike_reset(V, V_th, V_rest, backend="cuda_sim"))
    launched = opspec.cuda_sim_launches()
    assert [(r["grid"], r["block"], r["shared_mem"]) for r in launched] == [
        # relu: launch [x_size], 256 threads, 4 indices each along x (opspec/launch.h)
        ((1, 1, 1), (256, 1, 1), 0),
        ((2, 1, 1), (128, 1, 1), 0),  # sigmoid: threads_per_block [128]: 1024 / (128 * 4)
        ((1, 4, 1), (16, 16, 1), 0),  # hadamard: launch [m, n], 16 x 16, n along x (16 * 4 a block)
        ((4, 1, 1), (256, 1, 1), 2048),  # block_sum: grid cdiv(n, 256), block 256, 256 * 8 bytes
        ((2, 1, 1), (256, 1, 1), 0),  # abs_two_pass: square, then root
        ((2, 1, 1), (256, 1, 1), 0),
        ((40, 1, 1), (256, 1, 1), 0),  # spike_reset: detect, then reset, cdiv(10000, 256) blocks
        ((40, 1, 1), (256, 1, 1), 0),
    ]
    assert {(r["device"], r["code"]) for r in launched} == {(0, 0)}


def test_an_empty_launch_runs_no_kernel():
    opspec.cuda_sim_launches()
    (x,) = on_cpu(jnp.zeros(0, jnp.float32))
    assert jax.block_until_ready(opspec.ops.block_sum(x, backend="cuda_sim")).shape == (0,)
    assert jax.block_until_ready(opspec.ops.abs_two_pass(x, backend="cuda_sim")).shape == (0,)
    assert opspec.cuda_sim_launches() == []


def test_backend_cpu_and_the_default_run_the_cpu_kernel(rng):
    x = rng.uniform(-75, -50, 1000).astype(np.float32)
    args = on_cpu(x, np.array([-55.0], np.float32), np.array([-70.0], np.float32))
    opspec.cuda_sim_launches()
    default, cpu = jax.block_until_ready((opspec.ops.spike_reset(*args), opspec.ops.spike_reset(*args, backend="cpu")))
    assert opspec.cuda_sim_launches() == []
    simulated = jax.block_until_ready(opspec.ops.spike_reset(*args, backend="cuda_sim"))
    assert len(opspec.cuda_sim_launches()) == 2  # its two CUDA kernels
    for a, b, c in zip(default, cpu, simulated):
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(a, c)


@pytest.mark.parametrize(
    "backend, target", [(None, "@opspec_relu("), ("cpu", "@opspec_relu.cpu("), ("cuda_sim", "@opspec_relu.cuda_sim(")]
)
def test_each_backend_lowers_to_its_own_target(backend, target):
    (x,) = on_cpu(jnp.ones(8, jnp.float32))
    assert target in jax.jit(lambda v: opspec.ops.relu(v, backend=backend)).lower(x).as_text()


def test_backend_errors():
    (x,) = on_cpu(jnp.ones(8, jnp.float32))
    with pytest.raises(
        OpError, match=r"opspec.ops.relu: backend: expected one of 'cpu', 'cuda', 'cuda_sim' or None, got 'gpu'"
    ):
        opspec.ops.relu(x, backend="gpu")
    with pytest.raises(
        OpError, match=r"opspec.ops.sum: backend: 'cuda_sim' is not available: the op has no CUDA kernels"
    ):
        opspec.ops.sum(x, backend="cuda_sim")
    if "cuda" not in opspec.backends:
        with pytest.raises(OpError, match=r"opspec.ops.relu: backend: 'cuda' is not available: "):
            opspec.ops.relu(x, backend="cuda")


# Whether the installed jaxlib's FFI has XLA_FFI_DeviceOrdinal_Get (FFI API 0.2, jaxlib 0.8.1).
HAS_DEVICE_ORDINAL = (framework_ffi_api() or (0, 0)) >= (0, 2)


@pytest.mark.skipif(not HAS_DEVICE_ORDINAL, reason="this jaxlib's XLA FFI has no XLA_FFI_DeviceOrdinal_Get")
def test_device_ordinal_is_honoured():
    """With three JAX CPU devices the simulator models three GPUs; a call XLA runs on CPU
    device d runs on simulated GPU d, and a pmap runs one call on each."""
    script = textwrap.dedent("""\
        import jax, numpy as np, opspec
        cpus = jax.devices("cpu")
        assert len(cpus) == 3 and opspec.cuda_sim_device_count() == 3, (cpus, opspec.cuda_sim_device_count())
        opspec.cuda_sim_launches()
        x = np.arange(-500, 500, dtype=np.float32)
        for d in (2, 0, 1):
            y = opspec.ops.relu(jax.device_put(x, cpus[d]), backend="cuda_sim")
            assert list(y.devices()) == [cpus[d]]
            np.testing.assert_array_equal(y, np.maximum(x, 0))
        assert [r["device"] for r in opspec.cuda_sim_launches()] == [2, 0, 1]
        xs = np.random.default_rng().random((3, 1000), np.float32)
        sums = jax.pmap(lambda v: opspec.ops.block_sum(v, backend="cuda_sim"))(xs)
        want = [np.add.reduceat(row, np.arange(0, 1000, 256)) for row in xs]
        np.testing.assert_allclose(sums, want, rtol=1e-5)
        assert sorted(r["device"] for r in opspec.cuda_sim_launches()) == [0, 1, 2]
        print("devices ok")
        """)
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=3", JAX_PLATFORMS="cpu")
    r = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True)
    assert r.returncode == 0 and "devices ok" in r.stdout, r.stdout + r.stderr


@pytest.mark.skipif(HAS_DEVICE_ORDINAL, reason="this jaxlib's XLA FFI has XLA_FFI_DeviceOrdinal_Get")
def test_without_xla_device_ordinal_several_devices_are_an_error():
    """Under a jaxlib whose XLA FFI cannot say which device a call runs on (FFI API 0.1,
    jaxlib 0.5-0.7), one device needs no choice, and several are an error, not a launch
    on the wrong one. (CI runs the suite under jax 0.5.3 too.)"""
    script = textwrap.dedent("""\
        import jax, numpy as np, opspec
        x = np.arange(-4, 4, dtype=np.float32)
        try:
            print("ran", opspec.ops.relu(jax.device_put(x, jax.devices("cpu")[-1]), backend="cuda_sim"))
        except Exception as e:
            print("error:", e)
        """)
    for devices in (1, 3):
        env = dict(os.environ, XLA_FLAGS=f"--xla_force_host_platform_device_count={devices}", JAX_PLATFORMS="cpu")
        r = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True)
        if devices == 1:
            assert "ran [0. 0. 0. 0. 0. 1. 2. 3.]" in r.stdout, r.stdout + r.stderr
        else:
            assert "opspec relu: there are 3 simulated GPUs, and the XLA FFI of the jaxlib in use" in r.stdout, r.stdout


# tests/sim/older_ffi_api.c, built into the build folder's tests/: next to the opspec-gen
# the tests use (OPSPEC_GEN, as ./run test sets it), or next to a PYTHONPATH build.
_BUILD = pathlib.Path(os.environ.get("OPSPEC_GEN", ROOT / "build" / "generator" / "opspec-gen")).resolve().parents[1]
OLDER_FFI_SHIM = next(
    (
        p
        for p in (
            _BUILD / "tests" / "libopspec_test_older_ffi_api.so",
            pathlib.Path(opspec.__file__).resolve().parents[2] / "tests" / "libopspec_test_older_ffi_api.so",
        )
        if p.exists()
    ),
    _BUILD / "tests" / "libopspec_test_older_ffi_api.so",
)


@pytest.mark.skipif(not OLDER_FFI_SHIM.exists(), reason="tests/sim/older_ffi_api.c not built (BUILD_TESTING=OFF)")
@pytest.mark.parametrize("devices", [1, 3])
def test_without_xla_device_ordinal_one_gpu_works_several_are_an_error(devices):
    """relu's simulated handler, run by XLA through a shim that hands it XLA's own API
    table as if it ended before XLA_FFI_DeviceOrdinal_Get (an older jaxlib): with one
    device the call runs there; with several it cannot know which, and says so."""
    script = textwrap.dedent("""\
        import ctypes, sys, jax, numpy as np, opspec
        from opspec import _opspec
        shim = ctypes.CDLL(sys.argv[1])
        pointer = ctypes.pythonapi.PyCapsule_GetPointer
        pointer.restype, pointer.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
        shim.opspec_test_set_inner.argtypes = [ctypes.c_void_p]
        shim.opspec_test_set_inner(pointer(dict(_opspec.cuda_sim_handlers())["relu"], None))
        jax.ffi.register_ffi_target("opspec_test_older_api", jax.ffi.pycapsule(shim.opspec_test_older_api), platform="cpu")
        x = np.arange(-4, 4, dtype=np.float32)
        relu = jax.ffi.ffi_call("opspec_test_older_api", jax.ShapeDtypeStruct(x.shape, x.dtype))
        print("devices", opspec.cuda_sim_device_count())
        try:
            np.testing.assert_array_equal(relu(x), np.maximum(x, 0))
            print("ran")
        except Exception as e:
            print("error:", e)
        """)
    env = dict(os.environ, JAX_PLATFORMS="cpu", XLA_FLAGS=f"--xla_force_host_platform_device_count={devices}")
    r = subprocess.run([sys.executable, "-c", script, str(OLDER_FFI_SHIM)], env=env, capture_output=True, text=True)
    assert f"devices {devices}" in r.stdout, r.stdout + r.stderr
    if devices == 1:
        assert "ran" in r.stdout, r.stdout + r.stderr
    else:
        assert (
            "error: UNIMPLEMENTED: opspec relu: there are 3 simulated GPUs, and the XLA FFI of the jaxlib in use"
            in r.stdout
        ), r.stdout
        assert "has no XLA_FFI_DeviceOrdinal_Get" in r.stdout


# Three shipped ops, each broken the way CUDA kernels break: a tree reduction without
# its loop barrier (threads race), a grid that rounds down instead of up (the last
# partial block never runs), a barrier after an early return (the last block's early
# threads never reach it, which on a GPU hangs or corrupts).
MUTANTS = {
    "block_sum": (
        "        if (tx < stride) shared[tx] += shared[tx + stride];\n        __syncthreads();\n",
        "        if (tx < stride) shared[tx] += shared[tx + stride];\n",
    ),
    "abs_two_pass": ("  - name: root\n    launch: [n]\n", "  - name: root\n    grid: [n / 256]\n    block: [256]\n"),
    "spike_reset": (
        "      if (i < n) spikes[i] = V[i] >= V_th[0];\n",
        "      if (i >= n) return;\n      __syncthreads();\n      spikes[i] = V[i] >= V_th[0];\n",
    ),
}


register_tree_specs(__name__, {name: shipped_spec_edited(name, old, new) for name, (old, new) in MUTANTS.items()})


@pytest.mark.slow
def test_broken_kernels_fail_the_gpu_suite(tree_build):
    """Break three shipped ops in a copy of the project (the session's tree_build,
    builds.py), build, and run test_gpu.py on the simulator over them: every broken op
    fails, each the way it broke."""
    project, build = tree_build
    env = dict(os.environ, PYTHONPATH=str(build / "python"))
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-m",
            "cuda_sim",
            "-rf",
            # The broken ops' cases only: the copy's other ops (other modules' specs) have
            # no reference in cases.py.
            *(
                f"tests/python/test_gpu.py::test_op_on_gpu_matches_numpy[cuda_sim-{name}-{dtype}-{mode}]"
                for name in MUTANTS
                for dtype in ("f32", "f64")
                for mode in ("eager", "jit")
            ),
            "tests/python/test_gpu.py::test_shared_memory_block_sum",
            "tests/python/test_gpu.py::test_two_kernel_pipelines",
        ],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
    )
    out = r.stdout + r.stderr
    assert r.returncode == 1, out[-6000:]
    failed = {line.split("::")[1].split(" ")[0] for line in out.splitlines() if line.startswith("FAILED ")}
    for name in MUTANTS:
        for dtype in ("f32", "f64"):
            for mode in ("eager", "jit"):
                assert f"test_op_on_gpu_matches_numpy[cuda_sim-{name}-{dtype}-{mode}]" in failed, (name, out[-6000:])
    assert {"test_shared_memory_block_sum[cuda_sim]", "test_two_kernel_pipelines[cuda_sim]"} <= failed
    # How each broke: wrong sums; NaN where the missing block should have written; and
    # the divergent barrier, named with the op, the kernel and the spec line.
    assert "Mismatched elements" in out
    assert "opspec spike_reset: simulated CUDA kernel 'detect' failed: barrier divergence" in out
    assert "__syncthreads() at specs/spike_reset.yaml:" in out
