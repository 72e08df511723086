"""jax.export of opspec ops (docs/transformations.md, "Export"): serialize in one process,
deserialize and call in a fresh one that only imports opspec; symbolic shapes."""

import os
import subprocess
import sys
import textwrap

import jax
import jax.numpy as jnp
import numpy as np
import scipy.sparse as sp

import opspec
import opspec.export

ops = opspec.ops


def _model(data, indices, indptr):
    def f(X):
        return jax.vmap(lambda x: ops.sigmoid(ops.csr_matvec(data, indices, indptr, x)))(X)

    return f


def test_export_serialize_and_call_in_a_fresh_process(tmp_path, rng):
    m = sp.random(20, 30, density=0.2, random_state=int(rng.integers(1 << 31)), format="csr")
    data, indices, indptr = m.data, m.indices.astype(np.int32), m.indptr.astype(np.int32)
    X = rng.standard_normal((4, 30))
    exported = jax.export.export(jax.jit(_model(data, indices, indptr)), disabled_checks=opspec.export.checks())(X)
    (tmp_path / "model.bin").write_bytes(exported.serialize())
    np.save(tmp_path / "X.npy", X)
    want = 1 / (1 + np.exp(-(m @ X.T).T))
    np.save(tmp_path / "want.npy", want)
    script = textwrap.dedent(
        f"""
        import jax
        jax.config.update("jax_enable_x64", True)
        import numpy as np
        import opspec  # registers the targets the exported module calls
        exp = jax.export.deserialize(open({str(tmp_path / "model.bin")!r}, "rb").read())
        got = exp.call(np.load({str(tmp_path / "X.npy")!r}))
        np.testing.assert_allclose(got, np.load({str(tmp_path / "want.npy")!r}), rtol=1e-12)
        print("equal")
        """
    )
    r = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=300, env=dict(os.environ)
    )
    assert r.returncode == 0 and "equal" in r.stdout, r.stdout + r.stderr


def test_export_without_the_checks_names_the_target(rng):
    x = rng.standard_normal(5)
    try:
        jax.export.export(jax.jit(ops.sigmoid))(x)
    except ValueError as e:
        assert "opspec_sigmoid" in str(e)
    else:
        raise AssertionError("jax.export accepted a custom call without its safety check disabled")


def test_symbolic_shapes(rng):
    (n,) = jax.export.symbolic_shape("n")
    spec = jax.ShapeDtypeStruct((n,), jnp.float64)
    for fn, ref in [
        (lambda x: ops.sigmoid(x), lambda x: 1 / (1 + np.exp(-x))),
        (lambda x: ops.scale(x, jnp.array([2.5])), lambda x: 2.5 * x),
        (lambda x: ops.block_sum(x), lambda x: np.add.reduceat(x, np.arange(0, x.size, 256))),
        (lambda x: jax.grad(lambda x: ops.sigmoid(x).sum())(x), lambda x: np.exp(-x) / (1 + np.exp(-x)) ** 2),
    ]:
        exp = jax.export.export(jax.jit(fn), disabled_checks=opspec.export.checks())(spec)
        exp = jax.export.deserialize(exp.serialize())
        for size in (3, 700):
            x = rng.standard_normal(size)
            np.testing.assert_allclose(exp.call(x), ref(x), rtol=1e-12)
    # a batched symbolic export: vmap over b vectors
    b, n = jax.export.symbolic_shape("b, n")
    exp = jax.export.export(jax.jit(jax.vmap(ops.sigmoid)), disabled_checks=opspec.export.checks())(
        jax.ShapeDtypeStruct((b, n), jnp.float64)
    )
    X = rng.standard_normal((3, 4))
    np.testing.assert_allclose(exp.call(X), 1 / (1 + np.exp(-X)), rtol=1e-12)


def test_targets_are_the_registered_ones():
    names = opspec.export.targets("opspec")
    assert "opspec_sigmoid" in names and "opspec_csr_matvec" in names
    assert all(n.startswith("opspec_") for n in names)
