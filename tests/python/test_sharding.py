"""Sharding rules from the spec on 4 virtual CPU devices (docs/transformations.md): in a
fresh process, since the device count is fixed when JAX starts (sharding_check.py)."""

import os
import subprocess
import sys
from pathlib import Path


def test_sharded_calls_match_and_elementwise_ones_do_not_gather(rng, reading_package):
    here = Path(__file__).parent
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(here), os.environ.get("PYTHONPATH", "")]))
    r = subprocess.run(
        [sys.executable, str(here / "sharding_check.py"), str(int(rng.integers(1 << 31))), str(reading_package)],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.strip().endswith("0 failures")
