"""Specs written to break the generator: each is either rejected with a file:line:col
error (tests/fixtures/bad/, asserted by tests/c/test_spec.c) or, as here, accepted and
then built (C11 with -Werror, and nvcc when it is installed), imported and called.

The hostile-but-valid specs use every name the generated code once declared itself
(code, config, extents, output_bytes, failed_kernel, args, variant, stream, bound, err,
a scratch buffer named output), docs that end Python and C strings and comments early,
and expressions at the size and nesting limits."""

import json
import os
import pathlib
import shutil
import subprocess
import sys
import textwrap
import time

import pytest
from builds import register_tree_specs

ROOT = pathlib.Path(__file__).resolve().parents[2]
GEN = os.path.abspath(os.environ.get("OPSPEC_GEN", str(ROOT / "build" / "generator" / "opspec-gen")))

pytestmark = pytest.mark.skipif(not os.path.exists(GEN), reason="opspec-gen not built (OPSPEC_REGENERATE=OFF)")

# 31 parentheses deep and 128 nodes in all: both limits exactly.
_NESTED = "(" * 30 + "config" + ")" * 30
_AT_LIMIT = _NESTED + " + 0 * config" * 31 + " + -0"  # 1 + 31 * 4 + 3 = 128 nodes

HOSTILE = {
    "names_portable": f"""\
        op: names_portable
        doc: |
          Ends docstrings \"\"\" and comments */ early, \\N{{BULLET}} escapes, a trigraph ??/
          and a backslash at the end \\
        types: {{T: [float32, float64]}}
        inputs:
          - {{name: code, dtype: T, shape: [config]}}
          - {{name: extents, dtype: T, shape: [config]}}
        outputs:
          - {{name: variant, dtype: T, shape: ["{_AT_LIMIT}"]}}
        attrs:
          - {{name: output_bytes, type: int32, default: 2, doc: 'a \"\"\" doc, \\N{{DASH}} and */'}}
          - {{name: failed_kernel, type: float64, default: 1.5, doc: "quote \\" and backslash \\\\"}}
        launch: ["{_NESTED}"]
        threads_per_block: [128]
        kernel: |
          variant[i] = (T)(code[i] * failed_kernel) + extents[i] + (T)output_bytes;
        """,
    "names_raw": """\
        op: names_raw
        doc: Copies through a scratch buffer named output, with raw CPU and CUDA bodies.
        inputs:
          - {name: stream, dtype: float32, shape: [args]}
        outputs:
          - {name: err, dtype: float32, shape: [args]}
        scratch:
          - {name: output, dtype: float32, shape: [args]}
        attrs:
          - {name: bound, type: int64, default: 3}
        cpu: |
          for (int64_t p = 0; p < args; ++p) output[p] = stream[p] * (float)bound;
          for (int64_t p = 0; p < args; ++p) err[p] = output[p];
        cuda:
          - name: scale
            launch: [args]
            body: |
              const int64_t p = opspec_grid_x();
              if (p < args) output[p] = stream[p] * (float)bound;
          - name: copy
            launch: [args]
            body: |
              const int64_t p = opspec_grid_x();
              if (p < args) err[p] = output[p];
        """,
    "split_by": """\
        op: split_by
        doc: Keeps the first n / parts elements; parts may be zero at run time.
        inputs:
          - {name: x, dtype: float64, shape: [n]}
        outputs:
          - {name: y, dtype: float64, shape: [n / parts]}
        attrs:
          - {name: parts, type: int64}
        launch: [n / parts]
        kernel: |
          y[i] = x[i];
        """,
    "cube_add": """\
        op: cube_add
        doc: A 3-D portable launch, out = x + y along the last dim, batched natively on CUDA in one launch.
        types: {T: [float32, float64]}
        inputs:
          - {name: x, dtype: T, shape: [a, b, c]}
          - {name: y, dtype: T, shape: [c]}
        outputs:
          - {name: out, dtype: T, shape: [a, b, c]}
        launch: [a, b, c]
        kernel: |
          out[(i * b + j) * c + k] = x[(i * b + j) * c + k] + y[k];
        """,
    "fill_launch": """\
        op: fill_launch
        doc: A launch that can be empty while the output is not.
        inputs:
          - {name: x, dtype: float32, shape: [n]}
        outputs:
          - {name: y, dtype: float32, shape: [4]}
        launch: ["n * 0 + min(n, 4)"]
        kernel: |
          y[i] = x[i] + 1;
        """,
}


register_tree_specs(__name__, HOSTILE)


@pytest.fixture
def hostile_build(tree_build):
    """(project, build folder) of the project with the hostile specs, built as a user
    would: the session's one copy of the tree (builds.py), shared with the other modules
    that register specs there."""
    return tree_build


def run_python(build, code):
    env = dict(os.environ, PYTHONPATH=str(build / "python"))
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env, capture_output=True, text=True)


@pytest.mark.slow
def test_hostile_specs_build_import_and_run(hostile_build):
    project, build = hostile_build
    if shutil.which("nvcc"):
        assert list(build.rglob("names_raw_cuda.cu.o")), "the CUDA part was not built"
    r = run_python(
        build,
        """\
        import numpy as np, jax, opspec
        jax.config.update("jax_enable_x64", True)
        from opspec import ops
        rng = np.random.default_rng()
        for dtype in (np.float32, np.float64):
            code, extents = rng.random(37).astype(dtype), rng.random(37).astype(dtype)
            got = jax.jit(ops.names_portable)(code, extents)
            want = (code * 1.5).astype(dtype) + extents + 2
            np.testing.assert_allclose(got, want, rtol=1e-6)
            got = ops.names_portable(code, extents, output_bytes=-1, failed_kernel=0.25)
            np.testing.assert_allclose(got, (code * 0.25).astype(dtype) + extents - 1, rtol=1e-6)
        stream = rng.random(50).astype(np.float32)
        np.testing.assert_allclose(ops.names_raw(stream), stream * 3, rtol=1e-6)
        np.testing.assert_allclose(jax.jit(ops.names_raw, static_argnames="bound")(stream, bound=-2), stream * -2, rtol=1e-6)
        x = rng.random(12)
        np.testing.assert_array_equal(ops.split_by(x, parts=3), x[:4])
        try:
            ops.split_by(x, parts=0)
        except Exception as e:
            assert "split_by" in str(e), e
        else:
            raise AssertionError("a zero divisor was accepted")
        x = rng.random(3).astype(np.float32)
        np.testing.assert_allclose(ops.fill_launch(x)[:3], x + 1, rtol=1e-6)
        # A 3-D launch under (nested) vmap, y read in place: one launch on the simulator,
        # the batch in each thread's loop, as on CPU.
        X, y = rng.random((2, 3, 5, 7, 33)), rng.random(33)
        backends = ["cpu"] + (["cuda_sim"] if opspec.has_cuda_sim else [])
        for backend in backends:
            f = jax.vmap(jax.vmap(lambda v: ops.cube_add(v, y, backend=backend)))
            np.testing.assert_allclose(jax.jit(f)(X), X + y, rtol=1e-12)
        if opspec.has_cuda_sim:
            opspec.cuda_sim_launches()
            jax.block_until_ready(jax.vmap(lambda v: ops.cube_add(v, y, backend="cuda_sim"))(X[0]))
            assert len(opspec.cuda_sim_launches()) == 1
        import json
        print(json.dumps(ops.names_portable.__doc__))
        print("hostile ok")
        """,
    )
    assert r.returncode == 0, r.stderr[-4000:]
    assert "hostile ok" in r.stdout
    # The docs reach Python intact: quotes, backslashes and \N stay as written.
    doc = json.loads(r.stdout.splitlines()[-2])
    assert 'Ends docstrings """ and comments */ early, \\N{BULLET} escapes' in doc, doc
    assert "a backslash at the end \\" in doc, doc
    assert 'a """ doc, \\N{DASH} and */' in doc, doc
    assert 'quote " and backslash \\' in doc, doc


def write_specs(folder, specs):
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in specs.items():
        (folder / f"{name}.yaml").write_text(textwrap.dedent(text))


def test_ops_differing_only_in_case_are_rejected(tmp_path):
    base = HOSTILE["split_by"]
    write_specs(tmp_path / "specs", {"split_by": base, "Split_By": base.replace("op: split_by", "op: Split_By")})
    r = subprocess.run(
        [GEN, "--check", "specs/Split_By.yaml", "specs/split_by.yaml"], cwd=tmp_path, capture_output=True, text=True
    )
    assert r.returncode == 1
    assert "specs/split_by.yaml:1:5: error: op 'split_by' differs from op 'Split_By' only in case" in r.stderr, r.stderr
    assert "specs/Split_By.yaml:1:5: note: 'Split_By' is defined here" in r.stderr


def test_errors_are_capped_and_counted(tmp_path):
    lines = ["op: many", "inputs:"] + [f"  - {{name: x{i}, dtype: flaot32, shape: [n]}}" for i in range(30)]
    lines += ["outputs:", "  - {name: y, dtype: float32, shape: [n]}", "cpu: '(void)y;'"]
    (tmp_path / "many.yaml").write_text("\n".join(lines) + "\n")
    r = subprocess.run([GEN, "--check", "many.yaml"], cwd=tmp_path, capture_output=True, text=True)
    assert r.returncode == 1
    assert r.stderr.count(": error: unknown dtype 'flaot32'") == 20
    assert r.stderr.rstrip().endswith("30 errors (10 not shown; --max-errors 0 shows all); nothing was written")
    r = subprocess.run([GEN, "--check", "--max-errors", "0", "many.yaml"], cwd=tmp_path, capture_output=True, text=True)
    assert r.stderr.count(": error: unknown dtype 'flaot32'") == 30
    assert r.stderr.rstrip().endswith("30 errors; nothing was written")


def test_huge_specs_are_rejected_in_linear_time(tmp_path):
    """A 10 MB spec with 220,000 inputs once took minutes: the checker was quadratic."""

    def spec(n):
        body = "".join(f"  - {{name: input_number_{i}, dtype: float32, shape: [s{i}]}}\n" for i in range(n))
        return f"op: huge\ninputs:\n{body}outputs:\n  - {{name: y, dtype: float32, shape: [1]}}\ncpu: '(void)y;'\n"

    timings = {}
    for n in (20_000, 220_000):
        (tmp_path / "huge.yaml").write_text(spec(n))
        start = time.perf_counter()
        r = subprocess.run([GEN, "--check", "huge.yaml"], cwd=tmp_path, capture_output=True, text=True)
        timings[n] = time.perf_counter() - start
        assert r.returncode == 1
        assert f"huge.yaml:67:5: error: at most 64 inputs are supported, got {n}" in r.stderr, r.stderr[:2000]
        assert r.stderr.rstrip().endswith("1 error; nothing was written")
    assert (tmp_path / "huge.yaml").stat().st_size > 10_000_000
    # Linear: 11x the input may cost ~11x the time, never ~121x (allow noise).
    assert timings[220_000] < max(40 * timings[20_000], 5.0), timings


def test_flat_expression_of_200k_terms_is_an_error(tmp_path):
    terms = " + ".join(["n"] * 200_000)
    write_specs(
        tmp_path,
        {
            "flat": f"""\
        op: flat
        inputs:
          - {{name: x, dtype: float32, shape: [n]}}
        outputs:
          - {{name: y, dtype: float32, shape: [{terms}]}}
        cpu: '(void)x; (void)y;'
        """
        },
    )
    r = subprocess.run([GEN, "--check", "flat.yaml"], cwd=tmp_path, capture_output=True, text=True)
    assert r.returncode == 1
    assert "flat.yaml:5:293: error: expression has more than 128 terms and operators" in r.stderr


def test_a_template_error_writes_nothing(tmp_path):
    """All-or-nothing: an error rendering the last file leaves every other file unwritten."""
    templates = tmp_path / "templates"
    shutil.copytree(ROOT / "templates", templates)
    text = (templates / "ops.pyi.tmpl").read_text()
    (templates / "ops.pyi.tmpl").write_text(text + "{{ op.no_such_key }}\n")
    out = tmp_path / "out"
    r = subprocess.run(
        [GEN, "--out", str(out), "--templates", str(templates), "specs/add.yaml", "specs/relu.yaml"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert r.returncode == 1
    assert "ops.pyi.tmpl" in r.stderr
    assert not out.exists()


def test_spec_path_with_comment_end_and_quotes(tmp_path):
    """A path that holds */ and a quote stays inside the header comment and #line strings."""
    folder = tmp_path / 'we*/ird"dir'
    write_specs(folder, {"split_by": HOSTILE["split_by"]})
    out = tmp_path / "out"
    r = subprocess.run(
        [GEN, "--out", str(out), "--templates", str(ROOT / "templates"), str(folder / "split_by.yaml")],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr
    import jax

    for name in ("split_by_cpu.c", "split_by_ffi.c"):
        cc = subprocess.run(
            [
                "cc",
                "-std=c11",
                "-fopenmp",
                "-Wall",
                "-Wextra",
                "-Werror",
                "-fsyntax-only",
                "-I",
                str(ROOT / "runtime" / "include"),
                "-I",
                str(out),
                "-I",
                jax.ffi.include_dir(),
                str(out / "ops" / name),
            ],
            capture_output=True,
            text=True,
        )
        assert cc.returncode == 0, cc.stderr
