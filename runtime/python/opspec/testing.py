"""``check_op``: a conformance checker for an opspec op, built from its spec.

``check_op(op, *args, **attrs)`` runs, for one op and one set of example arguments:

- ``unwritten``: every backend twice, the handler filling the outputs with all-ones
  bytes (NaN) and then zero bytes before the kernel; an element that differs was not
  written (``opspec/_unwritten_check.py``);
- ``reference``: the outputs against a reference function, when one is given;
- ``dtype``, ``rank``, ``symbol``: a call with a wrong dtype, a wrong rank, or a shape
  symbol inconsistent between inputs raises ``opspec._runtime.OpError`` naming the op and
  the input;
- ``jit``: eager == ``jax.jit``;
- ``backend``: every other backend the op has in this process (its CUDA kernels on the
  CUDA simulator, ``backend="cuda_sim"``, and on a GPU, ``"cuda"``) == its CPU kernel;
- ``nan``: with NaN at some positions of each float input, the outputs against the
  reference's and the CPU kernel's, NaN positions included (``opspec/_nan_check.py``;
  ``nan=False`` declares an op that treats NaN otherwise);
- ``vmap``: ``jax.vmap`` == a Python loop, batch size 3, for every combination of
  batched (``in_axes=0``) and unbatched (``None``) inputs with at least one batched;
- ``alias``: where an output aliases an input, ``jax.jit`` with that input donated
  gives the same result;
- ``zero-size``: each shape symbol (and a leading ``...``) set to 0 runs and gives the
  output shapes the spec implies;
- ``split``: for each symbol the spec declares ``independent:`` (or ``reduce:``), the op
  on pieces of the inputs cut along it (several cuts; for ``max``/``min`` with the
  extreme in each piece in turn) equals the whole call: the outputs concatenated (or
  combined with the declared ``sum``, ``max``, ``min``), as the sharding rule would use
  them; a false declaration fails here (``opspec/_split_check.py``);
- ``grad <input> in <dtype>``: for a float32, bfloat16 or float16 example, the declared
  derivatives in that dtype against finite differences of a float64 (or float32)
  evaluation (``opspec/_grad_check.py``);
- ``grad``: ``jax.test_util.check_grads`` (forward and reverse, order 2) in float64 for
  every float input with a declared derivative (only under ``jax_enable_x64``), and an
  ``OpError`` naming the input for every float input without one.

It returns a ``CheckReport`` (which checks ran; which were skipped, leaving something
unchecked, and why; which do not apply to the op's spec, and why) and raises
``AssertionError`` naming the op and the check on a failure. docs/gradients.md,
"Checking an op: opspec.testing.check_op".
"""

from __future__ import annotations

import ast
import builtins
import dataclasses
import inspect
import itertools
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from opspec import _grad_check, _halo_check, _nan_check, _split_check, _targets, _unwritten_check
from opspec._bind import bind, convert_attr
from opspec._derivatives import FORMULA_MODULES
from opspec._runtime import as_array, call, record_of
from opspec._spec import Derivative, Op, OpError, fail, shown

__all__ = ["CheckReport", "check_op", "op_record", "with_derivatives"]

BATCH = 3


@dataclasses.dataclass
class CheckReport:
    """What ``check_op`` did: ``ran`` names each check that ran and passed (``"vmap
    in_axes=(0, None)"``, ``"grad x"``, ...); ``skipped`` maps a check that applies to the
    op but did not run to why (something is left unchecked: no reference given, no
    ``jax_enable_x64``, a backend not built); ``not_applicable`` maps a check the op's
    spec leaves nothing to do for to why (no aliased output, a symbol used by one input,
    no CUDA kernels). ``assert not report.skipped`` asks that everything was checked."""

    op: str
    ran: list = dataclasses.field(default_factory=list)
    skipped: dict = dataclasses.field(default_factory=dict)
    not_applicable: dict = dataclasses.field(default_factory=dict)

    def __str__(self) -> str:
        lines = [
            f"check_op {self.op}: {len(self.ran)} checks passed, {len(self.skipped)} skipped, "
            f"{len(self.not_applicable)} not applicable"
        ]
        lines += [f"  ok    {name}" for name in self.ran]
        lines += [f"  skip  {name}: {why}" for name, why in self.skipped.items()]
        lines += [f"  n/a   {name}: {why}" for name, why in self.not_applicable.items()]
        return "\n".join(lines)


class _NoValidData(ValueError):
    """No contents satisfy an input's `check:` for these sizes."""


def op_record(op: Any) -> Op:
    """The spec record (``opspec._runtime.Op``) of an op function such as
    ``opspec.ops.sigmoid``: the global ``_op_<name>`` of the function's module, with the
    package its module belongs to. A record passes through."""
    if isinstance(op, Op):
        return op
    trial = getattr(op, "_opspec_record", None)  # a function with_derivatives made
    if isinstance(trial, Op):
        return trial
    record = record_of(op)
    if record is None:
        raise TypeError(
            f"expected an op function (opspec.ops.<name>, or a package's) or an opspec._runtime.Op, "
            f"got {shown(op)} (no record _op_<name> in its module)"
        )
    return record


_BUILTINS = ("abs", "float", "int", "len", "max", "min", "range", "sum", "tuple")  # as in ops.py


def _formula(record: Op, input: str, key: str, text: str) -> Callable:
    """A formula in the spec's syntax as the generator writes it into ops.py: a lambda
    taking the names it reads. Names it cannot read are an OpError, as opspec-gen's
    (generator/py_formula.c, spec_derivs.c: the one home of these rules is the generator,
    which has no entry point for one formula yet; FORMULA_MODULES is shared with the
    derivative rules)."""
    what = f"input '{input}'"
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as e:
        fail(record, what, f"formula {text!r} is not a Python expression: {e.msg}")
    known = {s.name for s in record.inputs} | {s.name for s in record.outputs} | {a.name for a in record.attrs}
    known |= {f"{s.name}_dot" for s in record.inputs} | {f"{s.name}_bar" for s in record.outputs}
    known |= {d for s in record.inputs for d in s.shape if isinstance(d, str)}  # shape symbols
    known |= set(FORMULA_MODULES)
    names = sorted({n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} - set(_BUILTINS))
    unknown = [n for n in names if n not in known]
    if unknown:
        fail(
            record,
            what,
            f"unknown name '{unknown[0]}' in the formula for '{key}' (a formula reads the op's inputs, outputs, "
            f"attributes and shape symbols, <input>_dot, <output>_bar, {', '.join(FORMULA_MODULES)} and the builtins "
            f"{', '.join(_BUILTINS)})",
        )
    params = "".join(f"{n}, " for n in names)
    # The user's own formula, as ops.py would hold it.
    return eval(f"lambda {params}**_: ({' '.join(text.split())})", {"__builtins__": builtins})  # noqa: S307


def with_derivatives(op: Any, **derivatives: Any) -> Callable:
    """`op` with the derivatives of some inputs replaced, to try a formula before
    rebuilding. Each keyword is an input; its value is what the spec's `derivatives:`
    entry would say, as a dict: ``{"elementwise": "1 / (1 + jnp.exp(-x))"}``, or with one
    formula per output, ``{"jvp": {"mean": "...", "var": "..."}}``. Returns a function
    called as the op is (inputs, attributes, ``backend=``), which ``jax.grad`` and
    ``check_op`` differentiate with the new formulas (docs/gradients.md)."""
    record = op_record(op)
    inputs = {s.name for s in record.inputs}
    outputs = [s.name for s in record.outputs]
    replaced = dict(record.derivatives)
    for input, entry in derivatives.items():
        if input not in inputs:
            raise TypeError(f"{record!r}: no input '{input}' (inputs: {', '.join(sorted(inputs))})")
        if not isinstance(entry, dict) or len(entry) != 1:
            raise TypeError(f"{record!r}: input '{input}': give one {{kind: formula}}, got {entry!r}")
        ((kind, formulas),) = entry.items()
        if kind == "linear":  # `linear: halo`: no formula, the transpose is derived
            if formulas != "halo" or not record.halo:
                raise TypeError(
                    f"{record!r}: input '{input}': linear takes 'halo', for an op with halo:, got {formulas!r}"
                )
            replaced[input] = Derivative("linear", {})
            continue
        if kind not in ("elementwise", "jvp", "transpose"):
            raise TypeError(f"{record!r}: input '{input}': kind {kind!r} is not elementwise, jvp, transpose or linear")
        if isinstance(formulas, str):
            if kind != "transpose" and len(outputs) != 1:
                raise TypeError(f"{record!r}: input '{input}': name the output of each formula ({', '.join(outputs)})")
            formulas = {input if kind == "transpose" else outputs[0]: formulas}
        for key in formulas:
            if key not in (inputs if kind == "transpose" else outputs):
                raise TypeError(f"{record!r}: input '{input}': {kind} formula for unknown '{key}'")
        replaced[input] = Derivative(
            kind,
            {key: _formula(record, input, key, text) for key, text in formulas.items()},
            {key: "opspec.testing.with_derivatives" for key in formulas},
        )
    # A record of its own: JAX keys the rules by primitive (package, name), and reads the
    # derivatives from the record each call binds, so the shipped op is not changed.
    trial = dataclasses.replace(record, derivatives=replaced)

    def trial_call(*args: Any, backend: str | None = None, **attrs: Any) -> Any:
        attrs = {**_defaults(fn), **attrs} if fn is not None else attrs
        return call(trial, args, attrs, backend)

    fn = op if not isinstance(op, Op) else None
    if fn is not None:
        trial_call.__wrapped__ = fn  # type: ignore[attr-defined]  # its signature: the attributes' defaults
    trial_call.__name__ = record.name
    trial_call.__doc__ = f"{record!r} with the derivatives of {', '.join(derivatives)} from with_derivatives."
    trial_call._opspec_record = trial  # type: ignore[attr-defined]
    return trial_call


def _function(op: Any, record: Op) -> Callable:
    if not isinstance(op, Op):
        return op
    return lambda *args, backend=None, **attrs: call(record, args, attrs, backend)


def _defaults(fn: Callable) -> dict:
    """The attributes' defaults an op function declares (keyword-only, besides backend)."""
    try:
        parameters = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return {}
    return {
        p.name: p.default
        for p in parameters
        if p.kind is p.KEYWORD_ONLY and p.default is not p.empty and p.name != "backend"
    }


def _outputs(out: Any) -> tuple:
    return out if isinstance(out, tuple) else (out,)


def _x64() -> bool:
    """Whether jax_enable_x64 is on: float64 stays float64."""
    return bool(jax.dtypes.canonicalize_dtype(np.float64) == np.float64)


def _is_float(dtype: Any) -> bool:
    """A float dtype, bfloat16 (ml_dtypes, which NumPy does not count as floating) included."""
    return bool(jnp.issubdtype(np.dtype(dtype), jnp.floating))


def _close(got: Any, want: Any, rtol: float | None, atol: float | None) -> None:
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, f"shape {got.shape}, expected {want.shape}"
    if _is_float(got.dtype):
        tight = 1e-5 if got.dtype.itemsize <= 4 else 1e-12
        r = tight if rtol is None else rtol
        if got.dtype.itemsize <= 2:  # NumPy's comparison knows no bfloat16: exactly widened
            got, want = got.astype(np.float32), np.asarray(want, np.float32)
        np.testing.assert_allclose(got, want, rtol=r, atol=r if atol is None else atol)
    else:
        np.testing.assert_array_equal(got, want)


class _Checker:
    def __init__(self, op: Any, args: tuple, attrs: dict, options: dict) -> None:
        self.record = op_record(op)
        self.fn = _function(op, self.record)
        self.attrs = {**_defaults(self.fn), **attrs}
        names = [a.name for a in self.record.attrs]
        for name in self.attrs:
            if name not in names:
                want = f"one of {', '.join(names)}" if names else "none (the op has no attributes)"
                fail(self.record, f"attribute '{name}'", f"expected {want}, got {name}={self.attrs[name]!r}")
        for name in names:
            if name not in self.attrs:
                fail(self.record, f"attribute '{name}'", f"expected a value (check_op(..., {name}=...)), got none")
        for spec in self.record.attrs:  # an OpError for a bad value, before any use
            convert_attr(self.record, spec, self.attrs[spec.name])
        self.rng = np.random.default_rng(options["seed"])
        self.make_args = options["make_args"]
        self.rtol, self.atol = options["rtol"], options["atol"]
        self.grad_outputs = options["grad_outputs"]
        self.reference, self.nan = options["reference"], options["nan"]
        self.report = CheckReport(f"{self.record.package}.ops.{self.record.name}")
        self.random = not args and self.make_args is None
        if not args:
            args = tuple(self.make_args(self.rng)) if self.make_args else self.random_args(self.default_sizes(), None)
        if len(args) != len(self.record.inputs):
            fail(self.record, "inputs", f"expected {len(self.record.inputs)} inputs, got {len(args)} arguments")
        arrays = [as_array(self.record, spec, a) for spec, a in zip(self.record.inputs, args)]
        self.binding = bind(self.record, [a.shape for a in arrays], [a.dtype for a in arrays], self.attrs)
        self.dtypes, self.symbols, self.ellipsis = self.binding.types, self.binding.symbols, self.binding.ellipsis
        self.args = tuple(np.asarray(a) for a in args)

    # ---- arguments ----------------------------------------------------------------------

    def default_sizes(self) -> dict:
        sizes: dict[str, int] = {}
        for spec in self.record.inputs:
            for dim in spec.shape:
                if isinstance(dim, str) and dim not in sizes:
                    sizes[dim] = 3 + len(sizes)  # distinct, so a mixed-up symbol shows
        return sizes

    def dtype_of(self, spec: Any, types: dict) -> np.dtype:
        if spec.dtype not in self.record.types:
            return np.dtype(spec.dtype)
        if spec.dtype not in types:
            choices = self.record.types[spec.dtype]
            want = "float64" if _x64() else "float32"
            floats = [c for c in choices if _is_float(c)]
            types[spec.dtype] = np.dtype(want if want in choices else floats[0] if floats else choices[0])
        return types[spec.dtype]

    def random_args(self, sizes: dict, ellipsis: tuple | None, types: dict | None = None) -> tuple:
        """Random arguments of the spec's dtypes with `sizes` for its symbols."""
        types = dict(getattr(self, "dtypes", {})) if types is None else types
        scope = dict(sizes)
        scope.update(
            {a.name: int(self.attrs[a.name]) for a in self.record.attrs if a.is_integer and a.name in self.attrs}
        )
        out = []
        for spec in self.record.inputs:
            shape: list = []
            for dim in spec.shape:
                if dim is Ellipsis:
                    shape.extend((2,) if ellipsis is None else ellipsis)
                elif callable(dim):
                    shape.append(int(dim(scope)))
                else:
                    shape.append(dim if isinstance(dim, int) else sizes[dim])
            dtype = self.dtype_of(spec, types)
            if _is_float(dtype):
                out.append(self.rng.uniform(-2.0, 2.0, shape).astype(dtype))
            elif dtype == np.bool_:
                out.append(self.rng.random(shape) < 0.5)
            else:
                out.append(self._integers(spec, shape, dtype, scope))
        return tuple(out)

    def _integers(self, spec: Any, shape: list, dtype: np.dtype, scope: dict) -> np.ndarray:
        """Random integers that satisfy the input's `check:` (bounds, order), or 0..4."""
        check = spec.check
        lo, hi = 0, 4
        if check is not None and check.min is not None:
            lo = int(check.min(scope))
            hi = lo + 4
        if check is not None and check.max is not None:
            hi = int(check.max(scope))
            lo = min(lo, hi) if check.min is None else lo
        if hi < lo:
            if int(np.prod(shape)) == 0:
                return np.zeros(shape, dtype)
            raise _NoValidData(f"input '{spec.name}': its check leaves no valid value ({lo} > {hi})")
        values = self.rng.integers(lo, hi + 1, shape)
        if check is not None and check.sorted:
            values = np.sort(values, axis=None).reshape(shape)
        return values.astype(dtype)

    def variants(self) -> list:
        """BATCH argument sets of the base's shapes, the first the base itself: fresh random
        ones where the checker made the base, else the base with its float inputs scaled."""
        made: list = []
        if self.make_args is not None:
            made = [tuple(map(np.asarray, self.make_args(self.rng))) for _ in range(BATCH - 1)]
            if any(tuple(a.shape for a in m) != tuple(a.shape for a in self.args) for m in made):
                made = []
        if not made and self.random:
            made = [self.random_args(self.symbols, self.ellipsis) for _ in range(BATCH - 1)]
        if not made:
            made = [tuple(a * s if _is_float(a.dtype) else a for a in self.args) for s in (0.75, 1.25)]
        return [self.args, *[tuple(a.astype(b.dtype) for a, b in zip(m, self.args)) for m in made]]

    # ---- running -----------------------------------------------------------------------

    def call(self, *args: Any, fn: Callable | None = None) -> tuple:
        return _outputs(self.fn(*args, **self.attrs) if fn is None else fn(*args))

    def compare(self, check: str, got: Sequence, want: Sequence, rtol: float | None = None) -> None:
        if len(got) != len(want):
            raise AssertionError(f"{self.report.op}: {check}: {len(got)} outputs, expected {len(want)}")
        for spec, g, w in zip(self.record.outputs, got, want):
            try:
                _close(g, w, self.rtol if rtol is None else rtol, self.atol)
            except AssertionError as e:
                raise AssertionError(f"{self.report.op}: {check}: output '{spec.name}' differs: {e}") from None

    def expect_error(self, check: str, spec: Any, args: tuple) -> None:
        what = f"input '{spec.name}'"
        try:
            self.call(*args)
        except OpError as e:
            message = str(e)
            if self.report.op not in message or what not in message:
                raise AssertionError(
                    f"{self.report.op}: {check}: the OpError does not name the op and {what}: {message}"
                ) from None
            return
        raise AssertionError(f"{self.report.op}: {check}: a call with {check} for {what} raised no OpError")

    def ran(self, name: str) -> None:
        self.report.ran.append(name)

    def skip(self, name: str, why: str) -> None:
        """`name` applies to the op but did not run: something is left unchecked."""
        self.report.skipped[name] = why

    def not_applicable(self, name: str, why: str) -> None:
        """The op's spec leaves `name` nothing to check."""
        self.report.not_applicable[name] = why

    # ---- checks ------------------------------------------------------------------------

    def check_reference(self, reference: Callable | None) -> None:
        if reference is None:
            self.skip("reference", "no reference= given")
            return
        self.compare("reference", self.call(*self.args), _outputs(reference(*self.args, **self.attrs)), self.rtol)
        self.ran("reference")

    def check_rejection(self) -> None:
        rec = self.record
        for i, spec in enumerate(rec.inputs):
            allowed = rec.types.get(spec.dtype, (spec.dtype,))
            if spec.dtype in rec.types and any(s.dtype == spec.dtype for s in rec.inputs[:i]):
                allowed = (self.dtypes[spec.dtype].name,)  # bound by an earlier input
            bad = next(d for d in ("int32", "float32", "bool", "uint8", "int16") if d not in allowed)
            args = list(self.args)
            args[i] = self.args[i].astype(bad)
            self.expect_error("a wrong dtype", spec, tuple(args))
            self.ran(f"dtype {spec.name}")

            fixed = spec.fixed
            if fixed or not spec.has_ellipsis:
                args = list(self.args)
                # One dim more than the spec's, or (after a leading '...') one fewer.
                x = self.args[i]
                args[i] = x[..., None] if not spec.has_ellipsis else np.zeros((2,) * (len(fixed) - 1), x.dtype)
                self.expect_error("a wrong rank", spec, tuple(args))
                self.ran(f"rank {spec.name}")
            else:
                self.not_applicable(f"rank {spec.name}", "its shape is '...' alone: every rank is valid")

        seen: dict = {}
        for i, spec in enumerate(rec.inputs):
            fixed = spec.fixed
            for d, dim in enumerate(fixed):
                if isinstance(dim, str):
                    seen.setdefault(dim, []).append((i, d - len(fixed)))
        for symbol, places in seen.items():
            if len(places) < 2:
                self.not_applicable(f"symbol {symbol}", "used by one input only: nothing to be inconsistent with")
                continue
            i, axis = places[-1]
            x = self.args[i]
            old = x.shape[axis]
            x = (
                np.take(x, np.arange(old + 1) % old, axis=axis)
                if old
                else np.zeros(x.shape[: axis % x.ndim] + (1,) + x.shape[axis % x.ndim + 1 :], x.dtype)
            )
            args = list(self.args)
            args[i] = x
            self.expect_error(f"an inconsistent symbol {symbol}", rec.inputs[i], tuple(args))
            self.ran(f"symbol {symbol}")

    def check_jit(self) -> tuple:
        eager = self.call(*self.args)
        self.compare("jit", self.call(*self.args, fn=jax.jit(lambda *a: self.fn(*a, **self.attrs))), eager)
        self.ran("jit")
        return eager

    def backends(self) -> list:
        """The backends the op has in this process: "cpu", then "cuda_sim" and "cuda"
        where it has kernels there."""
        package, name = self.record.package, self.record.name
        return ["cpu"] + [b for b in ("cuda_sim", "cuda") if (package, name, b) in _targets.TARGETS]

    def check_backends(self) -> None:
        """The op's CUDA kernels, on the simulator and on a GPU where this process has
        them, against its CPU kernel, on the example arguments."""
        package = self.record.package
        here = self.backends()
        want = self.on_backend("cpu") if len(here) > 1 else ()
        for backend in ("cuda_sim", "cuda"):
            check = f"backend {backend}"
            if backend not in here:
                why = _targets.UNAVAILABLE.get((package, backend))
                if backend == "cuda_sim" and why is not None:
                    self.skip(check, f"{why}: the op's CUDA kernels, if it has any, are not compared")
                else:
                    self.not_applicable(check, why or "the op has no CUDA kernels")
                continue
            self.compare(f"{check} (against backend 'cpu')", self.on_backend(backend), want)
            self.ran(check)

    def on_backend(self, backend: str) -> tuple:
        """The outputs of `backend` for the example arguments, placed on its platform."""
        device = jax.devices(_targets.BACKENDS[backend])[0]
        args = [jax.device_put(a, device) for a in self.args]
        return tuple(np.asarray(o) for o in _outputs(self.fn(*args, backend=backend, **self.attrs)))

    def check_vmap(self) -> None:
        variants = self.variants()
        stacked = [np.stack(xs) for xs in zip(*variants)]
        n = len(self.args)
        for axes in itertools.product((0, None), repeat=n):
            if all(a is None for a in axes):
                continue
            batched = jax.vmap(lambda *a: self.fn(*a, **self.attrs), in_axes=axes)(
                *[s if a == 0 else x for s, a, x in zip(stacked, axes, self.args)]
            )
            batched = _outputs(batched)
            name = f"vmap in_axes={tuple(axes)}"
            for b in range(BATCH):
                one = self.call(*[v if a == 0 else x for v, a, x in zip(variants[b], axes, self.args)])
                self.compare(f"{name}, element {b}", [o[b] for o in batched], one)
            self.ran(name)

    def check_aliases(self, eager: tuple) -> None:
        if not self.record.aliases:
            self.not_applicable("alias", "the spec declares no aliased outputs")
            return
        for i, j in self.record.aliases.items():
            name = f"alias {self.record.inputs[i].name} -> {self.record.outputs[j].name}"
            # A buffer XLA owns (jnp.asarray may borrow NumPy's memory, which cannot be donated).
            args = [jax.jit(lambda a: a.copy())(jnp.asarray(x)) for x in self.args]
            donated = jax.jit(lambda *a: self.fn(*a, **self.attrs), donate_argnums=(i,))
            with warnings.catch_warnings():
                warnings.filterwarnings("ignore", message=".*donated buffers were not usable.*")
                got = _outputs(donated(*args))
            self.compare(name, got, eager)
            self.ran(name)

    def check_zero_size(self) -> None:
        rec = self.record
        if any(
            not _is_float(self.dtype_of(s, dict(self.dtypes)))
            and self.dtype_of(s, dict(self.dtypes)) != np.bool_
            and s.check is None
            for s in rec.inputs
        ):
            self.skip("zero-size", "an integer input has no `check:`: random contents may index other inputs")
            return
        cases = [(s, {**self.symbols, s: 0}, self.ellipsis) for s in self.symbols]
        if self.ellipsis is not None:
            cases.append(("...", dict(self.symbols), (0,)))
        if not cases:
            self.not_applicable("zero-size", "the spec has no shape symbols")
        for symbol, sizes, ellipsis in cases:
            name = f"zero-size {symbol}"
            try:
                args = self.random_args(sizes, ellipsis)
            except _NoValidData as e:  # no valid call of this size exists
                self.not_applicable(name, str(e))
                continue
            core = [a.shape for a in args]
            try:
                want = bind(rec, core, [a.dtype for a in args], self.attrs).out_shapes()
            except OpError as e:
                self.not_applicable(name, f"the spec does not allow it ({e})")
                continue
            got = self.call(*args)
            for spec, g, (shape, dtype) in zip(rec.outputs, got, want):
                if tuple(g.shape) != tuple(shape) or np.dtype(g.dtype) != np.dtype(dtype):
                    raise AssertionError(
                        f"{self.report.op}: {name}: output '{spec.name}' is {g.dtype}{list(g.shape)}, "
                        f"expected {np.dtype(dtype)}{list(shape)}"
                    )
            self.ran(name)

    def of_one_input(self, i: int, args: list, keep: list) -> Callable:
        """The op as a function of input i alone, returning the outputs of `keep`."""

        def f(x: Any) -> tuple:
            outs = _outputs(self.fn(*args[:i], x, *args[i + 1 :], **self.attrs))
            return tuple(outs[j] for j in keep)

        return f

    def check_grads(self) -> None:
        rec = self.record
        float_inputs = [i for i, s in enumerate(rec.inputs) if _is_float(self.args[i].dtype)]
        if not float_inputs:
            self.not_applicable("grad", "no float inputs")
        for i in float_inputs:
            spec = rec.inputs[i]
            name = f"grad {spec.name}"
            if spec.name not in rec.derivatives:
                try:
                    jax.jvp(
                        lambda x: self.call(*self.args[:i], x, *self.args[i + 1 :]), (self.args[i],), (self.args[i],)
                    )
                except OpError as e:
                    if f"input '{spec.name}'" not in str(e) or self.report.op not in str(e):
                        raise AssertionError(
                            f"{self.report.op}: {name}: the OpError does not name the op and the input: {e}"
                        ) from None
                    self.ran(f"{name} (undeclared: raises OpError)")
                    continue
                raise AssertionError(
                    f"{self.report.op}: {name}: the spec declares no derivative for input '{spec.name}', "
                    "but jax.jvp did not raise an OpError"
                )
            keep = self.kept_outputs(self.dtypes)
            if not keep:
                self.skip(name, "no float outputs to differentiate")
                continue
            own = np.dtype(jax.dtypes.canonicalize_dtype(self.args[i].dtype))
            if own != np.float64:
                _grad_check.check_own_precision(self, i, keep, self.reference)
            self.check_grad_float64(i, name, own)

    def kept_outputs(self, types: dict) -> list:
        """The outputs whose derivatives are checked: the float ones (under `types`) that
        grad_outputs names, or all of them."""
        return [
            j
            for j, o in enumerate(self.record.outputs)
            if _is_float(types.get(o.dtype, o.dtype)) and (self.grad_outputs is None or o.name in self.grad_outputs)
        ]

    def check_grad_float64(self, i: int, name: str, own: np.dtype) -> None:
        """Input i's declared derivatives in float64, to order 2 (check_grads)."""
        from jax.test_util import check_grads

        rec = self.record
        spec = rec.inputs[i]
        checked = f"{name} in {own.name}" in self.report.ran
        also = f": its derivative is checked in {own.name} ('{name} in {own.name}')" if checked else ""
        allowed = rec.types.get(spec.dtype, (spec.dtype,))
        if "float64" not in allowed:
            (self.not_applicable if checked else self.skip)(name, f"the input has no float64 type{also}")
            return
        if not _x64():
            self.skip(name, f"derivatives are checked in float64 (to order 2) under jax_enable_x64, which is off{also}")
            return
        types = {t: np.dtype("float64") if t == spec.dtype else d for t, d in self.dtypes.items()}
        args = [a.astype(np.float64) if s.dtype == spec.dtype else a for s, a in zip(rec.inputs, self.args)]
        keep = self.kept_outputs(types)
        try:
            check_grads(
                jax.jit(self.of_one_input(i, args, keep)),
                (args[i],),
                order=2,
                modes=("fwd", "rev"),
                rtol=self.rtol,
                atol=self.atol,
            )
        except AssertionError as e:
            outs = ", ".join(rec.outputs[j].name for j in keep)
            raise AssertionError(
                f"{self.report.op}: {name}: the declared derivative of ({outs}) with respect to "
                f"'{spec.name}' disagrees with finite differences in float64: {e}"
            ) from None
        self.ran(name)

    def fail_grad(
        self,
        name: str,
        input: str,
        outs: str,
        mode: str,
        source: str,
        err: float,
        size: float,
        rtol: float,
        atol: float,
    ) -> None:
        """Raises the failure of a `grad <input> in <dtype>` check (opspec/_grad_check.py)."""
        raise AssertionError(
            f"{self.report.op}: {name}: the declared derivative of ({outs}) with respect to '{input}', in {mode}, "
            f"disagrees with finite differences of {source}: error {err:.3g} against a size of {size:.3g} "
            f"(rtol={rtol:g}, atol={atol:g}: check_op's rtol= and atol= set them)"
        )


def check_op(
    op: Any,
    *args: Any,
    make_args: Callable[[np.random.Generator], Sequence] | None = None,
    reference: Callable | None = None,
    grad_outputs: Sequence[str] | None = None,
    rtol: float | None = None,
    atol: float | None = None,
    nan: bool = True,
    seed: int = 0,
    **attrs: Any,
) -> CheckReport:
    """Checks an op against its spec; returns a CheckReport, raises AssertionError.

    op: the op function (``opspec.ops.sigmoid``, or a user package's) or an
      ``opspec._runtime.Op`` record. args: example inputs; when none are given they come
      from ``make_args(rng)`` or, without it, are random with the spec's shapes and
      dtypes (a float type variable is float64 under ``jax_enable_x64``, else float32).
      Give them where random contents are invalid (CSR structure, indices).
    reference: ``reference(*args, **attrs)`` -> the expected outputs, compared first,
      and again with NaN among the inputs (NaN positions too).
    grad_outputs: the output names whose derivatives are compared with finite
      differences (default: every float output); leave out a surrogate gradient's.
    rtol/atol: tolerance of every comparison where given: the reference, eager == jit
      and vmap == loop (default 1e-5 in float32, 1e-12 in float64), and the derivatives
      (default: check_grads' in float64; by dtype in float32, bfloat16 and float16,
      opspec._grad_check.TOLERANCES).
    nan: False declares that the op does not propagate NaN as its reference does: the
      ``nan`` checks are left out (the report says so).
    attrs: the op's attributes.
    """
    options = dict(
        make_args=make_args, rtol=rtol, atol=atol, seed=seed, grad_outputs=grad_outputs, reference=reference, nan=nan
    )
    checker = _Checker(op, args, attrs, options)
    # First: an unwritten element is garbage that any later comparison would show as a
    # mere difference.
    _unwritten_check.check_unwritten(checker, checker.backends())
    checker.check_reference(reference)
    checker.check_rejection()
    eager = checker.check_jit()
    checker.check_backends()
    _nan_check.check_nan(checker, reference, checker.backends(), nan, _outputs)
    checker.check_vmap()
    checker.check_aliases(eager)
    _split_check.check_splits(checker, eager, _close)
    _halo_check.check_halos(checker, eager, _close)
    checker.check_zero_size()
    checker.check_grads()
    return checker.report
