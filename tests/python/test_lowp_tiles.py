"""float16 tiles (runtime/include/opspec/lowp.h, generator/plan/tiles.c): where a body
touches its arrays only at the launch index, a float16 variant runs the float32 kernel on
stack tiles that F16C widens and narrows. Its results must be the float32 kernel's
values rounded once to float16, bit for bit. Checked on sizes that end
in a partial tile, on calls cut into chunks for threads (chunk starts that are not tile
starts), for shipped ops and for a user's op whose int32 and float32 arrays move with the
tile; and an op that reads its float16 output back keeps the in-loop conversions, whose
rounding at each store differs."""

import pathlib

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import opspec

ROOT = pathlib.Path(__file__).resolve().parents[2]
LOW_THRESHOLD = 2**14  # so that the calls below run in chunks on every thread


def same_bits(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    nan_got, nan_want = np.isnan(got.astype(np.float32)), np.isnan(want.astype(np.float32))
    np.testing.assert_array_equal(nan_got, nan_want)
    g, w = got.view(np.uint16)[~nan_got], want.view(np.uint16)[~nan_want]
    bad = np.flatnonzero(g != w)
    assert bad.size == 0, f"{bad.size} of {g.size} differ, first at {bad[:5]}: got {g[bad[:5]]} want {w[bad[:5]]}"


def half_data(rng, n):
    """Random float16 over its whole range of patterns, with specials."""
    x = rng.integers(0, 1 << 16, size=n, dtype=np.uint32).astype(np.uint16).view(np.float16).copy()
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 6e-8, -6e-8, 65504.0], np.float16)
    x[: min(n, 8)] = special[: min(n, 8)]
    return x


@pytest.fixture
def low_threshold():
    before = opspec.parallel_threshold()
    opspec.set_parallel_threshold(LOW_THRESHOLD)
    opspec.set_cpu_pool("opspec")
    yield
    opspec.set_parallel_threshold(before)


def test_shipped_element_wise_ops_tile_and_the_others_do_not():
    """The generated float16 variant of each element-wise op is a tile loop over its
    float32 kernel; row-wise ops and ops that index otherwise convert in their loop."""
    for op in ["add", "relu", "scale", "sigmoid", "silu", "gelu_tanh"]:
        text = (ROOT / "generated" / "ops" / f"{op}_cpu.c").read_text()
        assert f"static void opspec_{op}_cpu_float16(" in text, op
        assert f"opspec_{op}_cpu_float32(&opspec_tile, 0, opspec_n);" in text, op
    for op in ["rms_norm", "softmax", "rope", "embedding_bag", "layer_norm"]:
        text = (ROOT / "generated" / "ops" / f"{op}_cpu.c").read_text()
        assert "opspec_tile" not in text, op
        assert f"#define OPSPEC_CPU_VARIANT opspec_{op}_cpu_float16" in text, op


@pytest.mark.parametrize("n", [1, 511, 513, 4099, 600_001])
def test_tiled_shipped_ops_equal_float32_rounded_once(rng, low_threshold, n):
    x, y = half_data(rng, n), half_data(rng, n)
    s = np.array([1.7], np.float16)
    xf, yf = jnp.asarray(x, jnp.float32), jnp.asarray(y, jnp.float32)
    before = opspec._opspec.parallel_stats()
    same_bits(jax.jit(opspec.ops.add)(x, y), (xf + yf).astype(jnp.float16))
    same_bits(jax.jit(opspec.ops.scale)(x, s), (xf * jnp.float32(s[0])).astype(jnp.float16))
    same_bits(opspec.ops.relu(x), jnp.where((xf > 0) | jnp.isnan(xf), xf, 0.0).astype(jnp.float16))
    # sigmoid's float32 kernel against the float16 variant: the same floats, rounded once
    got = np.asarray(opspec.ops.sigmoid(x))
    same_bits(got, np.asarray(opspec.ops.sigmoid(np.asarray(x, np.float32))).astype(np.float16))
    if n == 600_001 and opspec._opspec.cpu_threads() > 1:
        loops, chunks = (a - b for a, b in zip(opspec._opspec.parallel_stats(), before))
        assert loops >= 4 and chunks > 4 * 16, "the large calls did not run in chunks"


def test_a_users_tiled_op_moves_its_other_arrays_with_the_tile(rng, reading_package):
    import reading

    before = reading.parallel_threshold()
    reading.set_parallel_threshold(LOW_THRESHOLD)
    try:
        for n in [3, 512, 1025, 300_007]:
            x = (rng.standard_normal(n) * 4).astype(np.float16)
            keep = rng.integers(0, 2, size=n).astype(np.int32)
            g = np.array([1.3, -0.7], np.float16)
            out, wide = jax.jit(reading.ops.gated_gain)(x, keep, g)
            # the float32 variant on the widened inputs: what the loop computes in float
            out32, wide32 = reading.ops.gated_gain(x.astype(np.float32), keep, g.astype(np.float32))
            same_bits(out, np.asarray(out32).astype(np.float16))
            np.testing.assert_array_equal(np.asarray(wide), np.asarray(wide32))
            # and NumPy, independently: keep picks, g's two elements reach every tile
            v = x.astype(np.float32) * np.float32(g[0]) + np.float32(g[1])
            np.testing.assert_allclose(np.asarray(wide), v, rtol=1e-6, atol=1e-6)
            assert np.all(np.asarray(out)[keep == 0] == 0)
            np.testing.assert_allclose(np.asarray(out, np.float32)[keep != 0], v[keep != 0], rtol=1e-3, atol=1e-3)
    finally:
        reading.set_parallel_threshold(before)
    generated = "\n".join(p.read_text() for p in reading_package.parent.rglob("gated_gain_cpu.c"))
    assert "opspec_tile.keep.data = (const int32_t *)opspec_args->keep.data + opspec_at;" in generated
    assert "opspec_float16_widen_tile(g_whole, opspec_args->g.data, 2);" in generated


def test_an_op_that_reads_its_float16_output_back_converts_in_its_loop(rng, reading_package):
    import reading

    x = (rng.standard_normal(5000) * 100).astype(np.float16)
    got = reading.ops.read_back(x)
    x32 = x.astype(np.float32)
    stored = (x32 * np.float32(0.1)).astype(np.float16).astype(np.float32)  # y[i] = x / 10, in float16
    same_bits(got, (stored * np.float32(10)).astype(np.float16))
    # which a float tile would not give: it keeps x / 10 in float
    tiled = (x32 * np.float32(0.1) * np.float32(10)).astype(np.float16)
    assert np.count_nonzero(np.asarray(got) != tiled) > 100
    generated = "\n".join(p.read_text() for p in reading_package.parent.rglob("read_back_cpu.c"))
    assert generated and "opspec_tile" not in generated
