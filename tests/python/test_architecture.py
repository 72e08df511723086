"""docs/architecture.md against the code: every folder of generator/, every key of the
spec's JSON Schema (from the opspec-gen the tests use), every file of runtime/src and
runtime/python/opspec and every template is named there, every repository path it names
exists, the C functions its steps name are in the files those steps name, and the
walk-through of `check:` with `in_kernel` stays within 15 files. The checks are
functions of the doc's text, so the last test can show that each one catches a doc that
drifted."""

import glob
import json
import os
import re

import pytest
from test_generator import GEN, ROOT, gen

DOC = ROOT / "docs" / "architecture.md"
WALK_LIMIT = 15  # issue 28: a newcomer follows `check:` + `in_kernel` through at most 15 files

needs_gen = pytest.mark.skipif(not os.path.exists(GEN), reason="opspec-gen not built (OPSPEC_REGENERATE=OFF)")


def section(text: str, title: str) -> str:
    """The text under the `## <title>...` heading, up to the next `## ` heading."""
    m = re.search(rf"^## {re.escape(title)}.*?$(.*?)(?=^## |\Z)", text, re.M | re.S)
    assert m, f"docs/architecture.md has no section '## {title}'"
    return m.group(1)


def named_paths(text: str) -> set[str]:
    """Every repository path in backticks: a token of path characters with a '/', where
    `<name>` and `*` stand for any part of a name (`generated/ops/<op>_ffi.c`)."""
    spans = re.findall(r"`([^`\n]+)`", text)
    return {s for s in spans if "/" in s and re.fullmatch(r"[\w.\-/<>*]+", s) and not s.startswith("/")}


def missing_paths(text: str) -> list[str]:
    missing = []
    for path in sorted(named_paths(text)):
        pattern = re.sub(r"<[^>]*>", "*", path)  # a glob
        if not glob.glob(str(ROOT / pattern.rstrip("/"))) or (path.endswith("/") and not (ROOT / path).is_dir()):
            missing.append(path)
    return missing


def key_rows(text: str) -> list[str]:
    """The keys of the spec keys table: the first cell of each row, in backticks."""
    return re.findall(r"^\| `([^`]+)` \|", section(text, "Spec keys"), re.M)


def schema_keys(schema: dict) -> set[str]:
    """Every key of the schema: top-level keys bare, a definition's keys as
    `definition.key`, a key nested in another's value as `outer.key`."""
    keys: set[str] = set()

    def walk(node, prefix: str) -> None:
        if isinstance(node, list):
            for item in node:
                walk(item, prefix)
            return
        if not isinstance(node, dict):
            return
        for word, value in node.items():
            if word == "properties":
                for key, sub in value.items():
                    name = f"{prefix}.{key}" if prefix else key
                    keys.add(name)
                    walk(sub, name)
            elif word in ("$defs", "definitions"):
                for definition, sub in value.items():
                    walk(sub, definition)
            elif word not in ("enum", "required", "const", "default"):
                walk(value, prefix)

    walk(schema, "")
    return keys


def generator_folders() -> list[str]:
    return sorted(p.name for p in (ROOT / "generator").iterdir() if p.is_dir() and not p.name.startswith((".", "_")))


def unnamed_generator_folders(text: str) -> list[str]:
    return [f for f in generator_folders() if f"`generator/{f}/`" not in text]


def runtime_files() -> list[str]:
    files = [*(ROOT / "runtime" / "src").iterdir(), *(ROOT / "runtime" / "python" / "opspec").glob("*.py*")]
    files += (ROOT / "templates").glob("*.tmpl")
    return sorted(str(p.relative_to(ROOT)) for p in files if p.is_file())


def unnamed_runtime_files(text: str) -> list[str]:
    named = named_paths(text)
    return [f for f in runtime_files() if f not in named]


def walk_files(text: str) -> set[str]:
    return named_paths(section(text, "Walk-through"))


def unheld_names(text: str) -> list[str]:
    """The C names (og_*, opspec_*) a numbered step of the call path or the walk-through
    names that none of the files the same step names holds: a renamed function."""
    unheld = []
    for title in ("A call", "Walk-through"):
        for step in re.findall(r"^\d+\. (.*?)(?=^\d+\. |\Z)", section(text, title), re.M | re.S):
            files = [ROOT / p for p in named_paths(step) if (ROOT / p).is_file()]
            sources = "".join(f.read_text() for f in files)
            for name in re.findall(r"`((?:og|opspec)_\w+)(?:\(\))?`", step):
                if name not in sources:
                    unheld.append(name)
    return unheld


@pytest.fixture(scope="module")
def doc() -> str:
    return DOC.read_text()


@pytest.fixture(scope="module")
def schema() -> dict:
    r = gen("--schema")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_every_generator_folder_is_named(doc):
    assert unnamed_generator_folders(doc) == []


@needs_gen
def test_every_schema_key_is_a_row_of_the_keys_table(doc, schema):
    keys = schema_keys(schema)
    assert {"op", "inputs", "check.in_kernel", "cuda_kernel.shared_mem", "derivatives.jvp"} <= keys  # the walk works
    rows = key_rows(doc)
    assert len(rows) == len(set(rows)), "a key has two rows"
    assert sorted(keys - set(rows)) == [], "keys of the schema without a row"
    assert sorted(set(rows) - keys) == [], "rows for keys the schema does not have"


def test_every_named_path_exists(doc):
    assert len(named_paths(doc)) > 50
    assert missing_paths(doc) == []


def test_every_runtime_file_and_template_is_named(doc):
    assert unnamed_runtime_files(doc) == []


def test_the_in_kernel_walk_through_is_short_and_spans_the_stages(doc):
    files = walk_files(doc)
    assert 0 < len(files) <= WALK_LIMIT, sorted(files)
    for stage in ("generator/load/", "generator/check/", "generator/plan/", "generator/render/", "runtime/src/"):
        assert any(f.startswith(stage) for f in files), stage


def test_the_steps_name_what_their_files_hold(doc):
    assert unheld_names(doc) == []


def test_the_checks_catch_a_drifted_doc(doc):
    """Each check above fails on a copy of the doc that drifted from the code: what it
    reports for the copy, beyond what it reports for the doc, is the drift."""

    def drift(check, copy: str) -> set:
        return set(check(copy)) - set(check(doc))

    # A generator folder the doc no longer names.
    for folder in generator_folders()[:1]:
        assert drift(unnamed_generator_folders, doc.replace(f"`generator/{folder}/`", "`generator/`")) == {folder}
    # A key whose row is gone, and a row for a key that does not exist.
    assert drift(lambda t: set(key_rows(doc)) - set(key_rows(t)), doc.replace("| `check.in_kernel` |", "| x |")) == {
        "check.in_kernel"
    }
    assert drift(key_rows, doc.replace("| `check.sorted` |", "| `check.typo` |")) == {"check.typo"}
    # A path that does not exist, with and without a placeholder.
    copy = doc + "\n`runtime/src/no_such_file.c` `generated/ops/<op>_nothing.c` `generator/nowhere/`\n"
    assert drift(missing_paths, copy) == {
        "generated/ops/<op>_nothing.c",
        "generator/nowhere/",
        "runtime/src/no_such_file.c",
    }
    # A runtime file or template the doc does not name.
    assert drift(unnamed_runtime_files, doc.replace("`runtime/src/handler.c`", "handler.c")) == {
        "runtime/src/handler.c"
    }
    # A function the walk-through names that its file no longer holds.
    assert drift(unheld_names, doc.replace("`og_load_check`", "`og_load_checks`")) == {"og_load_checks"}
    # A walk-through past the limit.
    heading = "## Walk-through: `check:` with `in_kernel`"
    extra = "".join(f"\n- `tests/python/file_{i}.py`" for i in range(WALK_LIMIT + 1))
    assert len(walk_files(doc.replace(heading, heading + extra))) > WALK_LIMIT
