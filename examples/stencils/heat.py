"""The heat equation on 4 devices: a `lax.scan` of 5-point Laplacian steps, the grid
sharded by rows, against the same loop in jnp.

    XLA_FLAGS=--xla_force_host_platform_device_count=4 python heat.py

(the script sets that flag itself when it runs first). `laplace5` declares
`halo: {m: 1, n: 1}`, so each step exchanges one row with each neighbouring device
(collective-permutes) instead of gathering the grid; the script asserts that the
compiled loop has no all-gather and that both loops agree.
"""

import os

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=4")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import stencils  # noqa: E402
from jax.sharding import NamedSharding  # noqa: E402
from jax.sharding import PartitionSpec as P  # noqa: E402

ALPHA, STEPS = 0.2, 50


def laplace_jnp(u):
    p = jnp.pad(u, 1)
    return p[:-2, 1:-1] + p[2:, 1:-1] + p[1:-1, :-2] + p[1:-1, 2:] - 4 * u


def heat(laplace):
    def step(u, _):
        return u + ALPHA * laplace(u), None

    return jax.jit(lambda u: jax.lax.scan(step, u, None, length=STEPS)[0])


devices = len(jax.devices())
mesh = jax.make_mesh((devices,), ("rows",), axis_types=(jax.sharding.AxisType.Auto,))
u0 = np.zeros((64, 48), np.float32)
u0[24:40, 16:32] = 1.0  # a hot square
u = jax.device_put(u0, NamedSharding(mesh, P("rows", None)))

ours, theirs = heat(stencils.ops.laplace5), heat(laplace_jnp)
a, b = np.asarray(ours(u)), np.asarray(theirs(u))
hlo = ours.lower(u).compile().as_text()
print(f"{devices} devices, {STEPS} steps of a {u0.shape} grid sharded by rows")
print(f"max |opspec - jnp| = {np.max(np.abs(a - b)):.3g}; heat kept: {a.sum():.4f} of {u0.sum():.4f}")
print(f"all-gather in the compiled loop: {'all-gather' in hlo}; collective-permute: {'collective-permute' in hlo}")
assert np.allclose(a, b, rtol=1e-5, atol=1e-6)
assert devices == 1 or ("all-gather" not in hlo and "collective-permute" in hlo)
