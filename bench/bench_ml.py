"""The example ML ops of the library (specs/rms_norm.yaml ... specs/embedding_scatter_add.yaml)
against the jnp a user would write in their place (issue 29, item 4): float32, bfloat16
and float16, at a cache-resident shape (about 64k elements) and a DRAM-sized one (about
16M elements), both sides jitted, opspec with its defaults. Contenders run in interleaved
rounds in one process, in a fresh random order each round (bench_roofline.measure); each
figure is the median of the rounds. Ratios are jnp time / opspec time: above 1, opspec is
faster.

Prints one table and saves bench_ml.png. `--quick` runs tiny shapes for one round (a
smoke test of the script, not a measurement).
"""

import argparse
import os
import sys

import jax
import jax.numpy as jnp
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_roofline as roof  # noqa: E402
from common import machine_line, save_plot  # noqa: E402

import opspec  # noqa: E402

ops = opspec.ops
DTYPES = {"float32": jnp.float32, "bfloat16": jnp.bfloat16, "float16": jnp.float16}


# What a user writes in jnp for each op.
def jnp_rms_norm(x, w):
    return x * jax.lax.rsqrt(jnp.mean(x * x, axis=-1, keepdims=True) + 1e-6) * w


def jnp_layer_norm(x, gamma, beta):
    mu = jnp.mean(x, axis=-1, keepdims=True)
    var = jnp.mean((x - mu) ** 2, axis=-1, keepdims=True)
    return (x - mu) * jax.lax.rsqrt(var + 1e-5) * gamma + beta


def jnp_cross_entropy(logits, labels):
    picked = jnp.take_along_axis(logits, labels[..., None], axis=-1)[..., 0]
    return jax.nn.logsumexp(logits, axis=-1) - picked


def jnp_rope(x, cosines, sines):
    a, b = jnp.split(x, 2, axis=-1)
    c, s = cosines[:, None, :], sines[:, None, :]
    return jnp.concatenate([a * c - b * s, b * c + a * s], axis=-1)


def jnp_embedding_bag(table, indices):
    return table[indices].sum(axis=1)


# Shapes per size: (rows, cols) of the row ops, elements of the element-wise ones,
# (batch, seq, heads, dim) of rope, (vocab, dim, bags, bag_size) of the embedding bags.
SHAPES = {
    "tiny": {"rows": (8, 64), "elements": 512, "ce": (8, 96), "rope": (1, 8, 2, 16), "bag": (64, 16, 8, 4)},
    "cache": {
        "rows": (64, 1024),
        "elements": 65_536,
        "ce": (8, 8192),
        "rope": (1, 64, 8, 128),
        "bag": (4096, 128, 128, 4),
    },
    "dram": {
        "rows": (4096, 4096),
        "elements": 16_777_216,
        "ce": (512, 32000),
        "rope": (8, 2048, 16, 64),
        "bag": (131_072, 128, 8192, 16),
    },
}


def cases(size, dtype, rng):
    """(name, shape text, opspec fn, jnp fn, args) for every example op."""
    s = SHAPES[size]
    t = DTYPES[dtype]
    arr = lambda *shape, lo=-3.0, hi=3.0: jnp.asarray(rng.uniform(lo, hi, shape), t)  # noqa: E731
    rows, cols = s["rows"]
    x = arr(rows, cols)
    w, beta = arr(cols, lo=0.5, hi=1.5), arr(cols, lo=-1, hi=1)
    flat = arr(s["elements"])
    ce_rows, classes = s["ce"]
    logits = arr(ce_rows, classes)
    labels = jnp.asarray(rng.integers(0, classes, ce_rows), jnp.int32)
    batch, seq, heads, dim = s["rope"]
    angles = np.arange(seq)[:, None] * rng.uniform(0.01, 1.0, dim // 2)[None, :]
    cosines, sines = jnp.asarray(np.cos(angles), t), jnp.asarray(np.sin(angles), t)
    q = arr(batch, seq, heads, dim)
    vocab, edim, bags, bag_size = s["bag"]
    table = arr(vocab, edim)
    indices = jnp.asarray(rng.integers(0, vocab, (bags, bag_size)), jnp.int32)
    grad = arr(bags, edim)
    rc = f"[{rows}, {cols}]"
    return [
        ("rms_norm", rc, ops.rms_norm, jnp_rms_norm, (x, w)),
        ("layer_norm", rc, ops.layer_norm, jnp_layer_norm, (x, w, beta)),
        ("softmax", rc, ops.softmax, lambda v: jax.nn.softmax(v, axis=-1), (x,)),
        (
            "softmax_cross_entropy",
            f"[{ce_rows}, {classes}]",
            ops.softmax_cross_entropy,
            jnp_cross_entropy,
            (logits, labels),
        ),
        ("gelu_tanh", f"[{s['elements']}]", ops.gelu_tanh, lambda v: jax.nn.gelu(v, approximate=True), (flat,)),
        ("silu", f"[{s['elements']}]", ops.silu, jax.nn.silu, (flat,)),
        ("rope", str(list(q.shape)), ops.rope, jnp_rope, (q, cosines, sines)),
        (
            "embedding_bag",
            f"[{vocab}, {edim}] by [{bags}, {bag_size}]",
            ops.embedding_bag,
            jnp_embedding_bag,
            (table, indices),
        ),
        (
            "embedding_scatter_add",
            f"[{bags}, {edim}] into [{vocab}, {edim}]",
            lambda i, g: ops.embedding_scatter_add(i, g, vocab=vocab),
            lambda i, g: jnp.zeros((vocab, edim), g.dtype).at[i].add(g[:, None, :]),
            (indices, grad),
        ),
    ]


def agree(name, got, want, dtype):
    """The two sides give the same numbers, within the dtype's rounding (a bench that
    times a wrong kernel measures nothing)."""
    eps = {"float32": 1e-4, "bfloat16": 6e-2, "float16": 1e-2}[dtype]
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    scale = max(1.0, float(np.abs(want).max(initial=0)))
    if not np.allclose(got, want, rtol=eps, atol=eps * scale):
        raise AssertionError(f"{name} {dtype}: opspec and jnp differ by {np.abs(got - want).max():.3g}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--out", default=os.path.dirname(os.path.abspath(__file__)))
    parser.add_argument("--sizes", default="cache,dram", help="comma-separated, of: " + ", ".join(SHAPES))
    parser.add_argument("--dtypes", default=",".join(DTYPES))
    parser.add_argument("--only", default="", help="comma-separated op names (default: all)")
    parser.add_argument("--quick", action="store_true", help="tiny shapes, one round: a smoke test, no measurement")
    args = parser.parse_args()
    sizes = ["tiny"] if args.quick else args.sizes.split(",")
    rounds = 1 if args.quick else args.rounds
    only = set(filter(None, args.only.split(",")))
    rng = np.random.default_rng(0)
    print(
        f"{machine_line()}; opspec defaults: threshold {opspec.parallel_threshold()} "
        f"({opspec.parallel_threshold_source()}), median of {rounds} interleaved rounds"
    )
    head = f"{'op':<23}{'dtype':<10}{'size':<7}{'shape':<34}{'opspec ms':>11}{'jnp ms':>11}{'jnp/opspec':>12}"
    print(head)
    print("-" * len(head))
    plot_rows = []
    for size in sizes:
        for dtype in args.dtypes.split(","):
            for name, shape, op, user, call_args in cases(size, dtype, rng):
                if only and name not in only:
                    continue
                contenders = {
                    "opspec": (jax.jit(op), call_args, lambda: None),
                    "jnp": (jax.jit(user), call_args, lambda: None),
                }
                agree(name, roof.run_once(*contenders["opspec"][:2]), roof.run_once(*contenders["jnp"][:2]), dtype)
                t = roof.measure(contenders, rounds)
                print(
                    f"{name:<23}{dtype:<10}{size:<7}{shape:<34}{t['opspec'] * 1e3:>11.4f}{t['jnp'] * 1e3:>11.4f}"
                    f"{t['jnp'] / t['opspec']:>12.2f}",
                    flush=True,
                )
                plot_rows.append((f"{name} {dtype} {size}", {k: v * 1e3 for k, v in t.items()}))
    save_plot(
        os.path.join(args.out, "bench_ml.png"), "example ML ops against jnp (ms per call)", plot_rows, ["opspec", "jnp"]
    )


if __name__ == "__main__":
    main()
