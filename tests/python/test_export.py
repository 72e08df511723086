"""jax.export of opspec ops (docs/transformations.md, "Export"): serialize in one process,
deserialize and call in a fresh one that only imports opspec; symbolic shapes."""

import os
import subprocess
import sys
import textwrap

import jax
import jax.export
import jax.numpy as jnp
import numpy as np
import scipy.sparse as sp

import opspec
import opspec.export
import opspec.testing

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
        import jax.export
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


def test_every_shipped_op_exports_and_runs_in_a_fresh_process(tmp_path, rng):
    """Each op exported with concrete shapes and with its shape symbols symbolic, all
    called in one fresh process against the reference."""
    from cases import CASES, reference

    names = sorted(CASES)
    for name in names:
        args, attrs = CASES[name][0](rng, np.float64, 12)
        fn = jax.jit(lambda *a, _n=name, _at=attrs: getattr(ops, _n)(*a, **_at))
        exported = jax.export.export(fn, disabled_checks=opspec.export.checks())(*args)
        (tmp_path / f"{name}.bin").write_bytes(exported.serialize())
        want = reference(name, args, attrs, np.float64)
        np.savez(tmp_path / f"{name}.npz", *args, *[np.asarray(w) for w in want], nargs=len(args))
        # symbolic: every symbol of the spec a dimension variable
        record = opspec.testing.op_record(getattr(ops, name))
        symbols = sorted({d for s in record.inputs for d in s.shape if isinstance(d, str)})
        scope = dict(zip(symbols, jax.export.symbolic_shape(", ".join(symbols)))) if symbols else {}
        specs = []
        for s, a in zip(record.inputs, args):
            if s.shape and s.shape[0] is Ellipsis:
                specs.append(jax.ShapeDtypeStruct(a.shape, a.dtype))
            else:
                specs.append(jax.ShapeDtypeStruct(tuple(scope.get(d, d) for d in s.shape), a.dtype))
        sym = jax.export.export(fn, disabled_checks=opspec.export.checks())(*specs)
        got = sym.call(*args)
        for g, w in zip(got if isinstance(got, (tuple, list)) else (got,), want):
            np.testing.assert_allclose(np.asarray(g), w, rtol=1e-10, atol=1e-12, err_msg=f"{name}, symbolic")
    script = textwrap.dedent(
        f"""
        import jax
        import jax.export
        jax.config.update("jax_enable_x64", True)
        import numpy as np
        import opspec
        for name in {names!r}:
            exp = jax.export.deserialize(open(f"{tmp_path}/{{name}}.bin", "rb").read())
            data = np.load(f"{tmp_path}/{{name}}.npz")
            n = int(data["nargs"])
            arrays = [data[f"arr_{{i}}"] for i in range(len(data.files) - 1)]
            got = exp.call(*arrays[:n])
            got = got if isinstance(got, (tuple, list)) else (got,)
            for g, w in zip(got, arrays[n:]):
                np.testing.assert_allclose(np.asarray(g), w, rtol=1e-10, atol=1e-12, err_msg=name)
        print("all equal")
        """
    )
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0 and "all equal" in r.stdout, r.stdout + r.stderr


def test_a_shape_expression_that_cannot_take_symbolic_dims_is_an_opspec_error():
    from opspec import _primitive
    from opspec._runtime import Array, Op, OpError

    op = Op(
        name="pad_to",
        inputs=(Array("x", "float32", ("n",)),),
        outputs=(Array("out", "float32", (lambda s: max(s["n"], 8),)),),
        types={},
        attrs=(),
        vmap_method="native",
        aliases={},
    )
    (n,) = jax.export.symbolic_shape("n")
    assert _primitive.out_shapes(op, [(5,)], [np.float32], {})[0][0] == (8,)
    try:
        _primitive.out_shapes(op, [(n,)], [np.float32], {})
    except OpError as e:
        assert "opspec.ops.pad_to: output 'out': its shape expression cannot be computed for symbolic dims" in str(e)
    else:
        raise AssertionError("max() of a symbolic dim passed")
