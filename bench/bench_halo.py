"""Halo benchmark (docs/transformations.md, "Halo"): stencils on 4 virtual CPU devices,
inputs sharded along the halo dim, three routes per stencil:

- `halo`: the op declared with `halo:` (examples/stencils): edges exchanged with
  collective-permutes, each device computing its block;
- `gathered`: the same spec without `halo:`: the sharding rule replicates the dim, so
  XLA all-gathers the input and every device computes the whole array;
- `jnp`: the same stencil in jnp (pad and slices), which XLA's partitioner shards itself.

Per route: time per step (a `lax.scan` of STEPS steps, median over batches) and the
bytes each device receives per step, read off the compiled HLO (collective-permute:
its result; all-gather: its result less the device's own part). Builds the two packages
first (CMake, as tests/python/halo_ops.py does), so it needs the build tools.

    python bench/bench_halo.py [--quick]
"""

import argparse
import os
import re
import sys
import tempfile
from pathlib import Path

os.environ["XLA_FLAGS"] = os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=4"

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import NamedSharding  # noqa: E402
from jax.sharding import PartitionSpec as P  # noqa: E402

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests" / "python"))
import halo_ops  # noqa: E402
from common import median_ms  # noqa: E402

STEPS = 10
_BYTES = {"f32": 4, "f64": 8, "s32": 4, "bf16": 2, "f16": 2}
_SHAPED = re.compile(r"= (\w+)\[([\d,]*)\]\S* (collective-permute|all-gather)(?:-start)?\(")


def received_bytes(hlo: str, devices: int) -> dict:
    """Bytes one device receives per step, by collective, from compiled HLO text (each
    collective of the scan's body appears once in it, and runs once a step)."""
    got = {"collective-permute": 0, "all-gather": 0}
    for dtype, dims, kind in _SHAPED.findall(hlo):
        n = int(np.prod([int(d) for d in dims.split(",") if d], dtype=np.int64)) * _BYTES.get(dtype, 4)
        got[kind] += n if kind == "collective-permute" else n * (devices - 1) // devices
    return got


def stencil3_jnp(x):
    p = jnp.pad(x, 1)
    return p[:-2] - 2 * x + p[2:]


def laplace5_jnp(u):
    p = jnp.pad(u, 1)
    return p[:-2, 1:-1] + p[2:, 1:-1] + p[1:-1, :-2] + p[1:-1, 2:] - 4 * u


def loop(stencil):
    def step(x, _):
        return x + 0.1 * stencil(x), None

    return jax.jit(lambda x: jax.lax.scan(step, x, None, length=STEPS)[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small arrays, one batch: a smoke run")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="bench_halo_"))
    specs = {name: (halo_ops.EXAMPLE / "specs" / f"{name}.yaml").read_text() for name in ("stencil3", "laplace5")}
    plain = {k: "\n".join(ln for ln in v.splitlines() if not ln.startswith("halo:")) + "\n" for k, v in specs.items()}
    sys.path[:0] = [str(halo_ops._build(folder, "stencils", specs)), str(halo_ops._build(folder, "gathered", plain))]
    import gathered
    import stencils

    mesh = jax.make_mesh((4,), ("d",), axis_types=(jax.sharding.AxisType.Auto,))
    n1, n2 = (4096, 64) if args.quick else (1 << 22, 2048)
    rng = np.random.default_rng(0)
    cases = {
        f"stencil3 [{n1}]": (rng.standard_normal(n1).astype(np.float32), P("d"), "stencil3", stencil3_jnp),
        f"laplace5 [{n2}, {n2}]": (
            rng.standard_normal((n2, n2)).astype(np.float32),
            P("d", None),
            "laplace5",
            laplace5_jnp,
        ),
    }
    batch = dict(batch=1, batches=1) if args.quick else dict(batch=3, batches=5)
    print(f"{len(jax.devices())} CPU devices, {STEPS} steps per call, float32; per step:")
    print(f"{'stencil':<22} {'route':<9} {'ms/step':>9} {'permuted B/dev':>15} {'gathered B/dev':>15}")
    for label, (x, spec, name, in_jnp) in cases.items():
        xs = jax.device_put(x, NamedSharding(mesh, spec))
        routes = {"halo": getattr(stencils.ops, name), "gathered": getattr(gathered.ops, name), "jnp": in_jnp}
        want = None
        for route, stencil in routes.items():
            f = loop(stencil)
            out = np.asarray(f(xs))
            want = out if want is None else want
            assert np.allclose(out, want, rtol=1e-4, atol=1e-4), (label, route)
            moved = received_bytes(f.lower(xs).compile().as_text(), len(jax.devices()))
            ms = median_ms(f, xs, **batch) / STEPS
            print(f"{label:<22} {route:<9} {ms:>9.3f} {moved['collective-permute']:>15,} {moved['all-gather']:>15,}")


if __name__ == "__main__":
    main()
