"""Every bad call a user can make through ``opspec.ops.<op>`` (and a user package's ops)
is an OpError naming the op and the argument, raised before JAX compiles anything (issue
24): the audit's bad inputs (non-arrays of each kind, wrong dtypes, ranks and shapes, and
out-of-range Python numbers for each attribute type) walked over every shipped op; output
shapes whose byte size XLA cannot hold; a handler error of a user package names the
package; an op called at interpreter shutdown."""

import inspect
import os
import subprocess
import sys
import textwrap
import time

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import opspec
from opspec import _primitive, _tables
from opspec._bind import MAX_RANK
from opspec._runtime import Array, Attr, Op, OpError, ShutdownError, call
from opspec.testing import check_op, op_record

# Arguments that are no array at all; each fails where opspec converts inputs.
NON_ARRAYS = {
    "str": "abc",
    "bytes": b"abc",
    "None": None,
    "dict": {"a": 1},
    "list of str": ["a", "b"],
    "set": {1.0, 2.0},
    "ragged list": [[1.0], [1.0, 2.0]],
    "object array": np.array([object(), object()], dtype=object),
    "str array": np.array(["a", "b"]),
    "huge int": 10**400,
    "huge list": [10**400, 1],
    "function": len,
}

# Attribute values outside what each kind of attribute type takes.
OUT_OF_RANGE = [10**400, -(10**400), float("nan"), float("inf"), 2**63, -(2**63) - 1, 2**31, True, False]
NOT_NUMBERS = ["3", None, [1], (1.0,), np.ones(2), 1j, object()]


def bad_attr_values(kind: str, dtype: str) -> list:
    """Values attribute type `dtype` (of kind int, float or bool) must refuse."""
    values: list = list(NOT_NUMBERS)
    if kind == "int":
        info = np.iinfo(dtype)
        return (
            values
            + [v for v in OUT_OF_RANGE if isinstance(v, float) or isinstance(v, bool) or not info.min <= v <= info.max]
            + [1.5]
        )
    if kind == "float":
        most = np.finfo(dtype).max
        return values + [True, False, 10**400, -(10**400), int(most) * 2, -int(most) * 2]
    return values + [0, 1, 1.0, 10**400, float("nan")]  # bool


def valid_call(record: Op, fn) -> tuple:
    """Arguments of a valid call of `record` (never run: only one argument is spoiled at a
    time), with distinct sizes per symbol, and its attributes."""
    sizes: dict = {}
    args = []
    for spec in record.inputs:
        shape = []
        for dim in spec.shape:
            if dim is Ellipsis:
                shape.append(2)
            elif isinstance(dim, str):
                shape.append(sizes.setdefault(dim, 3 + len(sizes)))
            elif isinstance(dim, int):
                shape.append(dim)
            else:
                raise AssertionError(f"{record.name}: input shape expressions are not walked")
        dtype = record.types[spec.dtype][0] if spec.dtype in record.types else spec.dtype
        args.append(np.zeros(shape, dtype))
    params = inspect.signature(fn).parameters
    attrs = {}
    for a in record.attrs:
        default = params[a.name].default
        attrs[a.name] = default if default is not inspect.Parameter.empty else _a_value(a)
    return args, attrs


def _a_value(a: Attr):
    kind = _tables.ATTR_TYPES[a.type]
    return {"int": 3, "float": 0.5, "bool": True}[kind]


def wrong_dtypes(record: Op, spec: Array) -> list:
    # As the op sees them: float64 is float32 unless jax_enable_x64 is set.
    allowed = set(record.types.get(spec.dtype, (spec.dtype,)))
    dtypes = ("bool", "int8", "int32", "uint32", "float16", jnp.bfloat16, "float32", "float64", "complex64")
    return [np.dtype(d).name for d in dtypes if jnp.asarray(np.zeros(1, d)).dtype.name not in allowed]


def wrong_shapes(record: Op, spec: Array, i: int, args: list) -> list:
    """Shapes of input `i` that the spec refuses: a dim too many (a rank over MAX_RANK for a
    bare '...'), a dim too few, a wrong fixed dim, a symbol that differs from an earlier
    input's."""
    shape = list(args[i].shape)
    has_ellipsis = bool(spec.shape) and spec.shape[0] is Ellipsis
    fixed = spec.shape[1:] if has_ellipsis else spec.shape
    out = []
    if has_ellipsis:
        out.append([1] * (MAX_RANK + 1))
        if fixed:
            out.append(shape[1 : len(shape) - 1])  # one fixed dim missing, no '...'
    else:
        out.append(shape + [2])
        if shape:
            out.append(shape[:-1])
    earlier = {d for s in record.inputs[:i] for d in s.shape if isinstance(d, str)}
    lead = len(shape) - len(fixed)
    for d, dim in enumerate(fixed):
        if isinstance(dim, int) or dim in earlier:
            spoiled = list(shape)
            spoiled[lead + d] += 1
            out.append(spoiled)
    if has_ellipsis and any(s.shape and s.shape[0] is Ellipsis for s in record.inputs[:i]):
        out.append([5] + shape[1:])  # leading dims that differ from an earlier input's
    return out


def cases(package_ops, package: str, via_check_op: bool = False) -> list:
    """(label, thunk, op name, argument) for every bad call of every op of `package_ops`,
    or of check_op on every op with those arguments."""

    def bound(fn, args, attrs):
        args, attrs = tuple(args), dict(attrs)
        if via_check_op:
            return lambda: check_op(fn, *args, **attrs)
        return lambda: fn(*args, **attrs)

    out = []
    for name in package_ops.__all__:
        fn = getattr(package_ops, name)
        record = op_record(fn)
        args, attrs = valid_call(record, fn)
        for i, spec in enumerate(record.inputs):
            arg = f"input '{spec.name}'"

            def spoil(value, i=i):
                return tuple(value if j == i else a for j, a in enumerate(args))

            bad = dict(NON_ARRAYS)
            bad["ShapeDtypeStruct"] = jax.ShapeDtypeStruct(args[i].shape, args[i].dtype)
            bad["PRNG key array"] = jax.random.key(0)
            bad.update({f"dtype {d}": np.zeros(args[i].shape, d) for d in wrong_dtypes(record, spec)})
            bad.update({f"shape {tuple(s)}": np.zeros(s, args[i].dtype) for s in wrong_shapes(record, spec, i, args)})
            for label, value in bad.items():
                out.append((f"{name} {arg} {label}", bound(fn, spoil(value), attrs), name, arg))
        for a in record.attrs:
            kind = _tables.ATTR_TYPES[a.type]
            for value in bad_attr_values(kind, a.type):
                label = f"{name} attribute '{a.name}' = {type(value).__name__} {str(value)[:20]}"
                out.append((label, bound(fn, args, {**attrs, a.name: value}), name, f"attribute '{a.name}'"))
        if not via_check_op:
            out.append((f"{name} backend", bound(fn, args, {**attrs, "backend": "tpu"}), name, "backend"))
    return out


def walk(package_ops, package: str, via_check_op: bool = False) -> tuple:
    """Runs every bad call; returns (calls, ops). Fails listing every call that raised
    something else than an OpError naming op and argument, or nothing."""
    wrong = []
    calls = cases(package_ops, package, via_check_op)
    bound_before = len(_primitive._COMPILED)  # one entry per eager call that reached the primitive
    for label, thunk, name, arg in calls:
        try:
            thunk()
        except OpError as e:
            prefix = f"{package}.ops.{name}: {arg}: "
            if not str(e).startswith(prefix):
                wrong.append(f"{label}: names something else: {e}")
            elif len(str(e)) < len(prefix) + 20:
                wrong.append(f"{label}: does not say what was expected and what came: {e}")
        except Exception as e:  # noqa: BLE001 - what the walk is looking for
            wrong.append(f"{label}: {type(e).__name__}: {e}")
        else:
            wrong.append(f"{label}: no error")
    assert not wrong, f"{len(wrong)} of {len(calls)} bad calls:\n" + "\n".join(wrong)
    # Every error came before the op's primitive was bound: nothing was traced or compiled.
    assert len(_primitive._COMPILED) == bound_before
    return len(calls), len(package_ops.__all__)


def test_every_bad_call_of_every_shipped_op_is_a_named_op_error():
    start = time.perf_counter()
    n, ops = walk(opspec.ops, "opspec")
    seconds = time.perf_counter() - start
    assert ops == len(opspec.ops.__all__) >= 22
    assert n > 1000, n
    print(f"{n} bad calls over {ops} ops: all OpError naming op and argument, {seconds:.2f} s")


def test_check_op_names_the_op_and_argument_of_every_bad_call():
    # The same arguments handed to opspec.testing.check_op, which refuses them before it
    # runs anything.
    start = time.perf_counter()
    n, ops = walk(opspec.ops, "opspec", via_check_op=True)
    print(
        f"check_op: {n} bad calls over {ops} ops: all OpError naming op and argument, {time.perf_counter() - start:.2f} s"
    )
    with pytest.raises(
        OpError, match=r"^opspec\.ops\.leaky_relu: attribute 'beta': expected one of alpha, got beta=1\.0$"
    ):
        check_op(opspec.ops.leaky_relu, np.ones(3, np.float32), beta=1.0)
    with pytest.raises(OpError, match=r"^opspec\.ops\.csr_rmatvec: attribute 'n': expected a value"):
        check_op(opspec.ops.csr_rmatvec)
    with pytest.raises(OpError, match=r"^opspec\.ops\.add: inputs: expected 2 inputs, got 1 arguments$"):
        check_op(opspec.ops.add, np.ones(3, np.float32))
    with pytest.raises(TypeError, match=r"^expected an op function .* got str 'add'"):
        check_op("add")


def test_cost_names_the_op_and_argument():
    x = np.ones(3, np.float32)
    data, indices, indptr = x, np.zeros(3, np.int32), np.zeros(2, np.int32)
    with pytest.raises(
        OpError,
        match=r"^opspec\.ops\.add: input 'y': expected an array, or anything with \.shape and \.dtype .*got str 'abc'$",
    ):
        opspec.cost(opspec.ops.add, x, "abc")
    with pytest.raises(OpError, match=r"^opspec\.ops\.csr_rmatvec: attribute 'n': expected a value"):
        opspec.cost(opspec.ops.csr_rmatvec, data, indices, indptr, x[:1])
    with pytest.raises(OpError, match=r"^opspec\.ops\.csr_rmatvec: attribute 'n': expected int64, got str 'x'$"):
        opspec.cost(opspec.ops.csr_rmatvec, data, indices, indptr, x[:1], n="x")
    with pytest.raises(TypeError, match=r"^cost: expected an op function .* got str 'add'$"):
        opspec.cost("add", x, x)
    assert opspec.cost(opspec.ops.csr_rmatvec, data, indices, indptr, x[:1], n=5)["flops"] == 6


def test_every_attribute_type_refuses_what_it_cannot_hold():
    # No shipped op has an int32, float32 or bool attribute: a record with one of each
    # type of _tables.ATTR_TYPES. Every bad value fails before anything is bound.
    record = Op(
        name="every_attr",
        inputs=(Array("x", "float32", ("n",)),),
        outputs=(Array("y", "float32", ("n",)),),
        types={},
        attrs=tuple(Attr(f"a_{t}", t) for t in _tables.ATTR_TYPES),
        vmap_method="native",
        aliases={},
    )
    good = {f"a_{t}": {"int": 1, "float": 0.5, "bool": True}[k] for t, k in _tables.ATTR_TYPES.items()}
    n = 0
    for t, kind in _tables.ATTR_TYPES.items():
        for value in bad_attr_values(kind, t):
            with pytest.raises(OpError, match=rf"^opspec\.ops\.every_attr: attribute 'a_{t}': expected .* got "):
                call(record, (np.ones(3, np.float32),), {**good, f"a_{t}": value})
            n += 1
    assert n >= 5 * len(_tables.ATTR_TYPES)


def test_attribute_messages():
    x = np.ones(3, np.float32)
    with pytest.raises(
        OpError,
        match=r"leaky_relu: attribute 'alpha': expected float64, at most 1.79769e\+308 in magnitude \(or inf, nan\), got int 1000000000000000000000000000000000000000\.\.\.000000000000 \(401 characters\)$",
    ):
        opspec.ops.leaky_relu(x, alpha=10**400)
    with pytest.raises(
        OpError,
        match=r"csr_rmatvec: attribute 'n': expected int64, from -9223372036854775808 to 9223372036854775807, got int 9223372036854775808$",
    ):
        opspec.ops.csr_rmatvec(x, np.zeros(3, np.int32), np.zeros(2, np.int32), x[:1], n=2**63)
    with pytest.raises(OpError, match=r"csr_rmatvec: attribute 'n': expected int64, got float nan$"):
        opspec.ops.csr_rmatvec(x, np.zeros(3, np.int32), np.zeros(2, np.int32), x[:1], n=float("nan"))
    with pytest.raises(
        OpError,
        match=r"^opspec.ops.add: input 'y': expected an array \(jax.Array, NumPy array, or a Python number or nested list of numbers\), got NoneType None$",
    ):
        opspec.ops.add(x, None)
    with pytest.raises(
        OpError,
        match=r"^opspec.ops.add: input 'x': expected an array .* got ShapeDtypeStruct .*call the op inside jax.eval_shape",
    ):
        opspec.ops.add(jax.ShapeDtypeStruct((3,), jnp.float32), x)
    # NumPy arrays of JAX's own float types, and lists of JAX arrays, are arrays.
    np.testing.assert_allclose(np.asarray(opspec.ops.relu(np.array([-1.0, 2.0], jnp.bfloat16)), np.float32), [0.0, 2.0])
    two = jax.jit(lambda a, b: opspec.ops.add([a, b], np.ones(2, np.float32)))(jnp.float32(1), jnp.float32(2))
    np.testing.assert_allclose(two, [2.0, 3.0])
    # What the message suggests works: an abstract call under eval_shape.
    sds = jax.ShapeDtypeStruct((3,), jnp.float32)
    assert jax.eval_shape(opspec.ops.add, sds, sds).shape == (3,)


# ---- output byte size -------------------------------------------------------------------


def csr(rows: int = 2, nnz: int = 3, dtype=np.float32) -> tuple:
    data = np.ones(nnz, dtype)
    indices = np.zeros(nnz, np.int32)
    indptr = np.array([0] + [nnz] * rows, np.int32)
    return data, indices, indptr, np.ones(rows, dtype)


@pytest.mark.parametrize("n", [2**61, 2**62, 2**63 - 1])
def test_an_attribute_that_makes_an_output_too_big_is_named(n):
    # jaxlib aborts the process on an output of 2**63 bytes or more (below, it reports
    # RESOURCE_EXHAUSTED: test_the_byte_bound_is_where_jaxlib_stops_aborting).
    with pytest.raises(
        OpError,
        match=rf"^opspec\.ops\.csr_rmatvec: attribute 'n': expected output 'x' \(float32\) of at most 2\*\*63 - 1 bytes, "
        rf"the most XLA can address, got n = {n}, output shape \({n},\) of {4 * n} bytes",
    ):
        opspec.ops.csr_rmatvec(*csr(), n=n)


def test_a_negative_dim_names_the_attribute():
    with pytest.raises(
        OpError,
        match=r"^opspec\.ops\.csr_rmatvec: attribute 'n': expected output 'x' dims of at least 0, got n = -1, output shape \(-1,\)",
    ):
        opspec.ops.csr_rmatvec(*csr(), n=-1)


@pytest.mark.parametrize("k", [-1, 2**62])
def test_a_literal_dim_beside_a_bad_one_still_names_the_attribute(k):
    # An output of shape [2, k]: the literal 2 reads no argument (it once failed with an
    # AttributeError while the error looked for the arguments its dims read).
    record = Op(
        name="pair_test",
        inputs=(Array("x", "float32", ("n",)),),
        outputs=(Array("out", "float32", (2, "k")),),
        types={},
        attrs=(Attr("k", "int64"),),
        vmap_method="native",
        aliases={},
    )
    with pytest.raises(OpError, match=rf"^opspec\.ops\.pair_test: attribute 'k': expected output 'out' .*got k = {k}"):
        call(record, (jnp.zeros(4, jnp.float32),), {"k": k})


def test_input_shapes_that_make_an_output_too_big_name_the_inputs():
    # No shipped op's output outgrows its inputs without an attribute: an outer product,
    # C[m, n] from A[m, k] and B[k, n], as a user package could declare it, whose two
    # empty inputs have dims that multiply past 2**63 bytes. Refused before compiling.
    record = Op(
        name="outer_test",
        inputs=(Array("A", "T", ("m", "k")), Array("B", "T", ("k", "n"))),
        outputs=(Array("C", "T", ("m", "n")),),
        types={"T": ("float32", "float64")},
        attrs=(),
        vmap_method="native",
        aliases={},
    )
    a = jnp.zeros((2**31, 0), jnp.float32)
    b = jnp.zeros((0, 2**32), jnp.float32)
    with pytest.raises(
        OpError,
        match=r"^opspec\.ops\.outer_test: input 'A', input 'B': expected output 'C' \(float32\) of at most 2\*\*63 - 1 bytes.*"
        r"got input 'A' giving m = 2147483648, input 'B' giving n = 4294967296, output shape \(2147483648, 4294967296\) of 36893488147419103232 bytes",
    ):
        call(record, (a, b), {})


def test_a_shape_expression_dividing_by_zero_names_the_attribute():
    # spec.md's block_mean: out has cdiv(n, block) elements, and block=0 divides by zero.
    record = Op(
        name="block_mean",
        inputs=(Array("x", "T", ("n",)),),
        outputs=(Array("out", "T", (lambda s: -(-(s["n"]) // (s["block"])),)),),
        types={"T": ("float32", "float64")},
        attrs=(Attr("block", "int32"),),
        vmap_method="sequential",
        aliases={},
    )
    with pytest.raises(
        OpError,
        match=r"^opspec\.ops\.block_mean: attribute 'block', input 'x': expected output 'out' shape expression "
        r"not to divide by zero, got block = 0, input 'x' giving n = 10",
    ):
        call(record, (np.ones(10, np.float32),), {"block": 0})


def test_a_vmap_that_makes_an_output_too_big_says_so():
    y = jnp.ones((2**10, 2), jnp.float32)
    data, indices, indptr, _ = csr()
    with pytest.raises(
        OpError,
        match=r"attribute 'n': .* got n = 2305843009213693951, vmap batch dims \(1024,\), output shape \(1024, 2305843009213693951\)",
    ):
        jax.vmap(lambda y: opspec.ops.csr_rmatvec(data, indices, indptr, y, n=2**61 - 1))(y)


def test_the_byte_bound_is_where_jaxlib_stops_aborting():
    # In a child process, which jaxlib may kill: just below the bound XLA fails cleanly
    # (RESOURCE_EXHAUSTED, the allocation is refused), at the bound opspec refuses first.
    code = textwrap.dedent(
        """
        import numpy as np, opspec
        d = np.ones(3, np.float32); i = np.zeros(3, np.int32); p = np.array([0, 3, 3], np.int32)
        for n in (2**61 - 1, 2**61):
            try:
                opspec.ops.csr_rmatvec(d, i, p, np.ones(2, np.float32), n=n).block_until_ready()
                print(n, "ran")
            except Exception as e:
                print(n, type(e).__name__, str(e)[:80])
        """
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=child_env())
    assert r.returncode == 0, r.stderr[-2000:]
    lines = r.stdout.splitlines()
    assert "RESOURCE_EXHAUSTED" in lines[0], r.stdout
    assert lines[1].startswith(f"{2**61} OpError opspec.ops.csr_rmatvec: attribute 'n'"), r.stdout


def child_env(extra_path: str = "") -> dict:
    env = dict(os.environ)
    paths = [p for p in (extra_path, *map(str, sys.path)) if p]
    env["PYTHONPATH"] = os.pathsep.join(paths)
    env.setdefault("JAX_PLATFORMS", "cpu")
    return env


# ---- a user package ---------------------------------------------------------------------


def test_every_bad_call_of_a_user_package_names_its_op(reading_package):
    import reading.ops

    n, ops = walk(reading.ops, "reading")
    assert ops == len(reading.ops.__all__) and n > 100
    print(f"reading: {n} bad calls over {ops} ops: all OpError naming reading.ops.<op> and argument")


def test_a_user_package_handler_error_names_the_package(reading_package):
    import reading

    # A raw call past the stub's checks (the package is built for CPU only), which the
    # handler refuses: its message starts with the package's name, not opspec's.
    cpu = jax.devices("cpu")[0]
    x, y = jax.device_put(jnp.ones(4, jnp.int32), cpu), jax.device_put(jnp.ones(4, jnp.float32), cpu)
    call = jax.ffi.ffi_call(reading.target_name("axpy"), jax.ShapeDtypeStruct((4,), jnp.float32))
    with pytest.raises(
        Exception, match=r"(^|: )reading axpy: input 'x': expected dtype float32 or float64 \(type T\), got int32"
    ):
        jax.block_until_ready(call(x, y, a=np.float64(2.0)))


# ---- interpreter shutdown -----------------------------------------------------------------

SHUTDOWN = """
import numpy as np, jax.numpy as jnp, opspec

x = jnp.ones(3, jnp.float32)
np.testing.assert_allclose(opspec.ops.add(x, x), 2 * np.ones(3))  # works before exit


class Late:
    def __init__(self, name, *args):
        # The namespace kept here: Python 3.12 may clear this module's globals (opspec
        # among them) before it frees these objects.
        self.ops, self.name, self.args = opspec.ops, name, args

    def __del__(self):
        try:
            y = getattr(self.ops, self.name)(*self.args)
            print(f"late {self.name} ran: {np.asarray(y).tolist()}", flush=True)
        except Exception as e:
            # Python clears the names of each module still referenced at exit (in reverse
            # order of import): a function of opspec.ops then finds None where it calls.
            cleared = "cleared: " if self.ops.__dict__.get("_call", 0) is None else ""
            print(f"late {self.name}: {cleared}{type(e).__name__}: {e}", flush=True)


# Freed while the interpreter shuts down: an op called before, and one never called
# (whose first call imported opspec._primitive lazily before issue 24).
warm, cold = Late("add", x, x), Late("relu", x)
"""


def test_an_op_called_at_shutdown_works_or_names_itself():
    r = subprocess.run([sys.executable, "-c", SHUTDOWN], capture_output=True, text=True, timeout=300, env=child_env())
    assert r.returncode == 0, r.stderr[-2000:]
    assert "Traceback" not in r.stderr, r.stderr[-2000:]
    lines = sorted(r.stdout.strip().splitlines())
    assert len(lines) == 2, r.stdout
    # JAX and NumPy import lazily inside a call, which Python refuses at shutdown: the call
    # cannot run (so on jax 0.10.2), and opspec says which op and why. Or Python cleared
    # opspec.ops's names first (seen once, Python 3.12.3 with jax 0.11.2 on a lent GPU
    # machine): the call fails before opspec runs, as docs/spec.md says.
    for name, line, want in zip(("add", "relu"), lines, ("[2.0, 2.0, 2.0]", "[1.0, 1.0, 1.0]")):
        if line != f"late {name} ran: {want}" and not line.startswith(f"late {name}: cleared: TypeError: "):
            assert line.startswith(
                f"late {name}: ShutdownError: opspec.ops.{name}: cannot run while the Python interpreter shuts down"
            ), line
    assert issubclass(ShutdownError, ImportError)
