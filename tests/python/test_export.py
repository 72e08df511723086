"""jax.export of opspec ops (docs/transformations.md, "Export"): serialize in one process,
deserialize and call in a fresh one that only imports opspec; symbolic shapes."""

import os
import pathlib
import shutil
import subprocess
import sys
import textwrap

import jax
import jax.export
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.sparse as sp

import opspec
import opspec.export
import opspec.testing

ops = opspec.ops
ROOT = pathlib.Path(__file__).resolve().parents[2]


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
    from opspec._bind import bind
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
    assert bind(op, [(5,)], [np.float32], {}).out_shapes()[0][0] == (8,)
    try:
        bind(op, [(n,)], [np.float32], {}).out_shapes()
    except OpError as e:
        assert "opspec.ops.pad_to: output 'out': its shape expression cannot be computed for symbolic dims" in str(e)
    else:
        raise AssertionError("max() of a symbolic dim passed")


# ---- exports pinned to their kernels ----------------------------------------------------

TWICE = """\
op: twice
doc: out = 2 x; the test edits the body.
types: {T: [float32, float64]}
inputs:
  - {name: x, dtype: T, shape: [n]}
outputs:
  - {name: out, dtype: T, shape: [n]}
launch: [n]
kernel: |
  out[i] = 2 * x[i];
"""

# `twice` as the slow test below exports it: its `//` comment ends in a backslash, so the
# compiler reads the next line as part of the comment and out = 2 x. The edit drops the
# backslash: the same text but for one comment character, and out = 3 x.
SPLICED = TWICE.replace("2 * x[i];", "2 * x[i];  // the next line is part of this comment \\\n  out[i] = 3 * x[i];")
UNSPLICED = SPLICED.replace(" \\\n", "\n")

KEEP = (
    TWICE.replace("op: twice", "op: keep")
    .replace("out = 2 x; the test edits the body.", "out = x + 1.")
    .replace("out[i] = 2 * x[i];", "out[i] = x[i] + 1;")
)

EXPORT = """\
import jax, jax.export, numpy as np, opspec.export, pinned
x = np.arange(6, dtype=np.float32)
for name in ("twice", "keep"):
    fn = jax.jit(getattr(pinned.ops, name))
    exported = jax.export.export(fn, disabled_checks=opspec.export.checks())(x)
    open(f"{name}_TAG.bin", "wb").write(exported.serialize())
print("exported")
"""

CALL = """\
import jax, jax.export, numpy as np, pinned
x = np.arange(6, dtype=np.float32)
for name, want in WANT.items():
    exported = jax.export.deserialize(open(f"{name}.bin", "rb").read())
    try:
        got = np.asarray(exported.call(x))
    except Exception as e:
        print(name, "raised", str(e).splitlines()[0])
    else:
        np.testing.assert_array_equal(got, eval(want))
        print(name, "ran")
"""


def _python(code: str, cwd, build) -> str:
    r = subprocess.run(
        [sys.executable, "-c", code],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        env=dict(os.environ, PYTHONPATH=os.pathsep.join([str(build / "python"), *map(os.path.abspath, sys.path[1:])])),
    )
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout


@pytest.mark.slow
def test_an_export_made_before_a_kernel_edit_fails_naming_the_op(tmp_path):
    """A package of two ops, CPU only, built with the source tree; both exported in a
    fresh process; `twice`'s body edited (2 x -> 3 x, same shapes, through a comment
    that ended in a backslash: SPLICED) and the package rebuilt; in another fresh
    process the old `twice` export fails, naming the op and saying the kernel changed,
    while the old `keep` export runs, as do new exports."""
    project = tmp_path / "pinned"
    (project / "specs").mkdir(parents=True)
    (project / "specs" / "twice.yaml").write_text(SPLICED)
    (project / "specs" / "keep.yaml").write_text(KEEP)
    gen = os.path.abspath(
        os.environ.get("OPSPEC_GEN")
        or shutil.which("opspec-gen", path=os.path.dirname(sys.executable))
        or ROOT / "build" / "generator" / "opspec-gen"
    )
    if not os.path.exists(gen):
        pytest.skip("opspec-gen not built (OPSPEC_REGENERATE=OFF)")
    # What opspecConfig.cmake sets up for an installed opspec, from the source tree and
    # the generator already built: no second build of opspec-gen.
    (project / "CMakeLists.txt").write_text(
        textwrap.dedent(f"""\
        cmake_minimum_required(VERSION 3.24)
        project(pinned LANGUAGES C)
        set(OPSPEC_VERSION "{opspec.__version__}")
        set(OPSPEC_CMAKE_DIR "{ROOT.as_posix()}/cmake")
        set(OPSPEC_RUNTIME_INCLUDE_DIR "{ROOT.as_posix()}/runtime/include")
        set(OPSPEC_RUNTIME_SOURCE_DIR "{ROOT.as_posix()}/runtime/src")
        set(OPSPEC_RUNTIME_SIM_DIR "{ROOT.as_posix()}/runtime/sim")
        set(OPSPEC_NATIVE_STUB "{ROOT.as_posix()}/runtime/python/opspec/_opspec.pyi")
        add_executable(opspec::opspec-gen IMPORTED)
        set_target_properties(opspec::opspec-gen PROPERTIES IMPORTED_LOCATION "{gen}")
        set(OPSPEC_GEN_TARGET opspec::opspec-gen)
        include("{ROOT.as_posix()}/cmake/OpspecExtension.cmake")
        opspec_add_extension(pinned SPECS specs CUDA OFF CUDA_SIM OFF)
        """)
    )
    build = project / "build"
    launcher = ["-DCMAKE_C_COMPILER_LAUNCHER=ccache"] if shutil.which("ccache") else []
    ninja = ["-G", "Ninja"] if shutil.which("ninja") else []

    def rebuild():
        r = subprocess.run(
            ["cmake", "--build", str(build), "-j", "2", "--target", "pinned_opspec"], capture_output=True, text=True
        )
        assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-4000:]

    r = subprocess.run(
        ["cmake", "-S", str(project), "-B", str(build), *ninja, *launcher, f"-DPython3_EXECUTABLE={sys.executable}"],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-4000:]
    rebuild()
    assert "exported" in _python(EXPORT.replace("TAG", "old"), project, build)

    (project / "specs" / "twice.yaml").write_text(UNSPLICED)
    rebuild()
    assert "exported" in _python(EXPORT.replace("TAG", "new"), project, build)
    want = {"twice_old": "2 * x", "keep_old": "x + 1", "twice_new": "3 * x", "keep_new": "x + 1"}
    out = _python(CALL.replace("WANT", repr(want)), project, build).splitlines()
    raised = [line for line in out if line.startswith("twice_old raised")]
    assert raised, out
    print(raised[0])
    assert "pinned twice: the kernel changed: this call of pinned.ops.twice was exported (or compiled) for" in raised[0]
    assert "(its body, prologue or kernels differ). Export the computation again" in raised[0], raised
    assert {"keep_old ran", "twice_new ran", "keep_new ran"} <= set(out), out


def test_the_handler_checks_the_recorded_fingerprint(rng):
    """Every call records its op's fingerprint (attribute opspec_kernel); the handler
    refuses another one, and runs a call that records none (an export from before)."""
    record = opspec.testing.op_record(ops.sigmoid)
    assert len(record.fingerprint) == 16 and int(record.fingerprint, 16) >= 0
    assert f'opspec_kernel = "{record.fingerprint}"' in jax.jit(ops.sigmoid).lower(np.ones(3)).as_text()
    x = rng.standard_normal(5)
    call = jax.ffi.ffi_call("opspec_sigmoid.cpu", jax.ShapeDtypeStruct(x.shape, x.dtype))
    np.testing.assert_allclose(call(x), 1 / (1 + np.exp(-x)), rtol=1e-12)  # none recorded
    np.testing.assert_allclose(call(x, opspec_kernel=record.fingerprint), 1 / (1 + np.exp(-x)), rtol=1e-12)
    other = f"{int(record.fingerprint, 16) ^ 1:016x}"
    try:
        jax.block_until_ready(call(x, opspec_kernel=other))
    except Exception as e:
        assert (
            f"opspec sigmoid: the kernel changed: this call of opspec.ops.sigmoid was exported (or compiled) for its "
            f"generated code with fingerprint {other}, but this build's is {record.fingerprint}"
        ) in str(e)
    else:
        raise AssertionError("a call recording another fingerprint ran")
    try:
        jax.block_until_ready(call(x, opspec_kernel=np.int64(1)))
    except Exception as e:
        assert "opspec sigmoid: attribute 'opspec_kernel': expected a string, got a scalar" in str(e)
    else:
        raise AssertionError("a fingerprint that is not a string was accepted")
    # With an attribute of the op's own beside it (leaky_relu's alpha sorts before it).
    lr = jax.ffi.ffi_call("opspec_leaky_relu.cpu", jax.ShapeDtypeStruct(x.shape, x.dtype))
    want = np.where(x > 0, x, 0.25 * x)
    fingerprint = opspec.testing.op_record(ops.leaky_relu).fingerprint
    np.testing.assert_allclose(lr(x, alpha=np.float64(0.25), opspec_kernel=fingerprint), want, rtol=1e-12)


def test_the_fingerprint_follows_the_code_not_the_spec_text(tmp_path):
    """opspec-gen's fingerprint: the same for a moved spec, an edited doc or comment;
    another for an edited body (and the record in ops.py carries the descriptor's)."""
    import re

    gen = os.path.abspath(
        os.environ.get("OPSPEC_GEN")
        or shutil.which("opspec-gen", path=os.path.dirname(sys.executable))
        or ROOT / "build" / "generator" / "opspec-gen"
    )
    if not os.path.exists(gen):
        pytest.skip("opspec-gen not built (OPSPEC_REGENERATE=OFF)")

    def fingerprint(text: str, folder: str) -> str:
        spec = tmp_path / folder / "twice.yaml"
        spec.parent.mkdir(parents=True)
        spec.write_text(text)
        out = tmp_path / folder / "out"
        r = subprocess.run([gen, "--quiet", "--out", str(out), str(spec)], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        c = re.search(r'\.fingerprint = "([0-9a-f]{16})"', (out / "ops" / "twice_ffi.c").read_text()).group(1)
        py = re.search(r'fingerprint="([0-9a-f]{16})"', (out / "python" / "ops.py").read_text()).group(1)
        assert c == py
        return c

    base = fingerprint(TWICE, "a")
    assert fingerprint("# a comment first\n" + TWICE.replace("the test edits", "a test edits"), "b/c") == base
    assert fingerprint(TWICE.replace("2 * x[i];", "2 * x[i]; /* twice */"), "d") == base
    assert fingerprint(TWICE.replace("2 * x[i];", "3 * x[i];"), "e") != base
    assert fingerprint(TWICE.replace("T: [float32, float64]", "T: [float32]"), "f") != base
    # A `//` comment ending in a backslash takes the next line with it, as the compiler
    # reads it: dropping the backslash brings that line into the kernel (2 x -> 3 x) and
    # changes the fingerprint; editing the swallowed line does not.
    spliced = SPLICED
    assert "comment \\\n" in spliced and UNSPLICED != SPLICED
    hidden = fingerprint(spliced, "g")
    assert fingerprint(spliced.replace("3 * x[i];", "4 * x[i];"), "h") == hidden
    assert fingerprint(UNSPLICED, "i") != hidden
    # C11 compilers read ??/ as a backslash (trigraphs) and GCC splices past white space.
    for k, end in enumerate(("??/\n", "\\ \n")):
        assert fingerprint(spliced.replace("\\\n", end), f"j{k}") != fingerprint(spliced.replace("\\\n", "\n"), f"k{k}")
