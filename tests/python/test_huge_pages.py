"""Huge pages for large fresh outputs (runtime/src/pages.c): where Linux gives
transparent huge pages only on request (`madvise`), the CPU handler asks for them on an
output of at least 2 MiB that is not an input's memory, before its kernel writes it.
Read back from the kernel's own account of the output's mapping (/proc/self/smaps: "hg"
in VmFlags is MADV_HUGEPAGE), in a fresh process each, so that no other code's advice
is on the memory: with OPSPEC_HUGE_PAGES unset, and set to 0 or false (no advice)."""

import os
import pathlib
import subprocess
import sys

import pytest

THP = pathlib.Path("/sys/kernel/mm/transparent_hugepage/enabled")

pytestmark = pytest.mark.skipif(
    not THP.exists() or "[madvise]" not in THP.read_text(),
    reason="huge pages are asked for only where transparent_hugepage is `madvise`",
)

# Prints the advice on an output's first whole huge page, and checks the values.
CHILD = r"""
import jax, jax.numpy as jnp, numpy as np, opspec

def advised(address):
    inside = False
    for line in open("/proc/self/smaps"):
        head = line.split()[0]
        if "-" in head and not head.endswith(":"):
            lo, hi = (int(v, 16) for v in head.split("-"))
            inside = lo <= address < hi
        elif inside and line.startswith("VmFlags:"):
            return "hg" in line.split()[1:]
    raise AssertionError(f"no mapping holds {address:#x}")

huge = 2 << 20
n = 4 << 20  # 16 MiB of float32: whole huge pages inside, wherever it starts
x = jax.random.normal(jax.random.key(7), (n,), jnp.float32)
y = jax.random.normal(jax.random.key(8), (n,), jnp.float32)
small = opspec.ops.add(x[:1000], y[:1000])  # 4 KB, before any advice: no whole huge page
print("small", advised(small.unsafe_buffer_pointer()))
for name, out, want in [
    ("add", opspec.ops.add(x, y), lambda: np.asarray(x) + np.asarray(y)),
    ("relu", jax.jit(opspec.ops.relu)(x), lambda: np.maximum(np.asarray(x), 0)),
]:
    start = out.unsafe_buffer_pointer()
    print(name, advised((start + huge - 1) // huge * huge))
    np.testing.assert_array_equal(np.asarray(out), want())
"""


def run_child(env_value):
    env = dict(os.environ)
    env.pop("OPSPEC_HUGE_PAGES", None)
    if env_value is not None:
        env["OPSPEC_HUGE_PAGES"] = env_value
    r = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    return dict(line.split() for line in r.stdout.split("\n") if line)


def test_large_fresh_outputs_get_huge_pages():
    got = run_child(None)
    assert got["add"] == "True" and got["relu"] == "True", got
    assert got["small"] == "False", got


@pytest.mark.parametrize("value", ["0", " False "])
def test_opspec_huge_pages_off(value):
    got = run_child(value)
    assert got == {"add": "False", "relu": "False", "small": "False"}, got
