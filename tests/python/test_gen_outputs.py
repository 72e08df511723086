"""What opspec-gen writes to: only regular files, all of them or none, an old file read
only as far as the new text plus one byte, and --schema --check writing nothing."""

import os
import pathlib
import shutil
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
GEN = os.path.abspath(
    os.environ.get("OPSPEC_GEN")
    or shutil.which("opspec-gen", path=os.path.dirname(sys.executable))
    or str(ROOT / "build" / "generator" / "opspec-gen")
)

pytestmark = pytest.mark.skipif(not os.path.exists(GEN), reason="opspec-gen not built (OPSPEC_REGENERATE=OFF)")


# An opspec-gen that read /dev/zero to its end took every byte of the machine: each run
# here is held to 1 GiB (ulimit -v; ASan's own limit in a sanitizer build, which reserves
# terabytes of address space for its shadow memory and cannot run under ulimit -v).
_ASAN = b"__asan_init" in pathlib.Path(GEN).read_bytes() if os.path.exists(GEN) else False
_LIMIT = "" if _ASAN else "ulimit -v 1048576; "


def gen(*args):
    """opspec-gen with a time and memory limit: reading a FIFO used to wait forever."""
    env = dict(os.environ, ASAN_OPTIONS=os.environ.get("ASAN_OPTIONS", "") + ":hard_rss_limit_mb=1024")
    try:
        return subprocess.run(
            ["sh", "-c", _LIMIT + 'exec "$0" "$@"', GEN, *args],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=30,
            env=env,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"opspec-gen {' '.join(args)} did not finish in 30 s")


TWICE = """\
op: twice
types: {T: [float32, float64]}
inputs:
  - {name: x, dtype: T, shape: [n]}
outputs:
  - {name: out, dtype: T, shape: [n]}
launch: [n]
kernel: |
  out[i] = 2 * x[i];
"""


def tree(folder: pathlib.Path) -> dict:
    """Every entry under `folder`: a file's bytes, or what else it is."""
    out = {}
    for p in sorted(folder.rglob("*")):
        rel = str(p.relative_to(folder))
        out[rel] = p.read_bytes() if p.is_file() else ("fifo" if p.is_fifo() else "dir")
    return out


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/full", "/dev/null"])
def test_schema_refuses_a_device(device):
    if not os.path.exists(device):
        pytest.skip(f"no {device}")
    r = gen("--schema", "--out", device)
    assert r.returncode == 1, r.stderr
    assert f"{device}: error: is a character device, not a regular file: opspec-gen writes only regular files" in (
        r.stderr
    )


def test_schema_refuses_a_fifo(tmp_path):
    fifo = tmp_path / "schema.json"
    os.mkfifo(fifo)
    r = gen("--schema", "--out", str(fifo))
    assert r.returncode == 1
    assert f"{fifo}: error: is a FIFO, not a regular file" in r.stderr
    assert fifo.is_fifo()


def test_out_that_is_a_fifo_or_a_file_is_refused(tmp_path):
    for name, make in (("fifo", os.mkfifo), ("file", lambda p: pathlib.Path(p).write_text("x"))):
        out = tmp_path / name
        make(out)
        r = gen("--out", str(out), "specs/sum.yaml")
        assert r.returncode == 1
        kind = "a FIFO" if name == "fifo" else "a regular file"
        assert f"{out}: error: is {kind}, not a directory" in r.stderr, r.stderr


def test_a_fifo_among_the_outputs_leaves_the_tree_as_it_was(tmp_path):
    """Every file of the op changes (a new kernel), one of them is a FIFO: the FIFO is
    refused by name, no other file is written, and no temporary file is left."""
    spec = tmp_path / "twice.yaml"
    spec.write_text(TWICE)
    out = tmp_path / "out"
    assert gen("--quiet", "--out", str(out), str(spec)).returncode == 0
    spec.write_text(TWICE.replace("2 * x[i]", "3 * x[i]"))
    # python/ops.py comes after every ops/ file: the old generator wrote those first.
    fifo = out / "python" / "ops.py"
    fifo.unlink()
    os.mkfifo(fifo)
    before = tree(out)
    r = gen("--out", str(out), str(spec))
    assert r.returncode == 1
    assert f"{fifo}: error: is a FIFO, not a regular file: opspec-gen writes only regular files" in r.stderr
    assert tree(out) == before
    # With the FIFO gone, the same run writes the new files.
    fifo.unlink()
    r = gen("--out", str(out), str(spec))
    assert r.returncode == 0, r.stderr
    assert "3 * x[i]" in (out / "ops" / "twice_body.inc").read_text()


def test_a_directory_where_a_file_goes_writes_nothing(tmp_path):
    spec = tmp_path / "twice.yaml"
    spec.write_text(TWICE)
    out = tmp_path / "out"
    (out / "python" / "ops.py").mkdir(parents=True)
    r = gen("--out", str(out), str(spec))
    assert r.returncode == 1
    assert "ops.py: error: is a directory, not a regular file" in r.stderr
    assert tree(out) == {"python": "dir", "python/ops.py": "dir"}


def test_schema_check_compares_and_writes_nothing(tmp_path):
    path = tmp_path / "schema.json"
    r = gen("--schema", "--check", "--out", str(path))
    assert r.returncode == 1 and not path.exists()
    assert f"{path}: error: is not the schema this opspec-gen makes" in r.stderr
    path.write_text("{}\n")
    r = gen("--schema", "--check", "--out", str(path))
    assert r.returncode == 1 and path.read_text() == "{}\n"
    schema = gen("--schema").stdout
    assert schema.startswith("{") and len(schema) > 1000
    path.write_text(schema)
    assert gen("--schema", "--check", "--out", str(path)).returncode == 0
    # One byte more is a difference too (the old file is read to one byte past the new).
    path.write_text(schema + " ")
    assert gen("--schema", "--check", "--out", str(path)).returncode == 1
    r = gen("--schema", "--check")
    assert r.returncode == 2 and "name it with --out FILE" in r.stderr
