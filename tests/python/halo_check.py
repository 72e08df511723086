"""Run by test_halo.py in a fresh process: XLA's 4 virtual CPU devices must be set before
JAX starts. Argument: a seed; the packages `halos` (halo_ops.py) and `stencils`
(examples/stencils) are on PYTHONPATH. Prints one line per failure and ends with "<k> failures"."""

import os
import sys
import warnings

os.environ["XLA_FLAGS"] = os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=4"

import jax  # noqa: E402

jax.config.update("jax_enable_x64", True)

import halos  # noqa: E402
import numpy as np  # noqa: E402
from halo_ops import reference  # noqa: E402
from jax.sharding import NamedSharding  # noqa: E402
from jax.sharding import PartitionSpec as P  # noqa: E402

rng = np.random.default_rng(int(sys.argv[1]))
line = jax.make_mesh((4,), ("d",), axis_types=(jax.sharding.AxisType.Auto,))
square = jax.make_mesh((2, 2), ("a", "b"), axis_types=(jax.sharding.AxisType.Auto,) * 2)
failures = []


def data(shape: tuple, dtype: type) -> np.ndarray:
    if np.issubdtype(dtype, np.integer):
        return rng.integers(-1000, 1000, shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def check(label: str, f, x: np.ndarray, mesh, spec: P, want: np.ndarray, sharded: bool = True) -> None:
    """f(x sharded as `spec`) equals `want` bitwise; where `sharded`, the compiled HLO
    exchanges edges (collective-permute), never gathers, and the output stays sharded."""
    placed = jax.device_put(x, NamedSharding(mesh, spec))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        jitted = jax.jit(f)
        got = jitted(placed)
        hlo = jitted.lower(placed).compile().as_text()
    gathered = [str(w.message) for w in caught if "gather" in str(w.message)]
    if got.shape != want.shape or not np.array_equal(np.asarray(got), want):
        failures.append(f"{label}: differs from the unsharded result")
    if sharded:
        if "all-gather" in hlo:
            failures.append(f"{label}: the compiled HLO gathers")
        if "collective-permute" not in hlo:
            failures.append(f"{label}: the compiled HLO exchanges no edges")
        if got.sharding.is_fully_replicated:
            failures.append(f"{label}: the output is replicated")
        if gathered:
            failures.append(f"{label}: warned {gathered}")
    elif not gathered:
        failures.append(f"{label}: gathered without a warning")


# 1. Sharded along each halo dim, with the whole arrays' edges on the first and last shards.
for dtype in (np.int32, np.float32, np.float64):
    x = data((32,), dtype)
    check(f"stencil3 {dtype.__name__}", halos.ops.stencil3, x, line, P("d"), reference("stencil3", x))
x = data((32,), np.float64)
check("smooth_edges", halos.ops.smooth_edges, x, line, P("d"), np.asarray(halos.ops.smooth_edges(x)))
if not np.allclose(np.asarray(halos.ops.smooth_edges(x)), reference("smooth_edges", x), rtol=1e-15):
    failures.append("smooth_edges: unsharded result differs from NumPy")
for dtype in (np.float32, np.float64):
    for name in ("causal3", "anticausal3"):
        x = data((32,), dtype)
        check(f"{name} {dtype.__name__}", getattr(halos.ops, name), x, line, P("d"), reference(name, x))
for dtype in (np.int32, np.float64):
    u = data((16, 12), dtype)
    want = reference("laplace5", u)
    check(f"laplace5 {dtype.__name__} rows", halos.ops.laplace5, u, line, P("d", None), want)
    check(f"laplace5 {dtype.__name__} columns", halos.ops.laplace5, u, line, P(None, "d"), want)
    check(f"laplace5 {dtype.__name__} 2x2", halos.ops.laplace5, u, square, P("a", "b"), want)
    check(f"laplace5 {dtype.__name__} rows over 2x2", halos.ops.laplace5, u, square, P(("a", "b"), None), want)

# 1a. A halo along one symbol and a reduction along another: edges exchanged over one
# mesh axis, the outputs psum-ed over the other.
x = data((16, 8), np.float64)
want = np.asarray(jax.jit(halos.ops.diff_energy)(x))
if not np.allclose(want, reference("diff_energy", x), rtol=1e-13):
    failures.append("diff_energy: the unsharded call differs from NumPy")
placed = jax.device_put(x, NamedSharding(square, P("a", "b")))
f = jax.jit(halos.ops.diff_energy)
hlo = f.lower(placed).compile().as_text()
if not np.allclose(np.asarray(f(placed)), want, rtol=1e-13):
    failures.append("diff_energy on 2x2: differs from the unsharded call")
if "all-gather" in hlo or "collective-permute" not in hlo or "all-reduce" not in hlo:
    failures.append("diff_energy on 2x2: gathers, or exchanges no edges, or does not all-reduce")

# 1b. Under explicit sharding (the default mesh of newer jax), the output's type keeps it.
explicit = jax.make_mesh((4,), ("d",), axis_types=(jax.sharding.AxisType.Explicit,))
x = data((32,), np.float64)
check("stencil3 explicit", halos.ops.stencil3, x, explicit, P("d"), reference("stencil3", x))

# 2. Under vmap: the batch dim and the halo dim both stay sharded.
xb = data((4, 32), np.int32)
want = np.stack([reference("stencil3", r) for r in xb])
check("vmap stencil3", jax.vmap(halos.ops.stencil3), xb, line, P(None, "d"), want)
xb = data((4, 8), np.int32)
check(
    "vmap stencil3 over 2x2",
    jax.vmap(halos.ops.stencil3),
    xb,
    square,
    P("a", "b"),
    np.stack([reference("stencil3", r) for r in xb]),
)

# 3. Gradients: a linear stencil's JVP is the op on the tangent (the same radius), its
# transpose the op its spec names (causal3's is the mirrored anticausal3, and back).
for name, mirror in (("causal3", "anticausal3"), ("anticausal3", "causal3")):
    x = data((32,), np.float64)
    op = getattr(halos.ops, name)
    grad = jax.grad(lambda x, _op=op: 0.5 * (_op(x) ** 2).sum())  # the cotangent op(x) is sharded too
    whole = np.asarray(jax.jit(grad)(x))
    if not np.allclose(whole, reference(mirror, reference(name, x)), rtol=1e-13):
        failures.append(f"grad {name}: the unsharded gradient differs from NumPy")
    check(f"grad {name}", grad, x, line, P("d"), whole)
    check(f"jvp {name}", lambda x, _op=op: jax.jvp(_op, (x,), (x,))[1], x, line, P("d"), reference(name, x))

# 3a. Derived transposes (`linear: halo`): the spec names no transposed op; the gradient
# (the op on probes, then a window sum with the mirrored radius) stays sharded and equals
# jnp's gradient of the same stencil.
import jax.numpy as jnp  # noqa: E402


def jnp_causal3(x):
    p = jnp.pad(x, (2, 0))
    return x + 2 * p[1:-1] + 3 * p[:-2]


def jnp_upwind2(x):
    right = jnp.pad(x, ((0, 0), (0, 1)))[:, 1:]
    y = 2 * x - jnp.pad(x, ((1, 0), (0, 0)))[:-1] + 3 * right
    return y.at[0].set(5 * x[0])


def jnp_causal_conv(x, w):
    p = jnp.pad(x, ((3, 0), (0, 0)))
    return sum(w[d] * p[3 - d : 3 - d + x.shape[0]] for d in range(4))


def check_grad(label: str, f, jnp_f, x: np.ndarray, mesh, spec: P) -> None:
    """jax.grad of 0.5 * sum(f(x)^2) with x sharded as `spec`: equal to jnp's gradient of
    jnp_f to float64 rounding, with collective-permutes and no all-gather in its HLO."""
    grad = jax.jit(jax.grad(lambda x: 0.5 * (f(x) ** 2).sum()))
    want = np.asarray(jax.jit(jax.grad(lambda x: 0.5 * (jnp_f(x) ** 2).sum()))(x))
    placed = jax.device_put(x, NamedSharding(mesh, spec))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = grad(placed)
        hlo = grad.lower(placed).compile().as_text()
    if not np.allclose(np.asarray(got), want, rtol=1e-12, atol=1e-12):
        failures.append(f"{label}: differs from jnp's gradient by {np.abs(np.asarray(got) - want).max()}")
    if "all-gather" in hlo or "collective-permute" not in hlo:
        failures.append(f"{label}: the gradient's HLO gathers, or exchanges no edges")
    if got.sharding.is_fully_replicated:
        failures.append(f"{label}: the gradient is replicated")
    if caught:
        failures.append(f"{label}: warned {[str(w.message) for w in caught]}")


x = data((32,), np.float64)
check_grad("derived grad causal3", halos.ops.causal3_linear, jnp_causal3, x, line, P("d"))
check_grad("derived grad causal3 over 2x2", halos.ops.causal3_linear, jnp_causal3, x, square, P(("a", "b")))
check_grad("derived grad causal3 explicit", halos.ops.causal3_linear, jnp_causal3, x, explicit, P("d"))
x = data((16, 12), np.float64)
check_grad("derived grad upwind2 rows", halos.ops.upwind2, jnp_upwind2, x, line, P("d", None))
check_grad("derived grad upwind2 columns", halos.ops.upwind2, jnp_upwind2, x, line, P(None, "d"))
check_grad("derived grad upwind2 2x2", halos.ops.upwind2, jnp_upwind2, x, square, P("a", "b"))
x = data((16, 12), np.float64)
check(
    "derived jvp upwind2 2x2",
    lambda x: jax.jvp(halos.ops.upwind2, (x,), (x,))[1],
    x,
    square,
    P("a", "b"),
    reference("upwind2", x),
)

# 4. Gathered, with a warning: an extent 4 does not divide, and blocks narrower than the radius.
x = data((30,), np.int32)  # sharded inside jit: device_put cannot place 30 over 4
in_jit = jax.sharding.NamedSharding(line, P("d"))
check(
    "stencil3 30 over 4",
    lambda x: halos.ops.stencil3(jax.lax.with_sharding_constraint(x, in_jit)),
    x,
    line,
    P(),
    reference("stencil3", x),
    sharded=False,
)
x = data((4,), np.float64)
check("causal3 blocks of 1, radius 2", halos.ops.causal3, x, line, P("d"), reference("causal3", x), sharded=False)

# 5. examples/stencils: a 3-D Laplacian with a boundary branch along two dims of a 2 x 2
# mesh (9 cases), and a causal convolution with a replicated weight input, its
# independent channels sharded too.
import stencils  # noqa: E402

u = data((8, 8, 4), np.float64)
want = np.asarray(jax.jit(stencils.ops.laplace7)(u))
p = np.pad(u, 1)
inner = p[:-2, 1:-1, 1:-1] + p[2:, 1:-1, 1:-1] + p[1:-1, :-2, 1:-1] + p[1:-1, 2:, 1:-1]
inner = inner + p[1:-1, 1:-1, :-2] + p[1:-1, 1:-1, 2:] - 6 * u
if not np.allclose(want[1:-1, 1:-1, 1:-1], inner[1:-1, 1:-1, 1:-1], rtol=1e-13) or np.any(want[0] != 0):
    failures.append("laplace7: the unsharded call differs from NumPy")
check("laplace7 2x2", stencils.ops.laplace7, u, square, P("a", "b", None), want)
check("laplace7 innermost, blocks of 1", stencils.ops.laplace7, u, line, P(None, None, "d"), want)
x, w = data((32, 4), np.float64), data((4,), np.float64)
conv = np.zeros_like(x)
for d in range(4):
    conv[d:] += w[d] * x[: 32 - d]
for label, mesh, spec in (("t", line, P("d", None)), ("t and c", square, P("a", "b"))):
    check(f"causal_conv along {label}", lambda x, _w=w: stencils.ops.causal_conv(x, _w), x, mesh, spec, conv)
    conv_f = lambda x, _w=w: stencils.ops.causal_conv(x, _w)  # noqa: E731
    jnp_f = lambda x, _w=w: jnp_causal_conv(x, _w)  # noqa: E731
    check_grad(f"derived grad causal_conv along {label}", conv_f, jnp_f, x, mesh, spec)

# 6. Size 0: nothing to exchange and nothing gathered, so no warning.
for label, x, spec in (("", np.zeros((0,)), P("d")), (" 8 x 0 columns", np.zeros((8, 0)), P(None, "d"))):
    f = halos.ops.stencil3 if x.ndim == 1 else halos.ops.laplace5
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = jax.jit(f)(jax.device_put(x, NamedSharding(line, spec)))
    if got.shape != x.shape:
        failures.append(f"size 0{label}: shape {got.shape}")
    if caught:
        failures.append(f"size 0{label}: warned {[str(w.message) for w in caught]}")
# ... and its gradient under explicit sharding, outside any mesh context: the empty
# cotangent is replicated and is resharded to the input's sharding.
for name, op in (("causal3", halos.ops.causal3), ("causal3_linear", halos.ops.causal3_linear)):
    grad = jax.jit(jax.grad(lambda x, _op=op: 0.5 * (_op(x) ** 2).sum()))
    try:
        got = grad(jax.device_put(np.zeros((0,)), NamedSharding(explicit, P("d"))))
        if got.shape != (0,) or got.sharding.spec != P("d"):
            failures.append(f"grad {name} size 0 explicit: shape {got.shape}, sharding {got.sharding.spec}")
    except Exception as e:  # noqa: BLE001
        failures.append(f"grad {name} size 0 explicit: {type(e).__name__}: {str(e)[:300]}")

for f in failures:
    print(f)
print(f"{len(failures)} failures")
sys.exit(1 if failures else 0)
