"""opspec-gen --package refuses a name no package should take: a keyword, which no import
can name, and a module of the standard library, which the package would shadow for every
program of its environment (the rule `opspec new` keeps too; it also refuses a module
installed in its environment, which opspec-gen cannot know)."""

import keyword
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
GEN = os.path.abspath(
    os.environ.get("OPSPEC_GEN")
    or shutil.which("opspec-gen", path=os.path.dirname(sys.executable))
    or str(ROOT / "build" / "generator" / "opspec-gen")
)

pytestmark = pytest.mark.skipif(not os.path.exists(GEN), reason="opspec-gen not built (OPSPEC_REGENERATE=OFF)")


def check(package: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [GEN, "--check", "--package", package, "specs/sum.yaml"], cwd=ROOT, capture_output=True, text=True
    )


@pytest.mark.parametrize("name", ["class", "import", "None", "async"])
def test_a_keyword_is_refused(name):
    assert keyword.iskeyword(name)
    r = check(name)
    assert r.returncode == 2
    assert f"opspec-gen: error: --package '{name}' is a Python keyword" in r.stderr


def test_every_standard_library_module_is_refused():
    """Every top-level module this Python's standard library has (sys.stdlib_module_names),
    so the list built into opspec-gen is held to the Python that runs the tests."""
    accepted = [n for n in sorted(sys.stdlib_module_names) if check(n).returncode != 2]
    assert accepted == []
    r = check("encodings")
    assert "--package 'encodings' is a module of Python's standard library: a package of that name would shadow it" in (
        r.stderr
    )


@pytest.mark.parametrize("name", ["myops", "match", "opspec", "json5", "pinned"])
def test_other_names_are_taken(name):
    r = check(name)
    assert r.returncode == 0, r.stderr
