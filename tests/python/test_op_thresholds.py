"""An op's own parallel threshold (runtime/src/cpu.c, beside the registry): set with
``set_parallel_threshold(work, op=...)``, it replaces the package's threshold for that
op's calls only; ``python -m opspec tune`` saves such values and every import applies
them. What the handler decided is read from ``parallel_stats()`` (loops handed to more
than one thread: docs/performance.md)."""

import json
import os
import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import opspec
from opspec import _tune

NEVER = _tune.NEVER
N = 100_000  # elements: below the default threshold, far above 1


@pytest.fixture
def knobs():
    """The package threshold and the own thresholds of the ops used, put back after."""
    native = opspec._opspec
    if native.cpu_threads() < 2:
        pytest.skip("one thread only: no loop goes parallel")
    ops = ("sigmoid", "relu", "sum", "add")
    before = opspec.parallel_threshold(), {op: native.op_parallel_threshold(op) for op in ops}
    opspec.set_cpu_pool("opspec")
    yield
    opspec.set_parallel_threshold(before[0])
    for op, own in before[1].items():
        opspec.set_parallel_threshold(own or None, op=op)


def loops_of(call):
    """Loops handed to more than one thread while `call()` ran, and its result."""
    before = opspec._opspec.parallel_stats()[0]
    out = jax.block_until_ready(call())
    return opspec._opspec.parallel_stats()[0] - before, out


def test_an_ops_own_threshold_makes_its_calls_parallel_and_leaves_others_alone(rng, knobs):
    x = rng.standard_normal(N).astype(np.float32)
    opspec.set_parallel_threshold(NEVER)  # the package's: every loop serial
    opspec.set_parallel_threshold(1000, op=opspec.ops.sigmoid)  # the op function
    assert opspec.parallel_threshold(op="sigmoid") == 1000 and opspec.parallel_threshold() == NEVER
    assert opspec.parallel_threshold(op=opspec.ops.relu) == NEVER  # no own value: the package's
    loops, y = loops_of(lambda: opspec.ops.sigmoid(x))
    assert loops == 1
    np.testing.assert_allclose(np.asarray(y), np.asarray(jax.nn.sigmoid(jnp.asarray(x))), rtol=2e-6, atol=1e-7)
    loops, y = loops_of(lambda: opspec.ops.relu(x))
    assert loops == 0
    np.testing.assert_array_equal(np.asarray(y), np.asarray(jax.nn.relu(jnp.asarray(x))))
    # Below its own threshold the op stays serial.
    small = x[:500]
    loops, y = loops_of(lambda: opspec.ops.sigmoid(small))
    assert loops == 0
    np.testing.assert_allclose(np.asarray(y), np.asarray(jax.nn.sigmoid(jnp.asarray(small))), rtol=2e-6, atol=1e-7)


def test_an_ops_own_threshold_keeps_it_serial_where_the_package_goes_parallel(rng, knobs):
    x = rng.standard_normal(N).astype(np.float32)
    y = rng.standard_normal(N).astype(np.float32)
    opspec.set_parallel_threshold(1)
    opspec.set_parallel_threshold(NEVER, op="add")
    loops, out = loops_of(lambda: jax.jit(opspec.ops.add)(x, y))
    assert loops == 0
    np.testing.assert_array_equal(np.asarray(out), x + y)
    loops, out = loops_of(lambda: opspec.ops.relu(x))
    assert loops == 1
    np.testing.assert_array_equal(np.asarray(out), np.maximum(x, 0))
    # Removed, the op follows the package's threshold again.
    opspec.set_parallel_threshold(None, op="add")
    assert opspec.parallel_threshold(op="add") == 1 and opspec._opspec.op_parallel_threshold("add") == 0
    loops, out = loops_of(lambda: jax.jit(opspec.ops.add)(x, y))
    assert loops == 1
    np.testing.assert_array_equal(np.asarray(out), x + y)


def test_a_raw_bodys_batch_uses_its_ops_own_threshold(rng, knobs):
    """`sum` is a raw `cpu:` body: a natively batched call runs its elements in parallel,
    one each, when one element (1 output) is below the threshold and all are not
    (handler.c, opspec_run_batch); the op's own threshold decides it."""
    xs = rng.standard_normal((64, 1000)).astype(np.float32)
    batched = jax.jit(jax.vmap(opspec.ops.sum))
    opspec.set_parallel_threshold(NEVER)
    loops, out = loops_of(lambda: batched(xs))
    assert loops == 0
    np.testing.assert_allclose(np.asarray(out), xs.astype(np.float64).sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-4)
    opspec.set_parallel_threshold(2, op="sum")
    loops, out = loops_of(lambda: batched(xs))
    assert loops == 1
    np.testing.assert_allclose(np.asarray(out), xs.astype(np.float64).sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-4)


def test_bad_ops_and_values_raise_errors_naming_them(knobs):
    with pytest.raises(ValueError, match=r"^opspec has no op 'sigmoi': .*did you mean 'sigmoid'"):
        opspec.set_parallel_threshold(10, op="sigmoi")
    with pytest.raises(ValueError, match=r"^opspec has no op 'zzz_none': expected the name of one of its ops"):
        opspec.parallel_threshold(op="zzz_none")
    with pytest.raises(ValueError, match="has no op 'nothing'"):
        opspec.parallel_threshold_source(op="nothing")
    with pytest.raises(TypeError, match=r"^opspec: op= expects an op's name \(str\) or op function, got 3 \(int\)"):
        opspec.set_parallel_threshold(10, op=3)
    with pytest.raises(TypeError, match=r"^opspec.set_parallel_threshold\(op='add'\): expected an integer .*'many'"):
        opspec.set_parallel_threshold("many", op="add")
    with pytest.raises(TypeError, match=r"^opspec.set_parallel_threshold: expected an integer .*got 1.5 \(float\)"):
        opspec.set_parallel_threshold(1.5)
    with pytest.raises(TypeError, match="expected an integer"):
        opspec.set_parallel_threshold(True)
    with pytest.raises(
        TypeError, match=r"^opspec.set_cpu_threads: expected an integer \(threads; 0 for the default\), got 'a'"
    ):
        opspec.set_cpu_threads("a")
    with pytest.raises(TypeError, match=r"^opspec.set_cpu_threads: expected an integer .*got 1.5 \(float\)"):
        opspec.set_cpu_threads(1.5)
    with pytest.raises(
        ValueError, match=r"^opspec.set_cpu_threads: expected 0 \(the default\) or a number of threads, got -3"
    ):
        opspec.set_cpu_threads(-3)
    assert opspec._opspec.op_parallel_threshold("add") == 0  # nothing was set


def test_values_below_one_become_one_and_integral_floats_count(knobs):
    opspec.set_parallel_threshold(-5, op="relu")
    assert opspec.parallel_threshold(op="relu") == 1
    opspec.set_parallel_threshold(-(2**70))
    assert opspec.parallel_threshold() == 1
    opspec.set_parallel_threshold(2**63, op="relu")  # past int64: the largest value
    assert opspec.parallel_threshold(op="relu") == 2**63 - 1
    opspec.set_parallel_threshold(1e30)
    assert opspec.parallel_threshold() == 2**63 - 1
    opspec.set_parallel_threshold(4096.0, op="relu")
    assert opspec.parallel_threshold(op="relu") == 4096
    opspec.set_parallel_threshold(np.int64(777))
    assert opspec.parallel_threshold() == 777


def test_another_packages_op_function_is_refused(reading_package):
    import reading

    with pytest.raises(ValueError, match=r"^reading.ops.row_rms_norm is an op of package 'reading', not of 'opspec'"):
        opspec.set_parallel_threshold(10, op=reading.ops.row_rms_norm)
    before = reading._opspec.op_parallel_threshold("row_rms_norm")
    reading.set_parallel_threshold(12345, op=reading.ops.row_rms_norm)
    try:
        assert reading.parallel_threshold(op="row_rms_norm") == 12345
        assert opspec._opspec.op_parallel_threshold("add") == 0  # opspec's own table is apart
    finally:
        reading.set_parallel_threshold(before or None, op="row_rms_norm")


# ---- saved by `tune`, applied at import --------------------------------------------

PROBE = (
    "import opspec; print(opspec.parallel_threshold()); print(opspec.parallel_threshold(op='sigmoid')); "
    "print(opspec.parallel_threshold(op='relu')); print(opspec.parallel_threshold_source(op='sigmoid')); "
    "print(opspec.parallel_threshold_source(op='relu'))"
)


def run_python(code, cache, **env):
    environ = {k: v for k, v in os.environ.items() if k != _tune.ENV}
    environ.update(XDG_CACHE_HOME=str(cache), PYTHONPATH=os.pathsep.join(sys.path), **env)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=environ)
    assert r.returncode == 0, r.stderr
    return r.stdout.splitlines()


def write_saved(cache, data):
    path = _tune.cache_file().replace(_tune.cache_dir(), str(cache / "opspec"), 1)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(data, f)
    return path


def test_saved_op_thresholds_are_applied_at_import(tmp_path):
    data = {
        "format": _tune.FORMAT,
        "parallel_threshold": 50_000,
        "op_thresholds": {"opspec": {"sigmoid": 9_000, "gone_op": 5, "relu": "many"}, "other": {"relu": 3}},
    }
    path = write_saved(tmp_path, data)
    out = run_python(PROBE, tmp_path)
    # relu's entry is not a number, gone_op is no op, other's values are another package's.
    assert out == ["50000", "9000", "50000", path, path]
    # The environment's threshold wins over the whole file: no op starts with its own.
    out = run_python(PROBE, tmp_path, OPSPEC_PARALLEL_THRESHOLD="777")
    assert out == ["777", "777", "777"] + ["environment (OPSPEC_PARALLEL_THRESHOLD)"] * 2
    big = str(2**70)  # past int64: the largest value, not a failed import
    out = run_python(PROBE, tmp_path, OPSPEC_PARALLEL_THRESHOLD=big)
    assert out == [str(2**63 - 1)] * 3 + ["environment (OPSPEC_PARALLEL_THRESHOLD)"] * 2


def test_a_user_package_applies_its_own_entry_of_the_saved_file(tmp_path, reading_package):
    path = write_saved(
        tmp_path,
        {"format": 2, "parallel_threshold": 60_000, "op_thresholds": {"reading": {"row_rms_norm": 4242}}},
    )
    code = (
        "import opspec, reading; print(reading.parallel_threshold(op=reading.ops.row_rms_norm)); "
        "print(reading.parallel_threshold_source(op='row_rms_norm')); print(opspec.parallel_threshold(op='add'))"
    )
    assert run_python(code, tmp_path) == ["4242", path, "60000"]


def test_a_format_1_file_is_still_read(tmp_path):
    path = write_saved(tmp_path, {"format": 1, "parallel_threshold": 4321})
    assert run_python(PROBE, tmp_path) == ["4321", "4321", "4321", path, path]


def test_tune_saves_op_thresholds_that_the_next_import_applies(tmp_path):
    """A tiny run (two sizes, one round), with the measured crossovers replaced by chosen
    ones: what tune saves, and that a fresh interpreter applies it."""
    code = (
        "from opspec import _measure, _tune\n"
        "crossovers = iter([8192, 4096, 16384])\n"  # add, then sigmoid, then softmax
        "_measure.pick_threshold = lambda rows: next(crossovers)\n"
        "r = _measure.tune(rounds=1, sizes=[4096, 8192], min_seconds=0.0005, log=lambda s: None,"
        " ops=['sigmoid', 'softmax'])\n"
        "import opspec\n"
        "print(r['parallel_threshold'], r['op_thresholds'], opspec.parallel_threshold(op='sigmoid'))"
    )
    out = run_python(code, tmp_path)
    if opspec._opspec.cpu_threads() < 2:
        assert out == [f"{NEVER} {{'opspec': {{}}}} {NEVER}"]
        return
    # softmax's crossover is above add's: not saved (an op never waits for more work than
    # the package's threshold), it keeps following the package's.
    assert out == ["8192 {'opspec': {'sigmoid': 4096}} 4096"]
    files = os.listdir(tmp_path / "opspec")
    with open(tmp_path / "opspec" / files[0], encoding="utf-8") as f:
        data = json.load(f)
    assert data["format"] == 2 and data["crossovers"] == {"add": 8192, "sigmoid": 4096, "softmax": 16384}
    assert [r["work"] for r in data["sigmoid_rows"]] == [4096, 8192]  # 2,048 and 4,096 elements, 4 flops each
    out = run_python(PROBE, tmp_path)
    assert out[:3] == ["8192", "4096", "8192"]
    assert out[3] == str(tmp_path / "opspec" / files[0])


def test_tune_refuses_an_op_it_cannot_time(tmp_path):
    environ = {k: v for k, v in os.environ.items() if k != _tune.ENV}
    environ.update(XDG_CACHE_HOME=str(tmp_path), PYTHONPATH=os.pathsep.join(sys.path))

    def tune(*args):
        return subprocess.run(
            [sys.executable, "-m", "opspec", "tune", *args], capture_output=True, text=True, env=environ
        )

    r = tune("--ops", "sigmoid,csr_matvec")
    assert r.returncode == 2
    assert "opspec tune: error: tune: no timing for 'csr_matvec': expected some of add, sigmoid" in r.stderr
    r = tune("--package", "no_such_package_here")
    assert r.returncode == 2
    assert "opspec tune: error: cannot import package 'no_such_package_here' or its ops" in r.stderr
    assert not (tmp_path / "opspec").exists()


def test_tune_package_times_a_user_packages_ops_and_the_next_import_applies_them(tmp_path, reading_package):
    """`tune --package reading`, tiny (two sizes, one round), every crossover replaced by
    4,096: each op it could time gets 4,096 as its own; opspec's entry of the file stays."""
    write_saved(tmp_path, {"format": 1, "parallel_threshold": 70_000})
    code = (
        "import json\n"
        "from opspec import _measure\n"
        "_measure.pick_threshold = lambda rows: 4096\n"
        "found = _measure.tune_package('reading', rounds=1, sizes=[4096, 8192], min_seconds=0.0005,"
        " log=lambda s: None)\n"
        "print(json.dumps({k: found[k] for k in ('op_thresholds', 'skipped', 'threshold')}))"
    )
    found = json.loads(run_python(code, tmp_path)[-1])
    if opspec._opspec.cpu_threads() < 2:
        assert found["op_thresholds"] == {}
        return
    timed = found["op_thresholds"]
    assert found["threshold"] == 70_000 and "row_rms_norm" in timed and "axpy" in timed
    assert set(timed.values()) == {4096}
    files = os.listdir(tmp_path / "opspec")
    with open(tmp_path / "opspec" / files[0], encoding="utf-8") as f:
        data = json.load(f)
    assert data["format"] == 2 and data["parallel_threshold"] == 70_000  # the package threshold kept
    assert data["op_thresholds"]["reading"] == timed
    rows = data["packages"]["reading"]["rows"]["row_rms_norm"]
    assert [r["size"] for r in rows] == [4096, 8192] and all(r["work"] > 0 for r in rows)
    names = sorted(timed) + sorted(found["skipped"])
    code = "import reading\n" + "".join(f"print(reading.parallel_threshold(op={n!r}))\n" for n in names)
    assert run_python(code, tmp_path) == ["4096"] * len(timed) + ["70000"] * len(found["skipped"])


def test_generic_calls_say_why_an_op_cannot_be_timed_and_build_the_work_asked_for(knobs):
    from opspec import _measure

    native = opspec._opspec
    assert _measure.generic_call(opspec.ops, "csr_matvec", native) == (None, "input 'indices' has a contents check")
    assert _measure.generic_call(opspec.ops, "nothing", native) == (None, "not an op of the module")
    # Row-wise rms_norm: 64 rows of a width scaled so the handler counts about n of work;
    # split: '...' alone, n elements; leaky_relu: its attribute has a default.
    for name, n in [("rms_norm", 200_000), ("split", 50_000), ("leaky_relu", 30_000)]:
        make, why = _measure.generic_call(opspec.ops, name, native)
        assert make is not None and why == "", name
        call = make(n)
        native.last_work()
        call()
        assert 0.9 * n <= native.last_work()[2] <= n, name
