"""The ``grad <input> in <dtype>`` checks of ``opspec.testing.check_op``: the declared
derivatives of a float32, bfloat16 or float16 op, in that precision (issue 30).

The float64 check (``jax.test_util.check_grads``) needs a float64 type and
``jax_enable_x64``; an op without them, and the formulas as a float32 or bfloat16 call
evaluates them, were left unchecked. Here the derivative is taken as JAX takes it for
the example's own dtype (``jax.jvp`` and ``jax.vjp`` of the op on the example), and
compared with finite differences of the most precise evaluation at hand:

1. the op itself in float64 (its type allows float64, under ``jax_enable_x64``);
2. else the reference (``reference=``) on float64 arguments;
3. else the op in float32 (its type allows float32).

Forward mode: the tangent along a random direction ``t`` against a fourth-order central
difference, output by output, in the L2 norm: ``|jvp - fd| <= rtol |fd| + atol
sqrt(size)``. Reverse mode: for a random cotangent ``c``, the cotangent ``g`` of the
input must satisfy ``<g, u> = <c, J u>`` for ``u = t`` and for ``u = g`` itself (a wrong
scale of ``g`` shows in the second, a zero ``g`` in the first), within ``rtol`` of
``|g| |u|``. ``rtol`` and ``atol`` default by dtype (TOLERANCES) and are check_op's own
where given.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import numpy as np

# (rtol, atol) by the dtype the formulas are evaluated in: a few roundings of the
# formula's own precision (float32 2^-24, float16 2^-11, bfloat16 2^-8), well below the
# 0.2 of a formula off by a factor 1.2.
TOLERANCES = {"float32": (2e-3, 1e-5), "float16": (2e-2, 1e-3), "bfloat16": (6e-2, 4e-3)}
# Finite-difference steps (times max(1, |x|)) by the precision of the evaluation.
STEPS = {"float64": 1e-3, "float32": 1e-2}


def _x64() -> bool:
    return bool(jax.dtypes.canonicalize_dtype(np.float64) == np.float64)


def _is_float(dtype: Any) -> bool:
    return np.issubdtype(dtype, np.floating) or np.dtype(dtype).name == "bfloat16"


def _f64(x: Any) -> np.ndarray:
    return np.asarray(x).astype(np.float64)


def _source(checker: Any, i: int, keep: list, reference: Callable | None) -> tuple:
    """(what, dtype of the evaluation, f) with f(x as float64) -> the kept outputs as
    float64: the most precise evaluation of the op as a function of input i."""
    rec = checker.record
    spec = rec.inputs[i]
    allowed = rec.types.get(spec.dtype, (spec.dtype,))
    wide = None
    if _x64() and "float64" in allowed:
        wide = "float64"
    elif reference is None and "float32" in allowed:
        wide = "float32"
    if wide is not None:

        def f(x: np.ndarray) -> list:
            args = [a.astype(wide) if s.dtype == spec.dtype else a for s, a in zip(rec.inputs, checker.args)]
            args[i] = x.astype(wide)
            outs = checker.call(*args)
            return [_f64(outs[j]) for j in keep]

        return f"the op in {wide}", wide, f
    if reference is None:
        return None, None, None

    def g(x: np.ndarray) -> list:
        args = [_f64(a) if _is_float(np.asarray(a).dtype) else a for a in checker.args]
        args[i] = x
        outs = reference(*args, **checker.attrs)
        outs = outs if isinstance(outs, tuple) else (outs,)
        return [_f64(outs[j]) for j in keep]

    return "the reference in float64", "float64", g


def _difference(f: Callable, x: np.ndarray, u: np.ndarray, step: float) -> list:
    """The derivative of f at x along u: a fourth-order central difference."""
    scale = float(np.max(np.abs(u), initial=0.0))
    if scale == 0:
        return [np.zeros_like(o) for o in f(x)]
    h = step * max(1.0, float(np.max(np.abs(x), initial=0.0))) / scale
    far_up, up, down, far_down = (f(x + k * h * u) for k in (2, 1, -1, -2))
    return [(8 * (b - c) - (a - d)) / (12 * h) for a, b, c, d in zip(far_up, up, down, far_down)]


def check_own_precision(checker: Any, i: int, keep: list, reference: Callable | None) -> None:
    """The check of input i's declared derivative (outputs `keep`) in the example's dtype."""
    rec = checker.record
    spec = rec.inputs[i]
    x = checker.args[i]
    dtype = np.dtype(jax.dtypes.canonicalize_dtype(np.asarray(x).dtype))
    name = f"grad {spec.name} in {dtype.name}"
    what, wide, f = _source(checker, i, keep, reference)
    if f is None:
        checker.skip(name, "no float32 or float64 type for finite differences and no reference= given")
        return
    default_rtol, default_atol = TOLERANCES.get(dtype.name, TOLERANCES["float32"])
    rtol = default_rtol if checker.rtol is None else checker.rtol
    atol = default_atol if checker.atol is None else checker.atol
    step = STEPS[wide]

    def op(v: Any) -> tuple:
        return checker.of_one_input(i, list(checker.args), keep)(v)

    x = np.asarray(x).astype(dtype)
    t = checker.rng.uniform(-1.0, 1.0, np.shape(x)).astype(dtype)
    # Compiled once, as a user's jax.jit(jax.grad(...)) would run the formulas.
    _, tangents = jax.jit(lambda x, t: jax.jvp(op, (x,), (t,)))(x, t)
    x64, t64 = _f64(x), _f64(t)
    fd = _difference(f, x64, t64, step)
    outs = [rec.outputs[j].name for j in keep]
    for out, got, want in zip(outs, tangents, fd):
        err, size = float(np.linalg.norm(_f64(got) - want)), float(np.linalg.norm(want))
        if err > rtol * size + atol * np.sqrt(want.size):
            checker.fail_grad(name, spec.name, out, "forward (jvp)", what, err, size, rtol, atol)

    primal = jax.eval_shape(op, x)
    cotangents = tuple(checker.rng.uniform(-1.0, 1.0, p.shape).astype(p.dtype) for p in primal)
    (g,) = jax.jit(lambda x, c: jax.vjp(op, x)[1](c))(x, cotangents)
    g64 = _f64(g)
    for direction, u, jv in (("a random direction", t64, fd), ("its own cotangent", g64, None)):
        if jv is None:
            jv = _difference(f, x64, u, step)
        got = float(np.sum(g64 * u))
        want = float(sum(np.sum(_f64(c) * v) for c, v in zip(cotangents, jv)))
        size = float(np.linalg.norm(g64) * np.linalg.norm(u))
        if abs(got - want) > rtol * max(size, abs(want)) + atol * np.sqrt(u.size):
            checker.fail_grad(
                name,
                spec.name,
                ", ".join(outs),
                f"reverse (vjp; <g, u> against <c, J u> along {direction})",
                what,
                abs(got - want),
                max(size, abs(want)),
                rtol,
                atol,
            )
    checker.ran(name)
