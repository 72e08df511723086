"""One of the 2 processes of test_halo.py's loopback test: a jax.distributed program,
2 virtual CPU devices per process, 4 in all, CPU collectives over gloo (so the halo's
collective-permutes cross processes).

    python halo_multiprocess_worker.py PROCESS_ID PORT SEED HALOS_DIR

Prints one line per check and exits 1 on a failure."""

import sys

import jax
import numpy as np


def main() -> int:
    pid, port, seed, halos_dir = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), sys.argv[4]
    jax.config.update("jax_num_cpu_devices", 2)
    jax.config.update("jax_cpu_collectives_implementation", "gloo")
    jax.config.update("jax_enable_x64", True)
    jax.distributed.initialize(
        coordinator_address=f"127.0.0.1:{port}", num_processes=2, process_id=pid, initialization_timeout=60
    )
    sys.path.insert(0, halos_dir)
    import halos
    from halo_ops import reference
    from jax.experimental.multihost_utils import process_allgather
    from jax.sharding import NamedSharding
    from jax.sharding import PartitionSpec as P

    assert jax.process_count() == 2 and jax.device_count() == 4
    mesh = jax.make_mesh((4,), ("d",), axis_types=(jax.sharding.AxisType.Auto,))
    rng = np.random.default_rng(seed)  # the same arrays in both processes
    cases = {
        "stencil3": (rng.integers(-1000, 1000, 32).astype(np.int32), P("d")),
        "causal3": (rng.standard_normal(32), P("d")),
        "laplace5": (rng.standard_normal((16, 12)), P("d", None)),
    }
    failures = []
    for name, (value, spec) in cases.items():
        x = jax.make_array_from_callback(value.shape, NamedSharding(mesh, spec), lambda index, v=value: v[index])
        f = jax.jit(getattr(halos.ops, name))
        out = f(x)
        hlo = f.lower(x).compile().as_text()
        got = np.asarray(process_allgather(out, tiled=True))
        same = np.array_equal(got, reference(name, value))
        gathers, permutes = "all-gather" in hlo, "collective-permute" in hlo
        print(f"process {pid}: {name}: equal {same}, all-gather {gathers}, collective-permute {permutes}", flush=True)
        if not same or gathers or not permutes:
            failures.append(name)
    # A derived transpose (`linear: halo`) across the processes: jax.grad stays sharded.
    value = rng.standard_normal(32)
    x = jax.make_array_from_callback(value.shape, NamedSharding(mesh, P("d")), lambda index, v=value: v[index])
    grad = jax.jit(jax.grad(lambda x: 0.5 * (halos.ops.causal3_linear(x) ** 2).sum()))
    hlo = grad.lower(x).compile().as_text()
    got = np.asarray(process_allgather(grad(x), tiled=True))
    same = np.allclose(got, reference("anticausal3", reference("causal3", value)), rtol=1e-12, atol=1e-12)
    gathers, permutes = "all-gather" in hlo, "collective-permute" in hlo
    print(
        f"process {pid}: grad causal3_linear: equal {same}, all-gather {gathers}, collective-permute {permutes}",
        flush=True,
    )
    if not same or gathers or not permutes:
        failures.append("grad causal3_linear")
    jax.distributed.shutdown()
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
