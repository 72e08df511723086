"""The parallel threshold's sources: the environment, the value `python -m opspec tune`
saved for this machine, the default; and the choice of the crossover from measured rows.
No timing is asserted: tune runs on tiny sizes only to check what it writes."""

import json
import os
import subprocess
import sys

import pytest

import opspec
from opspec import _tune

PROBE = "import opspec; print(opspec.parallel_threshold()); print(opspec.parallel_threshold_source())"


def run_python(code, cache, **env):
    """Runs `code` in a fresh interpreter whose cache folder is `cache`; stdout lines."""
    environ = {k: v for k, v in os.environ.items() if k != _tune.ENV}
    environ.update(XDG_CACHE_HOME=str(cache), PYTHONPATH=os.pathsep.join(sys.path), **env)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=environ)
    assert r.returncode == 0, r.stderr
    return r.stdout.splitlines(), r.stderr


def save(cache, monkeypatch, data):
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    path = _tune.cache_file()
    os.makedirs(os.path.dirname(path))
    with open(path, "w", encoding="utf-8") as f:
        json.dump(data, f)
    return path


def test_cache_file_is_per_host_and_cpu_count_under_xdg_cache_home(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    path = _tune.cache_file()
    assert os.path.dirname(path) == str(tmp_path / "opspec")
    assert os.path.basename(path).endswith(f"-{_tune.cpu_count()}cpu.json")
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert _tune.cache_file().startswith(str(tmp_path / "home" / ".cache" / "opspec") + os.sep)


def test_saved_value_is_read_at_import(tmp_path, monkeypatch):
    path = save(tmp_path, monkeypatch, {"format": _tune.FORMAT, "parallel_threshold": 123457})
    out, _ = run_python(PROBE, tmp_path)
    assert out == ["123457", path]


def test_environment_wins_over_the_saved_value(tmp_path, monkeypatch):
    save(tmp_path, monkeypatch, {"format": _tune.FORMAT, "parallel_threshold": 123457})
    out, _ = run_python(PROBE, tmp_path, OPSPEC_PARALLEL_THRESHOLD="777")
    assert out == ["777", "environment (OPSPEC_PARALLEL_THRESHOLD)"]


def test_set_parallel_threshold_wins_over_both(tmp_path, monkeypatch):
    save(tmp_path, monkeypatch, {"format": _tune.FORMAT, "parallel_threshold": 123457})
    code = "import opspec; opspec.set_parallel_threshold(99); print(opspec.parallel_threshold())"
    out, _ = run_python(code, tmp_path, OPSPEC_PARALLEL_THRESHOLD="777")
    assert out == ["99"]


def test_bad_environment_value_warns_and_falls_back(tmp_path, monkeypatch):
    path = save(tmp_path, monkeypatch, {"format": _tune.FORMAT, "parallel_threshold": 123457})
    out, err = run_python(PROBE, tmp_path, OPSPEC_PARALLEL_THRESHOLD="lots")
    assert out == ["123457", path]
    assert "OPSPEC_PARALLEL_THRESHOLD='lots' is not a positive integer: ignored" in err


@pytest.mark.parametrize(
    "content",
    [
        "not json",
        json.dumps({"format": _tune.FORMAT + 1, "parallel_threshold": 5}),
        json.dumps({"format": _tune.FORMAT, "parallel_threshold": 0}),
        json.dumps({"format": _tune.FORMAT, "parallel_threshold": "many"}),
        json.dumps([1, 2]),
    ],
)
def test_unusable_saved_file_leaves_the_default(tmp_path, monkeypatch, content):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    path = _tune.cache_file()
    os.makedirs(os.path.dirname(path))
    with open(path, "w", encoding="utf-8") as f:
        f.write(content)
    assert _tune.saved_threshold() is None


def test_default_when_nothing_is_saved(tmp_path):
    out, _ = run_python(PROBE, tmp_path)
    assert out[1] == "default"
    assert opspec.parallel_threshold_source() == "default"  # conftest: an empty cache folder
    assert int(out[0]) == opspec.parallel_threshold()


def row(size, serial, parallel):
    return {"size": size, "serial_ms": serial, "parallel_ms": parallel}


def test_pick_threshold_takes_the_first_size_from_which_threads_keep_winning():
    rows = [row(1000, 1.0, 3.0), row(2000, 2.0, 1.5), row(4000, 4.0, 4.1), row(8000, 8.0, 5.0), row(16000, 16, 9)]
    assert _tune.pick_threshold(rows) == 8000  # 2000 wins, but 4000 does not: not from 2000
    assert _tune.pick_threshold(list(reversed(rows))) == 8000
    assert _tune.pick_threshold([row(1000, 1.0, 0.5)]) == 1000
    # A win below the margin is not a win.
    assert _tune.pick_threshold([row(1000, 1.0, 0.95), row(2000, 2.0, 1.0)]) == 2000
    assert _tune.pick_threshold([row(1000, 1.0, 0.5), row(2000, 2.0, 2.5)]) == _tune.NEVER
    assert _tune.pick_threshold([]) == _tune.NEVER


def test_tune_saves_what_the_next_import_reads(tmp_path):
    code = (
        "from opspec import _measure; "
        "r = _measure.tune(rounds=1, sizes=[4096, 8192], min_seconds=0.0005, log=lambda s: None); "
        "print(r['parallel_threshold'])"
    )
    out, _ = run_python(code, tmp_path)
    saved = int(out[0])
    files = os.listdir(tmp_path / "opspec")
    assert len(files) == 1 and files[0].startswith("parallel-threshold-")
    with open(tmp_path / "opspec" / files[0], encoding="utf-8") as f:
        data = json.load(f)
    assert data["format"] == _tune.FORMAT and data["parallel_threshold"] == saved
    assert saved in (4096, 8192, _tune.NEVER) or data["threads"] < 2
    if data["threads"] >= 2:  # the row-wise op's crossover, in the same unit, beside it
        assert data["crossovers"]["add"] == saved and data["crossovers"]["matvec"] in (4096, 8192, _tune.NEVER)
        assert [r["size"] for r in data["matvec_rows"]] == [4096, 8192]
        # gelu_tanh: 2n / 9 elements, n elements of work by its `flops:` (handler.c); its
        # crossover counts the work the handler reported for each row.
        assert [r["work"] for r in data["gelu_tanh_rows"]] == [4095, 8190]
        works = {r["work"] for r in data["gelu_tanh_rows"]}
        assert data["crossovers"]["gelu_tanh"] in works | {_tune.NEVER}
    out, _ = run_python(PROBE, tmp_path)
    assert out == [str(saved), str(tmp_path / "opspec" / files[0])]


def test_python_m_opspec_prints_the_threshold_and_its_source(tmp_path):
    out, _ = run_python(
        "import runpy, sys; sys.argv = ['opspec']; runpy.run_module('opspec', run_name='__main__')", tmp_path
    )
    assert any(line.startswith("  parallel threshold: ") and line.endswith("(default)") for line in out)
