"""`halo:` (docs/spec.md, "halo"; docs/transformations.md, "Halo"): stencils sharded along
their halo dims exchange edges with their neighbours instead of gathering, and equal the
unsharded call bitwise. The 4-device checks run in a fresh process (halo_check.py), since
the device count is fixed when JAX starts."""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest


@pytest.fixture(scope="module")
def halos_package(tmp_path_factory):
    import halo_ops

    folder = halo_ops.build(tmp_path_factory.mktemp("halos"))
    sys.path.insert(0, str(folder))
    return folder


def test_the_op_record_carries_the_radii(halos_package):
    import halos

    assert halos.ops._op_stencil3.halo == {"n": (1, 1)}
    assert halos.ops._op_laplace5.halo == {"m": (1, 1), "n": (1, 1)}
    assert halos.ops._op_causal3.halo == {"n": (2, 0)}


@pytest.mark.parametrize("name", ["stencil3", "causal3", "smooth_edges"])
def test_unsharded_calls_match_numpy(halos_package, rng, name):
    import halo_ops
    import halos

    x = rng.standard_normal(33)
    np.testing.assert_allclose(np.asarray(getattr(halos.ops, name)(x)), halo_ops.reference(name, x), rtol=1e-14)


@pytest.mark.parametrize("shardy", ["true", "false"])
def test_sharded_stencils_exchange_edges_and_match(rng, halos_package, stencils_package, shardy):
    """With Shardy (the default) and with GSPMD: both partitioners call the same partition."""
    here = Path(__file__).parent
    paths = [str(halos_package), str(stencils_package), str(here), os.environ.get("PYTHONPATH", "")]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(paths), JAX_USE_SHARDY_PARTITIONER=shardy)
    r = subprocess.run(
        [sys.executable, str(here / "halo_check.py"), str(int(rng.integers(1 << 31)))],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.strip().endswith("0 failures")


@pytest.mark.parametrize(
    "name",
    ["stencil3", "laplace5", "causal3", "anticausal3", "smooth_edges", "diff_energy", "causal3_linear", "upwind2"],
)
def test_check_op_passes_true_declarations(halos_package, name):
    import halos

    from opspec.testing import check_op

    report = check_op(getattr(halos.ops, name), seed=3)
    assert any(r.startswith("halo") for r in report.ran), report


@pytest.mark.parametrize(
    "name, why",
    [("stencil3_narrow", r"halo: \{n: \[0, 0\]\}` is false"), ("ramp", r"halo: \{n: \[1, 0\]\}` is false")],
)
def test_check_op_catches_false_declarations(halos_package, name, why):
    import halos

    from opspec.testing import check_op

    with pytest.raises(AssertionError, match=why):
        check_op(getattr(halos.ops, name))


EXAMPLE = Path(__file__).parents[2] / "examples" / "stencils"


@pytest.fixture(scope="module")
def stencils_package(tmp_path_factory):
    """examples/stencils built as its CMakeLists.txt says."""
    import halo_ops

    folder = halo_ops.build_example(tmp_path_factory.mktemp("stencils"))
    sys.path.insert(0, str(folder))
    return folder


@pytest.mark.parametrize("name", ["stencil3", "laplace5", "laplace7", "causal_conv"])
def test_example_stencils_pass_check_op(stencils_package, name):
    import stencils

    from opspec.testing import check_op

    report = check_op(getattr(stencils.ops, name), seed=5)
    assert any(r.startswith("halo") for r in report.ran), report


def test_example_heat_loop_stays_sharded(stencils_package):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(stencils_package), os.environ.get("PYTHONPATH", "")]))
    env["XLA_FLAGS"] = "--xla_force_host_platform_device_count=4"
    r = subprocess.run([sys.executable, str(EXAMPLE / "heat.py")], env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "4 devices" in r.stdout and "all-gather in the compiled loop: False" in r.stdout, r.stdout


def test_two_processes_exchange_edges_over_gloo(rng, halos_package):
    """4 devices in 2 processes on loopback: the edges between devices 1 and 2 cross
    processes, as collective-permutes over gloo."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    here = Path(__file__).parent
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(here), os.environ.get("PYTHONPATH", "")]))
    env.pop("XLA_FLAGS", None)  # the device count comes from jax_num_cpu_devices
    seed = str(int(rng.integers(1 << 31)))
    worker = [sys.executable, str(here / "halo_multiprocess_worker.py")]
    procs = [
        subprocess.Popen(
            [*worker, str(i), str(port), seed, str(halos_package)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for i in range(2)
    ]
    outputs = []
    try:
        for p in procs:
            outputs.append(p.communicate(timeout=300)[0])
    finally:
        for p in procs:  # never leave one behind
            if p.poll() is None:
                p.kill()
                p.communicate()
    text = "\n".join(outputs)
    assert all(p.returncode == 0 for p in procs), text
    assert text.count("equal True, all-gather False, collective-permute True") == 8, text


def test_an_empty_input_is_not_said_to_be_gathered(halos_package):
    """A halo dim of extent 0 is not split (there is no block to exchange edges of), but
    gathering an input with no elements moves nothing: no ShardingWarning reason for it,
    where a 4-element one over 4 devices with radius 2 really is gathered and says why."""
    from types import SimpleNamespace

    import halos
    from jax.sharding import PartitionSpec as P

    from opspec import _sharding

    op = halos.ops._op_causal3
    sharded = SimpleNamespace(spec=P("d"), mesh=SimpleNamespace(shape={"d": 4}))
    reasons = {}
    for n in (0, 4):
        r = _sharding.rule(op, [(n,)], [(n,)], 0, (0,), 4, (4,))
        reasons[n] = _sharding.gathers(op, r, [sharded], _sharding.axes_of(r, [sharded]))
    assert reasons[0] == []
    assert (
        len(reasons[4]) == 1
        and "its halo (radius 2) is wider than a block of it (4 over 4 devices gives 1)" in reasons[4][0]
    )


def test_derived_transpose_composes_with_vmap_and_with_derivatives(halos_package, rng):
    """`linear: halo` on one device: vmap of grad and grad of vmap of the derived
    transpose equal NumPy's A^T A x (causal3's transpose is anticausal3), and
    with_derivatives tries `{"linear": "halo"}` on an op that names its transpose."""
    import halos
    import jax
    from halo_ops import reference

    from opspec.testing import with_derivatives

    xs = rng.standard_normal((3, 17))
    want = np.stack([reference("anticausal3", reference("causal3", x)) for x in xs])
    trial = with_derivatives(halos.ops.causal3, x={"linear": "halo"})
    for op in (halos.ops.causal3_linear, trial):
        loss = lambda x, _op=op: 0.5 * (_op(x) ** 2).sum()  # noqa: E731
        np.testing.assert_allclose(np.asarray(jax.vmap(jax.grad(loss))(xs)), want, rtol=1e-12, atol=1e-12)
        batched = jax.grad(lambda xs, _op=op: 0.5 * (jax.vmap(_op)(xs) ** 2).sum())(xs)
        np.testing.assert_allclose(np.asarray(batched), want, rtol=1e-12, atol=1e-12)
    with pytest.raises(TypeError, match="linear takes 'halo'"):
        with_derivatives(halos.ops.causal3, x={"linear": "yes"})
