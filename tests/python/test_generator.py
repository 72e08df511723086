"""opspec-gen as a user runs it: validation, write-if-changed, determinism, and the
whole flow of adding an op by dropping a spec into specs/ and rebuilding."""

import os
import pathlib
import re
import shutil
import subprocess
import sys
import textwrap

import pytest
from builds import register_tree_specs

ROOT = pathlib.Path(__file__).resolve().parents[2]
# OPSPEC_GEN (./run test: the build folder's), else the one installed next to this Python
# (pip), else the default build folder's.
GEN = os.path.abspath(
    os.environ.get("OPSPEC_GEN")
    or shutil.which("opspec-gen", path=os.path.dirname(sys.executable))
    or str(ROOT / "build" / "generator" / "opspec-gen")
)
SPECS = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "specs").glob("*.yaml"))

pytestmark = pytest.mark.skipif(not os.path.exists(GEN), reason="opspec-gen not built (OPSPEC_REGENERATE=OFF)")


def gen(*args, cwd=ROOT):
    return subprocess.run([GEN, *args], cwd=cwd, capture_output=True, text=True)


def snapshot(folder: pathlib.Path) -> dict:
    return {p.relative_to(folder): (p.read_bytes(), p.stat().st_mtime_ns) for p in folder.rglob("*") if p.is_file()}


def test_check_accepts_every_shipped_spec():
    r = gen("--check", *SPECS)
    assert r.returncode == 0, r.stderr
    assert f"{len(SPECS)} specs OK" in r.stdout


def test_output_matches_committed_generated(tmp_path):
    r = gen("--out", str(tmp_path), *SPECS)
    assert r.returncode == 0, r.stderr
    for path in tmp_path.rglob("*"):
        if path.is_file():
            committed = ROOT / "generated" / path.relative_to(tmp_path)
            # #line directives name the output folder; everything else is identical.
            got = path.read_text().replace(str(tmp_path), "generated")
            assert got == committed.read_text(), path


def test_portable_kernels_run_a_range_without_openmp():
    # The CPU handler runs a portable kernel's loop (runtime/src/handler.c): each variant
    # is a plain loop over the range it is handed, with no OpenMP of its own, so a serial
    # call never enters libgomp and the helpers are the runtime's (opspec/parallel.h).
    for path in sorted((ROOT / "generated" / "ops").glob("*_cpu.c")):
        spec = (ROOT / "specs" / (path.name[: -len("_cpu.c")] + ".yaml")).read_text()
        if "\ncpu:" in spec:
            continue  # a raw cpu body writes its own pragmas
        text = path.read_text()
        # `omp simd` only marks the innermost loop's iterations independent: no threads.
        assert "#pragma omp" not in text.replace("#pragma omp simd\n", ""), path
        # The kernel is written once and compiled once per variant: the file includes
        # itself with each variant's name (its head may be wrapped at 120 columns).
        heads = re.findall(r"^OPSPEC_CPU_CLONES static void OPSPEC_CPU_VARIANT\(([^)]*)\) \{", text, re.M)
        assert [" ".join(h.split()) for h in heads] == [
            "const void *opspec_argp, int64_t opspec_begin, int64_t opspec_end"
        ], path
        variants = re.findall(r"^#define OPSPEC_CPU_VARIANT +(opspec_\w+)$", text, re.M)
        assert variants and text.count(f'#include "ops/{path.name}"') == len(variants), path
        assert text.count("  for (int64_t i = opspec_begin; i < opspec_end; ++i)") == 1, path
        # float16 row spans (generator/plan/spans.h) add the span loop and a row's fallback.
        includes = 3 if "#ifdef OPSPEC_CPU_SPANS" in text else 1
        assert text.count(f'#include "ops/{path.name[: -len("_cpu.c")]}_body.inc"') == includes, path


def test_a_kernel_calling_erf_has_no_x86_64_v4_form(tmp_path):
    # libmvec's AVX-512 erff is 4 ulp off where XLA:CPU's budget is 2 (tests/c/test_vmath.c
    # measures each form): a kernel whose body calls erf is cloned without that form, and
    # one calling exp (within budget in every form) keeps it.
    for fn, clones in (("erf", "OPSPEC_CPU_CLONES_NO_V4"), ("exp", "OPSPEC_CPU_CLONES")):
        spec = tmp_path / f"my_{fn}.yaml"
        spec.write_text(
            textwrap.dedent(f"""\
                op: my_{fn}
                types: {{T: [float32, float64]}}
                inputs: [{{name: x, dtype: T, shape: [n]}}]
                outputs: [{{name: out, dtype: T, shape: [n]}}]
                launch: [n]
                kernel: |
                  out[i] = {fn}(x[i]);
                """)
        )
        out = tmp_path / f"out_{fn}"
        r = gen("--out", str(out), str(spec))
        assert r.returncode == 0, r.stderr
        text = (out / "ops" / f"my_{fn}_cpu.c").read_text()
        assert re.search(rf"^{clones} static void OPSPEC_CPU_VARIANT\(", text, re.M), text


def test_write_if_changed_and_deterministic(tmp_path):
    assert gen("--out", str(tmp_path), *SPECS).returncode == 0
    first = snapshot(tmp_path)
    r = gen("--out", str(tmp_path), *reversed(SPECS))
    assert r.returncode == 0 and "(0 changed" in r.stdout
    assert snapshot(tmp_path) == first


def test_bad_spec_writes_nothing(tmp_path):
    out = tmp_path / "out"
    r = gen(
        "--out", str(out), "specs/add.yaml", "tests/fixtures/bad/unknown_dtype.yaml", "tests/fixtures/bad/bad_vmap.yaml"
    )
    assert r.returncode == 1
    assert "tests/fixtures/bad/unknown_dtype.yaml:4:22: error: unknown dtype 'flaot32'" in r.stderr
    assert "tests/fixtures/bad/bad_vmap.yaml:6:7: error: unknown vmap method 'sideways'" in r.stderr
    assert "2 errors; nothing was written" in r.stderr
    assert not out.exists()


def test_removed_spec_leaves_no_stale_files(tmp_path):
    assert gen("--out", str(tmp_path), "specs/add.yaml", "specs/relu.yaml").returncode == 0
    assert (tmp_path / "ops" / "relu_cpu.c").exists()
    r = gen("--out", str(tmp_path), "specs/add.yaml")
    assert r.returncode == 0 and "5 stale removed" in r.stdout
    assert not (tmp_path / "ops" / "relu_cpu.c").exists()


def test_usage_errors():
    assert gen().returncode == 2
    r = gen("--frobnicate", "specs/add.yaml")
    assert r.returncode == 2 and "unknown option '--frobnicate'" in r.stderr


NEW_SPEC = textwrap.dedent("""\
    op: axpy
    doc: out = a * x + y, with the scalar a as an attribute.
    types: {T: [float32, float64]}
    inputs:
      - {name: x, dtype: T, shape: [...]}
      - {name: y, dtype: T, shape: [...]}
    outputs:
      - {name: out, dtype: T, shape: [...]}
    attrs:
      - {name: a, type: float64}
      - {name: bias, type: float32, default: 0.5}
    vmap: broadcast_all
    launch: [x_size]
    kernel: |
      out[i] = (T)(a * x[i]) + y[i] + bias;
    """)


# A body that reads a 2-byte array through a pointer: its bfloat16 and float16 variants
# cannot convert in the loop, so they compute as before (bfloat16 on float copies the
# handler makes, float16 in _Float16), and opspec-gen says where and why.
DEREF_SPEC = textwrap.dedent("""\
    op: deref_twice
    doc: out = 2 * x, read through a pointer.
    types: {T: [float32, float16, bfloat16]}
    inputs:
      - {name: x, dtype: T, shape: [...]}
    outputs:
      - {name: out, dtype: T, shape: [...]}
    launch: [x_size]
    kernel: |
      const T *p = x + i;
      out[i] = *p * (T)2;
    """)

register_tree_specs(__name__, {"axpy": NEW_SPEC, "deref_twice": DEREF_SPEC})


def test_a_body_that_cannot_convert_in_the_loop_gets_a_note_and_widening(tmp_path):
    specs = tmp_path / "specs"
    specs.mkdir()
    (specs / "deref_twice.yaml").write_text(DEREF_SPEC)
    r = gen(
        "--out", str(tmp_path / "gen"), "--templates", str(ROOT / "templates"), "specs/deref_twice.yaml", cwd=tmp_path
    )
    assert r.returncode == 0, r.stderr
    # The note points at the use, quotes its line with a caret, and says what it costs.
    assert "specs/deref_twice.yaml:11:13: note: 'p' is used through '*'" in r.stderr, r.stderr
    assert " 11 |   out[i] = *p * (T)2;\n    |             ^\n" in r.stderr, r.stderr
    assert "widens and narrows" in r.stderr and "_Float16" in r.stderr, r.stderr
    ops = tmp_path / "gen" / "ops"
    assert ".widens_bfloat16 = true," in (ops / "deref_twice_ffi.c").read_text()
    cpu = (ops / "deref_twice_cpu.c").read_text()
    assert "T = bfloat16, computed in float: the handler widens bfloat16 arrays to float and back." in cpu
    assert "T = float16, computed in _Float16" in cpu and "OPSPEC_CPU_LOWP" not in cpu
    assert "OPSPEC_CPU_LOWP" not in (ops / "deref_twice_body.inc").read_text()
    # A shipped spec converts in its loop, and gets no note.
    r = gen("--check", "specs/relu.yaml")
    assert r.returncode == 0 and "note:" not in r.stderr, r.stderr
    assert ".widens_bfloat16" not in (ROOT / "generated" / "ops" / "relu_ffi.c").read_text()


@pytest.mark.slow
def test_a_body_that_falls_back_still_computes_right(tree_build):
    """The widening path of a bfloat16 body that reads through a pointer (and float16 in
    _Float16) gives the right values, and the handler counts its float copies."""
    project, build = tree_build
    check = textwrap.dedent("""\
        import numpy as np, ml_dtypes, jax, opspec
        from opspec import _opspec
        for dtype in (ml_dtypes.bfloat16, np.float16, np.float32):
            x = np.random.default_rng(0).standard_normal(1000).astype(dtype)
            before = _opspec.widened_arrays()
            got = np.asarray(jax.jit(opspec.ops.deref_twice)(x))
            assert got.dtype == dtype
            np.testing.assert_array_equal(got.astype(np.float32), (x.astype(np.float32) * 2).astype(dtype).astype(np.float32))
            widened = _opspec.widened_arrays() - before
            assert widened == (2 if dtype == ml_dtypes.bfloat16 else 0), (dtype, widened)
        print("deref_twice ok")
        """)
    env = dict(os.environ, PYTHONPATH=str(build / "python"))
    r = subprocess.run([sys.executable, "-c", check], env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "deref_twice ok" in r.stdout


@pytest.mark.slow
def test_adding_a_spec_is_all_it_takes(tree_build):
    """Copy the project, drop in a new spec, build: opspec.ops.axpy exists and works.
    (The copy is the session's tree_build, builds.py: other modules' specs are there too.)"""
    project, build = tree_build
    assert (project / "generated" / "ops" / "axpy_ffi.c").exists()
    check = textwrap.dedent("""\
        import numpy as np, jax, opspec
        x, y = np.random.rand(100), np.random.rand(100)
        jax.config.update("jax_enable_x64", True)
        out = jax.jit(opspec.ops.axpy, static_argnames="a")(x, y, a=3.0)
        np.testing.assert_allclose(out, 3.0 * x + y + 0.5, rtol=1e-12)
        np.testing.assert_allclose(opspec.ops.axpy(x, y, a=2.0, bias=-1.0), 2.0 * x + y - 1.0, rtol=1e-12)
        try:
            opspec.ops.axpy(x, y)
        except TypeError as e:
            assert "axpy() missing 1 required keyword-only argument: 'a'" in str(e), e
        else:
            raise AssertionError("missing attribute accepted")
        print("axpy ok", opspec.ops.axpy.__doc__.strip())
        """)
    env = dict(os.environ, PYTHONPATH=str(build / "python"))
    r = subprocess.run([sys.executable, "-c", check], env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "axpy ok out = a * x + y" in r.stdout


def test_compiler_errors_in_a_body_point_into_the_yaml(tmp_path):
    """#line directives: a mistake in a kernel body is reported at its line in the spec."""
    specs = tmp_path / "specs"
    specs.mkdir()
    (specs / "broken.yaml").write_text(
        textwrap.dedent("""\
        op: broken
        inputs:
          - {name: x, dtype: float32, shape: [n]}
        outputs:
          - {name: out, dtype: float32, shape: [n]}
        launch: [n]
        kernel: |
          const float v = x[i];
          out[i] = v + undefined_name;
        """)
    )
    r = gen("--out", str(tmp_path / "gen"), "--templates", str(ROOT / "templates"), "specs/broken.yaml", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    import jax

    cc = subprocess.run(
        [
            "cc",
            "-std=c11",
            "-fsyntax-only",
            "-I",
            str(ROOT / "runtime" / "include"),
            "-I",
            str(tmp_path / "gen"),
            "-I",
            jax.ffi.include_dir(),
            str(tmp_path / "gen" / "ops" / "broken_cpu.c"),
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert cc.returncode != 0
    # Line and column are the spec's: the body keeps the YAML block's indentation.
    assert "specs/broken.yaml:9:16:" in cc.stderr and "undefined_name" in cc.stderr, cc.stderr


def test_compiler_errors_in_a_prologue_point_into_the_yaml(tmp_path):
    """The prologue is inlined with a #line into the spec; the launch indices are not in
    scope there, so using one is an error at the prologue's line."""
    specs = tmp_path / "specs"
    specs.mkdir()
    (specs / "early.yaml").write_text(
        textwrap.dedent("""\
        op: early
        inputs:
          - {name: x, dtype: float32, shape: [n]}
        outputs:
          - {name: out, dtype: float32, shape: [n]}
        launch: [n]
        prologue: |
          const float first = x[i];
        kernel: |
          out[i] = x[i] - first;
        """)
    )
    r = gen("--out", str(tmp_path / "gen"), "--templates", str(ROOT / "templates"), "specs/early.yaml", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    import jax

    cc = subprocess.run(
        ["cc", "-std=c11", "-fsyntax-only", "-I", str(ROOT / "runtime" / "include"), "-I", str(tmp_path / "gen")]
        + ["-I", jax.ffi.include_dir(), str(tmp_path / "gen" / "ops" / "early_cpu.c")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert cc.returncode != 0
    assert "specs/early.yaml:8:25:" in cc.stderr and "undeclared" in cc.stderr, cc.stderr


def test_float_defaults_shown_as_python_writes_them(tmp_path):
    # help() shows an attribute's default as the generated signature spells it: the
    # shortest text that reads back as the same double, as Python's repr writes it
    # (`default: 1e-6` is 1e-06, not 9.9999999999999995e-07).
    rng = __import__("random").Random(30)
    written = ["1e-6", "0.1", "1e20", "100000", "2.5e-5", "-0.0", "123456789012345678", "3"]
    written += [repr(rng.uniform(-1e3, 1e3)) for _ in range(4)] + [f"{rng.uniform(1, 10):.3e}" for _ in range(4)]
    attrs = "".join(f"  - {{name: a{i}, type: float64, default: {t}}}\n" for i, t in enumerate(written))
    spec = tmp_path / "defaults.yaml"
    spec.write_text(
        "op: defaults\ninputs:\n  - {name: x, dtype: float32, shape: [n]}\n"
        "outputs:\n  - {name: y, dtype: float32, shape: [n]}\n"
        f"attrs:\n{attrs}launch: [n]\nkernel: |\n  y[i] = x[i];\n"
    )
    r = gen("--out", str(tmp_path / "out"), str(spec))
    assert r.returncode == 0, r.stderr
    stub = (tmp_path / "out" / "python" / "ops.pyi").read_text()
    for i, t in enumerate(written):
        assert f"    a{i}: float = {float(t)!r},\n" in stub, (t, stub)
        assert f"a{i} (float64, default {float(t)!r})" in stub


# float16 tiles (generator/plan/tiles.c): a float16 variant runs the float32 kernel on
# tiles only where the body touches its arrays at the launch index alone.
TILE_SPEC = """\
op: tiles_{name}
doc: A float16 tile case.
types: {{T: [float32, float16]}}
inputs:
  - {{name: x, dtype: T, shape: [{xdim}]}}
  - {{name: w, dtype: T, shape: [{wsize}]}}
  - {{name: idx, dtype: int32, shape: [n]}}
outputs:
  - {{name: out, dtype: T, shape: [n]}}
launch: {launch}
prologue: |
  {prologue}
kernel: |
  {body}
"""

TILE_CASES = {
    # name: (tiles?, launch, w's size, body)
    "yes": (True, "[n]", 2, "out[i] = idx[i] ? x[i] * w[0] : w[1];"),
    "index_as_value": (False, "[n]", 2, "out[i] = x[i] * (T)i;"),
    "neighbour": (False, "[n]", 2, "out[i] = x[i] + x[i > 0 ? i - 1 : 0];"),
    "read_back": (False, "[n]", 2, "out[i] = x[i]; out[i] = out[i] * w[0];"),
    "compound": (False, "[n]", 2, "out[i] = x[i]; out[i] += w[0];"),
    "large_whole": (False, "[n]", 65, "out[i] = x[i] * w[64];"),
    "int_elsewhere": (False, "[n]", 2, "out[i] = x[i] * (T)idx[0] + (T)idx[i];"),
    "two_dims": (False, "[n, 1]", 2, "out[i] = x[i] * w[j];"),
    # an element left unwritten keeps its bits in the loop (an aliased input's): no tiles
    "conditional_store": (False, "[n]", 2, "if (x[i] > w[0]) out[i] = x[i];"),
    "store_in_block": (False, "[n]", 2, "if (idx[i]) { out[i] = x[i]; }"),
    "store_in_else": (False, "[n]", 2, "if (idx[i]) out[i] = x[i]; else out[i] = w[1];"),
    "store_after_if": (True, "[n]", 2, "T v = x[i] * w[0]; if (idx[i]) { v = w[1]; } out[i] = v;"),
    # a digraph brace hides the block around a store
    "digraph_block": (False, "[n]", 2, "if (idx[i]) <% out[i] = x[i]; %> out[i] = w[0];"),
    # x may have fewer elements than the launch, read only where idx says: a tile would read past it
    "short_input": (False, "[n]", 2, "out[i] = idx[i] ? x[i] : w[0];", "m"),
    "launch_expression": (False, "[n * 1]", 2, "out[i] = x[i] * w[0];"),
    "launch_by_size": (True, "[x_size]", 2, "out[i] = x[i] * w[0];"),
    # the prologue runs once per tile
    "prologue_loop": (
        False,
        "[n]",
        2,
        "out[i] = x[i] * (T)peak;",
        "n",
        "int peak = 0; for (int k = 0; k < 3; ++k) peak += k;",
    ),
    "prologue_plain": (True, "[n]", 2, "out[i] = x[i] * first;", "n", "const T first = w[0];"),
}


@pytest.mark.parametrize("name", list(TILE_CASES))
def test_float16_tiles_only_where_arrays_are_touched_at_the_launch_index(tmp_path, name):
    tiles, launch, wsize, body, *more = TILE_CASES[name]
    xdim, prologue = (more + ["n", "(void)0;"][len(more) :])[:2]
    specs = tmp_path / "specs"
    specs.mkdir()
    text = TILE_SPEC.format(name=name, launch=launch, wsize=wsize, body=body, xdim=xdim, prologue=prologue)
    (specs / f"tiles_{name}.yaml").write_text(text)
    r = gen(
        "--out", str(tmp_path / "gen"), "--templates", str(ROOT / "templates"), f"specs/tiles_{name}.yaml", cwd=tmp_path
    )
    assert r.returncode == 0, r.stderr
    cpu = (tmp_path / "gen" / "ops" / f"tiles_{name}_cpu.c").read_text()
    assert (f"opspec_tiles_{name}_cpu_float32(&opspec_tile, 0, opspec_n);" in cpu) == tiles, cpu
    assert (f"#define OPSPEC_CPU_VARIANT opspec_tiles_{name}_cpu_float16" in cpu) != tiles
    if tiles:
        moved = "opspec_tile.idx.data = (const int32_t *)opspec_args->idx.data + opspec_at;"
        assert (moved in cpu) == ("idx[i]" in body)
        assert "opspec_float16_widen_tile(w_whole, opspec_args->w.data, 2);" in cpu
        assert "opspec_float16_narrow_tile((uint16_t *)opspec_args->out.data + opspec_at, out_tile, opspec_n);" in cpu


SPAN_SPEC = """\
op: spans_{name}
doc: A float16 row span case.
types: {{T: [float32, float16]}}
inputs:
  - {{name: x, dtype: T, shape: [rows, cols]}}
  - {{name: w, dtype: T, shape: [cols]}}
outputs:
  - {{name: y, dtype: T, shape: [rows, cols]}}
launch: [rows, cols]
kernel: |
  {body}
"""

SPAN_CASES = {
    # name: (spans?, body)
    "plain": (True, "y[i * cols + j] = x[i * cols + j] * w[j];"),
    "leading_constant": (True, "const int64_t at = i * cols; y[at + j] = x[at + j] * w[j];"),
    "branch": (False, "y[i * cols + j] = x[i * cols + j] > 0 ? x[i * cols + j] : w[j];"),
    "and_and": (False, "y[i * cols + j] = (T)(x[i * cols + j] > 0 && w[j] > 0);"),
    # a digraph brace (an empty block here) or trigraph the scan would not see through
    "digraph": (False, "y[i * cols + j] = x[i * cols + j] * w[j]; <% %>"),
    # a base that moves with j, or names what a row's pass cannot evaluate
    "base_with_j": (False, "y[i * cols + j] = x[i * cols + j * 1] * w[j];"),
    "base_names_a_local": (False, "int64_t at = i * cols; y[at + j] = x[at + j] * w[j];"),
    # a slice's address taken, or a name the bases read stepped after them
    "address_taken": (False, "const T *p = &x[i * cols + j]; y[i * cols + j] = *p * w[j];"),
    "index_stepped": (False, "y[i * cols + j] = x[i * cols + j] * w[j]; i += 0;"),
}


@pytest.mark.parametrize("name", list(SPAN_CASES))
def test_float16_row_spans_only_for_plain_row_slices(tmp_path, name):
    spans, body = SPAN_CASES[name]
    specs = tmp_path / "specs"
    specs.mkdir()
    (specs / f"spans_{name}.yaml").write_text(SPAN_SPEC.format(name=name, body=body))
    r = gen(
        "--out", str(tmp_path / "gen"), "--templates", str(ROOT / "templates"), f"specs/spans_{name}.yaml", cwd=tmp_path
    )
    assert r.returncode == 0, r.stderr
    cpu = (tmp_path / "gen" / "ops" / f"spans_{name}_cpu.c").read_text()
    assert ("#define OPSPEC_CPU_SPANS" in cpu) == spans, cpu
