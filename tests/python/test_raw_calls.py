"""Forged raw calls of every shipped op's targets (CPU and the CUDA simulator): a
`jax.ffi.ffi_call` that skips the stub and hands the handler what no stub would, a forged
`opspec_batch` (empty, inconsistent, out of range, of the wrong type), undeclared
`input_output_aliases`, wrong attributes, counts, dtypes and ranks. Each call either
fails with an error naming the op, or returns the right result (checked against NumPy);
none may kill the process (issue 24). `./run sanitize` runs this file under ASan + UBSan.

Calls are forced to run with `has_side_effect=True`: XLA skips a call whose outputs are
all empty otherwise, and the empty batch is exactly the case to test.
"""

import inspect

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from cases import CASES, reference

import opspec
from opspec import _targets

ops = opspec.ops
NAMES = sorted(CASES)
BACKENDS = ["cpu"] + (["cuda_sim"] if opspec.has_cuda_sim else [])
N = 5  # the cases' size: small, every call compiles once


def _op(name):
    return getattr(ops, f"_op_{name}")


def _target(name, backend):
    """The op's target on `backend`, or None where it has no kernels there."""
    try:
        return _targets.target_name(_op(name), backend)
    except KeyError:
        return None


def _typed_attrs(name, attrs):
    """The call's attributes as the stub passes them: NumPy scalars of the spec's types,
    the stub's defaults where the case gives none."""
    params = inspect.signature(getattr(ops, name)).parameters
    return {a.name: np.dtype(a.type).type(attrs.get(a.name, params[a.name].default)) for a in _op(name).attrs}


def _case(name, rng):
    """Inputs (float64), typed attributes, the outputs' shapes and dtypes, the reference."""
    args, attrs = CASES[name][0](rng, np.float64, N)
    outs = jax.eval_shape(lambda *a: getattr(ops, name)(*a, **attrs), *args)
    outs = list(outs) if isinstance(outs, (tuple, list)) else [outs]
    return list(args), _typed_attrs(name, attrs), outs, reference(name, args, attrs, np.float64)


def _raw(target, outs, args, attrs, aliases=None):
    call = jax.ffi.ffi_call(target, outs, input_output_aliases=aliases, has_side_effect=True)
    return jax.block_until_ready(jax.jit(lambda *a: call(*a, **attrs))(*args))


def _refused(name, target, outs, args, attrs, pattern=None, aliases=None):
    """The call fails with an error naming the op (and matching `pattern`)."""
    with pytest.raises(Exception) as info:
        _raw(target, outs, args, attrs, aliases)
    message = str(info.value)
    assert f"opspec {name}: " in message, message
    if pattern:
        assert pattern in message, message
    return message


def _batched(outs, extents):
    return [jax.ShapeDtypeStruct(tuple(extents) + tuple(o.shape), o.dtype) for o in outs]


def _batch(rank, masks):
    return np.array([rank, *masks], dtype=np.int64)


def _close(got, want):
    if np.asarray(want).dtype.kind in "iub":
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", NAMES)
def test_forged_batches(name, backend, rng):
    target = _target(name, backend)
    if target is None:
        pytest.skip(f"{name} has no {backend} kernels")
    args, attrs, outs, want = _case(name, rng)
    none = [0] * len(args)

    # A consistent batch of unbatched inputs: every element is the one call's result.
    got = _raw(target, _batched(outs, (2, 3)), args, dict(attrs, opspec_batch=_batch(2, none)))
    for g, w in zip(got, want):
        for element in np.asarray(g).reshape((6,) + np.shape(w)):
            _close(element, w)

    # Empty batches, B = 0 and (3, 0) and (0, 3): a correct empty result, nothing runs.
    for extents in [(0,), (3, 0)]:
        got = _raw(target, _batched(outs, extents), args, dict(attrs, opspec_batch=_batch(len(extents), none)))
        assert [g.shape for g in got] == [tuple(extents) + tuple(o.shape) for o in outs]

    # An empty batch whose extent count would overflow int64 once multiplied is still empty.
    huge = (2**40, 0, 2**40)
    got = _raw(target, _batched(outs, huge), args, dict(attrs, opspec_batch=_batch(3, none)))
    assert [g.shape for g in got] == [huge + tuple(o.shape) for o in outs]

    # The batch dims of a batched input that disagree with the outputs' (an empty batch too).
    first = jnp.broadcast_to(args[0], (2,) + np.shape(args[0]))
    for extents in [(3,), (0,)]:
        _refused(
            name,
            target,
            _batched(outs, extents),
            [first] + args[1:],
            dict(attrs, opspec_batch=_batch(1, [1] + none[1:])),
            f"input '{_op(name).inputs[0].name}': batch dim 0 is 2, expected {extents[0]}",
        )
    if len(outs) > 1:  # outputs whose batch extents disagree
        forged = _batched(outs[:1], (3,)) + _batched(outs[1:], (4,))
        _refused(name, target, forged, args, dict(attrs, opspec_batch=_batch(1, none)), "batch dim 0 is 4, expected 3")

    # Ranks and masks out of range, and attributes of the wrong kind.
    bad = {
        "rank 0 is not in 1..8": _batch(0, none),
        "rank 9 is not in 1..8": _batch(9, none),
        "names batch dims beyond rank 1": _batch(1, [2] + none[1:]),
    }
    for pattern, value in bad.items():
        _refused(name, target, _batched(outs, (3,)), args, dict(attrs, opspec_batch=value), pattern)
    for value in [
        np.array([1, *none], np.int32),  # not int64
        np.array([1, *none, 0], np.int64),  # a mask too many
        np.int64(1),  # a scalar
        "1",  # a string
    ]:
        _refused(name, target, _batched(outs, (3,)), args, dict(attrs, opspec_batch=value), "attribute 'opspec_batch'")
    # A rank beyond the outputs' dims: the outputs have no batch dims at all.
    _refused(name, target, outs, args, dict(attrs, opspec_batch=_batch(8, none)), "batch dims")
    # An input with more batch dims than it has dims.
    _refused(
        name,
        target,
        _batched(outs, (1,) * 8),
        args,
        dict(attrs, opspec_batch=_batch(8, [255] + none[1:])),
        f"input '{_op(name).inputs[0].name}'",
    )


# The decoding of counts, dtypes, ranks and attributes is one function (opspec_bind_inputs)
# for both handlers: every op on CPU, and on the simulator one op of each kind (two outputs
# and an alias, content checks, an attribute, raw CUDA kernels with scratch), to keep the
# file fast.
SIM_SAMPLE = {"lif", "csr_matvec", "leaky_relu", "abs_two_pass"}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", NAMES)
def test_forged_calls(name, backend, rng):
    target = _target(name, backend)
    if target is None:
        pytest.skip(f"{name} has no {backend} kernels")
    if backend == "cuda_sim" and name not in SIM_SAMPLE:
        pytest.skip("the simulator's handler decodes with the CPU's code: a sample of ops")
    args, attrs, outs, want = _case(name, rng)
    op = _op(name)
    # The good call first: the raw target computes the reference.
    for g, w in zip(_raw(target, outs, args, attrs), want):
        _close(g, w)

    _refused(name, target, outs, args[:-1], attrs, "expected")  # an input missing
    _refused(name, target, outs, args + [args[-1]], attrs, "expected")  # an input too many
    _refused(name, target, outs[:-1] if len(outs) > 1 else outs * 2, args, attrs, "expected")  # outputs miscounted
    _refused(name, target, outs, [args[0].astype(np.int8)] + args[1:], attrs, f"input '{op.inputs[0].name}'")
    deep = np.zeros((1,) * 9 + np.shape(args[0]), args[0].dtype)  # rank beyond OPSPEC_MAX_RANK
    _refused(name, target, outs, [deep] + args[1:], attrs, f"input '{op.inputs[0].name}'")
    _refused(name, target, outs, args, dict(attrs, bogus=np.int64(1)), "unexpected attribute 'bogus'")
    for a in op.attrs:  # each attribute missing, then of the wrong type
        _refused(name, target, outs, args, {k: v for k, v in attrs.items() if k != a.name}, f"'{a.name}'")
        _refused(name, target, outs, args, dict(attrs, **{a.name: np.array([1, 2])}), f"attribute '{a.name}'")
        _refused(name, target, outs, args, dict(attrs, **{a.name: np.int8(1)}), f"attribute '{a.name}'")
    # The fingerprint attribute: a scalar, an array, another build's.
    for value in [np.int64(1), np.array([1, 2])]:
        _refused(name, target, outs, args, dict(attrs, opspec_kernel=value), "attribute 'opspec_kernel'")
    if op.fingerprint:
        _refused(name, target, outs, args, dict(attrs, opspec_kernel="0123456789abcdef"), "the kernel changed")
        for other in [op.fingerprint[:-1], op.fingerprint + "0", ""]:  # compared to the end of both
            _refused(name, target, outs, args, dict(attrs, opspec_kernel=other), "the kernel changed")
        for g, w in zip(_raw(target, outs, args, dict(attrs, opspec_kernel=op.fingerprint)), want):
            _close(g, w)


def _undeclared_pairs(name, args, outs):
    """(input, output) index pairs XLA can alias (same shape and dtype) that the spec does not."""
    declared = _op(name).aliases
    return [
        (i, o)
        for i, a in enumerate(args)
        for o, out in enumerate(outs)
        if np.shape(a) == tuple(out.shape) and np.asarray(a).dtype == out.dtype and declared.get(i) != o
    ]


@pytest.mark.parametrize("backend", BACKENDS)
def test_undeclared_aliases_are_refused(backend, rng):
    """matvec `x -> out` with a square matrix computed in place over its own x (issue 24):
    every pair XLA accepts and the spec does not declare is refused, naming both."""
    refused = set()
    for name in NAMES:
        target = _target(name, backend)
        if target is None:
            continue
        args, attrs, outs, want = _case(name, rng)
        if name == "matvec":  # square: x and out have one shape
            args = [rng.uniform(-1, 1, (N, N)), rng.uniform(-1, 1, N)]
            outs = [jax.ShapeDtypeStruct((N,), np.float64)]
        if name == "csr_rmatvec":  # y -> x: as many rows as columns
            args, attrs_ = CASES[name][0](rng, np.float64, 40)
            args, attrs = list(args), _typed_attrs(name, attrs_)
            outs = [jax.ShapeDtypeStruct((40,), np.float64)]
        op = _op(name)
        for i, o in _undeclared_pairs(name, args, outs):
            pattern = (
                f"output '{op.outputs[o].name}' shares memory with input '{op.inputs[i].name}', "
                "and the spec declares no alias between them"
            )
            _refused(name, target, outs, args, attrs, pattern, aliases={i: o})
            refused.add(name)
    audit = {name for name in ("matvec", "csr_rmatvec", "add", "lif") if _target(name, backend)}
    assert audit <= refused, refused  # the audit's two, and more


@pytest.mark.parametrize("backend", BACKENDS)
def test_declared_aliases_still_run(backend, rng):
    """A raw call with exactly the spec's aliases computes the reference, batched too."""
    ran = 0
    for name in NAMES:
        target = _target(name, backend)
        if target is None or not _op(name).aliases:
            continue
        args, attrs, outs, want = _case(name, rng)
        for g, w in zip(_raw(target, outs, args, attrs, aliases=_op(name).aliases), want):
            _close(g, w)
        # Batched: the aliased input carries every batch dim (as the batching rule makes it).
        masks = [1 if i in _op(name).aliases else 0 for i in range(len(args))]
        batched = [np.stack([a] * 3) if m else a for a, m in zip(args, masks)]
        got = _raw(target, _batched(outs, (3,)), batched, dict(attrs, opspec_batch=_batch(1, masks)), _op(name).aliases)
        for g, w in zip(got, want):
            for element in np.asarray(g):
                _close(element, w)
        ran += 1
    assert ran >= 5, ran
