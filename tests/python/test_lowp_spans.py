"""float16 row spans (runtime/include/opspec/lowp.h, generator/plan/spans.c): where a
2-D body reads and writes its float16 arrays only as slices `a[base + j]` of its rows,
the float16 variant widens each input's span over a block of rows once, runs the rows
on floats, and narrows each output's span once. Its results must be what the in-loop
form gives: each element widened exactly, the body computed in float, each stored value
rounded once, i.e. the float32 kernel's values on the widened inputs rounded once to
float16, bit for bit. Checked for the shipped `rope` and a user's op, on rows that fit
many to a block, rows too long for any span (converted in their loop), calls cut into
chunks for threads, and an op whose stores do not follow one another (every row falls
back)."""

import pathlib

import jax
import numpy as np
import pytest
from test_lowp_tiles import LOW_THRESHOLD, low_threshold, same_bits  # noqa: F401 (a fixture)

import opspec

ROOT = pathlib.Path(__file__).resolve().parents[2]


def half_normal(rng, shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float16)


def test_rope_float16_runs_on_spans_and_the_1d_ops_do_not():
    text = (ROOT / "generated" / "ops" / "rope_cpu.c").read_text()
    assert "#define OPSPEC_CPU_SPANS   1" in text
    assert "opspec_span_read(&opspec_x_next, i * dim + half, half);" in text
    assert "opspec_span_narrow(out, opspec_out_span, opspec_out_at);" in text
    for op in ["rms_norm", "softmax", "stdp_update", "add", "embedding_bag"]:
        assert "OPSPEC_CPU_SPANS" not in (ROOT / "generated" / "ops" / f"{op}_cpu.c").read_text(), op


# [..., seq, heads, dim]: small rows many to a block; one head vector; dim 4096, whose
# row (4096 elements of x) is more than x's share of the span floats (8192 / 4).
@pytest.mark.usefixtures("low_threshold")
@pytest.mark.parametrize("shape", [(1, 64, 8, 128), (3, 5, 7, 6), (1, 1, 1, 2), (2, 3, 2, 4096), (4, 96, 16, 64)])
def test_rope_float16_equals_float32_rounded_once(rng, shape):
    seq, half = shape[-3], shape[-1] // 2
    x = half_normal(rng, shape)
    cosines, sines = half_normal(rng, (seq, half)), half_normal(rng, (seq, half))
    before = opspec._opspec.parallel_stats()
    got = jax.jit(opspec.ops.rope)(x, cosines, sines)
    wide = [np.asarray(a, np.float32) for a in (x, cosines, sines)]
    same_bits(got, np.asarray(opspec.ops.rope(*wide)).astype(np.float16))
    # and NumPy, independently of opspec's float32 kernel
    a, b = wide[0][..., :half], wide[0][..., half:]
    c, s = wide[1][:, None, :], wide[2][:, None, :]
    want = np.concatenate([a * c - b * s, b * c + a * s], axis=-1)
    np.testing.assert_allclose(np.asarray(got, np.float32), want, rtol=2e-3, atol=2e-3)
    if x.size > 4 * LOW_THRESHOLD and opspec._opspec.cpu_threads() > 1:
        loops, chunks = (a - b for a, b in zip(opspec._opspec.parallel_stats(), before))
        assert loops >= 1 and chunks > 1, "the large call did not run in chunks"


@pytest.mark.parametrize("shape", [(1, 1), (7, 3), (2000, 37), (5, 5000)])
def test_a_users_row_op_on_spans(rng, reading_package, shape):
    import reading

    rows, cols = shape
    x, w = half_normal(rng, shape, 3.0), half_normal(rng, (cols,))
    shift = rng.standard_normal(rows).astype(np.float32)
    before = reading.parallel_threshold()
    reading.set_parallel_threshold(LOW_THRESHOLD)
    try:
        got = jax.jit(reading.ops.scaled_rows)(x, w, shift)
    finally:
        reading.set_parallel_threshold(before)
    wide = reading.ops.scaled_rows(x.astype(np.float32), w.astype(np.float32), shift)
    same_bits(got, np.asarray(wide).astype(np.float16))
    want = x.astype(np.float32) * w.astype(np.float32) + shift[:, None]
    np.testing.assert_allclose(np.asarray(got, np.float32), want, rtol=2e-3, atol=2e-2)
    generated = "\n".join(p.read_text() for p in reading_package.parent.rglob("scaled_rows_cpu.c"))
    assert "opspec_span_read(&opspec_x_next, at, cols);" in generated
    assert "opspec_span_read(&opspec_w_next, 0, cols);" in generated
    assert "opspec_shift" not in generated  # the float32 array is read as it is


def test_rows_whose_stores_do_not_follow_one_another_convert_in_their_loop(rng, reading_package):
    import reading

    generated = "\n".join(p.read_text() for p in reading_package.parent.rglob("swap_halves_cpu.c"))
    assert "#define OPSPEC_CPU_SPANS" in generated  # planned on spans; at run time no block forms
    for rows, half in [(1, 1), (300, 8), (3, 2000)]:
        x = half_normal(rng, (rows, 2, half))
        got = np.asarray(jax.jit(reading.ops.swap_halves)(x))
        np.testing.assert_array_equal(got.view(np.uint16), x[:, ::-1, :].view(np.uint16))
