"""opspec.testing.check_op catching a user's mistakes (issues 30 and 31), on the test-only
package `checking` (checking_ops.py) and the reading ops (reading_ops.py): a false
`reduce: {n: max}` and false `independent:` on every seed, an op that drops NaN, an
output column a pair loop leaves unwritten, and derivative formulas off by a factor 1.2
in float32, bfloat16 and float16 on six kinds of op."""

import importlib
import sys

import checking_ops
import jax
import ml_dtypes
import numpy as np
import pytest

from opspec.testing import check_op, with_derivatives

DTYPES = {"float32": np.float32, "bfloat16": ml_dtypes.bfloat16, "float16": np.float16}
DERIVATIVE_OPS = sorted(checking_ops.DERIVATIVES)


@pytest.fixture(scope="module")
def checking(tmp_path_factory):
    """The package `checking`, built once for this module and imported."""
    folder = checking_ops.build(tmp_path_factory.mktemp("checking"))
    sys.path.insert(0, str(folder))
    return importlib.import_module("checking")


# ---- split: a false declaration fails on every seed ------------------------------------


def test_a_false_reduce_max_fails_on_every_seed(checking):
    """The audit's case: an argmax claiming `reduce: {n: max}`, cut along an extent of 3
    (3 of 20 seeds caught it), and on arguments check_op draws."""
    for seed in range(20):
        x = np.random.default_rng(seed).uniform(-2, 2, (4, 3))
        for args in [(x,), ()]:
            with pytest.raises(
                AssertionError,
                match=r"checking.ops.argmax_claimed: split n \(max\): output 'out'.*"
                r"`reduce: \{n: max\}` is false",
            ):
                check_op(checking.ops.argmax_claimed, *args, seed=seed)


@pytest.mark.parametrize("name", ["cumsum_claimed", "stencil3_claimed", "softmax_claimed"])
def test_a_false_independence_fails_on_every_seed(name, reading_package):
    import reading

    for seed in range(20):
        x = np.random.default_rng(seed).uniform(-2, 2, (2, 3) if name == "softmax_claimed" else (3,))
        with pytest.raises(AssertionError, match=rf"reading.ops.{name}: split n: .*`independent: \[n\]` is false"):
            check_op(getattr(reading.ops, name), x, seed=seed)


def test_a_true_reduce_max_passes_with_the_extreme_in_each_piece(rng):
    import opspec

    report = check_op(opspec.ops.max, rng.uniform(-2, 2, 7), reference=lambda x: np.max(x, keepdims=True), nan=False)
    assert "split ... (max)" in report.ran


# ---- NaN ------------------------------------------------------------------------------


def test_an_op_that_drops_nan_fails(checking, rng):
    x = rng.uniform(-2, 2, (4, 5))
    with pytest.raises(
        AssertionError, match=r"(?s)checking.ops.relu_dropping: nan x .*output 'y' differs:.*nan location mismatch"
    ):
        check_op(checking.ops.relu_dropping, x, reference=lambda x: np.maximum(x, 0))
    # Declared: left out, and the report says so.
    report = check_op(checking.ops.relu_dropping, x, reference=lambda x: np.maximum(x, 0), nan=False)
    assert "nan=False" in report.not_applicable["nan"]
    # NaN kept, as jnp.maximum: the check runs and passes.
    report = check_op(checking.ops.relu_keeping, x, reference=lambda x: np.maximum(x, 0))
    assert "nan x" in report.ran
    y = np.asarray(checking.ops.relu_keeping(np.array([np.nan, -1.0, 2.0])))
    np.testing.assert_array_equal(np.isnan(y), [True, False, False])


def test_nan_without_a_reference_is_skipped(checking, rng):
    report = check_op(checking.ops.relu_keeping, rng.uniform(-2, 2, 5))
    assert "reference=" in report.skipped["nan x"]


# ---- unwritten outputs ----------------------------------------------------------------


def test_an_unwritten_column_fails_naming_the_output_and_index(checking, rng):
    x = rng.uniform(-2, 2, (3, 5))  # d odd: the pair loop never writes column 4
    with pytest.raises(
        AssertionError,
        match=r"checking.ops.pairs_unwritten: unwritten cpu: output 'y' element \[0, 4\] was not written "
        r"by the kernel \(3 of 15 elements\)",
    ):
        check_op(checking.ops.pairs_unwritten, x)


def test_an_unwritten_bfloat16_column_fails(checking, rng):
    """The CPU kernel of bfloat16 stores each output element as bfloat16 in the loop (the
    handler makes no float copy): the fill of the 2-byte buffer reaches it."""
    x = rng.uniform(-2, 2, (2, 3)).astype(ml_dtypes.bfloat16)
    with pytest.raises(AssertionError, match=r"unwritten cpu: output 'y' element \[0, 2\] was not written"):
        check_op(checking.ops.pairs_unwritten, x)


def test_the_fill_is_a_byte(checking):
    with pytest.raises(ValueError, match=r"set_output_fill: expected a byte 0..255 or -1 \(off\), got 256"):
        checking._opspec.set_output_fill(256)


def test_a_fully_written_output_passes(checking, rng):
    x = rng.uniform(-2, 2, (3, 4))
    report = check_op(
        checking.ops.pairs_unwritten,
        x,
        reference=lambda x: np.stack([-x[:, 1::2], x[:, 0::2]], axis=-1).reshape(x.shape),
    )
    assert {"unwritten cpu", "reference"} <= set(report.ran)


# ---- derivatives in the op's own precision ------------------------------------------------


@pytest.mark.parametrize("dtype", sorted(DTYPES))
@pytest.mark.parametrize("name", DERIVATIVE_OPS)
def test_derivatives_in_the_ops_own_precision(name, dtype, checking, rng):
    """The true formulas pass in the dtype; a formula scaled by 1.2 fails there (each
    input's in one of the dtypes)."""
    op = getattr(checking.ops, name)
    args = checking_ops.example(name, rng, DTYPES[dtype])
    report = check_op(op, *args)
    for input, _ in checking_ops.DERIVATIVES[name].items():
        assert f"grad {input} in {dtype}" in report.ran, report
        assert f"grad {input}" in report.ran, report  # and in float64, to order 2
    inputs = list(checking_ops.DERIVATIVES[name].items())
    input, (kind, formula) = inputs[sorted(DTYPES).index(dtype) % len(inputs)]
    wrong = with_derivatives(op, **{input: {kind: f"1.2 * ({formula})"}})
    with pytest.raises(AssertionError, match=rf"checking.ops.{name}: grad {input} in {dtype}: .*finite differences"):
        check_op(wrong, *args)


def test_rtol_and_atol_reach_the_derivative_checks(checking, rng):
    args = checking_ops.example("silu", rng, ml_dtypes.bfloat16)
    ((kind, formula),) = checking_ops.DERIVATIVES["silu"].values()
    wrong = with_derivatives(checking.ops.silu, x={kind: f"1.2 * ({formula})"})
    with pytest.raises(AssertionError, match=r"rtol=0\.06"):
        check_op(wrong, *args)
    report = check_op(wrong, *args, rtol=0.5, atol=0.5)  # loose enough for a 20% error
    assert {"grad x in bfloat16", "grad x"} <= set(report.ran)


def test_without_x64_the_reference_gives_the_finite_differences(checking, rng):
    """No float64 evaluation of the op: the reference in float64 (NumPy), else the op in
    float32."""
    name = "rms_norm"
    args = checking_ops.example(name, rng, ml_dtypes.bfloat16)
    reference = lambda *a, **k: checking_ops.reference(name, a, k)
    kind, formula = checking_ops.DERIVATIVES[name]["x"]
    wrong = with_derivatives(checking.ops.rms_norm, x={kind: f"1.2 * ({formula})"})
    jax.config.update("jax_enable_x64", False)
    try:
        report = check_op(checking.ops.rms_norm, *args, reference=reference, rtol=0.05, atol=0.02)
        assert {"grad x in bfloat16", "grad w in bfloat16"} <= set(report.ran)
        assert "jax_enable_x64" in report.skipped["grad x"]
        with pytest.raises(AssertionError, match=r"grad x in bfloat16: .*finite differences of the reference"):
            check_op(wrong, *args, reference=reference, rtol=0.05, atol=0.02)
        with pytest.raises(AssertionError, match=r"grad x in bfloat16: .*finite differences of the op in float32"):
            check_op(wrong, *args)
    finally:
        jax.config.update("jax_enable_x64", True)
