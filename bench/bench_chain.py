"""A custom call in a chain (issue 29, item 8): residual + norm + bias + activation + sum,

    h = x + r;  y = norm(h) * w + b;  out = sum(gelu_tanh(y), axis=-1);  returns (h, out)

with opspec's rms_norm (or layer_norm) and gelu_tanh between jnp neighbours, against the
whole chain in jnp, which XLA fuses (bias, activation and sum into the norm's loops, one
pass from h to out). Variants: "jnp", "opspec norm", "opspec gelu", "opspec norm+gelu".
Each step feeds h back as the next x (a residual stream), once with x donated and once
not: donated, XLA may write h into x's buffer. At a cache-resident shape (64 x 1024
float32, 256 KiB per array) and a DRAM-sized one (4096 x 4096, 64 MiB per array), both
sides jitted; contenders run in interleaved rounds in one process, in a fresh random order
each round (bench_roofline.measure); each figure is the median of the rounds. Ratios are
jnp time / variant time at the same shape and donation: above 1, the variant is faster.

Beside each time, the minor page faults per call (getrusage): a fresh buffer of 64 MiB
that glibc's malloc takes from mmap is new memory, and the kernel maps each of its pages
on first touch. The same chain then runs again in a subprocess per glibc allocator
setting (environment variables read when the process starts):

- default: a block above the mmap threshold is mmapped, and unmapped when freed. The
  threshold starts at 128 KiB and rises to the size of a freed mmapped block, up to
  32 MiB: blocks of 64 MiB are mmapped on every call. opspec's CPU handler asks for
  transparent huge pages on its large fresh outputs (runtime/src/pages.c), so a 64 MiB
  output of a custom call faults about 545 times (31 huge pages, 4 KiB pages at its two
  unaligned ends), not 16,384;
- the same with OPSPEC_HUGE_PAGES=0: the custom calls' outputs on 4 KiB pages, as jnp's;
- MALLOC_MMAP_THRESHOLD_=1 GiB, MALLOC_TRIM_THRESHOLD_=4 GiB: no change for XLA's
  64 MiB buffers, which XLA allocates on its own threads: a thread's arena (not the main
  one) serves a block of 64 MiB or more only by mmap, whatever the threshold;
- MALLOC_ARENA_MAX=1: every thread allocates from the main arena; alone it changes
  nothing either (the threshold still stops at 32 MiB);
- MALLOC_ARENA_MAX=1, MALLOC_MMAP_THRESHOLD_=1 GiB, MALLOC_TRIM_THRESHOLD_=4 GiB: the
  blocks come from the main heap, which keeps what is freed;
- MALLOC_ARENA_MAX=1, MALLOC_MMAP_MAX_=0, MALLOC_TRIM_THRESHOLD_=4 GiB,
  MALLOC_TOP_PAD_=256 MiB: no mmap at all, the heap never trimmed, grown 256 MiB
  beyond each need;
- with --preload LIB: LD_PRELOAD=LIB (jemalloc, tcmalloc, mimalloc: whatever is given).

Settings run one after another, each in its own process (the variables act at process
start); within each, the contenders interleave. Prints the date, the CPU, the shapes, one
table and saves bench_chain.png. `--quick` runs a tiny shape for one round (a smoke test
of the script, not a measurement).
"""

import argparse
import json
import os
import resource
import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_roofline as roof  # noqa: E402
from common import STEADY_MALLOC, machine_line, save_plot  # noqa: E402

import opspec  # noqa: E402

ops = opspec.ops
SHAPES = {"tiny": (8, 64), "cache": (64, 1024), "dram": (4096, 4096)}
GiB = 1 << 30
ONE_ARENA = {"MALLOC_ARENA_MAX": "1"}
KEEP_FREED = {"MALLOC_MMAP_THRESHOLD_": str(GiB), "MALLOC_TRIM_THRESHOLD_": str(4 * GiB)}
SETTINGS = {
    "default": {},
    "opspec huge pages off": {"OPSPEC_HUGE_PAGES": "0"},
    "threshold 1G + no trim": KEEP_FREED,
    "one arena": ONE_ARENA,
    "one arena + threshold + no trim": STEADY_MALLOC,
    "one arena + no mmap + top pad": {
        **ONE_ARENA,
        "MALLOC_MMAP_MAX_": "0",
        "MALLOC_TRIM_THRESHOLD_": str(4 * GiB),
        "MALLOC_TOP_PAD_": str(256 << 20),
    },
}
VARIANTS = ("jnp", "opspec norm", "opspec gelu", "opspec norm+gelu")


def jnp_rms_norm(h, w):
    return h * jax.lax.rsqrt(jnp.mean(h * h, axis=-1, keepdims=True) + 1e-6) * w


def jnp_layer_norm(h, w):
    mu = jnp.mean(h, axis=-1, keepdims=True)
    return (h - mu) * jax.lax.rsqrt(jnp.mean((h - mu) ** 2, axis=-1, keepdims=True) + 1e-5) * w


def norms(kind, cols):
    """(opspec's, jnp's) norm(h, w) of `kind`: rms_norm, or layer_norm with a zero beta (the
    chain's bias is its own step)."""
    if kind == "rms_norm":
        return ops.rms_norm, jnp_rms_norm
    zero = jnp.zeros(cols, jnp.float32)
    return (lambda h, w: ops.layer_norm(h, w, zero)), jnp_layer_norm


def chain(norm, act):
    def step(x, r, w, b):
        h = x + r
        y = norm(h, w) + b
        return h, jnp.sum(act(y), axis=-1)

    return step


def variants(kind, cols):
    op_norm, jnp_norm = norms(kind, cols)
    jnp_gelu = lambda y: jax.nn.gelu(y, approximate=True)  # noqa: E731
    return {
        "jnp": chain(jnp_norm, jnp_gelu),
        "opspec norm": chain(op_norm, jnp_gelu),
        "opspec gelu": chain(jnp_norm, ops.gelu_tanh),
        "opspec norm+gelu": chain(op_norm, ops.gelu_tanh),
    }


class Stream:
    """step(x, *rest) -> (h, out), h fed back as the next x: a residual stream. With
    `donate`, x is donated to the call that replaces it. Called with no arguments."""

    def __init__(self, step, x, rest, donate):
        self.f = jax.jit(step, donate_argnums=(0,) if donate else ())
        self.x = jnp.array(x, copy=True)
        self.rest = rest

    def __call__(self):
        self.x, out = self.f(self.x, *self.rest)
        return out


def faults_per_call(fn, calls):
    """Minor page faults per call of `fn` (the process's, over `calls` calls, after one)."""
    jax.block_until_ready(fn())
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(calls):
        out = fn()
    jax.block_until_ready(out)
    return (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) / calls


def agree(kind, shape, args):
    """Every variant gives jnp's numbers (a bench that times a wrong chain measures nothing)."""
    results = {name: jax.jit(f)(*args) for name, f in variants(kind, shape[1]).items()}
    want = np.asarray(results["jnp"][1], np.float64)
    for name, (_, got) in results.items():
        got = np.asarray(got, np.float64)
        if not np.allclose(got, want, rtol=1e-3, atol=1e-3 * shape[1]):
            raise AssertionError(f"{kind} chain, {name}: differs from jnp by {np.abs(got - want).max():.3g}")


def run_child(args):
    """Times every variant, donated and not, at each size: one JSON line per figure."""
    rng = np.random.default_rng(0)
    for size in args.sizes:
        rows, cols = SHAPES[size]
        x = rng.standard_normal((rows, cols)).astype(np.float32)
        r = (1e-3 * rng.standard_normal((rows, cols))).astype(np.float32)
        w = rng.uniform(0.5, 1.5, cols).astype(np.float32)
        b = rng.uniform(-0.5, 0.5, cols).astype(np.float32)
        rest = tuple(map(jnp.asarray, (r, w, b)))
        agree(args.norm, (rows, cols), (jnp.asarray(x), *rest))
        contenders = {}
        for donate in (False, True):
            for name, step in variants(args.norm, cols).items():
                contenders[(name, donate)] = (Stream(step, x, rest, donate), (), lambda: None)
        labels = {f"{n}|{int(d)}": c for (n, d), c in contenders.items()}
        t = roof.measure(labels, args.rounds)
        for label, (fn, _, _) in labels.items():
            name, donate = label.split("|")
            print(
                "ROW "
                + json.dumps(
                    {
                        "size": size,
                        "shape": [rows, cols],
                        "variant": name,
                        "donated": bool(int(donate)),
                        "ms": t[label] * 1e3,
                        "faults": faults_per_call(fn, args.fault_calls),
                    }
                ),
                flush=True,
            )


def run_setting(args, env_extra):
    cmd = [sys.executable, os.path.abspath(__file__), "--child", "--norm", args.norm, "--rounds", str(args.rounds)]
    cmd += ["--sizes", ",".join(args.sizes), "--fault-calls", str(args.fault_calls)]
    env = {**os.environ, **env_extra}
    done = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"the child for {env_extra} failed:\n{done.stderr[-3000:]}")
    return [json.loads(line[4:]) for line in done.stdout.splitlines() if line.startswith("ROW ")]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--out", default=os.path.dirname(os.path.abspath(__file__)))
    parser.add_argument("--sizes", default="cache,dram", help="comma-separated, of: " + ", ".join(SHAPES))
    parser.add_argument("--norm", default="rms_norm", choices=["rms_norm", "layer_norm"])
    parser.add_argument("--settings", default=",".join(SETTINGS), help="comma-separated allocator settings")
    parser.add_argument("--preload", default="", help="an allocator library to time under LD_PRELOAD as well")
    parser.add_argument("--fault-calls", type=int, default=20, help="calls over which page faults are counted")
    parser.add_argument("--quick", action="store_true", help="a tiny shape, one round: a smoke test, no measurement")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.quick:
        args.sizes, args.rounds, args.fault_calls = "tiny", 1, 2
    args.sizes = args.sizes.split(",")
    if args.child:
        run_child(args)
        return
    settings = {name: SETTINGS[name] for name in args.settings.split(",")}
    if args.preload:
        settings[f"LD_PRELOAD={os.path.basename(args.preload)}"] = {"LD_PRELOAD": args.preload}
    print(
        f"{machine_line()}; chain residual + {args.norm} + bias + gelu_tanh + row sum, float32; "
        + "; ".join(f"{s} {SHAPES[s][0]}x{SHAPES[s][1]}" for s in args.sizes)
        + f"; median of {args.rounds} interleaved rounds per allocator setting"
    )
    head = (
        f"{'allocator':<34}{'size':<7}{'shape':<12}{'donated':<9}{'variant':<18}{'ms':>10}"
        f"{'jnp/variant':>13}{'faults/call':>13}"
    )
    print(head)
    print("-" * len(head))
    plot_rows = []
    for setting, env_extra in settings.items():
        found = run_setting(args, env_extra)
        jnp_ms = {(f["size"], f["donated"]): f["ms"] for f in found if f["variant"] == "jnp"}
        for f in sorted(found, key=lambda f: (args.sizes.index(f["size"]), f["donated"], VARIANTS.index(f["variant"]))):
            shape = f"{f['shape'][0]}x{f['shape'][1]}"
            ratio = jnp_ms[(f["size"], f["donated"])] / f["ms"]
            print(
                f"{setting:<34}{f['size']:<7}{shape:<12}{'yes' if f['donated'] else 'no':<9}{f['variant']:<18}"
                f"{f['ms']:>10.4f}{ratio:>13.2f}{f['faults']:>13.1f}",
                flush=True,
            )
        for size in args.sizes:
            for donated in (False, True):
                row = {f["variant"]: f["ms"] for f in found if f["size"] == size and f["donated"] == donated}
                plot_rows.append((f"{setting} {size}{' donated' if donated else ''}", row))
    save_plot(os.path.join(args.out, "bench_chain.png"), "a custom call in a chain (ms per call)", plot_rows, VARIANTS)


if __name__ == "__main__":
    main()
