"""One of the 2 processes of test_multiprocess.py: a jax.distributed program on loopback,
2 virtual CPU devices per process, 4 in all, CPU collectives over gloo.

    python multiprocess_worker.py PROCESS_ID PORT SEED READING_DIR OUT_DIR

Every process imports the packages whose ops the program calls (opspec and the test-only
`reading`), builds the same global arrays from its own shards, and runs the same jitted
calls. Each result is read back whole (process_allgather) and compared with NumPy here;
process 0 also saves them to OUT_DIR/results.npz for the test to compare with the same
calls in one process. Prints one line per check; exits 1 on a failure."""

import sys

import jax
import numpy as np


def data(seed: int) -> dict:
    """The arguments of every check, the same in every process (and in the test)."""
    rng = np.random.default_rng(seed)
    rows, cols, batch, n = 8, 16, 8, 12
    # 40 nonzeros: a multiple of the 4 devices (before jax 0.10 an extent they do not
    # divide makes the call unpartitioned, and the batch gathered; docs/transformations.md),
    # in 7 rows: indptr has 8 entries
    dense = np.zeros(7 * n)
    dense[rng.choice(7 * n, 40, replace=False)] = rng.uniform(0.5, 1.5, 40)
    dense = dense.reshape(7, n)
    indptr = np.concatenate([[0], np.cumsum((dense != 0).sum(axis=1))]).astype(np.int32)
    indices = np.nonzero(dense)[1].astype(np.int32)
    return {
        "x": rng.standard_normal((8, 16)),
        "y": rng.standard_normal((8, 16)),
        "A": rng.standard_normal((rows, cols)),
        "v": rng.standard_normal(cols),
        "csr": (dense[dense != 0], indices, indptr),
        "dense": dense,
        "X": rng.standard_normal((batch, n)),
        "s": rng.standard_normal(32),
    }


def calls(ops, reading_ops) -> dict:
    """name -> (function, argument names): the calls both sides run."""
    return {
        "add": (lambda x, y: ops.add(x, y), ("x", "y")),
        "matvec_cols": (lambda A, v: ops.matvec(A, v), ("A", "v")),
        "csr_vmap": (
            lambda data, indices, indptr, X: jax.vmap(lambda x: ops.csr_matvec(data, indices, indptr, x))(X),
            ("data", "indices", "indptr", "X"),
        ),
        "grad_sigmoid": (jax.grad(lambda x: ops.sigmoid(x).sum()), ("x",)),
        "reading_axpy": (lambda x, y: reading_ops.axpy(x, y, a=0.5), ("x", "y")),
        "reading_stencil3": (lambda s: reading_ops.stencil3(s), ("s",)),
    }


def main() -> int:
    pid, port, seed, reading_dir, out_dir = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
    jax.config.update("jax_num_cpu_devices", 2)
    jax.config.update("jax_cpu_collectives_implementation", "gloo")
    jax.config.update("jax_enable_x64", True)
    jax.distributed.initialize(
        coordinator_address=f"127.0.0.1:{port}", num_processes=2, process_id=pid, initialization_timeout=60
    )
    sys.path.insert(0, reading_dir)
    import reading
    from jax.experimental.multihost_utils import process_allgather
    from jax.sharding import NamedSharding
    from jax.sharding import PartitionSpec as P

    import opspec

    assert jax.process_count() == 2 and jax.device_count() == 4 and jax.local_device_count() == 2
    mesh = jax.make_mesh((4,), ("d",), axis_types=(jax.sharding.AxisType.Auto,))
    d = data(seed)
    data_, indices, indptr = d["csr"]
    named = {**d, "data": data_, "indices": indices, "indptr": indptr}
    # How each argument is laid out over the 4 devices of the 2 processes.
    specs = {
        "x": P("d", None),  # element-wise: rows split
        "y": P("d", None),
        "A": P(None, "d"),  # matvec along its reduced cols
        "v": P("d"),
        "X": P("d", None),  # vmap batch split
        "data": P(),
        "indices": P(),
        "indptr": P(),
        "s": P("d"),  # an op that reads across s, declaring nothing: gathered
    }

    def global_array(name: str) -> jax.Array:
        value = np.asarray(named[name])
        sharding = NamedSharding(mesh, specs[name])
        return jax.make_array_from_callback(value.shape, sharding, lambda index: value[index])

    refs = {
        "add": d["x"] + d["y"],
        "matvec_cols": d["A"] @ d["v"],
        "csr_vmap": d["X"] @ d["dense"].T,
        "grad_sigmoid": (lambda s: s * (1 - s))(1 / (1 + np.exp(-d["x"]))),
        "reading_axpy": 0.5 * d["x"] + d["y"],
        "reading_stencil3": np.pad(d["s"], 1)[:-2] - 2 * d["s"] + np.pad(d["s"], 1)[2:],
    }
    failures, results = [], {}
    for name, (fn, argnames) in calls(opspec.ops, reading.ops).items():
        args = [global_array(a) for a in argnames]
        f = jax.jit(fn)
        out = f(*args)
        hlo = f.lower(*args).compile().as_text()
        got = np.asarray(process_allgather(out, tiled=True))
        results[name] = got
        ok = np.allclose(got, refs[name], rtol=1e-12, atol=1e-12)
        gathers, reduces = "all-gather" in hlo, "all-reduce" in hlo
        shards = [tuple(s.data.shape) for s in out.addressable_shards]
        line = f"{name}: matches NumPy {ok}, all-gather {gathers}, all-reduce {reduces}, local shards {shards}"
        print(f"process {pid}: {line}", flush=True)
        if not ok:
            failures.append(f"{name}: wrong result")
        if name in ("add", "grad_sigmoid", "reading_axpy", "csr_vmap") and gathers:
            failures.append(f"{name}: the compiled program gathers")
        if name == "matvec_cols" and (gathers or not reduces):
            failures.append(f"{name}: gathers, or does not all-reduce")
        if name in ("add", "reading_axpy", "csr_vmap") and out.sharding.is_fully_replicated:
            failures.append(f"{name}: the output is replicated, not sharded")
    if pid == 0:
        np.savez(f"{out_dir}/results.npz", **results)
    for f in failures:
        print(f"process {pid}: FAILED {f}", flush=True)
    jax.distributed.shutdown()
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
