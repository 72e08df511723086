"""Test-only ops with the mistakes opspec.testing.check_op must catch (issues 30 and 31),
and six kinds of op whose derivatives it checks in their own precision, each written as
a new user would, in a package `checking` (CMake, CPU only: builds.py):

- `argmax_claimed`: a row argmax that falsely declares `reduce: {n: max}` (each piece
  returns its own index);
- `relu_dropping` (`x > 0 ? x : 0`, which turns NaN into 0) and `relu_keeping`
  (NaN stays NaN, as jnp.maximum);
- `pairs_unwritten`: a pair loop over `d` that leaves the last column unwritten when `d`
  is odd;
- `silu` (element-wise), `rms_norm` (a row norm), `softmax_xent` (softmax cross-entropy
  with integer labels), `rotary` (rotary position embedding, pairs of columns),
  `embedding_bag` (a sum of gathered table rows), `attention` (one head): float32,
  float64, bfloat16 and float16, with their true derivatives. `DERIVATIVES` holds the
  same formulas for opspec.testing.with_derivatives, where the tests scale one by 1.2.

`build(folder)` builds the package once and returns the folder to put on sys.path.
"""

from __future__ import annotations

from pathlib import Path

import builds
import numpy as np

FLOATS = "{T: [float32, float64, bfloat16, float16]}"

SOFTMAX = "jax.nn.softmax(q @ key.T / d ** 0.5, axis=-1)"
# The tangent of softmax(S) for S's tangent dS: P * (dS - sum(P * dS)).
ATTENTION_JVP = f"({SOFTMAX} * ({{ds}} - jnp.sum({SOFTMAX} * ({{ds}}), axis=-1, keepdims=True))) @ v"

# Each op's derivative formulas: {input: (kind, formula)}, as its spec writes them.
DERIVATIVES = {
    "silu": {"x": ("elementwise", "jax.nn.sigmoid(x) * (1 + x * (1 - jax.nn.sigmoid(x)))")},
    "rms_norm": {
        "x": (
            "jvp",
            "w * (x_dot - x * jnp.mean(x * x_dot, axis=-1, keepdims=True) / (jnp.mean(x * x, axis=-1, keepdims=True)"
            " + eps)) / jnp.sqrt(jnp.mean(x * x, axis=-1, keepdims=True) + eps)",
        ),
        "w": ("jvp", "x * w_dot / jnp.sqrt(jnp.mean(x * x, axis=-1, keepdims=True) + eps)"),
    },
    "softmax_xent": {
        "logits": (
            "jvp",
            "jnp.sum((jax.nn.softmax(logits, axis=-1) - jax.nn.one_hot(labels, c, dtype=logits.dtype)) * logits_dot,"
            " axis=-1)",
        ),
    },
    "rotary": {
        "x": (
            "jvp",
            "jnp.stack([x_dot[:, 0::2] * jnp.cos(jnp.arange(t)[:, None] * theta ** (-jnp.arange(0, d, 2) / d))"
            ".astype(x.dtype) - x_dot[:, 1::2] * jnp.sin(jnp.arange(t)[:, None] * theta ** (-jnp.arange(0, d, 2) / d))"
            ".astype(x.dtype), x_dot[:, 0::2] * jnp.sin(jnp.arange(t)[:, None] * theta ** (-jnp.arange(0, d, 2) / d))"
            ".astype(x.dtype) + x_dot[:, 1::2] * jnp.cos(jnp.arange(t)[:, None] * theta ** (-jnp.arange(0, d, 2) / d))"
            ".astype(x.dtype)], axis=-1).reshape(t, d)",
        ),
    },
    "embedding_bag": {"table": ("jvp", "jnp.sum(table_dot[idx], axis=1)")},
    "attention": {
        "q": ("jvp", ATTENTION_JVP.format(ds="q_dot @ key.T / d ** 0.5")),
        "key": ("jvp", ATTENTION_JVP.format(ds="q @ key_dot.T / d ** 0.5")),
        "v": ("jvp", f"{SOFTMAX} @ v_dot"),
    },
}


def _derivatives(op: str) -> str:
    lines = ["derivatives:"]
    for name, (kind, formula) in DERIVATIVES[op].items():
        lines.append(f"  {name}: {{{kind}: {formula!r}}}".replace("'", '"'))
    return "\n".join(lines) + "\n"


SPECS = {
    "argmax_claimed": """\
        doc: The index of each row's largest element; falsely claims that the maxima of pieces combine.
        types: {T: [float32, float64]}
        inputs:
          - {name: x, dtype: T, shape: [m, n]}
        outputs:
          - {name: out, dtype: int32, shape: [m]}
        reduce: {n: max}
        cpu: |
          for (int64_t r = 0; r < m; ++r) {
            int64_t best = 0;
            for (int64_t j = 1; j < n; ++j)
              if (x[r * n + j] > x[r * n + best]) best = j;
            out[r] = (int32_t)best;
          }
        """,
    "relu_dropping": """\
        doc: max(x, 0), written so that NaN becomes 0.
        types: {T: [float32, float64]}
        inputs:
          - {name: x, dtype: T, shape: [...]}
        outputs:
          - {name: y, dtype: T, shape: [...]}
        derivatives:
          x: {elementwise: "x > 0"}
        cpu: |
          for (int64_t i = 0; i < x_size; ++i) y[i] = x[i] > 0 ? x[i] : (T)0;
        """,
    "relu_keeping": """\
        doc: max(x, 0) with NaN kept, as jnp.maximum.
        types: {T: [float32, float64]}
        inputs:
          - {name: x, dtype: T, shape: [...]}
        outputs:
          - {name: y, dtype: T, shape: [...]}
        derivatives:
          x: {elementwise: "x > 0"}
        cpu: |
          for (int64_t i = 0; i < x_size; ++i) y[i] = x[i] <= 0 ? (T)0 : x[i];
        """,
    "pairs_unwritten": """\
        doc: Rotates each pair of columns by 90 degrees; leaves the last column unwritten when d is odd.
        types: {T: [float32, float64, bfloat16]}
        inputs:
          - {name: x, dtype: T, shape: [rows, d]}
        outputs:
          - {name: y, dtype: T, shape: [rows, d]}
        cpu: |
          for (int64_t r = 0; r < rows; ++r)
            for (int64_t k = 0; k + 1 < d; k += 2) {
              y[r * d + k] = -x[r * d + k + 1];
              y[r * d + k + 1] = x[r * d + k];
            }
        """,
    "silu": f"""\
        doc: x * sigmoid(x), element-wise.
        types: {FLOATS}
        inputs:
          - {{name: x, dtype: T, shape: [...]}}
        outputs:
          - {{name: y, dtype: T, shape: [...]}}
        cpu: |
          for (int64_t i = 0; i < x_size; ++i) {{
            const double v = (double)x[i];
            y[i] = (T)(v / (1 + exp(-v)));
          }}
        """,
    "rms_norm": f"""\
        doc: Each row of x divided by its root mean square, times w.
        types: {FLOATS}
        inputs:
          - {{name: x, dtype: T, shape: [r, n]}}
          - {{name: w, dtype: T, shape: [n]}}
        outputs:
          - {{name: y, dtype: T, shape: [r, n]}}
        attrs:
          - {{name: eps, type: float64, default: 1.0e-5}}
        cpu: |
          for (int64_t row = 0; row < r; ++row) {{
            double total = 0;
            for (int64_t j = 0; j < n; ++j) total += (double)x[row * n + j] * (double)x[row * n + j];
            const double s = 1 / sqrt(total / (double)n + eps);
            for (int64_t j = 0; j < n; ++j) y[row * n + j] = (T)((double)x[row * n + j] * s * (double)w[j]);
          }}
        """,
    "softmax_xent": f"""\
        doc: Softmax cross-entropy of each row of logits with its integer label.
        types: {FLOATS}
        inputs:
          - {{name: logits, dtype: T, shape: [r, c]}}
          - {{name: labels, dtype: int32, shape: [r], check: {{min: 0, max: c - 1}}}}
        outputs:
          - {{name: loss, dtype: T, shape: [r]}}
        cpu: |
          for (int64_t row = 0; row < r; ++row) {{
            const T *z = logits + row * c;
            double top = (double)z[0];
            for (int64_t j = 1; j < c; ++j) top = (double)z[j] > top ? (double)z[j] : top;
            double total = 0;
            for (int64_t j = 0; j < c; ++j) total += exp((double)z[j] - top);
            loss[row] = (T)(top + log(total) - (double)z[labels[row]]);
          }}
        """,
    "rotary": f"""\
        doc: Rotary position embedding, each pair of columns of row p turned by p * theta^(-k/d).
        types: {FLOATS}
        inputs:
          - {{name: x, dtype: T, shape: [t, d]}}
        outputs:
          - {{name: y, dtype: T, shape: [t, d]}}
        attrs:
          - {{name: theta, type: float64, default: 10000.0}}
        cpu: |
          for (int64_t p = 0; p < t; ++p)
            for (int64_t k = 0; k + 1 < d; k += 2) {{
              const double a = (double)p * pow(theta, -(double)k / (double)d);
              const double e = (double)x[p * d + k], o = (double)x[p * d + k + 1];
              y[p * d + k] = (T)(e * cos(a) - o * sin(a));
              y[p * d + k + 1] = (T)(e * sin(a) + o * cos(a));
            }}
        """,
    "embedding_bag": f"""\
        doc: Each bag's sum of the table rows its indices name.
        types: {FLOATS}
        inputs:
          - {{name: table, dtype: T, shape: [v, e]}}
          - {{name: idx, dtype: int32, shape: [b, n], check: {{min: 0, max: v - 1}}}}
        outputs:
          - {{name: out, dtype: T, shape: [b, e]}}
        cpu: |
          for (int64_t bag = 0; bag < b; ++bag)
            for (int64_t j = 0; j < e; ++j) {{
              double total = 0;
              for (int64_t m = 0; m < n; ++m) total += (double)table[idx[bag * n + m] * e + j];
              out[bag * e + j] = (T)total;
            }}
        """,
    "attention": f"""\
        doc: One head of attention, softmax(q key^T / sqrt(d)) v.
        types: {FLOATS}
        inputs:
          - {{name: q, dtype: T, shape: [t, d]}}
          - {{name: key, dtype: T, shape: [s, d]}}
          - {{name: v, dtype: T, shape: [s, e]}}
        outputs:
          - {{name: o, dtype: T, shape: [t, e]}}
        cpu: |
          for (int64_t i = 0; i < t; ++i) {{
            double top = -INFINITY, total = 0;
            for (int64_t j = 0; j < s; ++j) {{
              double score = 0;
              for (int64_t m = 0; m < d; ++m) score += (double)q[i * d + m] * (double)key[j * d + m];
              score /= sqrt((double)d);
              top = score > top ? score : top;
            }}
            double acc[64] = {{0}}; /* e <= 64 in the tests */
            for (int64_t j = 0; j < s; ++j) {{
              double score = 0;
              for (int64_t m = 0; m < d; ++m) score += (double)q[i * d + m] * (double)key[j * d + m];
              const double p = exp(score / sqrt((double)d) - top);
              total += p;
              for (int64_t m = 0; m < e && m < 64; ++m) acc[m] += p * (double)v[j * e + m];
            }}
            for (int64_t m = 0; m < e && m < 64; ++m) o[i * e + m] = (T)(acc[m] / total);
          }}
        """,
}


def example(name: str, rng: np.random.Generator, dtype: object) -> tuple:
    """Example arguments of a derivative op, its floats of `dtype`: away from kinks, with
    valid indices, d even for rotary."""
    shapes = {
        "silu": lambda: (rng.uniform(-2, 2, (3, 5)),),
        "rms_norm": lambda: (rng.uniform(-2, 2, (3, 6)), rng.uniform(0.5, 1.5, 6)),
        "softmax_xent": lambda: (rng.uniform(-2, 2, (4, 5)), rng.integers(0, 5, 4).astype(np.int32)),
        "rotary": lambda: (rng.uniform(-2, 2, (5, 6)),),
        "embedding_bag": lambda: (rng.uniform(-2, 2, (6, 3)), rng.integers(0, 6, (4, 3)).astype(np.int32)),
        "attention": lambda: (rng.uniform(-1, 1, (3, 4)), rng.uniform(-1, 1, (5, 4)), rng.uniform(-1, 1, (5, 3))),
    }
    return tuple(a.astype(dtype) if a.dtype.kind == "f" else a for a in shapes[name]())


def spec_text(op: str) -> str:
    import textwrap

    text = f"op: {op}\n" + textwrap.dedent(SPECS[op])
    return text + _derivatives(op) if op in DERIVATIVES else text


def reference(name: str, args: tuple, attrs: dict) -> np.ndarray:
    """NumPy references in float64, NaN propagated as jnp does."""
    a = [np.asarray(x, np.float64) if np.asarray(x).dtype.kind == "f" else np.asarray(x) for x in args]
    if name in ("relu_dropping", "relu_keeping"):
        return np.maximum(a[0], 0)
    if name == "silu":
        return a[0] / (1 + np.exp(-a[0]))
    if name == "rms_norm":
        x, w = a
        return x * w / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + attrs.get("eps", 1e-5))
    if name == "softmax_xent":
        z, labels = a
        top = np.max(z, axis=-1, keepdims=True)
        lse = top[:, 0] + np.log(np.sum(np.exp(z - top), axis=-1))
        return lse - z[np.arange(len(labels)), labels]
    if name == "rotary":
        (x,) = a
        t, d = x.shape
        angle = np.arange(t)[:, None] * attrs.get("theta", 10000.0) ** (-np.arange(0, d, 2) / d)
        e, o = x[:, 0::2], x[:, 1::2]
        return np.stack([e * np.cos(angle) - o * np.sin(angle), e * np.sin(angle) + o * np.cos(angle)], -1).reshape(
            t, d
        )
    if name == "embedding_bag":
        table, idx = a
        return table[idx].sum(axis=1)
    if name == "attention":
        q, key, v = a
        score = q @ key.T / np.sqrt(q.shape[1])
        p = np.exp(score - score.max(axis=-1, keepdims=True))
        return (p / p.sum(axis=-1, keepdims=True)) @ v
    raise KeyError(name)


def build(folder: Path) -> Path:
    project = folder / "checking"
    installed = builds.has_cmake_package()
    specs = {op: spec_text(op) for op in SPECS}
    builds.write_package(project, "checking", specs, "CUDA OFF CUDA_SIM OFF", vendor=not installed)
    build_dir = project / "build"
    package = [f"-Dopspec_DIR={builds.cmake_dir()}"] if installed else []
    builds.configure(project, build_dir, "-DOPSPEC_CUDA=OFF", "-DBUILD_TESTING=OFF", *package)
    builds.cmake_build(build_dir, "checking_opspec")
    return build_dir / "python"
