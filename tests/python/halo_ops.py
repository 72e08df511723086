"""Test-only stencils that declare `halo:` (docs/spec.md, "halo"), each with a boundary
branch of its own, written as a new user would: a 1-D 3-point stencil, a 2-D 5-point
Laplacian, a causal filter (radius [2, 0]) with its transpose (radius [0, 2]), a 1-D
stencil whose edges are copied, not zero-padded, and two linear stencils whose transposes
opspec derives (`linear: halo`). `build(folder)` builds them once into the package `halos` (CMake, CUDA OFF:
builds.py) and returns the folder to put on sys.path / PYTHONPATH (`build_example`:
examples/stencils as the package `stencils`); `reference` gives
their NumPy results."""

from pathlib import Path

import builds
import numpy as np

SPECS = {
    "stencil3": """\
        op: stencil3
        doc: 1-D 3-point stencil, y[i] = x[i-1] - 2 x[i] + x[i+1], zero outside.
        types: {T: [int32, float32, float64]}
        inputs:
          - {name: x, dtype: T, shape: [n]}
        outputs:
          - {name: y, dtype: T, shape: [n]}
        launch: [n]
        kernel: |
          const T left = i > 0 ? x[i - 1] : (T)0;
          const T right = i + 1 < n ? x[i + 1] : (T)0;
          y[i] = left - 2 * x[i] + right;
        halo: {n: 1}
        """,
    "laplace5": """\
        op: laplace5
        doc: 2-D 5-point Laplacian, zero outside.
        types: {T: [int32, float64]}
        inputs:
          - {name: u, dtype: T, shape: [m, n]}
        outputs:
          - {name: out, dtype: T, shape: [m, n]}
        launch: [m, n]
        kernel: |
          const T c = u[i * n + j];
          const T up = i > 0 ? u[(i - 1) * n + j] : (T)0;
          const T down = i + 1 < m ? u[(i + 1) * n + j] : (T)0;
          const T left = j > 0 ? u[i * n + j - 1] : (T)0;
          const T right = j + 1 < n ? u[i * n + j + 1] : (T)0;
          out[i * n + j] = up + down + left + right - 4 * c;
        halo: {m: 1, n: 1}
        """,
    "causal3": """\
        op: causal3
        doc: Causal filter along a sequence, y[i] = x[i] + 2 x[i-1] + 3 x[i-2], zero before it.
        types: {T: [float32, float64]}
        inputs:
          - {name: x, dtype: T, shape: [n]}
        outputs:
          - {name: y, dtype: T, shape: [n]}
        launch: [n]
        kernel: |
          T acc = x[i];
          if (i >= 1) acc += 2 * x[i - 1];
          if (i >= 2) acc += 3 * x[i - 2];
          y[i] = acc;
        halo: {n: [2, 0]}
        derivatives:
          x: {transpose: "ops.anticausal3(y_bar)"}  # the mirrored stencil
        """,
    "anticausal3": """\
        op: anticausal3
        doc: The transpose of causal3, y[i] = x[i] + 2 x[i+1] + 3 x[i+2], zero after it.
        types: {T: [float32, float64]}
        inputs:
          - {name: x, dtype: T, shape: [n]}
        outputs:
          - {name: y, dtype: T, shape: [n]}
        launch: [n]
        kernel: |
          T acc = x[i];
          if (i + 1 < n) acc += 2 * x[i + 1];
          if (i + 2 < n) acc += 3 * x[i + 2];
          y[i] = acc;
        halo: {n: [0, 2]}
        derivatives:
          x: {transpose: "ops.causal3(y_bar)"}
        """,
    "smooth_edges": """\
        op: smooth_edges
        doc: 1-D smoothing (x[i-1] + 2 x[i] + x[i+1]) / 4 inside; the two edge values are kept.
        types: {T: [float32, float64]}
        inputs:
          - {name: x, dtype: T, shape: [n]}
        outputs:
          - {name: y, dtype: T, shape: [n]}
        launch: [n]
        kernel: |
          if (i == 0 || i == n - 1)
            y[i] = x[i];
          else
            y[i] = (x[i - 1] + 2 * x[i] + x[i + 1]) / 4;
        halo: {n: 1}
        """,
    "diff_energy": """\
        op: diff_energy
        doc: "e[i] = sum over channels of (x[i, c] - x[i-1, c])^2, x[-1] = 0; a halo along n, reduced along c."
        types: {T: [float64]}
        inputs:
          - {name: x, dtype: T, shape: [n, c]}
        outputs:
          - {name: e, dtype: T, shape: [n]}
        launch: [n]
        kernel: |
          T acc = 0;
          for (int64_t k = 0; k < c; ++k) {
            const T d = x[i * c + k] - (i > 0 ? x[(i - 1) * c + k] : (T)0);
            acc += d * d;
          }
          e[i] = acc;
        halo: {n: [1, 0]}
        reduce: {c: sum}
        """,
    # Linear stencils whose transposes opspec derives (`linear: halo`): the causal filter
    # again, and a 2-D one-sided stencil with weights of its own on the edges.
    "causal3_linear": """\
        op: causal3_linear
        doc: causal3, its transpose derived from the op.
        types: {T: [float32, float64]}
        inputs:
          - {name: x, dtype: T, shape: [n]}
        outputs:
          - {name: y, dtype: T, shape: [n]}
        launch: [n]
        kernel: |
          T acc = x[i];
          if (i >= 1) acc += 2 * x[i - 1];
          if (i >= 2) acc += 3 * x[i - 2];
          y[i] = acc;
        halo: {n: [2, 0]}
        derivatives:
          x: {linear: halo}
        """,
    "upwind2": """\
        op: upwind2
        doc: "2-D one-sided, y[i, j] = 2 x[i, j] - x[i-1, j] + 3 x[i, j+1] inside; 5 x[i, j] on the first row."
        types: {T: [float32, float64]}
        inputs:
          - {name: x, dtype: T, shape: [m, n]}
        outputs:
          - {name: y, dtype: T, shape: [m, n]}
        launch: [m, n]
        kernel: |
          if (i == 0) {
            y[i * n + j] = 5 * x[i * n + j];
          } else {
            const T right = j + 1 < n ? x[i * n + j + 1] : (T)0;
            y[i * n + j] = 2 * x[i * n + j] - x[(i - 1) * n + j] + 3 * right;
          }
        halo: {m: [1, 0], n: [0, 1]}
        derivatives:
          x: {linear: halo}
        """,
    # Two false declarations, for check_op: a radius too small, and a body that reads its
    # absolute index (right on the whole array, wrong on a block).
    "stencil3_narrow": """\
        op: stencil3_narrow
        doc: stencil3, declared with a radius of 0.
        types: {T: [float32, float64]}
        inputs:
          - {name: x, dtype: T, shape: [n]}
        outputs:
          - {name: y, dtype: T, shape: [n]}
        launch: [n]
        kernel: |
          const T left = i > 0 ? x[i - 1] : (T)0;
          const T right = i + 1 < n ? x[i + 1] : (T)0;
          y[i] = left - 2 * x[i] + right;
        halo: {n: 0}
        """,
    "ramp": """\
        op: ramp
        doc: y[i] = i * x[i] + x[i - 1], which reads its absolute index.
        types: {T: [float32, float64]}
        inputs:
          - {name: x, dtype: T, shape: [n]}
        outputs:
          - {name: y, dtype: T, shape: [n]}
        launch: [n]
        kernel: |
          y[i] = (T)i * x[i] + (i > 0 ? x[i - 1] : (T)0);
        halo: {n: [1, 0]}
        """,
}


EXAMPLE = Path(__file__).parents[2] / "examples" / "stencils"


def _build(folder: Path, name: str, specs: dict) -> Path:
    project = folder / name
    installed = builds.has_cmake_package()
    builds.write_package(project, name, specs, "CUDA OFF CUDA_SIM OFF", vendor=not installed)
    build_dir = project / "build"
    package = [f"-Dopspec_DIR={builds.cmake_dir()}"] if installed else []
    builds.configure(project, build_dir, "-DOPSPEC_CUDA=OFF", "-DBUILD_TESTING=OFF", *package)
    builds.cmake_build(build_dir, f"{name}_opspec")
    return build_dir / "python"


def build(folder: Path) -> Path:
    return _build(folder, "halos", SPECS)


def build_example(folder: Path) -> Path:
    """examples/stencils' specs as the package `stencils`, as its CMakeLists.txt builds it."""
    return _build(folder, "stencils", {p.stem: p.read_text() for p in sorted((EXAMPLE / "specs").glob("*.yaml"))})


def reference(name: str, x: np.ndarray) -> np.ndarray:
    """NumPy results of the ops, in x's dtype."""
    if name == "stencil3":
        p = np.pad(x, 1)
        return p[:-2] - 2 * x + p[2:]
    if name == "laplace5":
        p = np.pad(x, 1)
        return p[:-2, 1:-1] + p[2:, 1:-1] + p[1:-1, :-2] + p[1:-1, 2:] - 4 * x
    if name == "causal3":
        p = np.pad(x, (2, 0))
        return x + 2 * p[1:-1] + 3 * p[:-2]
    if name == "anticausal3":
        p = np.pad(x, (0, 2))
        return x + 2 * p[1:-1] + 3 * p[2:]
    if name == "causal3_linear":
        return reference("causal3", x)
    if name == "upwind2":
        right = np.pad(x, ((0, 0), (0, 1)))[:, 1:]
        y = 2 * x - np.pad(x, ((1, 0), (0, 0)))[:-1] + 3 * right
        y[0] = 5 * x[0]
        return y
    if name == "diff_energy":
        d = x - np.pad(x, ((1, 0), (0, 0)))[:-1]
        return (d * d).sum(axis=1)
    if name == "smooth_edges":
        y = x.copy()
        y[1:-1] = (x[:-2] + 2 * x[1:-1] + x[2:]) / 4
        return y
    raise KeyError(name)
