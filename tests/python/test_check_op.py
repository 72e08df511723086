"""opspec.testing.check_op over every shipped op (float64, jax_enable_x64 from conftest),
and check_op catching what it is meant to catch."""

import dataclasses

import jax
import numpy as np
import pytest
from cases import CASES, reference

import opspec
from opspec import _runtime, _targets
from opspec.testing import check_op, op_record

# The spikes of lif_surrogate carry a surrogate gradient, not the step function's zero
# that finite differences see: check the derivatives of V_out only.
GRAD_OUTPUTS = {"lif_surrogate": ("V_out",)}
SIZE = 6
# Shipped ops propagate NaN as their references do (issue 31 F3), except where a spec
# says otherwise: the example ML row ops with fastmath: (docs/spec.md, "The example ML
# ops") give an unspecified row for a NaN in it, so they declare check_op(nan=False).
NAN_UNSPECIFIED = {"layer_norm", "rms_norm", "softmax", "softmax_cross_entropy"}


def case(name, rng, n=SIZE):
    return CASES[name][0](rng, np.float64, n)


@pytest.mark.parametrize("name", sorted(CASES))
def test_every_shipped_op_conforms(name, rng):
    args, attrs = case(name, rng)
    report = check_op(
        getattr(opspec.ops, name),
        *args,
        make_args=lambda r: case(name, r)[0],
        reference=lambda *a, **k: reference(name, a, k, np.float64),
        grad_outputs=GRAD_OUTPUTS.get(name),
        nan=name not in NAN_UNSPECIFIED,
        **attrs,
    )
    print(report)
    assert not report.skipped, report  # the idiom of docs/gradients.md: nothing left unchecked
    assert "jit" in report.ran and "reference" in report.ran
    # Every backend the op has here is compared with its CPU kernel.
    simulated = ("opspec", name, "cuda_sim") in _targets.TARGETS
    assert ("backend cuda_sim" in report.ran) == simulated
    assert simulated or "backend cuda_sim" in report.not_applicable
    assert sum(r.startswith("vmap") for r in report.ran) == 2 ** len(args) - 1
    # Every element of every output written, on every backend.
    record = op_record(getattr(opspec.ops, name))
    if len(record.aliases) < len(record.outputs):
        assert "unwritten cpu" in report.ran and ("unwritten cuda_sim" in report.ran) == simulated
    # NaN in each float input gives the reference's NaN.
    for spec, x in zip(record.inputs, args):
        if x.dtype.kind == "f" and name not in NAN_UNSPECIFIED:
            assert f"nan {spec.name}" in report.ran
    for spec, x in zip(record.inputs, args):
        if x.dtype.kind == "f":
            declared = spec.name in record.derivatives
            assert (f"grad {spec.name}" if declared else f"grad {spec.name} (undeclared: raises OpError)") in report.ran
    if record.aliases:
        assert any(r.startswith("alias") for r in report.ran)
    # Each declared independent: or reduce: symbol held up when the inputs were cut along it.
    for symbol in (*record.independent, *record.reduce):
        assert any(r.startswith(f"split {symbol}") for r in report.ran), (symbol, report.ran)


def test_every_spec_is_checked():
    assert set(opspec.ops.__all__) == set(CASES)


def test_random_arguments_from_the_spec():
    report = check_op(opspec.ops.matvec)
    assert {"jit", "dtype A", "rank x", "symbol cols", "grad A", "grad x", "zero-size rows"} <= set(report.ran)
    assert "reference" in report.skipped
    # An attribute's default comes from the op function.
    assert "grad x" in check_op(opspec.ops.leaky_relu).ran


def test_contents_from_the_specs_checks():
    """No arguments given: csr_matvec's and csr_rmatvec's random indices and indptr come
    from their `check:`s, valid CSR structure, so every check runs, derivatives too."""
    for seed in range(3):
        report = check_op(opspec.ops.csr_matvec, seed=seed)
        assert {"jit", "grad data", "grad x", "zero-size nnz", "vmap in_axes=(None, None, None, 0)"} <= set(report.ran)
        report = check_op(opspec.ops.csr_rmatvec, n=5, seed=seed)
        assert {"grad data", "grad y", "zero-size rows"} <= set(report.ran)


def test_the_documented_idiom_on_random_arguments():
    """docs/gradients.md's `assert not report.skipped`, with a reference and random
    arguments: an op without aliased outputs or a second input has nothing skipped."""
    for fn, ref in [(opspec.ops.sigmoid, lambda x: 1 / (1 + np.exp(-x))), (opspec.ops.add, np.add)]:
        report = check_op(fn, reference=ref)
        assert not report.skipped, report
        assert "alias" in report.not_applicable and "reference" in report.ran
        assert ("backend cuda_sim" in report.ran) == opspec.has_cuda_sim


@pytest.mark.skipif(not opspec.has_cuda_sim, reason="built without the CUDA simulator")
def test_a_cuda_kernel_that_disagrees_with_the_cpu_kernel_fails(monkeypatch):
    # relu's simulated target swapped for sigmoid's: same signature, other result. The
    # record carries no fingerprint, which sigmoid's handler would refuse as relu's.
    monkeypatch.setitem(_targets.TARGETS, ("opspec", "relu", "cuda_sim"), "opspec_sigmoid.cuda_sim")
    relu = dataclasses.replace(op_record(opspec.ops.relu), fingerprint="")
    with pytest.raises(
        AssertionError, match=r"opspec.ops.relu: backend cuda_sim \(against backend 'cpu'\): output 'out'"
    ):
        check_op(relu)


def test_a_missing_simulator_is_skipped_not_passed(monkeypatch):
    """A build without the simulator leaves the CUDA kernels unchecked: skipped, so the
    documented idiom fails and says why."""
    monkeypatch.delitem(_targets.TARGETS, ("opspec", "relu", "cuda_sim"), raising=False)
    monkeypatch.setitem(_targets.UNAVAILABLE, ("opspec", "cuda_sim"), "opspec was built without the CUDA simulator")
    report = check_op(opspec.ops.relu, reference=lambda x: np.maximum(x, 0), nan=True)
    assert "built without the CUDA simulator" in report.skipped["backend cuda_sim"]
    assert "backend cuda_sim" not in report.ran


def test_a_wrong_reference_fails(rng):
    args, _ = case("sigmoid", rng)
    with pytest.raises(AssertionError, match=r"opspec.ops.sigmoid: reference: output 'out' differs"):
        check_op(opspec.ops.sigmoid, *args, reference=lambda x: np.tanh(x))


def test_a_broken_derivative_fails(rng):
    record = op_record(opspec.ops.sigmoid)
    wrong = _runtime.Derivative("elementwise", {"out": lambda out, **_: out})  # should be out * (1 - out)
    broken = dataclasses.replace(record, derivatives={"x": wrong})
    args, _ = case("sigmoid", rng)
    with pytest.raises(AssertionError, match=r"grad x: the declared derivative of \(out\)"):
        check_op(broken, *args)


def test_a_transpose_inconsistent_with_the_op_fails(rng):
    record = op_record(opspec.ops.sum)
    wrong = _runtime.Derivative("transpose", {"x": lambda jnp, out_bar, x, **_: 2 * jnp.broadcast_to(out_bar, x.shape)})
    with pytest.raises(AssertionError, match=r"opspec.ops.sum: grad x"):
        check_op(dataclasses.replace(record, derivatives={"x": wrong}), *case("sum", rng)[0])


def test_float64_derivatives_are_skipped_without_x64_and_float32_ones_run(rng):
    args, _ = case("sigmoid", rng)
    jax.config.update("jax_enable_x64", False)
    try:
        report = check_op(opspec.ops.sigmoid, *[a.astype(np.float32) for a in args])
        # The declared derivative in float32, against finite differences of the op in float32.
        assert "grad x in float32" in report.ran
        wrong = _runtime.Derivative("elementwise", {"out": lambda out, **_: 1.2 * out * (1 - out)})
        broken = dataclasses.replace(op_record(opspec.ops.sigmoid), derivatives={"x": wrong})
        with pytest.raises(AssertionError, match=r"grad x in float32: .* finite differences of the op in float32"):
            check_op(broken, *[a.astype(np.float32) for a in args])
    finally:
        jax.config.update("jax_enable_x64", True)
    assert "jax_enable_x64" in report.skipped["grad x"]
    assert "jit" in report.ran
