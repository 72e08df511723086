"""The ``nan`` checks of ``opspec.testing.check_op``: does the op give NaN where its
reference does (issue 31)?

A body written ``x > 0 ? x : 0`` turns NaN into 0, ``m = x > m ? x : m`` skips it, a
clip drops it to a bound: no comparison on ordinary data shows it, and jnp, NumPy and
the reference propagate NaN. For each float input in turn, the example with NaN at some
of that input's positions (a third of them, at least one) runs on every backend; the
outputs are compared, NaN positions included, with the reference's on the same
arguments (``reference=``) and with the CPU kernel's (every other backend). An op that
is meant to treat NaN otherwise declares it: ``check_op(..., nan=False)`` leaves these
checks out, and the report says so.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax.numpy as jnp
import numpy as np


def _with_nan(checker: Any, i: int) -> tuple:
    """The example with NaN at a third (at least one) of input i's positions."""
    args = list(checker.args)
    x = np.array(args[i])
    count = max(1, x.size // 3)
    where = checker.rng.choice(x.size, size=count, replace=False)
    flat = x.reshape(-1)
    flat[where] = np.nan
    args[i] = flat.reshape(x.shape)
    return tuple(args)


def check_nan(checker: Any, reference: Callable | None, backends: list, enabled: bool, outputs: Callable) -> None:
    """The nan checks on `checker` (a testing._Checker): `backends` as for the backend
    check ("cpu" first); `outputs` turns a result into a tuple. checker.compare asserts
    closeness, NaN positions included."""
    rec = checker.record
    floats = [i for i, x in enumerate(checker.args) if jnp.issubdtype(np.asarray(x).dtype, jnp.floating)]
    if not floats:
        checker.not_applicable("nan", "no float inputs")
        return
    if not enabled:
        checker.not_applicable("nan", "check_op(nan=False): the caller declares that the op does not propagate NaN")
        return
    for i in floats:
        spec = rec.inputs[i]
        name = f"nan {spec.name}"
        if np.size(checker.args[i]) == 0:
            checker.not_applicable(name, f"input '{spec.name}' of the example is empty")
            continue
        if reference is None and len(backends) < 2:
            checker.skip(name, "no reference= given and no other backend: nothing to compare NaN positions with")
            continue
        args = _with_nan(checker, i)
        checker.args, saved = args, checker.args
        try:
            cpu = checker.on_backend("cpu")
            if reference is not None:
                with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
                    want = outputs(reference(*args, **checker.attrs))
                checker.compare(f"{name} (NaN at some positions of '{spec.name}', against the reference)", cpu, want)
            for backend in backends[1:]:
                checker.compare(
                    f"{name} on backend {backend} (against backend 'cpu')", checker.on_backend(backend), cpu
                )
        finally:
            checker.args = saved
        checker.ran(name)
