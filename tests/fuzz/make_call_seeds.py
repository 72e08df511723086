"""Writes tests/fuzz/call_seeds/: one good call per shipped op (and a few batched and
aliased ones) in fuzz_call's input format (tests/fuzz/fuzz_call.c), so that the fuzzer
starts from calls that reach the kernels and mutates from there.

    python3 tests/fuzz/make_call_seeds.py
"""

import pathlib
import struct

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[2]
OPS = sorted(p.stem for p in (ROOT / "specs").glob("*.yaml"))  # fuzz_call's op order
DTYPES = {"float32": 0, "float64": 1, "int32": 2, "int64": 3}  # indexes into fuzz_dtypes
NAMES = ["opspec_batch", "opspec_kernel", "n", "alpha", "slope", "a_minus", "a_plus", "w_max", "w_min"]
F64 = 1


def buffer(array):
    a = np.ascontiguousarray(array)
    dims = a.shape
    return bytes([DTYPES[a.dtype.name], len(dims), *dims]) + a.tobytes()


def call(op, inputs, outputs, attrs=(), alias=None):
    """Bytes of one call: op, checks on, flags, counts, buffers, attributes.
    `outputs` are arrays whose dtype and shape the results take; `alias` maps an output's
    index to the input whose buffer it is. `attrs`: (name, kind, payload bytes)."""
    alias = alias or {}
    out = bytes([OPS.index(op), 1, 0, len(inputs), len(outputs)])
    out += b"".join(buffer(a) for a in inputs)
    for o, a in enumerate(outputs):
        out += bytes([alias[o] << 2 if o in alias else 1]) + buffer(a)
    out += bytes([len(attrs)])
    for name, kind, payload in attrs:
        out += bytes([NAMES.index(name)]) + payload if kind is None else bytes([NAMES.index(name), *kind]) + payload
    return out


def f64_attr(name, value):
    return (name, (0, F64), struct.pack("<d", value))  # kind scalar, dtype float64


def i64_attr(name, value):
    return (name, (0, DTYPES["int64"]), struct.pack("<q", value))


def batch_attr(rank, masks):
    values = [rank, *masks]
    return ("opspec_batch", (1, DTYPES["int64"]), bytes([len(values)]) + bytes(v & 0xFF for v in values))


def main():
    rng = np.random.default_rng(24)
    u = lambda *s: rng.uniform(-2, 2, s)  # noqa: E731
    one = lambda v: np.array([v], np.float64)  # noqa: E731
    n = 6
    indptr = np.array([0, 2, 3, 3, 5], np.int32)
    indices = np.array([0, 3, 1, 2, 4], np.int32)
    data = u(5)
    seeds = {
        "abs_two_pass": call("abs_two_pass", [u(n)], [u(n)]),
        "block_sum": call("block_sum", [u(9)], [u(1)]),
        "csr_matvec": call("csr_matvec", [data, indices, indptr, u(5)], [u(4)]),
        "csr_rmatvec": call("csr_rmatvec", [data, indices, indptr, u(4)], [u(5)], [i64_attr("n", 5)]),
        "exp_decay": call("exp_decay", [u(n), one(0.5)], [u(n)]),
        "exp_trace": call("exp_trace", [u(n), u(n), one(0.05)], [u(n)], alias={0: 0}),
        "hadamard": call("hadamard", [u(2, 3), u(2, 3)], [u(2, 3)]),
        "leaky_relu": call("leaky_relu", [u(n)], [u(n)], [f64_attr("alpha", 0.1)]),
        "leaky_relu_batched": call("leaky_relu", [u(3, n)], [u(3, n)], [f64_attr("alpha", 0.1), batch_attr(1, [1])]),
        "lif": call("lif", [u(n), u(n), one(0.05), one(-55), one(-70), one(0.1)], [u(n), np.zeros(n, np.int32)]),
        "lif_aliased": call(
            "lif",
            [u(n), u(n), one(0.05), one(-55), one(-70), one(0.1)],
            [u(n), np.zeros(n, np.int32)],
            alias={0: 0},
        ),
        "lif_surrogate": call(
            "lif_surrogate",
            [u(n), u(n), one(0.05), one(-55), one(-70), one(0.1)],
            [u(n), u(n)],
            [f64_attr("slope", 5.0)],
        ),
        "matvec": call("matvec", [u(3, 4), u(4)], [u(3)]),
        "matvec_batched": call("matvec", [u(3, 4), u(2, 4)], [u(2, 3)], [batch_attr(1, [0, 1])]),
        "matvec_undeclared_alias": call("matvec", [u(4, 4), u(4)], [u(4)], alias={0: 1}),
        "max": call("max", [u(n)], [u(1)]),
        "parallel_add": call("parallel_add", [u(n), u(n)], [u(n)]),
        "running_stats": call("running_stats", [u(n)], [u(1), u(1)]),
        "spike_reset": call("spike_reset", [u(n), one(0.0), one(-1.0)], [np.zeros(n, np.int32), u(n)]),
        "split": call("split", [u(2, 3)], [u(2, 3), u(2, 3)]),
        "stdp_update": call(
            "stdp_update",
            [u(2, 3), u(2), u(2), u(3), u(3)],
            [u(2, 3)],
            [f64_attr("a_minus", 0.012), f64_attr("a_plus", 0.01), f64_attr("w_max", 1.0), f64_attr("w_min", 0.0)],
        ),
        "sum": call("sum", [u(n)], [u(1)]),
        "sum_empty_batch": call("sum", [u(n)], [u(0, 1)], [batch_attr(1, [0])]),
    }
    folder = ROOT / "tests" / "fuzz" / "call_seeds"
    folder.mkdir(exist_ok=True)
    for name, data in seeds.items():
        (folder / name).write_bytes(data)


if __name__ == "__main__":
    main()
