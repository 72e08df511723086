"""Per-call overhead inside jit: opspec's `add` against a bare C XLA FFI handler doing the
same loop (bench/native/bare_add.c, built here) and jnp, on tiny float32 arrays.

Each contender runs in a jitted fori_loop of N iterations with K chained calls per
iteration; the per-call cost is (T(K) - T(1)) / ((K - 1) N), which cancels the loop's
own cost. Rounds are interleaved (every contender once per round), so a noisy
neighbour hits all alike; the median and the minimum over rounds are printed (on a
loaded 2-core machine the minimum is the steadier). jnp chains fuse into one loop: its
number is what jnp costs, not one dispatch.

"bare + omp if" is the bare handler with the loop pragma opspec's kernels had before
they ran as ranges of the handler's loop (`omp parallel for if`): what entering OpenMP
on every call costs, even when the loop then runs on one thread.
"""

import argparse
import os
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import native  # noqa: E402
from common import machine_line  # noqa: E402

import opspec  # noqa: E402


def looped(f, k, n_iter):
    @jax.jit
    def run(x, y):
        def body(i, x):
            for _ in range(k):
                x = f(x, y)
            return x

        return jax.lax.fori_loop(0, n_iter, body, x)

    return run


def measure(contenders, size=16, k=16, n_iter=2000, rounds=15):
    """{name: (median, min) µs per call} over interleaved rounds."""
    x = jnp.ones(size, jnp.float32)
    y = jnp.full(size, 1e-7, jnp.float32)
    fns = {name: (looped(f, 1, n_iter), looped(f, k, n_iter)) for name, f in contenders.items()}
    for one, many in fns.values():  # compile and warm up
        jax.block_until_ready(one(x, y))
        jax.block_until_ready(many(x, y))
    ones = {name: [] for name in fns}
    manys = {name: [] for name in fns}
    for _ in range(rounds):
        for name, (one, many) in fns.items():
            t0 = time.perf_counter()
            jax.block_until_ready(one(x, y))
            t1 = time.perf_counter()
            jax.block_until_ready(many(x, y))
            t2 = time.perf_counter()
            ones[name].append(t1 - t0)
            manys[name].append(t2 - t1)
    scale = 1e6 / ((k - 1) * n_iter)
    return {
        name: (
            float(np.median(manys[name]) - np.median(ones[name])) * scale,
            float(np.min(manys[name]) - np.min(ones[name])) * scale,
        )
        for name in fns
    }


def contenders():
    return {
        "opspec": opspec.ops.add,
        "bare C FFI": native.bare_add(),
        "bare + omp if": native.bare_add(omp_if=True),
        "jnp": lambda x, y: x + y,
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args(argv)
    print(machine_line())
    opspec.set_cpu_threads(2)
    result = measure(contenders(), size=args.size, rounds=args.rounds)
    report(result, args.size, args.rounds)
    return result


def report(result, size, rounds):
    bare = result["bare C FFI"]
    print(f"\nper-call cost inside a jitted fori_loop (add of {size} float32; {rounds} interleaved rounds)")
    print(f"{'contender':<16}{'median µs':>11}{'min µs':>9}{'/bare (median)':>16}{'/bare (min)':>13}")
    for name, (med, low) in result.items():
        print(f"{name:<16}{med:>11.3f}{low:>9.3f}{med / bare[0]:>16.2f}{low / bare[1]:>13.2f}")


if __name__ == "__main__":
    main()
