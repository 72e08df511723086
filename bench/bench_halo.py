"""Halo benchmark (docs/transformations.md, "Halo"): stencils on 4 virtual CPU devices,
inputs sharded along the halo dim, three routes per stencil:

- `halo`: the op declared with `halo:` (examples/stencils): edges exchanged with
  collective-permutes, each device computing its block;
- `gathered`: the same spec without `halo:`: the sharding rule replicates the dim, so
  XLA all-gathers the input and every device computes the whole array;
- `jnp`: the same stencil in jnp (pad and slices), which XLA's partitioner shards itself.

Per route: time per step (a `lax.scan` of STEPS steps, median over batches) and the
bytes each device receives per step, read off the compiled HLO (collective-permute:
its result; all-gather: its result less the device's own part). Twice: the 4 devices in
this process, then in 2 processes of 2 devices each on loopback (`jax.distributed`,
CPU collectives over gloo, so the edges between devices 1 and 2 cross processes; process
0 prints). Builds the two packages first (CMake, as tests/python/halo_ops.py does), so it
needs the build tools.

    python bench/bench_halo.py [--quick] [--processes 1|2|both]
"""

import argparse
import os
import re
import socket
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

WORKER = "--worker" in sys.argv  # one of the 2 processes: its devices come from jax_num_cpu_devices
if not WORKER:
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


def build(folder: Path) -> list:
    """The example's stencil3 and laplace5 as the package `stencils`, and without `halo:`
    as `gathered`: the folders to put on sys.path."""
    specs = {name: (halo_ops.EXAMPLE / "specs" / f"{name}.yaml").read_text() for name in ("stencil3", "laplace5")}
    plain = {k: "\n".join(ln for ln in v.splitlines() if not ln.startswith("halo:")) + "\n" for k, v in specs.items()}
    return [str(halo_ops._build(folder, "stencils", specs)), str(halo_ops._build(folder, "gathered", plain))]


def measure(quick: bool, where: str, show: bool) -> None:
    """Times the three routes of each stencil on the 4 devices jax has (in one process or
    several: every process runs the same calls, `show` prints)."""
    import gathered
    import stencils
    from jax.experimental.multihost_utils import process_allgather

    from opspec import ShardingWarning

    warnings.filterwarnings("ignore", category=ShardingWarning)  # the gathered route's, by design

    mesh = jax.make_mesh((4,), ("d",), axis_types=(jax.sharding.AxisType.Auto,))
    n1, n2 = (4096, 64) if quick else (1 << 22, 2048)
    rng = np.random.default_rng(0)  # the same arrays in every process
    cases = {
        f"stencil3 [{n1}]": (rng.standard_normal(n1).astype(np.float32), P("d"), "stencil3", stencil3_jnp),
        f"laplace5 [{n2}, {n2}]": (
            rng.standard_normal((n2, n2)).astype(np.float32),
            P("d", None),
            "laplace5",
            laplace5_jnp,
        ),
    }
    batch = dict(batch=1, batches=1) if quick else dict(batch=3, batches=5)
    if show:
        print(f"\n{jax.device_count()} CPU devices {where}, {STEPS} steps per call, float32; per step:")
        print(f"{'stencil':<22} {'route':<9} {'ms/step':>9} {'permuted B/dev':>15} {'gathered B/dev':>15}")
    for label, (x, spec, name, in_jnp) in cases.items():
        xs = jax.make_array_from_callback(x.shape, NamedSharding(mesh, spec), lambda index, v=x: v[index])
        routes = {"halo": getattr(stencils.ops, name), "gathered": getattr(gathered.ops, name), "jnp": in_jnp}
        want = None
        for route, stencil in routes.items():
            f = loop(stencil)
            out = np.asarray(process_allgather(f(xs), tiled=True))
            want = out if want is None else want
            assert np.allclose(out, want, rtol=1e-4, atol=1e-4), (label, route)
            moved = received_bytes(f.lower(xs).compile().as_text(), jax.device_count())
            ms = median_ms(f, xs, **batch) / STEPS
            if show:
                permuted, all_gathered = moved["collective-permute"], moved["all-gather"]
                print(f"{label:<22} {route:<9} {ms:>9.3f} {permuted:>15,} {all_gathered:>15,}", flush=True)


def worker(pid: int, port: str, quick: bool, paths: list) -> None:
    jax.config.update("jax_num_cpu_devices", 2)
    jax.config.update("jax_cpu_collectives_implementation", "gloo")
    jax.distributed.initialize(
        coordinator_address=f"127.0.0.1:{port}", num_processes=2, process_id=pid, initialization_timeout=120
    )
    sys.path[:0] = paths
    measure(quick, "in 2 processes (2 each, gloo)", show=pid == 0)
    jax.distributed.shutdown()


def two_processes(quick: bool, paths: list) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = str(sock.getsockname()[1])
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
    command = [sys.executable, __file__, *(["--quick"] if quick else []), "--worker"]
    procs = [subprocess.Popen([*command, str(i), port, *paths], env=env) for i in range(2)]
    try:
        codes = [p.wait(timeout=3600) for p in procs]
    finally:
        for p in procs:  # never leave one behind
            if p.poll() is None:
                p.kill()
                p.wait()
    if any(codes):
        sys.exit(f"a benchmark process failed: exit codes {codes}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small arrays, one batch: a smoke run")
    parser.add_argument("--processes", choices=("1", "2", "both"), default="both", help="4 devices in 1 or 2 processes")
    parser.add_argument("--worker", nargs="+", help=argparse.SUPPRESS)  # PID PORT PACKAGE_DIRS...
    args = parser.parse_args()
    if args.worker:
        worker(int(args.worker[0]), args.worker[1], args.quick, args.worker[2:])
        return
    paths = build(Path(tempfile.mkdtemp(prefix="bench_halo_")))
    if args.processes in ("1", "both"):
        sys.path[:0] = paths
        measure(args.quick, "in 1 process", show=True)
    if args.processes in ("2", "both"):
        two_processes(args.quick, paths)


if __name__ == "__main__":
    main()
