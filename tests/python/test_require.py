"""`require:` (docs/spec.md): conditions over shape symbols and attributes, checked when a
call is traced (OpError naming the op, the condition and the values), eagerly and under
jit, and by the handler for a raw call; a good call still matches NumPy."""

import os
import subprocess
import sys
import textwrap

import pytest
from builds import register_tree_specs

SPECS = {
    "req_rope": """\
        op: req_rope
        doc: Rotates each pair of columns of row i by the angle theta * i.
        inputs:
          - {name: x, dtype: float32, shape: [n, head_dim]}
        outputs:
          - {name: y, dtype: float32, shape: [n, head_dim]}
        attrs:
          - {name: theta, type: float64, default: 1e-2}
        require:
          - head_dim % 2 == 0
          - theta > 0
          - n <= 65536
        launch: [n, head_dim / 2]
        kernel: |
          const float a = (float)(theta * (double)i);
          const float c = cosf(a), s = sinf(a);
          const float x0 = x[i * head_dim + 2 * j], x1 = x[i * head_dim + 2 * j + 1];
          y[i * head_dim + 2 * j] = x0 * c - x1 * s;
          y[i * head_dim + 2 * j + 1] = x0 * s + x1 * c;
        """,
}

register_tree_specs(__name__, SPECS)

_PROGRAM = """\
import re
import numpy as np, jax, jax.export, jax.numpy as jnp, opspec, opspec.export
rng = np.random.default_rng(SEED)
op = opspec.ops.req_rope

def refused(pattern, fn, *args, **kwargs):
    try:
        jax.block_until_ready(fn(*args, **kwargs))
    except Exception as e:
        assert re.search(pattern, str(e)), str(e)
        return type(e).__name__
    raise AssertionError("accepted: " + pattern)

def rope(x, theta):
    a = theta * np.arange(x.shape[0])[:, None]
    x0, x1 = x[:, 0::2], x[:, 1::2]
    y = np.empty_like(x)
    y[:, 0::2], y[:, 1::2] = x0 * np.cos(a) - x1 * np.sin(a), x0 * np.sin(a) + x1 * np.cos(a)
    return y

x = rng.normal(size=(6, 8)).astype(np.float32)
theta = float(rng.uniform(0.1, 1.0))
np.testing.assert_allclose(op(x, theta=theta), rope(x.astype(np.float64), theta), rtol=1e-5, atol=1e-5)
odd = rng.normal(size=(6, 7)).astype(np.float32)
for fn in (op, jax.jit(op, static_argnames="theta")):
    kind = refused(r"opspec.ops.req_rope: require 'head_dim % 2 == 0': does not hold: head_dim = 7", fn, odd)
    assert kind == "OpError", kind
    refused(r"opspec.ops.req_rope: require 'theta > 0': does not hold: theta = 0.0", fn, x, theta=0.0)
    refused(r"require 'n <= 65536': does not hold: n = 65537", fn, np.zeros((65537, 2), np.float32))
# Under vmap the condition reads one element's dims.
refused(r"require 'head_dim % 2 == 0': does not hold: head_dim = 7", jax.vmap(op), np.stack([odd, odd]))
# A raw call that no binder saw: the handler refuses it, naming the op and the condition.
raw = jax.ffi.ffi_call(opspec.target_name("req_rope"), jax.ShapeDtypeStruct(odd.shape, jnp.float32))
refused(r"opspec req_rope: require 'head_dim % 2 == 0' does not hold: head_dim = 7", raw, odd, theta=np.float64(0.5))
raw = jax.ffi.ffi_call(opspec.target_name("req_rope"), jax.ShapeDtypeStruct(x.shape, jnp.float32))
refused(r"opspec req_rope: require 'theta > 0' does not hold: theta = -1", raw, x, theta=np.float64(-1.0))
np.testing.assert_allclose(raw(x, theta=np.float64(theta)), rope(x.astype(np.float64), theta), rtol=1e-5, atol=1e-5)
# Exported with symbolic dims: nothing to decide at export; the handler decides each call.
n_, h_ = jax.export.symbolic_shape("n, h")
fn = jax.jit(lambda x: op(x, theta=theta))
exported = jax.export.export(fn, disabled_checks=opspec.export.checks())(jax.ShapeDtypeStruct((n_, h_), jnp.float32))
np.testing.assert_allclose(exported.call(x), rope(x.astype(np.float64), theta), rtol=1e-5, atol=1e-5)
refused(r"opspec req_rope: require 'head_dim % 2 == 0' does not hold: head_dim = 7", exported.call, odd)
print("ok")
"""


@pytest.mark.slow  # the session's tree build (builds.py): built in the builders' half only
def test_require_at_trace_time_and_in_the_handler(tree_build, rng):
    env = dict(os.environ, PYTHONPATH=str(tree_build[1] / "python"))
    program = f"SEED = {int(rng.integers(2**32))}\n" + textwrap.dedent(_PROGRAM)
    r = subprocess.run([sys.executable, "-c", program], env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-4000:]
    assert r.stdout.rstrip().endswith("ok")
