"""Huge pages for large fresh outputs (runtime/src/pages.c): where Linux gives
transparent huge pages only on request (`madvise`), the CPU handler asks for them on an
output of at least 2 MiB (all vmap batch elements together) that is not an input's
memory, before its kernel writes it. Read back from the kernel's own account of the
output's mapping (/proc/self/smaps: "hg" in VmFlags is MADV_HUGEPAGE), in a fresh process
each, with no allocator settings or preloads that could advise memory themselves: with
OPSPEC_HUGE_PAGES unset, and set to 0 or false (no advice)."""

import os
import pathlib
import subprocess
import sys

import pytest

THP = pathlib.Path("/sys/kernel/mm/transparent_hugepage")

pytestmark = [
    pytest.mark.skipif(
        not (THP / "enabled").exists() or "[madvise]" not in (THP / "enabled").read_text(),
        reason="huge pages are asked for only where transparent_hugepage is `madvise`",
    ),
    pytest.mark.skipif(
        (THP / "hpage_pmd_size").exists() and int((THP / "hpage_pmd_size").read_text()) > 2 << 20,
        reason="the arrays below hold 8 huge pages: too large past 2 MiB pages",
    ),
]

# Prints the advice on the first whole huge page of each output, and checks the values.
CHILD = r"""
import sys
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

huge = int(sys.argv[1])
def first_whole_page(array):
    return (array.unsafe_buffer_pointer() + huge - 1) // huge * huge

n = 2 * huge  # float32: 8 huge pages' worth, whole huge pages inside wherever it starts
x = jax.random.normal(jax.random.key(7), (n,), jnp.float32)
d = jnp.full((1,), 0.5, jnp.float32)

# Every advice is read before NumPy makes an array (NumPy advises its own large arrays,
# and memory it frees may come back as XLA's). First a donated state that the output
# aliases: the input's memory, left as it is.
before = x.unsafe_buffer_pointer()
decayed = jax.block_until_ready(jax.jit(opspec.ops.exp_decay, donate_argnums=0)(x, d))
assert decayed.unsafe_buffer_pointer() == before, "the output did not take the donated buffer"
print("donated", advised(first_whole_page(decayed)))
y = jax.random.normal(jax.random.key(8), (n,), jnp.float32)
rows = jnp.reshape(y, (64, n // 64))  # each batch element's output 1/64 of the whole
outs = {
    "add": opspec.ops.add(decayed, y),
    "relu": jax.jit(opspec.ops.relu)(y),
    "vmap": jax.jit(jax.vmap(opspec.ops.relu))(rows),
}
# The calls run asynchronously: a buffer's pointer is known before its kernel (and the
# advice) has run.
jax.block_until_ready(outs)
for name, out in outs.items():
    print(name, advised(first_whole_page(out)))

x0 = np.asarray(jax.random.normal(jax.random.key(7), (n,), jnp.float32))
want_decayed = x0 * np.exp(np.float32(-0.5))
np.testing.assert_allclose(np.asarray(decayed), want_decayed, rtol=1e-6)
np.testing.assert_array_equal(np.asarray(outs["add"]), np.asarray(decayed) + np.asarray(y))
np.testing.assert_array_equal(np.asarray(outs["relu"]), np.maximum(np.asarray(y), 0))
np.testing.assert_array_equal(np.asarray(outs["vmap"]), np.maximum(np.asarray(rows), 0))
"""


def run_child(env_value):
    env = {k: v for k, v in os.environ.items() if k not in ("OPSPEC_HUGE_PAGES", "GLIBC_TUNABLES", "LD_PRELOAD")}
    if env_value is not None:
        env["OPSPEC_HUGE_PAGES"] = env_value
    huge = (THP / "hpage_pmd_size").read_text().strip()
    r = subprocess.run([sys.executable, "-c", CHILD, huge], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    return dict(line.split() for line in r.stdout.split("\n") if line)


def test_large_fresh_outputs_get_huge_pages():
    got = run_child(None)
    assert got == {"donated": "False", "add": "True", "relu": "True", "vmap": "True"}, got


@pytest.mark.parametrize("value", ["0", " False "])
def test_opspec_huge_pages_off(value):
    got = run_child(value)
    assert got == {"donated": "False", "add": "False", "relu": "False", "vmap": "False"}, got
