"""Replays the reference CPU tutorial (Numba + numba_kernel) through opspec.

Every op below was a YAML spec in specs/, compiled ahead of time into one extension;
nothing is compiled here, and no Python runs when the jitted computations run.
"""

import math
import time

import jax
import jax.numpy as jnp
import numpy as np
import scipy.sparse as sp

import opspec
from opspec import ops


def timed(fn, *args, trials=20):
    """Median over 5 batches of `trials` calls, in ms, after a warm-up batch."""
    batches = []
    for _ in range(6):
        t0 = time.perf_counter()
        for _ in range(trials):
            jax.block_until_ready(fn(*args))
        batches.append((time.perf_counter() - t0) / trials * 1e3)
    return float(np.median(batches[1:]))


print(f"JAX {jax.__version__} on {jax.default_backend()}; opspec platforms: {opspec.registered_platforms}")
print(f"{len(ops.__all__)} ops: {', '.join(ops.__all__)}")

print("\n-- 4. element-wise kernels and reductions")
N = 512
a = jnp.arange(N, dtype=jnp.float32)
b = jnp.ones(N, dtype=jnp.float32) * 3.0
print("Add max error  :", float(jnp.max(jnp.abs(ops.add(a, b) - (a + b)))))
x = jnp.linspace(-3.0, 3.0, N, dtype=jnp.float32)
print("ReLU max error :", float(jnp.max(jnp.abs(ops.relu(x) - jnp.maximum(x, 0.0)))))
x = jnp.arange(10_000, dtype=jnp.float32)
print(f"Sum: {float(ops.sum(x)[0]):.1f} | Expected: {float(jnp.sum(x)):.1f}")
print(f"Max of [3,1,4,1,5,9,2,6]: {float(ops.max(jnp.array([3, 1, 4, 1, 5, 9, 2, 6], jnp.float32))[0]):.0f}")
mean, std = ops.running_stats(x)
print(
    f"Mean: {float(mean[0]):.2f} | Std: {float(std[0]):.2f}   (jnp: {float(jnp.mean(x)):.2f} | {float(jnp.std(x)):.2f})"
)

print("\n-- 4.1 jit: an opspec op inside a jitted pipeline")


@jax.jit
def pipeline(a, b):
    t = ops.add(a, b)
    return jnp.sin(t) * jnp.sqrt(jnp.abs(t) + 1.0)


a128, b128 = jnp.arange(128, dtype=jnp.float32), jnp.ones(128, dtype=jnp.float32)
r = pipeline(a128, b128)
ref = jnp.sin(a128 + b128) * jnp.sqrt(jnp.abs(a128 + b128) + 1.0)
print("JIT pipeline shape:", r.shape, "| max error vs jnp:", float(jnp.max(jnp.abs(r - ref))))

print("\n-- 5. parallel kernels (portable loop and hand-written OpenMP)")
N = 1_000_000
a, b = jnp.arange(N, dtype=jnp.float32), jnp.ones(N, dtype=jnp.float32)
add, padd = jax.jit(ops.add), jax.jit(ops.parallel_add)
opspec.set_cpu_threads(1)
serial = timed(add, a, b)
opspec.set_cpu_threads(0)
parallel = timed(add, a, b)
print(
    f"N = {N:,}: 1 thread {serial:.3f} ms | all threads {parallel:.3f} ms | raw OpenMP body {timed(padd, a, b):.3f} ms"
)
print("parallel_add max error:", float(jnp.max(jnp.abs(padd(a, b) - (a + b)))))

print("\n-- 6. LIF dynamics: two outputs (float32 V_out, int32 spikes)")
N = 5_000
rng = np.random.default_rng(0)
V = jnp.array(rng.uniform(-75.0, -50.0, N).astype(np.float32))
I_ext = jnp.array(rng.uniform(0.0, 5.0, N).astype(np.float32))
one = lambda v: jnp.array([v], dtype=jnp.float32)  # noqa: E731
tau_inv, V_th, V_rest, dt = one(1 / 20), one(-55.0), one(-70.0), one(0.1)
V_new, spikes = ops.lif(V, I_ext, tau_inv, V_th, V_rest, dt)
print(f"Neurons: {N} | Spikes: {int(spikes.sum())} ({100 * float(spikes.mean()):.1f}%)")
print(f"V range: [{float(V_new.min()):.2f}, {float(V_new.max()):.2f}] mV")
V_ref = V + dt[0] * (-(V - V_rest[0]) * tau_inv[0] + I_ext)
spk_ref = (V_ref >= V_th[0]).astype(jnp.int32)
V_ref = jnp.where(spk_ref, V_rest[0], V_ref)
print(
    f"V max error: {float(jnp.max(jnp.abs(V_new - V_ref))):.6f} mV | Spike mismatch: {int(jnp.sum(spikes != spk_ref))}"
)

print("\n-- 7. exponential trace (STDP), 100 jitted steps")
N = 1000
update = jax.jit(ops.exp_trace)
trace = jnp.zeros(N, dtype=jnp.float32)
for step in range(100):
    spk = jnp.array(np.random.default_rng(step).random(N) < 0.05, dtype=jnp.float32)
    trace = update(trace, spk, tau_inv)
decay = math.exp(-1 / 20)
print(
    f"Mean: {float(trace.mean()):.4f} | Max: {float(trace.max()):.4f} | Steady state (theory): {0.05 / (1 - decay):.4f}"
)

print("\n-- 8. sparse CSR x vector")
N_PRE, N_POST = 2000, 1000
rng = np.random.default_rng(42)
dense = (rng.random((N_POST, N_PRE)) < 0.05).astype(np.float32)
dense *= rng.uniform(0.01, 0.5, dense.shape).astype(np.float32)
csr = sp.csr_matrix(dense)
args = (
    jnp.array(csr.data),
    jnp.array(csr.indices, jnp.int32),
    jnp.array(csr.indptr, jnp.int32),
    jnp.array(rng.random(N_PRE).astype(np.float32)),
)
result = ops.csr_matvec(*args)
print(f"Network: {N_PRE} pre -> {N_POST} post (nnz={csr.nnz})")
print(f"Max error vs dense: {float(jnp.max(jnp.abs(result - jnp.array(dense) @ args[3]))):.6f}")
csr_ms = timed(jax.jit(ops.csr_matvec), *args, trials=50)
dense_ms = timed(jax.jit(lambda A, x: A @ x), jnp.array(dense), args[3], trials=50)
print(f"opspec CSR MV: {csr_ms:.3f} ms | JAX dense MV: {dense_ms:.3f} ms")

print("\n-- 9. one op for CPU and GPU: scale")
x = jnp.arange(256, dtype=jnp.float32)
print("Result matches:", bool(jnp.allclose(ops.scale(x, one(3.14)), x * 3.14, atol=1e-5)))
