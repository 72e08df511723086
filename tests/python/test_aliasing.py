"""input_output_aliases from the spec, and buffer donation under jit."""

import jax
import jax.numpy as jnp
import numpy as np
from cases import CASES, reference

import opspec


def test_aliased_op_gives_correct_results_eager_and_jit(rng):
    args, _ = CASES["exp_trace"][0](rng, np.float32, 1000)
    before = np.array(args[0])
    want = reference("exp_trace", args, {}, np.float32)
    trace = jnp.asarray(args[0])
    for fn in (opspec.ops.exp_trace, jax.jit(opspec.ops.exp_trace)):
        np.testing.assert_allclose(fn(trace, *args[1:]), want[0], rtol=2e-5, atol=2e-5)
    # Without donation the caller's array is untouched: XLA copied it for the alias.
    np.testing.assert_array_equal(np.asarray(trace), before)


def test_donated_buffer_is_updated_in_place(rng):
    # A buffer XLA owns: on CPU, jnp.asarray may borrow NumPy's memory, which can never
    # be donated, and then XLA copies instead.
    trace = jax.jit(lambda a: a * 1.0)(rng.random(4096))
    spikes = jnp.asarray(rng.random(4096) < 0.1, jnp.float64)
    tau_inv = jnp.array([0.05])
    expected = np.asarray(trace) * np.exp(-0.05) + np.asarray(spikes)
    step = jax.jit(opspec.ops.exp_trace, donate_argnums=0)
    pointer = trace.unsafe_buffer_pointer()
    out = step(trace, spikes, tau_inv)
    np.testing.assert_allclose(out, expected, rtol=1e-12)
    assert trace.is_deleted()
    assert out.unsafe_buffer_pointer() == pointer


def test_lowered_module_carries_the_alias():
    x = jnp.ones(16)
    text = jax.jit(opspec.ops.exp_trace).lower(x, x, jnp.ones(1)).as_text()
    assert "output_operand_aliases" in text
