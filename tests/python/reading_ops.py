"""Test-only ops whose outputs at one position read other positions along a dim: the
class a sharding rule must never split (issue 19). Each is written as a new user would,
with correct unsharded results; each comes twice, as `<name>` with no `independent:`
(the sharding rule must gather it) and as `<name>_claimed`, which falsely declares the
dim independent (opspec.testing.check_op must say so). Plus `axpy`, truly element-wise,
two ops with a symbol twice in one array (`square_matvec`, `gram`), and `row_rms_norm`, a
portable kernel with one trip per row that loops over the row (threads by work:
test_parallel_work.py). And two float16 ops (test_lowp_tiles.py): `gated_gain`, whose
float16 variant runs its float32 kernel on tiles (int32 and float32 arrays moved with
the tile, a two-element float16 input widened whole), and `read_back`, which reads its
float16 output back and so keeps the in-loop conversions. And two 2-D float16 ops
(test_lowp_spans.py): `scaled_rows`, whose float16 rows run on spans (a leading
constant in its bases, a float32 array left as it is), and `swap_halves`, whose stores
run second half first, so that its rows fall back to converting in their loop.

`build(folder)` builds them once into the package `reading` (CMake, CUDA OFF: builds.py),
and returns the folder to put on sys.path / PYTHONPATH."""

import textwrap
from pathlib import Path

import builds
import numpy as np

SPECS = {
    "cumsum": (
        "[n]",
        """\
        doc: Cumulative sum, y[i] = x[0] + ... + x[i].
        types: {T: [float32, float64]}
        inputs:
          - {name: x, dtype: T, shape: [n]}
        outputs:
          - {name: y, dtype: T, shape: [n]}
        cpu: |
          T total = 0;
          for (int64_t i = 0; i < n; ++i) {
            total += x[i];
            y[i] = total;
          }
        """,
    ),
    "softmax": (
        "[n]",
        """\
        doc: Softmax over the last axis.
        types: {T: [float32, float64]}
        inputs:
          - {name: x, dtype: T, shape: [..., n]}
        outputs:
          - {name: y, dtype: T, shape: [..., n]}
        cpu: |
          const int64_t rows = n ? x_size / n : 0;
          for (int64_t r = 0; r < rows; ++r) {
            const T *in = x + r * n;
            T *out = y + r * n;
            T top = in[0];
            for (int64_t i = 1; i < n; ++i) top = in[i] > top ? in[i] : top;
            T total = 0;
            for (int64_t i = 0; i < n; ++i) {
              out[i] = (T)exp((double)(in[i] - top));
              total += out[i];
            }
            for (int64_t i = 0; i < n; ++i) out[i] /= total;
          }
        """,
    ),
    "stencil3": (
        "[n]",
        """\
        doc: 1-D 3-point stencil, y[i] = x[i-1] - 2 x[i] + x[i+1], zero outside.
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
        """,
    ),
    "stencil5": (
        "[m, n]",
        """\
        doc: 2-D 5-point stencil (Laplacian), zero outside.
        types: {T: [float32, float64]}
        inputs:
          - {name: x, dtype: T, shape: [m, n]}
        outputs:
          - {name: y, dtype: T, shape: [m, n]}
        launch: [m, n]
        kernel: |
          const T c = x[i * n + j];
          const T up = i > 0 ? x[(i - 1) * n + j] : (T)0;
          const T down = i + 1 < m ? x[(i + 1) * n + j] : (T)0;
          const T left = j > 0 ? x[i * n + j - 1] : (T)0;
          const T right = j + 1 < n ? x[i * n + j + 1] : (T)0;
          y[i * n + j] = up + down + left + right - 4 * c;
        """,
    ),
    "with_norm": (
        "[n]",
        """\
        doc: y_out = x, and its Euclidean norm into a second output.
        types: {T: [float32, float64]}
        inputs:
          - {name: x, dtype: T, shape: [n]}
        outputs:
          - {name: y_out, dtype: T, shape: [n]}
          - {name: norm, dtype: T, shape: [1]}
        cpu: |
          double total = 0;
          for (int64_t i = 0; i < n; ++i) {
            y_out[i] = x[i];
            total += (double)x[i] * (double)x[i];
          }
          norm[0] = (T)sqrt(total);
        """,
    ),
}

AXPY = """\
op: axpy
doc: out = a * x + y, element-wise, for arrays of any (equal) shape.
types: {T: [float32, float64]}
inputs:
  - {name: x, dtype: T, shape: [...]}
  - {name: y, dtype: T, shape: [...]}
outputs:
  - {name: out, dtype: T, shape: [...]}
attrs:
  - {name: a, type: float64, default: 2.0}
derivatives:
  x: {elementwise: "a"}
  y: {elementwise: "1"}
launch: [x_size]
kernel: |
  out[i] = (T)a * x[i] + y[i];
independent: [...]
"""

# A shape symbol twice in one array (issue 31 F1): a square input, and a Gram-matrix
# output whose contracted `c` is declared reducible. The sharding rule gives each
# repeated dim a factor of its own, replicated: every call is the unsharded one's.
SQUARE_MATVEC = """\
op: square_matvec
doc: y = A x for a square A.
types: {T: [float32, float64]}
inputs:
  - {name: A, dtype: T, shape: [n, n]}
  - {name: x, dtype: T, shape: [n]}
outputs:
  - {name: y, dtype: T, shape: [n]}
cpu: |
  for (int64_t i = 0; i < n; ++i) {
    T total = 0;
    for (int64_t j = 0; j < n; ++j) total += A[i * n + j] * x[j];
    y[i] = total;
  }
"""

GRAM = """\
op: gram
doc: G = X X^T, the Gram matrix of X's rows.
types: {T: [float32, float64]}
inputs:
  - {name: X, dtype: T, shape: [m, c]}
outputs:
  - {name: G, dtype: T, shape: [m, m]}
reduce: {c: sum}
cpu: |
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < m; ++j) {
      T total = 0;
      for (int64_t l = 0; l < c; ++l) total += X[i * c + l] * X[j * c + l];
      G[i * m + j] = total;
    }
  }
"""


# A row-wise op as a user writes one: one launch index per row, the body loops over the
# row's columns. Few long rows are few trips but much work (test_parallel_work.py).
ROW_RMS_NORM = """\
op: row_rms_norm
doc: Each row divided by its root mean square, y = x / sqrt(mean(x * x) + eps).
types: {T: [float32, float64]}
inputs:
  - {name: x, dtype: T, shape: [rows, cols]}
outputs:
  - {name: y, dtype: T, shape: [rows, cols]}
attrs:
  - {name: eps, type: float64, default: 1e-6}
launch: [rows]
kernel: |
  const T *in = x + i * cols;
  T *out = y + i * cols;
  double total = 0;
  for (int64_t j = 0; j < cols; ++j) total += (double)in[j] * in[j];
  const T scale = (T)(1 / sqrt(total / (double)cols + eps));
  for (int64_t j = 0; j < cols; ++j) out[j] = in[j] * scale;
independent: [rows]
"""


GATED_GAIN = """\
op: gated_gain
doc: out = x * g[0] + g[1] where keep is nonzero, else 0; wide is the same value in float32.
types: {T: [float32, float16]}
inputs:
  - {name: x, dtype: T, shape: [n]}
  - {name: keep, dtype: int32, shape: [n]}
  - {name: g, dtype: T, shape: [2]}
outputs:
  - {name: out, dtype: T, shape: [n]}
  - {name: wide, dtype: float32, shape: [n]}
launch: [n]
kernel: |
  const T v = x[i] * g[0] + g[1];
  out[i] = keep[i] ? v : (T)0;
  wide[i] = (float)v;
independent: [n]
"""

READ_BACK = """\
op: read_back
doc: y = x / 10, stored, then times 10 from what was stored (y read back).
types: {T: [float32, float16]}
inputs:
  - {name: x, dtype: T, shape: [n]}
outputs:
  - {name: y, dtype: T, shape: [n]}
launch: [n]
kernel: |
  y[i] = x[i] * (T)0.1;
  y[i] = y[i] * (T)10;
independent: [n]
"""

SCALED_ROWS = """\
op: scaled_rows
doc: y[r, c] = x[r, c] * w[c] + shift[r], shift float32 and read in the compute type.
types: {T: [float32, float16]}
inputs:
  - {name: x, dtype: T, shape: [rows, cols]}
  - {name: w, dtype: T, shape: [cols]}
  - {name: shift, dtype: float32, shape: [rows]}
outputs:
  - {name: y, dtype: T, shape: [rows, cols]}
launch: [rows, cols]
kernel: |
  const int64_t at = i * cols;
  y[at + j] = x[at + j] * w[j] + (T)shift[i];
independent: [rows]
"""

SWAP_HALVES = """\
op: swap_halves
doc: The two halves of each row of x swapped, the second half stored first.
types: {T: [float32, float16]}
inputs:
  - {name: x, dtype: T, shape: [rows, 2, half]}
outputs:
  - {name: y, dtype: T, shape: [rows, 2, half]}
launch: [rows, half]
kernel: |
  y[(2 * i + 1) * half + j] = x[2 * i * half + j];
  y[2 * i * half + j] = x[(2 * i + 1) * half + j];
independent: [rows]
"""


def reference(name: str, x: np.ndarray) -> tuple:
    """NumPy references of the reading ops (name without `_claimed`)."""
    if name == "cumsum":
        return (np.cumsum(x),)
    if name == "softmax":
        e = np.exp(x - x.max(axis=-1, keepdims=True))
        return (e / e.sum(axis=-1, keepdims=True),)
    if name == "stencil3":
        p = np.pad(x, 1)
        return (p[:-2] - 2 * x + p[2:],)
    if name == "stencil5":
        p = np.pad(x, 1)
        return (p[:-2, 1:-1] + p[2:, 1:-1] + p[1:-1, :-2] + p[1:-1, 2:] - 4 * x,)
    if name == "with_norm":
        return (x, np.array([np.sqrt((x * x).sum())]))
    raise KeyError(name)


def shape_of(name: str, size: int) -> tuple:
    """An input shape for op `name` with dims of about `size`."""
    return {"softmax": (3, size), "stencil5": (size, size + 2)}.get(name, (size,))


def build(folder: Path) -> Path:
    specs = {}
    for name, (dims, text) in SPECS.items():
        body = textwrap.dedent(text)
        specs[name] = f"op: {name}\n{body}"
        specs[f"{name}_claimed"] = f"op: {name}_claimed\n{body}independent: {dims}\n"
    specs["axpy"] = AXPY
    specs["square_matvec"] = SQUARE_MATVEC
    specs["gram"] = GRAM
    specs["row_rms_norm"] = ROW_RMS_NORM
    specs["gated_gain"] = GATED_GAIN
    specs["read_back"] = READ_BACK
    specs["scaled_rows"] = SCALED_ROWS
    specs["swap_halves"] = SWAP_HALVES
    project = folder / "reading"
    # Against the installed opspec's CMake package where there is one (no second build of
    # opspec-gen); else add_subdirectory() of this source tree.
    installed = builds.has_cmake_package()
    builds.write_package(project, "reading", specs, "CUDA OFF CUDA_SIM OFF", vendor=not installed)
    build_dir = project / "build"
    package = [f"-Dopspec_DIR={builds.cmake_dir()}"] if installed else []
    builds.configure(project, build_dir, "-DOPSPEC_CUDA=OFF", "-DBUILD_TESTING=OFF", *package)
    builds.cmake_build(build_dir, "reading_opspec")
    return build_dir / "python"
