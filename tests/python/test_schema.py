"""The JSON Schema of a spec (opspec-gen --schema, shipped as opspec/spec.schema.json):
every shipped spec validates, a typo'd key does not, and its keys are exactly the ones
the loader's own "unknown key ... (expected one of: ...)" messages list, context by
context, so it cannot drift from the generator."""

import json
import pathlib
import re
import subprocess
import sys

import pytest
from test_generator import GEN, ROOT, gen

jsonschema = pytest.importorskip("jsonschema")
yaml = pytest.importorskip("yaml")

pytestmark = pytest.mark.skipif(not pathlib.Path(GEN).exists(), reason="opspec-gen not built (OPSPEC_REGENERATE=OFF)")

SHIPPED = sorted([*(ROOT / "specs").glob("*.yaml"), *(ROOT / "examples" / "user_project" / "specs").glob("*.yaml")])


@pytest.fixture(scope="module")
def schema():
    r = gen("--schema")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def load(text: str):
    # Every scalar a string, as opspec-gen reads them (YAML 1.1's yes/no/on/off would
    # otherwise become booleans).
    return yaml.load(text, Loader=yaml.BaseLoader)


def errors(schema, text: str) -> list:
    validator = jsonschema.Draft7Validator(schema)
    return sorted(validator.iter_errors(load(text)), key=lambda e: list(e.absolute_path))


def test_the_schema_is_a_draft7_schema_and_ships_in_the_package(schema):
    jsonschema.Draft7Validator.check_schema(schema)
    r = subprocess.run([sys.executable, "-m", "opspec", "schema", "--path"], capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip("this opspec ships no schema: " + r.stderr.strip())
    shipped = pathlib.Path(r.stdout.strip())
    assert shipped.name == "spec.schema.json"
    assert json.loads(shipped.read_text()) == schema
    r = subprocess.run([sys.executable, "-m", "opspec", "schema"], capture_output=True, text=True)
    assert r.returncode == 0 and json.loads(r.stdout) == schema


@pytest.mark.parametrize("spec", SHIPPED, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_shipped_spec_validates(schema, spec):
    assert errors(schema, spec.read_text()) == []


def test_a_typo_is_rejected_by_the_schema_and_by_the_loader(schema, tmp_path):
    text = (ROOT / "specs" / "add.yaml").read_text()
    typo = text.replace("kernel: |", "kernal: |").replace("{name: y, dtype: T,", "{name: y, dtpye: T,")
    found = errors(schema, typo)
    messages = [(list(e.absolute_path), e.message) for e in found]
    print("\n".join(f"{'/'.join(map(str, p)) or '<root>'}: {m}" for p, m in messages))
    assert ([], "Additional properties are not allowed ('kernal' was unexpected)") in messages
    assert (["inputs", 1], "Additional properties are not allowed ('dtpye' was unexpected)") in messages
    assert (["inputs", 1], "'dtype' is a required property") in messages
    (tmp_path / "add.yaml").write_text(typo)
    r = gen("--check", str(tmp_path / "add.yaml"))
    assert "error: unknown key 'kernal' in spec" in r.stderr and "error: unknown key 'dtpye' in input" in r.stderr
    # Values from the generator's tables.
    assert errors(schema, text.replace("types: {T: [", "types: {T: [flaot32, "))
    assert errors(schema, text + "vmap: sideways\n")
    assert errors(schema, text.replace('x: {elementwise: "1"}', 'x: {elementwise: "1", jvp: "x_dot"}'))


# One unknown key per context: the loader answers with every key it takes there.
PROBE = """\
op: probe
typo_spec: 1
inputs:
  - {name: x, dtype: float32, shape: [n], typo_input: 1, check: {min: 0, typo_check: 1}}
outputs:
  - {name: y, dtype: float32, shape: [n], typo_output: 1}
scratch:
  - {name: s, dtype: float32, shape: [n], typo_scratch_buffer: 1}
attrs:
  - {name: a, type: float64, typo_attribute: 1}
cuda:
  - {name: k, body: ";", typo_cuda_kernel: 1}
"""


def test_the_schema_has_exactly_the_keys_the_loader_takes(schema, tmp_path):
    (tmp_path / "probe.yaml").write_text(PROBE)
    r = gen("--check", "--max-errors", "0", str(tmp_path / "probe.yaml"))
    found = re.findall(r"unknown key 'typo_(\w+)' in [\w ]+ \(expected one of: ([\w, ]+)\)", r.stderr)
    assert len(found) == 7, r.stderr
    for context, listed in found:
        where = schema if context == "spec" else schema["definitions"][context]
        assert sorted(where["properties"]) == sorted(listed.split(", ")), context
    assert set(schema["definitions"]) == {c for c, _ in found} - {"spec"}


def test_the_spec_opspec_new_writes_validates(schema):
    from opspec import _scaffold

    text = _scaffold.files("mypkg")["specs/scaled_add.yaml"]
    assert errors(schema, text) == []
