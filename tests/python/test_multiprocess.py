"""opspec ops in one program spread over 2 processes (docs/transformations.md, "Across
processes and hosts"): jax.distributed on loopback, 2 virtual CPU devices each, CPU
collectives over gloo (multiprocess_worker.py). Each result must equal the same call in
this one process, and NumPy."""

import os
import socket
import subprocess
import sys
from pathlib import Path

import jax
import numpy as np
from multiprocess_worker import calls, data

import opspec

TIMEOUT = 300  # seconds for the whole run: a stuck coordinator must not hang CI


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_two_processes_match_one(tmp_path, rng, reading_package):
    import reading

    here = Path(__file__).parent
    seed, port = int(rng.integers(1 << 31)), free_port()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(here), os.environ.get("PYTHONPATH", "")]))
    env.pop("XLA_FLAGS", None)  # the device count comes from jax_num_cpu_devices
    worker = [sys.executable, str(here / "multiprocess_worker.py")]
    procs = [
        subprocess.Popen(
            [*worker, str(i), str(port), str(seed), str(reading_package), str(tmp_path)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for i in range(2)
    ]
    outputs = []
    try:
        for p in procs:
            outputs.append(p.communicate(timeout=TIMEOUT)[0])
    finally:
        for p in procs:  # on a timeout, or a failure of the first: never leave one behind
            if p.poll() is None:
                p.kill()
                p.communicate()
    text = "\n".join(outputs)
    print(text)
    assert all(p.returncode == 0 for p in procs), text
    assert text.count("matches NumPy True") == 2 * len(calls(opspec.ops, reading.ops)), text

    # The same calls in this process, on one device.
    d = data(seed)
    named = {**d, "data": d["csr"][0], "indices": d["csr"][1], "indptr": d["csr"][2]}
    results = np.load(tmp_path / "results.npz")
    for name, (fn, argnames) in calls(opspec.ops, reading.ops).items():
        one = np.asarray(jax.jit(fn)(*[named[a] for a in argnames]))
        np.testing.assert_allclose(results[name], one, rtol=1e-12, atol=1e-12, err_msg=name)
