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


# The ops that update a state array in place: each output that is the next state aliases
# the state input (output index: input index, as ffi_call's input_output_aliases).
STATE_OPS = {"exp_trace": {0: 0}, "exp_decay": {0: 0}, "lif": {0: 0}, "lif_surrogate": {0: 0}, "spike_reset": {1: 0}}


def test_state_ops_alias_their_state(rng):
    for name, pairs in STATE_OPS.items():
        args, attrs = CASES[name][0](rng, np.float32, 64)
        text = jax.jit(getattr(opspec.ops, name)).lower(*map(jnp.asarray, args)).as_text()
        assert "output_operand_aliases" in text, name
        single = name in ("exp_trace", "exp_decay")  # one result: no tuple index
        for out, inp in pairs.items():
            index = "[]" if single else f"[{out}]"
            assert f"output_tuple_indices = {index}, operand_index = {inp}" in text, (name, text)


def test_scan_over_lif_steps_copies_no_state(rng):
    # Without the alias XLA copies the op's V_out into the loop carry on every step.
    n = 1000
    V = jnp.asarray(rng.uniform(-75.0, -50.0, n).astype(np.float32))
    I_ext = jnp.asarray(rng.uniform(0.0, 5.0, n).astype(np.float32))
    params = [jnp.array([v], jnp.float32) for v in (0.05, -55.0, -70.0, 0.1)]

    def run(V):
        def step(V, _):
            V, spikes = opspec.ops.lif(V, I_ext, *params)
            return V, spikes.sum()

        return jax.lax.scan(step, V, None, length=1000)

    hlo = jax.jit(run, donate_argnums=0).lower(V).compile().as_text()
    copies = [line for line in hlo.splitlines() if f"f32[{n}]" in line and " copy(" in line]
    assert copies == [], copies
    V_end, counts = jax.jit(run)(V)
    V_ref = np.asarray(V)
    for _ in range(1000):  # the reference, step by step
        v = V_ref + np.float32(0.1) * (-(V_ref - np.float32(-70.0)) * np.float32(0.05) + np.asarray(I_ext))
        V_ref = np.where(v >= np.float32(-55.0), np.float32(-70.0), v).astype(np.float32)
    np.testing.assert_allclose(V_end, V_ref, rtol=1e-4, atol=1e-3)
