"""Trace-time half of every generated op, and the loading of an opspec package.

The generated ``<package>.ops`` module describes each op with ``Op``/``Array``/``Attr``
records and calls ``call``. Everything here runs while JAX traces; the compiled
computation calls the native handler directly.

``load_package`` is what ``import opspec`` (and ``import <package>`` for a package built
with ``opspec_add_extension``) runs: it refuses a JAX the handlers cannot run on, then
registers the package's handlers with JAX.
"""

from __future__ import annotations

import dataclasses
import importlib
import math
import os
import re
import sys
from collections.abc import Callable
from types import EllipsisType, ModuleType
from typing import Any, NoReturn

import jax
import jax.numpy as jnp
import numpy as np

# _tables: the limits and dtypes every package shares (the opspec runtime a package
# compiles and the one it runs with are the same version). _primitive as a module, not
# names: it imports this one. Every import is at module level, so that a call runs no
# import statement of opspec's: at interpreter shutdown Python can no longer import
# (see ShutdownError).
from opspec import _primitive, _tables, _tune
from opspec._jax_private import Tracer

Dim = int | str | EllipsisType | Callable[[dict], int]


@dataclasses.dataclass(frozen=True)
class Check:
    """What an input's contents must satisfy (spec key `check:`): bounds are functions of
    the scope of shape symbols and integer attributes, inclusive."""

    min: Callable[[dict], int] | None = None
    max: Callable[[dict], int] | None = None
    sorted: bool = False


@dataclasses.dataclass(frozen=True)
class Array:
    name: str
    dtype: str  # a dtype name or a type variable
    shape: tuple  # of Dim
    check: Check | None = None  # inputs only


@dataclasses.dataclass(frozen=True)
class Attr:
    name: str
    type: str  # bool, int32, int64, float32, float64


@dataclasses.dataclass(frozen=True)
class Derivative:
    """How one input's tangent moves the outputs (spec key `derivatives:`; docs/gradients.md).

    kind "elementwise": formulas[out] is d out / d input, element-wise;
    kind "jvp": formulas[out] is out's tangent from this input's tangent `<input>_dot`;
    kind "transpose": the op is linear in this input; formulas[input] is the input's
    cotangent from the outputs' cotangents `<output>_bar`.
    Each formula takes the names it uses as keyword arguments. `where` maps a formula's
    key to where it was written ("specs/sigmoid.yaml:12"), for errors while JAX traces it."""

    kind: str
    formulas: dict
    where: dict = dataclasses.field(default_factory=dict)


# eq=False: records are compared and hashed by identity, as JAX does with a primitive's
# parameters (one record per op and package).
@dataclasses.dataclass(frozen=True, eq=False)
class Op:
    name: str
    inputs: tuple
    outputs: tuple
    types: dict
    attrs: tuple
    vmap_method: str | None
    aliases: dict  # input index -> output index
    package: str = "opspec"  # the Python package the op belongs to; its FFI target is <package>_<name>
    derivatives: dict = dataclasses.field(default_factory=dict)  # input name -> Derivative
    # The spec's `bytes:` and `flops:` formulas (memory traffic and arithmetic of one call),
    # as functions of the call's scope; None where the spec declares none. See cost().
    bytes: Callable[[dict], Any] | None = None
    flops: Callable[[dict], Any] | None = None
    # The spec's `reduce:`: shape symbol ("..." for the '...' group) -> "sum", "max" or
    # "min", how the outputs of shards split along it combine (docs/transformations.md).
    reduce: dict = dataclasses.field(default_factory=dict)
    # The spec's `independent:`: shape symbols ("..." for the '...' group) along which each
    # output element depends only on the inputs at its own position, so a sharding rule
    # may keep them split across devices (docs/transformations.md, "Sharding").
    independent: tuple = ()
    # The fingerprint of the op's generated code (opspec-gen, generator/fingerprint.h):
    # every call records it (attribute opspec_kernel), and the handler of a build whose
    # code differs refuses the call, so an exported computation never runs a changed
    # kernel. "" (a record made by hand): not recorded.
    fingerprint: str = ""

    def __repr__(self) -> str:  # as jaxprs show the primitive's parameter
        return f"{self.package}.ops.{self.name}"


MAX_RANK = _tables.MAX_RANK


class OpError(TypeError):
    """A call that does not match the op's spec: `<package>.ops.<op>: <argument>: <message>`."""


class ShutdownError(ImportError):
    """An op called while the interpreter shuts down (from a ``__del__``, say), when JAX and
    NumPy can no longer import what a call needs: `<package>.ops.<op>: cannot run while
    ...`. An ImportError, the exception JAX raises there, named after the op."""


def _fail(op: Op, what: str, message: str, cause: BaseException | None = None) -> NoReturn:
    raise OpError(f"{op.package}.ops.{op.name}: {what}: {message}") from cause


def _shown(value: Any) -> str:
    """`value` for an error message: its type and repr, the repr cut to 60 characters."""
    text = repr(value)
    if len(text) > 60:
        text = f"{text[:40]}...{text[-12:]} ({len(text)} characters)"
    return f"{type(value).__name__} {text}"


# What an input accepts: what jnp.asarray takes, for the message when it takes nothing.
_AN_ARRAY = "an array (jax.Array, NumPy array, or a Python number or nested list of numbers)"


def _as_array(op: Op, spec: Array, x: Any) -> Any:
    """Input `x` as a JAX array (a Tracer or a jax.Array passes through): NumPy arrays and
    Python scalars become JAX arrays, so that the dtype checked is the one the handler will
    see (float64 turns float32 unless jax_enable_x64 is set). What jnp.asarray cannot take
    (None, a str, a dict, strings, an object array, a jax.ShapeDtypeStruct, a number no
    dtype holds) is an OpError naming the input."""
    if isinstance(x, (jax.Array, Tracer)):
        return x
    if x is None or isinstance(x, (str, bytes, dict, jax.ShapeDtypeStruct)):
        hint = (
            " (an abstract shape: call the op inside jax.eval_shape instead)"
            if isinstance(x, jax.ShapeDtypeStruct)
            else ""
        )
        _fail(op, f"input '{spec.name}'", f"expected {_AN_ARRAY}, got {_shown(x)}{hint}")
    try:
        # Strings and objects in a list or NumPy array: refused here, before JAX, which
        # warns about some of them (a DeprecationWarning for a list of str) first. A list
        # holding JAX arrays (tracers, under jit) is left to jnp.asarray, which stacks it.
        probe = x if isinstance(x, np.ndarray) else None
        if isinstance(x, (list, tuple)) and not any(isinstance(e, (jax.Array, Tracer)) for e in x):
            probe = np.asarray(x)  # a ragged list raises ValueError, as jnp.asarray would
        if probe is not None and probe.dtype.kind in "OSU":
            raise TypeError(f"its elements are {probe.dtype}, not numbers")
        return jnp.asarray(x)
    except (TypeError, ValueError, OverflowError) as e:
        _fail(op, f"input '{spec.name}'", f"expected {_AN_ARRAY}, got {_shown(x)}: {e}", e)


def _check_inputs(op: Op, args: tuple) -> tuple[dict, dict, tuple | None]:
    """Checks dtypes, ranks and symbols; returns (type bindings, symbols, ellipsis)."""
    types: dict[str, np.dtype] = {}
    bound_by: dict[str, str] = {}
    symbols: dict[str, int] = {}
    symbol_from: dict[str, str] = {}
    ellipsis = None
    for spec, x in zip(op.inputs, args):
        what = f"input '{spec.name}'"
        try:
            dtype = np.dtype(x.dtype)
        except TypeError:  # a JAX extended dtype (a PRNG key array), which NumPy has not
            want = " or ".join(op.types.get(spec.dtype, (spec.dtype,)))
            _fail(op, what, f"expected dtype {want}, got {x.dtype}")
        if spec.dtype in op.types:
            choices = op.types[spec.dtype]
            if spec.dtype not in types:
                if dtype.name not in choices:
                    _fail(op, what, f"expected dtype {' or '.join(choices)} (type {spec.dtype}), got {dtype.name}")
                types[spec.dtype] = dtype
                bound_by[spec.dtype] = spec.name
            elif dtype != types[spec.dtype]:
                _fail(
                    op,
                    what,
                    f"expected dtype {types[spec.dtype].name} (type {spec.dtype}, "
                    f"as input '{bound_by[spec.dtype]}'), got {dtype.name}",
                )
        elif dtype.name != spec.dtype:
            _fail(op, what, f"expected dtype {spec.dtype}, got {dtype.name}")

        shape = tuple(x.shape)
        if len(shape) > MAX_RANK:
            _fail(op, what, f"rank {len(shape)} is more than the {MAX_RANK} dims opspec supports")
        has_ellipsis = bool(spec.shape) and spec.shape[0] is Ellipsis
        fixed = spec.shape[1:] if has_ellipsis else spec.shape
        if (len(shape) < len(fixed)) if has_ellipsis else (len(shape) != len(fixed)):
            want = f"at least {len(fixed)}" if has_ellipsis else f"{len(fixed)}"
            _fail(
                op, what, f"expected rank {want} (shape [{', '.join(map(_dim_text, spec.shape))}]), got shape {shape}"
            )
        lead = len(shape) - len(fixed)
        if has_ellipsis:
            if ellipsis is None:
                ellipsis = shape[:lead]
            elif shape[:lead] != ellipsis:
                _fail(op, what, f"leading dims ('...') {shape[:lead]} differ from {ellipsis} of an earlier input")
        for d, dim in enumerate(fixed):
            got = shape[lead + d]
            if isinstance(dim, int):
                if got != dim:
                    _fail(op, what, f"dim {lead + d} should be {dim}, got {got} (shape {shape})")
            elif dim not in symbols:
                symbols[dim] = got
                symbol_from[dim] = spec.name
            elif symbols[dim] != got:
                _fail(
                    op,
                    what,
                    f"dim {lead + d} ({dim}) is {got}, but {dim} = {symbols[dim]} "
                    f"from input '{symbol_from[dim]}' (shape {shape})",
                )
    return types, symbols, ellipsis


def _dim_text(dim: Dim) -> str:
    return "..." if dim is Ellipsis else str(dim) if not callable(dim) else "expr"


# What each kind of attribute accepts from Python; the types and their kinds come from
# the generator's one table (_tables.ATTR_TYPES).
_ACCEPTED: dict[str, tuple[type, ...]] = {
    "bool": (bool, np.bool_),
    "int": (int, np.integer),
    "float": (float, int, np.floating, np.integer),
}
_ATTR_TYPES = {name: (np.dtype(name).type, _ACCEPTED[kind]) for name, kind in _tables.ATTR_TYPES.items()}


def _convert_attrs(op: Op, attrs: dict) -> dict:
    out = {}
    for spec in op.attrs:
        value = attrs[spec.name]
        what = f"attribute '{spec.name}'"
        if isinstance(value, Tracer):
            _fail(
                op,
                what,
                f"must be a static {spec.type} value, got a traced array "
                "(attributes are compiled into the call; pass arrays as inputs)",
            )
        cast, accepted = _ATTR_TYPES[spec.type]
        if isinstance(value, (np.ndarray, jax.Array)) and np.ndim(value) == 0:
            value = value.item()
        takes = isinstance(value, accepted) and not (spec.type != "bool" and isinstance(value, (bool, np.bool_)))
        if not takes:
            _fail(op, what, f"expected {spec.type}, got {_shown(value)}")
        if spec.type.startswith("int"):
            info = np.iinfo(cast)
            if not info.min <= int(value) <= info.max:
                _fail(op, what, f"expected {spec.type}, from {info.min} to {info.max}, got {_shown(value)}")
        # A float attribute takes any finite Python number its type can hold; inf and nan
        # pass as themselves. An int too large for a double raises OverflowError in NumPy.
        finite = isinstance(value, (int, np.integer)) or bool(np.isfinite(value))
        try:
            with np.errstate(over="ignore"):
                converted = cast(value)
        except OverflowError:
            converted = None
        if converted is None or (spec.type.startswith("float") and finite and not np.isfinite(converted)):
            most = np.finfo(cast).max
            _fail(op, what, f"expected {spec.type}, at most {most:g} in magnitude (or inf, nan), got {_shown(value)}")
        out[spec.name] = converted
    return out


# The implementations a call can ask for with backend=, and the platform each runs on.
BACKENDS = {"cpu": "cpu", "cuda": "gpu", "cuda_sim": "cpu"}

# The FFI target of each (package, op, backend) registered in this process (register_targets);
# the platform's own implementation is the op's target <package>_<op>.
_TARGETS: dict[tuple[str, str, str], str] = {}
_UNAVAILABLE: dict[tuple[str, str], str] = {}  # (package, backend) -> why the package has none here


def cost(fn: Any, *args: Any, **attrs: Any) -> dict:
    """{"bytes": ..., "flops": ...} of one call of op function `fn` (an ``ops.<name>``) on
    `args` (arrays or anything with ``.shape`` and ``.dtype``) and integer `attrs`, from
    the spec's `bytes:` and `flops:` formulas; None for a formula the spec does not give.
    In the formulas a type variable stands for its dtype's element size in bytes."""
    module = sys.modules.get(getattr(fn, "__module__", None) or "", None)
    op = getattr(module, f"_op_{getattr(fn, '__name__', '')}", None)
    if not isinstance(op, Op):
        raise TypeError(f"cost: expected an op function (opspec.ops.<name>, or a package's), got {_shown(fn)}")
    op = dataclasses.replace(op, package=fn.__module__.rsplit(".", 1)[0])  # named as the package calls it
    if len(args) != len(op.inputs):
        _fail(op, "cost", f"expected {len(op.inputs)} inputs, got {len(args)}")
    scope: dict = {}
    for spec, x in zip(op.inputs, args):
        try:
            shape, dtype = tuple(int(d) for d in np.shape(x)), np.dtype(x.dtype)
        except (AttributeError, TypeError, ValueError) as e:
            want = "an array, or anything with .shape and .dtype (a jax.ShapeDtypeStruct)"
            _fail(op, f"input '{spec.name}'", f"expected {want}, got {_shown(x)}", e)
        if spec.dtype in op.types:
            scope.setdefault(spec.dtype, dtype.itemsize)
        fixed = spec.shape[1:] if spec.shape and spec.shape[0] is Ellipsis else spec.shape
        for dim, extent in zip(fixed, shape[len(shape) - len(fixed) :]):
            if isinstance(dim, str):
                scope.setdefault(dim, extent)
        scope[f"{spec.name}_size"] = math.prod(shape)
    for spec in op.attrs:
        if spec.type.startswith("int") and spec.name in attrs:
            value = attrs[spec.name]
            if not isinstance(value, (int, np.integer)) or isinstance(value, (bool, np.bool_)):
                _fail(op, f"attribute '{spec.name}'", f"expected {spec.type}, got {_shown(value)}")
            scope[spec.name] = int(value)
    out = {}
    for key, formula in (("bytes", op.bytes), ("flops", op.flops)):
        try:
            out[key] = None if formula is None else int(formula(scope))
        except KeyError as e:  # a name the formula reads and the call did not give
            name = e.args[0]
            if any(a.name == name for a in op.attrs):
                _fail(op, f"attribute '{name}'", f"expected a value (cost(..., {name}=...)), got none", e)
            _fail(op, "cost", f"expected inputs that give {name} (the {key} formula reads it), got too few dims", e)
    return out


def target_name(op: Op, backend: str | None) -> str:
    """The FFI target for `backend`: the op's own, which the platform resolves, for None."""
    if backend is None:
        return f"{op.package}_{op.name}"  # as <package>._opspec.target_name(name) spells it
    return _TARGETS[(op.package, op.name, backend)]


def _check_backend(op: Op, backend: str | None, arrays: list) -> None:
    if backend is None:
        return
    if not isinstance(backend, str) or backend not in BACKENDS:
        _fail(op, "backend", f"expected one of {', '.join(map(repr, BACKENDS))} or None, got {backend!r}")
    key = (op.package, op.name, backend)
    if key not in _TARGETS:
        why = _UNAVAILABLE.get((op.package, backend), "the op has no CUDA kernels")
        _fail(op, "backend", f"{backend!r} is not available: {why}")
    # Concrete inputs show where the call will run; under jit, XLA rejects a target that is
    # not registered for the platform it compiles for.
    platform = BACKENDS[backend]
    for spec, x in zip(op.inputs, arrays):
        if isinstance(x, jax.Array) and not isinstance(x, Tracer):
            where = {d.platform for d in x.devices()}
            if where != {platform}:
                _fail(
                    op,
                    "backend",
                    f"{backend!r} runs on the {platform} platform, but input '{spec.name}' is on "
                    f"{', '.join(sorted(where))} (jax.device_put it to a {platform} device)",
                )


def call(op: Op, args: tuple, attrs: dict, backend: str | None = None) -> Any:
    """Checks a call against the spec and binds the op's primitive (opspec/_primitive.py)."""
    try:
        arrays = [_as_array(op, spec, x) for spec, x in zip(op.inputs, args)]
        _check_backend(op, backend, arrays)
        _check_inputs(op, tuple(arrays))
        results = _primitive.bind(op, arrays, _convert_attrs(op, attrs), backend)
    except ImportError as e:
        # At interpreter shutdown (sys.meta_path is None) JAX's and NumPy's own lazy
        # imports fail; say which op could not run instead of a bare ImportError.
        if sys.meta_path is not None or isinstance(e, ShutdownError):
            raise
        raise ShutdownError(
            f"{op.package}.ops.{op.name}: cannot run while the Python interpreter shuts down "
            f"(JAX can no longer import what the call needs: {e}); call it before exit, "
            "from an atexit handler for instance"
        ) from None
    return results[0] if len(results) == 1 else tuple(results)


# ---- loading a package ----------------------------------------------------------------

# The jax versions opspec runs on. The floor is where jax.ffi (ffi_call, register_ffi_target,
# include_dir) appeared, and jaxlib 0.5 ships FFI API 0.1, the version the handlers declare.
# Keep in sync with `dependencies` in pyproject.toml; CI runs the tests under each TESTED.
JAX_MIN = (0, 5)
TESTED = ("0.5.3", "0.8.3", "0.10.2", "0.12.0.1")
SUPPORTED = f"jax and jaxlib >= {JAX_MIN[0]}.{JAX_MIN[1]} (tested: {', '.join(TESTED)})"

# The API of this module that generated ops.py files and package __init__.py files call;
# a package built against another one must be rebuilt. 2: ops pass backend= to the call.
RUNTIME_API = 2


def _version_tuple(text: str) -> tuple:
    return tuple(int(p) for p in re.findall(r"\d+", text)[:3])


def framework_ffi_api(jaxlib_dir: str | None = None) -> tuple | None:
    """The XLA FFI API version the installed jaxlib implements, from the header it ships
    (xla/ffi/api/c_api.h: it was built from that header). None if the header is missing."""
    if jaxlib_dir is None:
        import jaxlib

        jaxlib_dir = os.path.dirname(jaxlib.__file__)
    try:
        with open(os.path.join(jaxlib_dir, "include", "xla", "ffi", "api", "c_api.h")) as f:
            text = f.read()
    except OSError:
        return None
    major = re.search(r"^#define XLA_FFI_API_MAJOR (\d+)", text, re.M)
    minor = re.search(r"^#define XLA_FFI_API_MINOR (\d+)", text, re.M)
    return (int(major.group(1)), int(minor.group(1))) if major and minor else None


def check_jax(
    package: str,
    declared_api: tuple,
    jax_version: str | None = None,
    jaxlib_version: str | None = None,
    framework_api: tuple | None = None,
) -> None:
    """Raises ImportError unless the installed jax can run handlers that declare
    `declared_api`: a jax or jaxlib older than JAX_MIN, or a jaxlib whose FFI API is older
    than the declared one (XLA would refuse every handler when the first computation
    starts the backend, and fail every later call with NOT_FOUND). The installed versions
    are read when not given."""
    if jax_version is None:
        jax_version = jax.__version__
    if jaxlib_version is None:
        import jaxlib

        jaxlib_version = jaxlib.__version__
    installed = f"jax {jax_version} and jaxlib {jaxlib_version} are installed"
    if _version_tuple(jax_version)[:2] < JAX_MIN or _version_tuple(jaxlib_version)[:2] < JAX_MIN:
        raise ImportError(
            f"{package} needs {SUPPORTED}, but {installed}. "
            f"Install a supported one: pip install 'jax>={JAX_MIN[0]}.{JAX_MIN[1]}'"
        )
    if framework_api is None:
        framework_api = framework_ffi_api()
    if framework_api is not None and tuple(framework_api) < tuple(declared_api):
        have = ".".join(map(str, framework_api))
        need = ".".join(map(str, declared_api))
        raise ImportError(
            f"{package}'s handlers declare XLA FFI API {need}, but {installed}, whose FFI API is "
            f"{have}: XLA would refuse every handler. {package} needs a jaxlib with FFI API {need} "
            f"or newer; it supports {SUPPORTED}"
        )


def caller(package: str) -> Callable[..., Any]:
    """`call` for the ops.py of `package`: its ops call the FFI targets <package>_<op>
    (and <package>_<op>.<backend>) and name themselves <package>.ops.<op> in errors. (The
    op records in ops.py carry no package: they are the same for every package.)"""
    records: dict = {}

    def call_in_package(op: Op, args: tuple, attrs: dict, backend: str | None = None) -> Any:
        record = records.get(op.name)
        if record is None:
            record = records[op.name] = dataclasses.replace(op, package=package)
        return call(record, args, attrs, backend)

    return call_in_package


def _has_gpu_backend() -> bool:
    # Not jax.devices("gpu") inside `except RuntimeError`: that also swallows a backend
    # that failed to start (an FFI handler XLA refused, a broken plugin), which must
    # surface here rather than as a puzzling failure on the first computation.
    return jax.default_backend() == "gpu"


# Every FFI target registered through this module in this process: (name, platform) -> package.
_REGISTERED: dict = {}


def _register(target: str, handler: Any, platform: str, package: str, op: str) -> None:
    owner = _REGISTERED.get((target, platform))
    if owner == package:
        return  # the same package loaded again (importlib.reload): same handlers
    if owner is not None:
        raise ImportError(
            f"{package}: FFI target '{target}' (op '{op}') is already registered by package "
            f"'{owner}'; rename the op or the package"
        )
    jax.ffi.register_ffi_target(target, handler, platform=platform, api_version=1)
    _REGISTERED[(target, platform)] = package


def register_targets(native: ModuleType) -> tuple:
    """Registers every op's handlers of one package's native module with JAX; returns
    the platforms registered.

    Target <package>_<op> is the op as the platform runs it: the CPU handler on "cpu",
    the CUDA handler on "CUDA". Each backend also has its own target, registered only on
    its platform, "<package>_<op>.<backend>" (names have no dots, so these cannot collide
    with an op's): the CPU handler as ".cpu", the CUDA handler as ".cuda", and the CUDA
    kernels on the CUDA simulator, a "cpu" platform handler, as ".cuda_sim".
    """
    package = native.package()
    platforms = ["cpu"]
    register_cuda = native.has_cuda() and _has_gpu_backend()
    if register_cuda:
        platforms.append("CUDA")
    elif not native.has_cuda():
        _UNAVAILABLE[(package, "cuda")] = f"{package} was built without CUDA (no nvcc, or CUDA OFF)"
    else:
        _UNAVAILABLE[(package, "cuda")] = "JAX has no GPU backend in this process"
    if native.has_cuda_sim():
        # One simulated GPU per JAX CPU device: a call XLA runs on CPU device d runs on
        # simulated GPU d, so the simulator sees the device ordinal XLA passes.
        native.cuda_sim_set_device_count(max(1, min(len(jax.devices("cpu")), 64)))
    else:
        _UNAVAILABLE[(package, "cuda_sim")] = f"{package} was built without the CUDA simulator (CUDA_SIM OFF)"
    simulated = dict(native.cuda_sim_handlers())
    for name, cpu, cuda in native.handlers():
        target = native.target_name(name)
        _register(target, cpu, "cpu", package, name)
        _register(f"{target}.cpu", cpu, "cpu", package, name)
        _TARGETS[(package, name, "cpu")] = f"{target}.cpu"
        if register_cuda and cuda is not None:
            _register(target, cuda, "CUDA", package, name)
            _register(f"{target}.cuda", cuda, "CUDA", package, name)
            _TARGETS[(package, name, "cuda")] = f"{target}.cuda"
        if name in simulated:
            _register(f"{target}.cuda_sim", simulated[name], "cpu", package, name)
            _TARGETS[(package, name, "cuda_sim")] = f"{target}.cuda_sim"
    return tuple(platforms)


def backends(package: str) -> tuple:
    """The backends some op of `package` can run on in this process: "cpu", and "cuda",
    "cuda_sim" where registered."""
    return tuple(b for b in BACKENDS if any(key[0] == package and key[2] == b for key in _TARGETS))


def load_package(package: str, api: int = RUNTIME_API) -> tuple:
    """Loads `package`'s native module <package>._opspec, checks that the installed jax
    can run its handlers, and registers them. Returns (native module, platforms).
    Raises ImportError, naming the installed and the supported versions, otherwise."""
    if api != RUNTIME_API:
        raise ImportError(
            f"{package} was built for opspec runtime API {api}, but the installed opspec has "
            f"API {RUNTIME_API}: rebuild {package} against the installed opspec"
        )
    native = importlib.import_module(f"{package}._opspec")
    info = native.build_info()
    check_jax(package, _version_tuple(info["ffi_api"]))
    _tune.apply(package, native)
    return native, register_targets(native)
