"""Derivatives from the specs (docs/gradients.md): targeted checks against independent
references (NumPy, SciPy, jnp, finite differences) on fresh random data. The sweep of
every op through check_grads lives in test_check_op.py."""

import dataclasses
import pathlib

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.sparse as sp
from jax.test_util import check_grads

import opspec
from opspec._runtime import OpError

ops = opspec.ops
ROOT = pathlib.Path(__file__).resolve().parents[2]


def _csr(rng, rows, cols, density=0.3):
    m = sp.random(rows, cols, density=density, random_state=rng.integers(1 << 31), format="csr")
    return m, m.data, m.indices.astype(np.int32), m.indptr.astype(np.int32)


def test_grad_of_csr_matvec_matches_the_dense_reference(rng):
    m, data, indices, indptr = _csr(rng, 30, 20)
    x = rng.standard_normal(20)
    w = rng.standard_normal(30)  # a weighted sum, so every row's cotangent differs

    def loss(data, x):
        return jnp.dot(w, ops.csr_matvec(data, indices, indptr, x))

    g_data, g_x = jax.grad(loss, argnums=(0, 1))(data, x)
    dense = m.toarray()
    np.testing.assert_allclose(g_x, dense.T @ w, rtol=1e-12, atol=1e-12)
    rows = np.repeat(np.arange(30), np.diff(indptr))
    np.testing.assert_allclose(g_data, w[rows] * x[indices], rtol=1e-12)
    # and through the dense product jnp differentiates itself
    g_dense = jax.grad(lambda a: jnp.dot(w, a @ x))(dense)
    np.testing.assert_allclose(g_data, g_dense[rows, indices], rtol=1e-12)
    check_grads(lambda d, x: ops.csr_matvec(d, indices, indptr, x), (data, x), order=2, modes=("fwd", "rev"))


def test_csr_rmatvec_is_the_transposed_product_and_differentiates(rng):
    m, data, indices, indptr = _csr(rng, 12, 9)
    y = rng.standard_normal(12)
    np.testing.assert_allclose(ops.csr_rmatvec(data, indices, indptr, y, n=9), m.T @ y, rtol=1e-12, atol=1e-12)
    check_grads(lambda d, y: ops.csr_rmatvec(d, indices, indptr, y, n=9), (data, y), order=2, modes=("fwd", "rev"))


def test_surrogate_gradient_values(rng):
    n = 64
    V = rng.uniform(-75, -50, n)
    I_ext = rng.uniform(0, 5, n)
    tau_inv, V_th, V_rest, dt = np.array([1 / 20]), np.array([-55.0]), np.array([-70.0]), np.array([0.1])
    slope = float(rng.uniform(1, 10))

    def spikes(V, I_ext):
        return ops.lif_surrogate(V, I_ext, tau_inv, V_th, V_rest, dt, slope=slope)[1]

    V_out, s = ops.lif_surrogate(V, I_ext, tau_inv, V_th, V_rest, dt, slope=slope)
    v = V + dt[0] * (-(V - V_rest[0]) * tau_inv[0] + I_ext)
    np.testing.assert_array_equal(s, (v >= V_th[0]).astype(np.float64))
    np.testing.assert_allclose(V_out, np.where(v >= V_th[0], V_rest[0], v))
    sg = 1 / (1 + slope * np.abs(v - V_th[0])) ** 2
    g_V, g_I = jax.grad(lambda V, I: spikes(V, I).sum(), argnums=(0, 1))(V, I_ext)
    np.testing.assert_allclose(g_V, sg * (1 - dt[0] * tau_inv[0]), rtol=1e-12)
    np.testing.assert_allclose(g_I, sg * dt[0], rtol=1e-12)
    # forward mode agrees with reverse mode
    t = rng.standard_normal(n)
    _, jv = jax.jvp(lambda V: spikes(V, I_ext), (V,), (t,))
    np.testing.assert_allclose(jv, sg * (1 - dt[0] * tau_inv[0]) * t, rtol=1e-12)
    # the threshold's gradient, through its [1]-shaped input
    g_th = jax.grad(lambda th: spikes(V, I_ext).sum() + ops.lif_surrogate(V, I_ext, tau_inv, th, V_rest, dt)[1].sum())(
        V_th
    )
    np.testing.assert_allclose(g_th, [-np.sum(1 / (1 + 5.0 * np.abs(v - V_th[0])) ** 2)], rtol=1e-10)


def test_hessian_of_a_smooth_op(rng):
    x = rng.standard_normal(9)
    H = jax.hessian(lambda x: ops.sigmoid(x).sum())(x)
    s = 1 / (1 + np.exp(-x))
    np.testing.assert_allclose(H, np.diag(s * (1 - s) * (1 - 2 * s)), rtol=1e-10, atol=1e-14)
    A = rng.standard_normal((5, 9))
    H2 = jax.hessian(lambda x: jnp.sum(ops.matvec(A, x) ** 2))(x)
    np.testing.assert_allclose(H2, 2 * A.T @ A, rtol=1e-10, atol=1e-12)


def test_vmap_of_grad_and_grad_of_vmap(rng):
    A = rng.standard_normal((4, 7))
    X = rng.standard_normal((5, 7))
    s = 1 / (1 + np.exp(-X))
    g = jax.vmap(jax.grad(lambda x: ops.sigmoid(x).sum()))(X)
    np.testing.assert_allclose(g, s * (1 - s), rtol=1e-12)
    g = jax.grad(lambda X: jax.vmap(ops.sigmoid)(X).sum())(X)
    np.testing.assert_allclose(g, s * (1 - s), rtol=1e-12)
    # a linear op's transpose under both orders, the matrix unbatched
    g = jax.vmap(jax.grad(lambda x: jnp.sum(ops.matvec(A, x) ** 2)))(X)
    np.testing.assert_allclose(g, 2 * (X @ A.T) @ A, rtol=1e-10, atol=1e-12)
    gA = jax.grad(lambda A: jax.vmap(ops.matvec, in_axes=(None, 0))(A, X).sum())(A)
    np.testing.assert_allclose(gA, np.tile(X.sum(0), (4, 1)), rtol=1e-12, atol=1e-12)
    m, data, indices, indptr = _csr(rng, 6, 7)
    gx = jax.vmap(jax.grad(lambda x: ops.csr_matvec(data, indices, indptr, x).sum()))(X)
    np.testing.assert_allclose(gx, np.tile(m.T @ np.ones(6), (5, 1)), rtol=1e-12)
    gd = jax.grad(lambda d: jax.vmap(lambda x: ops.csr_matvec(d, indices, indptr, x))(X).sum())(data)
    rows = np.repeat(np.arange(6), np.diff(indptr))
    np.testing.assert_allclose(gd, X.sum(0)[indices] * np.ones(6)[rows], rtol=1e-12, atol=1e-12)


def test_every_transformation_of_jax_runs(rng):
    x = rng.standard_normal(6)
    f = lambda x: ops.sigmoid(x) * ops.exp_decay(x, np.array([0.3]))  # noqa: E731
    ref = lambda x: (1 / (1 + jnp.exp(-x))) * x * jnp.exp(-0.3)  # noqa: E731
    np.testing.assert_allclose(jax.jacfwd(f)(x), jax.jacfwd(ref)(x), rtol=1e-12)
    np.testing.assert_allclose(jax.jacrev(f)(x), jax.jacrev(ref)(x), rtol=1e-12)
    y, f_lin = jax.linearize(f, x)
    t = rng.standard_normal(6)
    np.testing.assert_allclose(f_lin(t), jax.jvp(ref, (x,), (t,))[1], rtol=1e-12)
    _, vjp = jax.vjp(f, x)
    np.testing.assert_allclose(vjp(t)[0], jax.vjp(ref, x)[1](t)[0], rtol=1e-12)
    np.testing.assert_allclose(jax.jit(jax.grad(lambda x: f(x).sum()))(x), jax.grad(lambda x: ref(x).sum())(x))


def test_aliased_op_differentiates(rng):
    trace, spikes, tau = rng.standard_normal(8), rng.random(8), np.array([0.4])
    ref = lambda tr, sp, t: tr * jnp.exp(-t[0]) + sp  # noqa: E731
    for argnum in range(3):
        g = jax.grad(lambda *a: ops.exp_trace(*a).sum(), argnums=argnum)(trace, spikes, tau)
        np.testing.assert_allclose(g, jax.grad(lambda *a: ref(*a).sum(), argnums=argnum)(trace, spikes, tau))


def test_undeclared_and_integer_inputs():
    V = np.linspace(-60, -50, 4)
    one = np.ones(1)
    # lif declares no derivatives: differentiating names the op and the input
    with pytest.raises(OpError, match=r"opspec\.ops\.lif: input 'V': cannot be differentiated"):
        jax.grad(lambda V: ops.lif(V, V, one, one, one, one)[0].sum())(V)
    # integer inputs are non-differentiable automatically: csr indices get float0 tangents
    data, indices, indptr = np.ones(2), np.array([0, 1], np.int32), np.array([0, 1, 2], np.int32)
    g = jax.grad(lambda d: ops.csr_matvec(d, indices, indptr, np.ones(2)).sum())(data)
    np.testing.assert_array_equal(g, [1.0, 1.0])
    # attributes are static: a traced attribute is refused
    with pytest.raises(OpError, match="attribute 'alpha'"):
        jax.grad(lambda a: ops.leaky_relu(V, alpha=a).sum())(0.1)


def _faults(indices, indptr, n):
    """The audit's bad CSR structures: each index fault at a position a row reads, each
    indptr fault (the spec allows any indptr[0] >= 0, so a first entry > 0 is no fault)."""
    nnz = len(indices)
    k = nnz // 2  # inside a row: scipy's indptr runs from 0 to nnz
    faults = {}
    for name, value in [("index n", n), ("index past n", n + 7), ("negative index", -1), ("index -2^31", -(2**31))]:
        bad = indices.copy()
        bad[k] = value
        faults[name] = (bad, indptr)
    for name, change in [
        ("indptr unsorted", lambda p: p.__setitem__(slice(-2, None), (nnz, nnz - 1))),  # in range, decreasing
        ("indptr past nnz", lambda p: p.__setitem__(-1, nnz + 1)),
        ("indptr negative", lambda p: p.__setitem__(0, -1)),
    ]:
        bad = indptr.copy()
        change(bad)
        faults[name] = (indices, bad)
    return faults


def _message(fn, *args):
    try:
        jax.block_until_ready(fn(*args))
    except Exception as e:  # XLA's runtime error type and prefix differ between jax versions
        text = str(e)
        return text[text.find("opspec ") :].splitlines()[0]
    return None


def test_gradients_check_what_the_call_checks_under_jit(rng):
    """A gradient with respect to csr_matvec's data is a jnp formula that does not need
    the call's outputs; under jit XLA used to drop the call and with it the checks of
    indices and indptr. Each fault raises, under every gradient, the call's error."""
    m, data, indices, indptr = _csr(rng, 7, 6, density=0.6)
    x, w = rng.standard_normal(6), rng.standard_normal(7)

    def loss(d, ind, ptr, x):
        return jnp.dot(w, ops.csr_matvec(d, ind, ptr, x))

    call = jax.jit(lambda d, ind, ptr, x: ops.csr_matvec(d, ind, ptr, x))
    gradients = {
        "grad data": jax.jit(jax.grad(loss)),
        "value_and_grad data": jax.jit(jax.value_and_grad(loss)),
        "grad data and x": jax.jit(jax.grad(loss, argnums=(0, 3))),
        "jacrev data": jax.jit(jax.jacrev(lambda d, ind, ptr, x: ops.csr_matvec(d, ind, ptr, x))),
        "vmap of grad data": jax.jit(jax.vmap(jax.grad(loss), in_axes=(0, None, None, None))),
        "grad data, checkpointed": jax.jit(jax.grad(jax.checkpoint(loss))),
    }
    # The valid structure: the gradients are right.
    rows = np.repeat(np.arange(7), np.diff(indptr))
    want = w[rows] * x[indices]
    jacobian = np.zeros((7, len(data)))
    jacobian[rows, np.arange(len(data))] = x[indices]
    got = {name: g(data, indices, indptr, x) for name, g in gradients.items() if not name.startswith("vmap")}
    np.testing.assert_allclose(got["grad data"], want, rtol=1e-12)
    np.testing.assert_allclose(got["value_and_grad data"][1], want, rtol=1e-12)
    np.testing.assert_allclose(got["grad data and x"][0], want, rtol=1e-12)
    np.testing.assert_allclose(got["grad data and x"][1], m.toarray().T @ w, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(got["jacrev data"], jacobian, rtol=1e-12)
    np.testing.assert_allclose(got["grad data, checkpointed"], want, rtol=1e-12)
    batched = gradients["vmap of grad data"](np.stack([data, 2 * data]), indices, indptr, x)
    np.testing.assert_allclose(batched, [want, want], rtol=1e-12)

    for fault, (ind, ptr) in _faults(indices, indptr, 6).items():
        expected = _message(call, data, ind, ptr, x)
        assert expected is not None and "opspec csr_matvec: input" in expected, (fault, expected)
        assert ("expected non-decreasing values" in expected) == (fault == "indptr unsorted"), expected
        for name, g in gradients.items():
            d = np.stack([data] * 2) if name.startswith("vmap") else data
            assert _message(g, d, ind, ptr, x) == expected, (fault, name)


def test_only_a_differentiated_call_is_kept():
    """The call a derivative rule makes is a custom call with a side effect (XLA runs it
    even where its outputs are unused); the op's other calls stay ordinary ones."""
    data, indices, indptr, x = np.ones(2), np.array([0, 1], np.int32), np.array([0, 1, 2], np.int32), np.ones(2)
    plain = jax.jit(lambda d: ops.csr_matvec(d, indices, indptr, x)).lower(data).as_text()
    grad = jax.jit(jax.grad(lambda d: ops.csr_matvec(d, indices, indptr, x).sum())).lower(data).as_text()
    sigmoid = jax.jit(jax.grad(lambda x: ops.sigmoid(x).sum())).lower(x).as_text()  # no `check:`
    assert "has_side_effect = true" not in plain and "has_side_effect = true" not in sigmoid
    assert "has_side_effect = true" in grad


def _spec_line(where):
    path, line = where.rsplit(":", 1)
    return (ROOT / path).read_text().splitlines()[int(line) - 1]


def test_every_formula_knows_its_spec_line():
    """ops.py records where each formula is in its spec: the line of its key."""
    from opspec.testing import op_record

    seen = 0
    for name in opspec.ops.__all__:
        record = op_record(getattr(ops, name))
        for input, d in record.derivatives.items():
            assert set(d.where) == set(d.formulas), (name, input)
            for key, where in d.where.items():
                assert where.startswith(f"specs/{name}.yaml:"), where
                line = _spec_line(where)
                assert d.kind in line or f"{key}:" in line, (where, line)
                seen += 1
    assert seen >= 20


def test_a_formula_that_fails_while_jax_traces_it_names_the_op_input_and_spec_line(rng):
    from opspec.testing import op_record

    x = rng.standard_normal(6)
    sigmoid = op_record(ops.sigmoid)
    d = sigmoid.derivatives["x"]
    # As if the spec misspelt a jnp function: the generated lambda, and the record's place.
    misspelt = dataclasses.replace(d, formulas={"out": lambda jnp, out, **_: out * (1 - jnp.expp(out))})
    broken = dataclasses.replace(sigmoid, derivatives={"x": misspelt})
    with pytest.raises(OpError) as e:
        jax.grad(lambda x: opspec._runtime.call(broken, (x,), {}).sum())(x)
    where = d.where["out"]
    assert str(e.value) == (
        f"opspec.ops.sigmoid: input 'x': its elementwise derivative of output 'out' ({where}) failed while JAX "
        "traced it: AttributeError: module 'jax.numpy' has no attribute 'expp'"
    )
    assert "elementwise" in _spec_line(where)
    # A value of the wrong shape, in reverse mode (sum's transpose), under jit.
    sum_ = op_record(ops.sum)
    wide = dataclasses.replace(
        sum_.derivatives["x"], formulas={"x": lambda jnp, out_bar, x, **_: jnp.broadcast_to(out_bar[0], (7,))}
    )
    with pytest.raises(
        OpError,
        match=r"opspec\.ops\.sum: input 'x': its transpose derivative \(specs/sum\.yaml:\d+\) "
        r"failed while JAX traced it: ValueError: the cotangent has shape \(7,\), expected the input's \(6,\)",
    ):
        jax.jit(
            jax.grad(lambda x: opspec._runtime.call(dataclasses.replace(sum_, derivatives={"x": wide}), (x,), {})[0])
        )(x)


def test_trying_a_formula_before_rebuilding(rng):
    """opspec.testing.with_derivatives: the spec's syntax, no rebuild; the shipped op is
    unchanged; a wrong formula fails check_op, a misspelt name fails at once, an error
    while JAX traces it names the trial."""
    from opspec.testing import check_op, with_derivatives

    # Away from relu's kink, and both signs always (all positive, 1 draw in 256 before,
    # left the wrong slope for negatives unseen).
    x = rng.uniform(0.5, 2.0, 8) * rng.permutation(np.repeat([-1.0, 1.0], 4))
    good = with_derivatives(ops.leaky_relu, x={"elementwise": "jnp.where(x > 0, 1.0, alpha)"})
    np.testing.assert_allclose(jax.grad(lambda x: good(x, alpha=0.2).sum())(x), np.where(x > 0, 1.0, 0.2))
    assert not check_op(good, x, alpha=0.2, reference=lambda x, alpha: np.where(x > 0, x, alpha * x)).skipped
    wrong = with_derivatives(ops.leaky_relu, x={"elementwise": "jnp.where(x > 0, 1.0, 2 * alpha)"})
    with pytest.raises(AssertionError, match="grad x: the declared derivative"):
        check_op(wrong, x, alpha=0.2)
    np.testing.assert_allclose(jax.grad(lambda x: ops.leaky_relu(x, alpha=0.2).sum())(x), np.where(x > 0, 1.0, 0.2))
    # one formula per output, and a shape symbol
    stats = with_derivatives(ops.abs_two_pass, x={"jvp": {"out": "jnp.sign(x) * x_dot * jnp.ones(n)"}})
    np.testing.assert_allclose(jax.jvp(stats, (x,), (np.ones(8),))[1], np.sign(x))
    with pytest.raises(OpError, match=r"opspec\.ops\.sigmoid: input 'x': unknown name 'xx' in the formula for 'out'"):
        with_derivatives(ops.sigmoid, x={"elementwise": "out * (1 - xx)"})
    late = with_derivatives(ops.sigmoid, x={"elementwise": "out * (1 - jnp.expp(out))"})
    with pytest.raises(OpError, match=r"of output 'out' \(opspec\.testing\.with_derivatives\) failed while JAX traced"):
        jax.grad(lambda x: late(x).sum())(x)
