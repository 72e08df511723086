"""The opspec package's own imports: no cycles among its modules, and none inside a
function (a call must run no import statement of opspec's: at interpreter shutdown Python
can no longer import, and a function-level import is how a cycle hides)."""

import ast
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
# The hand-written modules, and the generated ones the build puts beside them (ops, _tables).
FOLDERS = (ROOT / "runtime" / "python" / "opspec", ROOT / "generated" / "python")


def sources() -> dict:
    """Module name ("opspec", "opspec._spec", ...) -> its source, from the source tree."""
    out = {}
    for path in sorted(p for folder in FOLDERS for p in folder.glob("*.py")):
        name = "opspec" if path.stem == "__init__" else f"opspec.{path.stem}"
        out[name] = path.read_text(encoding="utf-8")
    return out


def _targets(node: ast.AST, known: set) -> list:
    """The modules of `known` that import statement `node` loads."""
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    elif isinstance(node, ast.ImportFrom):
        if node.level:  # relative: opspec has none, and this would miss one
            return ["opspec.<relative>"]
        base = node.module or ""
        # `from opspec import _a` loads the submodule _a; `from opspec import name`, the
        # package's __init__ (which every submodule's import runs first anyway).
        submodules = [f"{base}.{alias.name}" for alias in node.names if f"{base}.{alias.name}" in known]
        names = submodules if base == "opspec" and len(submodules) == len(node.names) else [base, *submodules]
    else:
        return []
    return [n for n in names if n in known or n == "opspec"]


def import_graph(modules: dict) -> tuple:
    """(edges: module -> set of opspec modules it imports at module level,
    nested: [(module, line, target)] for imports of opspec modules inside a function)."""
    known = set(modules)
    edges: dict = {name: set() for name in modules}
    nested: list = []
    for name, text in modules.items():
        tree = ast.parse(text)
        functions = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))]
        inside = {id(n) for f in functions for n in ast.walk(f) if n is not f}
        for node in ast.walk(tree):
            for target in _targets(node, known):
                if id(node) in inside:
                    nested.append((name, node.lineno, target))
                elif target != name:
                    edges[name].add(target)
    return edges, nested


def find_cycle(edges: dict) -> list:
    """One import cycle as [a, b, ..., a], or []."""
    state: dict = {}  # module -> "open" while on the path, "done" after
    path: list = []

    def visit(module: str) -> list:
        state[module] = "open"
        path.append(module)
        for nxt in sorted(edges.get(module, ())):
            if state.get(nxt) == "open":
                return path[path.index(nxt) :] + [nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        path.pop()
        state[module] = "done"
        return []

    for module in sorted(edges):
        if module not in state:
            found = visit(module)
            if found:
                return found
    return []


def test_the_package_has_no_import_cycle():
    edges, _ = import_graph(sources())
    assert len(edges) > 10, edges  # the package's modules were found
    cycle = find_cycle(edges)
    assert not cycle, f"import cycle: {' -> '.join(cycle)}"


def test_the_package_imports_nothing_of_its_own_inside_a_function():
    _, nested = import_graph(sources())
    assert not nested, "function-level imports of opspec modules: " + ", ".join(
        f"{module}:{line} imports {target}" for module, line, target in nested
    )


def test_the_bottom_module_imports_nothing_of_opspec():
    edges, _ = import_graph(sources())
    assert edges["opspec._spec"] == set()


def test_the_detector_finds_a_planted_cycle_and_a_nested_import():
    planted = {
        "opspec": "from opspec import _a\n",
        "opspec._a": "from opspec._b import thing\n",
        "opspec._b": "import numpy\nfrom opspec import _c\n",
        "opspec._c": "def late():\n    from opspec import _a\n",
    }
    edges, nested = import_graph(planted)
    assert find_cycle(edges) == []  # _c's import of _a is in a function: not an edge
    assert nested == [("opspec._c", 2, "opspec._a")]
    planted["opspec._c"] = "import opspec._a\n"
    edges, _ = import_graph(planted)
    assert find_cycle(edges) == ["opspec._a", "opspec._b", "opspec._c", "opspec._a"]


@pytest.mark.parametrize("text", ["from opspec import _a\n", "import opspec._a as a\n", "from opspec._a import x\n"])
def test_the_detector_reads_every_form_of_import(text):
    edges, _ = import_graph({"opspec._a": "", "opspec._b": text})
    assert edges["opspec._b"] == {"opspec._a"}
