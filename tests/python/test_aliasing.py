"""input_output_aliases from the spec, and buffer donation under jit: which calls declare
the alias to XLA (docs/spec.md, `aliases`), the copies XLA makes in each pattern of use,
and the results in each against NumPy."""

import re

import jax
import jax.export
import jax.numpy as jnp
import numpy as np
import pytest
from cases import CASES, reference

import opspec
import opspec.export


def test_aliased_op_gives_correct_results_eager_and_jit(rng):
    args, _ = CASES["exp_trace"][0](rng, np.float32, 1000)
    before = np.array(args[0])
    want = reference("exp_trace", args, {}, np.float32)
    trace = jnp.asarray(args[0])
    for fn in (opspec.ops.exp_trace, jax.jit(opspec.ops.exp_trace)):
        np.testing.assert_allclose(fn(trace, *args[1:]), want[0], rtol=2e-5, atol=2e-5)
    # Without donation the caller's array is untouched: the call wrote a fresh output.
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


def test_lowered_module_carries_the_alias_where_the_input_is_donated():
    x = jnp.ones(16)
    donated = jax.jit(opspec.ops.exp_trace, donate_argnums=0).lower(x, x, jnp.ones(1)).as_text()
    assert "output_operand_aliases" in donated
    # Not donated: the argument's buffer is not the computation's to overwrite, so the
    # call writes a fresh output rather than have XLA copy the argument first.
    kept = jax.jit(opspec.ops.exp_trace).lower(x, x, jnp.ones(1)).as_text()
    assert "output_operand_aliases" not in kept


# The ops that update a state array in place: each output that is the next state aliases
# the state input (output index: input index, as ffi_call's input_output_aliases).
STATE_OPS = {"exp_trace": {0: 0}, "exp_decay": {0: 0}, "lif": {0: 0}, "lif_surrogate": {0: 0}, "spike_reset": {1: 0}}


def test_state_ops_alias_their_state(rng):
    for name, pairs in STATE_OPS.items():
        args, attrs = CASES[name][0](rng, np.float32, 64)
        donate = tuple(sorted(set(pairs.values())))
        text = jax.jit(getattr(opspec.ops, name), donate_argnums=donate).lower(*map(jnp.asarray, args)).as_text()
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


# ---- the copies XLA makes, pattern by pattern -------------------------------------------

N = 4096
STEPS = 100


def copies_of(hlo: str, shape: str) -> dict:
    """Copies of whole `shape` arrays in a compiled module's text: {"outside loops": k,
    "per step": k}, each copy instruction counted once where it runs; copies inside a
    fusion (XLA writes a temporary straight into the buffer the copy would fill: no pass
    of their own) are not counted."""
    fused = set(re.findall(r"calls=(%[\w.\-]+)", hlo))
    bodies = set(re.findall(r"body=(%[\w.\-]+)", hlo))
    counts = {"outside loops": 0, "per step": 0}
    computation = None
    for line in hlo.splitlines():
        header = re.match(r"^(?:ENTRY )?(%[\w.\-]+) ", line)
        if header:
            computation = header.group(1)
        elif computation not in fused and re.search(rf"= {re.escape(shape)}\{{0\}} copy\(", line):
            counts["per step" if computation in bodies else "outside loops"] += 1
    return counts


def _trace_step(t, s, ti):
    return opspec.ops.exp_trace(t, s, ti)


def _lif_step(V, I, *params):
    return opspec.ops.lif(V, I, *params)[0]


def _numpy_trace(t, s, ti, steps=1):
    for _ in range(steps):
        t = (t * np.exp(-ti[0]) + s).astype(np.float32)
    return t


def _numpy_lif(V, I, leak, threshold, rest, dt, steps=1):
    for _ in range(steps):
        v = V + dt[0] * (-(V - rest[0]) * leak[0] + I)
        V = np.where(v >= threshold[0], rest[0], v).astype(np.float32)
    return V


def _state_case(name, rng):
    """(step(state, *rest), state, rest, numpy_step(state, *rest, steps=k)) in float32."""
    f32 = lambda a: np.asarray(a, np.float32)  # noqa: E731
    if name == "exp_trace":
        rest = (f32(rng.random(N) < 0.1), f32([rng.uniform(0.01, 0.2)]))
        return _trace_step, f32(rng.random(N)), rest, _numpy_trace
    rest = (f32(rng.uniform(0, 5, N)), *(f32([v]) for v in (0.05, -55.0, -70.0, 0.1)))
    return _lif_step, f32(rng.uniform(-75, -50, N)), rest, _numpy_lif


def _patterns(step, rest):
    """name: (function of the state, donated?, steps the state advances, reads the old state after)."""

    def scan(s):
        return jax.lax.scan(lambda c, _: (step(c, *rest), None), s, None, length=STEPS)[0]

    def fori(s):
        return jax.lax.fori_loop(0, STEPS, lambda _, c: step(c, *rest), s)

    def once(s):
        return step(s, *rest)

    def used_after(s):
        return step(s, *rest) + s  # the aliased input read again after the call

    return {
        "jit": (once, False, 1),
        "jit donated": (once, True, 1),
        "scan": (scan, False, STEPS),
        "scan donated": (scan, True, STEPS),
        "fori_loop": (fori, False, STEPS),
        "fori_loop donated": (fori, True, STEPS),
        "used after": (used_after, False, 1),
    }


# What each pattern may copy. A loop's carry starts as a copy of a non-donated argument,
# as the same loop in jnp does (the loop updates its carry in place); nothing is copied
# per step, and nowhere else.
EXPECTED = {
    "jit": {"outside loops": 0, "per step": 0},
    "jit donated": {"outside loops": 0, "per step": 0},
    "scan": {"outside loops": 1, "per step": 0},
    "scan donated": {"outside loops": 0, "per step": 0},
    "fori_loop": {"outside loops": 1, "per step": 0},
    "fori_loop donated": {"outside loops": 0, "per step": 0},
    "used after": {"outside loops": 0, "per step": 0},
}


@pytest.mark.parametrize("op", ["exp_trace", "lif"])
@pytest.mark.parametrize("pattern", list(EXPECTED))
def test_no_pattern_pays_a_copy_it_does_not_need(op, pattern, rng):
    step, state, rest, numpy_step = _state_case(op, rng)
    fn, donated, steps = _patterns(step, tuple(map(jnp.asarray, rest)))[pattern]
    jitted = jax.jit(fn, donate_argnums=0 if donated else ())
    x = jnp.asarray(state)
    hlo = jitted.lower(x).compile().as_text()
    assert copies_of(hlo, f"f32[{N}]") == EXPECTED[pattern], hlo
    # The results, on a buffer XLA owns (one jnp.asarray may borrow NumPy's memory, which
    # cannot be donated).
    x = jax.jit(lambda a: a * 1.0)(state)
    got = np.asarray(jitted(x))
    want = numpy_step(state, *rest, steps=steps)
    if pattern == "used after":
        want = want + state
        np.testing.assert_array_equal(np.asarray(x), state)  # the input is not clobbered
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4)
    if donated:
        assert x.is_deleted()


def test_a_loop_copies_its_carry_as_jnp_does(rng):
    """The copy before a non-donated loop is XLA's, for the carry: jnp's loop has it too."""

    def loop(update):
        return lambda s: jax.lax.scan(lambda c, _: (update(c), None), s, None, length=STEPS)[0]

    spikes, tau_inv = jnp.zeros(N, jnp.float32), jnp.array([0.05], jnp.float32)
    x = jnp.asarray(rng.random(N), jnp.float32)
    ours = jax.jit(loop(lambda c: opspec.ops.exp_trace(c, spikes, tau_inv))).lower(x).compile().as_text()
    jnps = jax.jit(loop(lambda c: c * jnp.exp(-tau_inv[0]) + spikes)).lower(x).compile().as_text()
    assert copies_of(ours, f"f32[{N}]") == copies_of(jnps, f"f32[{N}]")


def test_declaring_the_alias_on_an_argument_costs_a_copy(rng):
    """What the lowering avoids: the same call through a raw ffi_call that declares the
    alias on a non-donated argument makes XLA copy the argument first (the count above
    would see it)."""
    x, spikes = jnp.ones(N, jnp.float32), jnp.zeros(N, jnp.float32)
    tau_inv = jnp.array([0.05], jnp.float32)
    text = jax.jit(opspec.ops.exp_trace).lower(x, spikes, tau_inv).as_text()
    kernel = re.search(r'opspec_kernel = "([0-9a-f]+)"', text).group(1)

    def raw(aliases):
        call = jax.ffi.ffi_call(
            "opspec_exp_trace", jax.ShapeDtypeStruct(x.shape, x.dtype), input_output_aliases=aliases
        )
        return lambda t: call(t, spikes, tau_inv, opspec_kernel=kernel)

    aliased = jax.jit(raw({0: 0})).lower(x).compile().as_text()
    fresh = jax.jit(raw(None)).lower(x).compile().as_text()
    assert copies_of(aliased, f"f32[{N}]") == {"outside loops": 1, "per step": 0}
    assert copies_of(fresh, f"f32[{N}]") == {"outside loops": 0, "per step": 0}


def test_a_constant_state_is_not_copied(rng):
    state = np.asarray(rng.random(N), np.float32)
    spikes = np.asarray(rng.random(N) < 0.1, np.float32)
    tau_inv = np.array([0.05], np.float32)
    fn = jax.jit(lambda s: opspec.ops.exp_trace(jnp.asarray(state), s, jnp.asarray(tau_inv)))
    text = fn.lower(jnp.asarray(spikes)).as_text()
    assert "output_operand_aliases" not in text
    np.testing.assert_allclose(fn(jnp.asarray(spikes)), _numpy_trace(state, spikes, tau_inv), rtol=1e-6)


def test_an_exported_aliased_op_serializes_and_runs(rng):
    """jax.export: the exported computation's arguments are not donated, so a call on one
    declares no alias; inside a loop it keeps it. Both round-trip through serialization."""
    state = np.asarray(rng.random(N), np.float32)
    spikes = jnp.asarray(rng.random(N) < 0.1, jnp.float32)
    tau_inv = jnp.array([0.07], jnp.float32)

    def once(s):
        return opspec.ops.exp_trace(s, spikes, tau_inv)

    def loop(s):
        return jax.lax.fori_loop(0, 10, lambda _, c: opspec.ops.exp_trace(c, spikes, tau_inv), s)

    for fn, steps, aliased in ((once, 1, False), (loop, 10, True)):
        exported = jax.export.export(jax.jit(fn), disabled_checks=opspec.export.checks())(jnp.asarray(state))
        assert ("output_operand_aliases" in exported.mlir_module()) == aliased
        restored = jax.export.deserialize(exported.serialize())
        want = _numpy_trace(state, np.asarray(spikes), np.asarray(tau_inv), steps=steps)
        np.testing.assert_allclose(restored.call(jnp.asarray(state)), want, rtol=1e-5, atol=1e-6)


def test_an_operand_the_check_cannot_read_keeps_the_alias():
    """Where the MLIR is not what the check reads (another jax's bindings), the call
    declares the alias, as it always did: correct, at worst with XLA's copy."""
    from opspec._jax_private import read_only_entry_argument

    assert read_only_entry_argument(object()) is False
    assert read_only_entry_argument(None) is False


@pytest.mark.parametrize("inline", [False, True])
def test_a_nested_jit_keeps_the_alias_unless_inlined(inline, rng):
    """A jit inside a jit is lowered as a function of its own, whose argument keeps the
    alias (XLA copies the outer, non-donated argument); inline=True lowers it into the
    caller, where the argument is the entry's and the call writes a fresh output, up to
    jax 0.10. jax 0.12 lowers an inline=True function apart too and inlines it after
    (the .ci/matrix leg showed the copy), so the alias stays there; so does jax 0.11.2
    (seen on a lent GPU machine's image, 2026-11-27)."""
    state = np.asarray(rng.random(N), np.float32)
    spikes = np.asarray(rng.random(N) < 0.1, np.float32)
    tau_inv = np.array([0.05], np.float32)
    inner = jax.jit(lambda t: opspec.ops.exp_trace(t, jnp.asarray(spikes), jnp.asarray(tau_inv)), inline=inline)
    outer = jax.jit(lambda t: inner(t))
    copies = copies_of(outer.lower(jnp.asarray(state)).compile().as_text(), f"f32[{N}]")
    inlined_before_lowering = inline and tuple(int(p) for p in jax.__version__.split(".")[:2]) < (0, 11)
    assert copies == {"outside loops": 0 if inlined_before_lowering else 1, "per step": 0}
    x = jnp.asarray(state)
    np.testing.assert_allclose(outer(x), _numpy_trace(state, spikes, tau_inv), rtol=1e-6)
    np.testing.assert_array_equal(np.asarray(x), state)
