"""`independent:` and `reduce:` held to the truth on one device: opspec.testing.check_op
cuts the inputs along each declared symbol and compares the pieces' outputs with the
whole call (docs/spec.md, "independent"). Ops that read across a dim (reading_ops.py),
falsely declared independent, fail; the same ops undeclared, and the shipped ops, pass."""

import dataclasses
import re

import pytest
import reading_ops

import opspec
from opspec.testing import check_op, op_record

READING = sorted(reading_ops.SPECS)


@pytest.mark.parametrize("name", READING)
def test_check_op_refuses_a_false_independence(name, reading_package, rng):
    import reading

    x = rng.standard_normal(reading_ops.shape_of(name, 7))
    # Undeclared: right, and nothing to split.
    report = check_op(
        getattr(reading.ops, name), x, reference=lambda x: reading_ops.reference(name, x), seed=int(rng.integers(99))
    )
    assert "reference" in report.ran and "split" in report.not_applicable
    # Declared independent: caught, naming the op, the symbol and the output.
    with pytest.raises(AssertionError) as e:
        check_op(getattr(reading.ops, f"{name}_claimed"), x, reference=lambda x: reading_ops.reference(name, x))
    message = str(e.value)
    assert message.startswith(f"reading.ops.{name}_claimed: split "), message
    assert "is false and sharded calls would be wrong" in message, message
    if name == "with_norm":  # the reduction sits in the second output
        assert "output 'norm'" in message, message


@pytest.mark.parametrize("symbol", ["m", "n"])
def test_either_dim_of_a_2d_stencil(symbol, reading_package, rng):
    import reading

    record = dataclasses.replace(op_record(reading.ops.stencil5), independent=(symbol,))
    with pytest.raises(AssertionError, match=rf"split {symbol}: output 'y'"):
        check_op(record, rng.standard_normal((6, 5)))


def test_a_true_independence_passes(reading_package, rng):
    import reading

    x, y = rng.standard_normal((2, 4, 9))
    report = check_op(reading.ops.axpy, x, y, reference=lambda x, y, a: (a * x + y,), a=0.5)
    assert {"split ... dim 0", "split ... dim 1"} <= set(report.ran), report


def test_a_false_reduction_is_caught(rng):
    # running_stats' mean and std do not add up over pieces; max's maxima do not sum.
    x = rng.standard_normal(9)
    for op, reduce in ((opspec.ops.running_stats, {"n": "sum"}), (opspec.ops.max, {"...": "sum"})):
        record = dataclasses.replace(op_record(op), reduce=reduce)
        symbol, how = next(iter(reduce.items()))
        with pytest.raises(AssertionError, match=re.escape(f"split {symbol} ({how}): ") + ".*combined with sum"):
            check_op(record, x)
    # The declared ones hold: sum by sum, max by max, matvec's columns by sum.
    assert "split ... (sum)" in check_op(opspec.ops.sum, x).ran
    assert "split ... (max)" in check_op(opspec.ops.max, x).ran
    assert "split cols (sum)" in check_op(opspec.ops.matvec, rng.standard_normal((3, 9)), x).ran
