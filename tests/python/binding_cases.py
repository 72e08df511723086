"""Shape and dtype binding: the one table of cases that both layers must agree on.

Binding is implemented once in C (runtime/src/ffi.c: opspec_bind_inputs) and mirrored
in Python at trace time (opspec/_bind.py: bind), which must reject exactly
the calls the handler would, with a message about the same argument and the same
fact. test_binding.py runs every case against both.

A case: (op, inputs as (shape, dtype) pairs, attributes, expected). `expected` is None
for a call both accept, else (the argument named, a phrase both messages contain,
the C message's own phrase, the Python message's own phrase).
"""

F32, F64, I32 = "float32", "float64", "int32"

CASES = [
    # Element-wise: '...' binds the leading dims of the first input.
    ("add", [((3,), F32), ((3,), F32)], {}, None),
    ("add", [((2, 5), F64), ((2, 5), F64)], {}, None),
    ("add", [((2, 3), F32), ((3, 2), F32)], {}, ("input 'y'", "leading dims ('...')", "", "")),
    ("add", [((3,), F32), ((3,), F64)], {}, ("input 'y'", "expected dtype float32", "", "")),
    (
        "add",
        [((3,), I32), ((3,), I32)],
        {},
        ("input 'x'", "expected dtype float32 or float64 or float16 or bfloat16 (type T)", "", ""),
    ),
    # Symbols: the first input that has a symbol binds it.
    ("matvec", [((2, 3), F32), ((3,), F32)], {}, None),
    ("matvec", [((2, 3), F32), ((4,), F32)], {}, ("input 'x'", "dim 0 (cols) is 4, but cols = 3", "", "")),
    ("matvec", [((3,), F32), ((3,), F32)], {}, ("input 'A'", "expected rank 2", "", "")),
    ("matvec", [((2, 3, 1), F32), ((3,), F32)], {}, ("input 'A'", "expected rank 2", "", "")),
    # Fixed dims.
    ("scale", [((4,), F64), ((1,), F64)], {}, None),
    ("scale", [((4,), F64), ((2,), F64)], {}, ("input 's'", "dim 0 should be 1, got 2", "", "")),
    # A concrete dtype beside a type variable; several symbols.
    ("csr_matvec", [((5,), F32), ((5,), I32), ((3,), I32), ((4,), F32)], {}, None),
    (
        "csr_matvec",
        [((5,), F32), ((5,), F32), ((3,), I32), ((4,), F32)],
        {},
        ("input 'indices'", "expected dtype int32", "", ""),
    ),
    (
        "csr_matvec",
        [((5,), F32), ((6,), I32), ((3,), I32), ((4,), F32)],
        {},
        ("input 'indices'", "dim 0 (nnz) is 6, but nnz = 5", "", ""),
    ),
    (
        "csr_matvec",
        [((5,), F64), ((5,), I32), ((3,), I32), ((4,), F32)],
        {},
        ("input 'x'", "expected dtype float64", "", ""),
    ),
    # Zero-size dims bind like any other.
    ("add", [((0,), F32), ((0,), F32)], {}, None),
    ("matvec", [((0, 3), F32), ((3,), F32)], {}, None),
    # Rank 0 ('...' of no dims).
    ("add", [((), F32), ((), F32)], {}, None),
    ("add", [((), F32), ((1,), F32)], {}, ("input 'y'", "leading dims ('...')", "", "")),
]
