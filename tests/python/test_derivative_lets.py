"""`derivatives: let:` (docs/spec.md, "let: named sub-expressions"): a softmax-weighted
mix whose derivative formulas read one let name several times, built as a user builds
an op, its gradients checked against jnp and finite differences on random data."""

import os
import subprocess
import sys
import textwrap

import pytest
from builds import register_tree_specs

SPECS = {
    "let_softmax_mix": """\
        op: let_softmax_mix
        doc: out = softmax(s, axis=-1) @ v, row by row.
        inputs:
          - {name: s, dtype: float64, shape: [n, m]}
          - {name: v, dtype: float64, shape: [m, d]}
        outputs:
          - {name: out, dtype: float64, shape: [n, d]}
        derivatives:
          let:
            p: >-
              jax.nn.softmax(s,
              axis=-1)
            pt: p.T
          s: {jvp: "(p * s_dot - p * jnp.sum(p * s_dot, axis=-1, keepdims=True)) @ v"}
          v: {transpose: "pt @ out_bar"}
        launch: [n, d]
        kernel: |
          double top = m > 0 ? s[i * m] : 0.0;
          for (int64_t k = 1; k < m; ++k) top = s[i * m + k] > top ? s[i * m + k] : top;
          double total = 0.0, acc = 0.0;
          for (int64_t k = 0; k < m; ++k) {
            const double e = exp(s[i * m + k] - top);
            total += e;
            acc += e * v[k * d + j];
          }
          out[i * d + j] = m > 0 ? acc / total : 0.0;
        """,
}

register_tree_specs(__name__, SPECS)

_PROGRAM = """\
import numpy as np, jax, jax.numpy as jnp, opspec
jax.config.update("jax_enable_x64", True)
rng = np.random.default_rng(SEED)
n, m, d = 5, 7, 3
s = jnp.asarray(rng.normal(size=(n, m)) * 2)
v = jnp.asarray(rng.normal(size=(m, d)))
w = jnp.asarray(rng.normal(size=(n, d)))
op = opspec.ops.let_softmax_mix
ref = lambda s, v: jax.nn.softmax(s, axis=-1) @ v
np.testing.assert_allclose(op(s, v), ref(s, v), rtol=1e-12, atol=1e-12)
loss = lambda f: (lambda s, v: jnp.sum(f(s, v) * w))
for jit in (False, True):
    g = jax.grad(loss(op), argnums=(0, 1))
    g = jax.jit(g) if jit else g
    got, want = g(s, v), jax.grad(loss(ref), argnums=(0, 1))(s, v)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
# Forward mode: the jvp formula reads the let three times.
ds, dv = jnp.asarray(rng.normal(size=(n, m))), jnp.asarray(rng.normal(size=(m, d)))
_, t = jax.jvp(op, (s, v), (ds, dv))
_, t_ref = jax.jvp(ref, (s, v), (ds, dv))
np.testing.assert_allclose(t, t_ref, rtol=1e-10, atol=1e-12)
# Central differences of the op's own kernel along the same direction.
h = 1e-6
fd = (op(s + h * ds, v + h * dv) - op(s - h * ds, v - h * dv)) / (2 * h)
np.testing.assert_allclose(t, fd, rtol=1e-6, atol=1e-7)
print("ok")
"""


@pytest.mark.slow  # the session's tree build (builds.py): built in the builders' half only
def test_let_names_in_jvp_and_transpose_formulas(tree_build, rng):
    env = dict(os.environ, PYTHONPATH=str(tree_build[1] / "python"))
    program = f"SEED = {int(rng.integers(2**32))}\n" + textwrap.dedent(_PROGRAM)
    r = subprocess.run([sys.executable, "-c", program], env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-4000:]
    assert r.stdout.rstrip().endswith("ok")


@pytest.mark.slow
def test_let_records_in_the_generated_module(tree_build):
    text = (tree_build[0] / "generated" / "python" / "ops.py").read_text()
    assert '("p", lambda jax, s, **_: (jax.nn.softmax(s, axis=-1)), "specs/let_softmax_mix.yaml:' in text
    assert '("pt", lambda p, **_: (p.T), "specs/let_softmax_mix.yaml:' in text


pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="builds with CMake and a POSIX toolchain")
