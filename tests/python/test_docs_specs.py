"""The specs quoted in README.md and docs/ are the shipped ones: every ```yaml block that
starts with `# specs/<op>.yaml` must equal that file, comments and blank lines aside."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _code(text: str) -> list:
    lines = []
    for line in text.splitlines():
        # A comment starts at '#' outside quotes; the specs quote every '#' they contain.
        quoted, out = None, []
        for ch in line:
            if ch in "\"'" and quoted in (None, ch):
                quoted = None if quoted else ch
            if ch == "#" and not quoted:
                break
            out.append(ch)
        code = "".join(out).rstrip()
        if code:
            lines.append(code)
    return lines


def test_quoted_specs_are_the_shipped_ones():
    quoted = 0
    for doc in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for block in re.findall(r"```yaml\n(.*?)```", doc.read_text(), re.S):
            m = re.match(r"# (specs/\w+\.yaml)\n", block)
            if not m or not (ROOT / m.group(1)).exists():
                continue
            quoted += 1
            assert _code(block) == _code((ROOT / m.group(1)).read_text()), f"{doc.name} quotes {m.group(1)} out of date"
    assert quoted >= 5


def _generated_texts() -> list:
    folders = [ROOT / "generated", ROOT / "tests" / "golden", ROOT / "runtime", ROOT / "specs"]
    files = [p for folder in folders for p in folder.rglob("*") if p.is_file() and p.suffix != ".pyc"]
    return [_lstrip_lines(p.read_text()) for p in files]


def _lstrip_lines(text: str) -> str:
    """Indentation aside: a quote inside a list item, or of a body from a spec, is indented
    otherwise than its source."""
    return "\n".join(line.lstrip() for line in text.splitlines())


def test_quoted_generated_code_is_current():
    """Every ```c block of README.md and docs/ is generated or runtime code as it is now:
    the block's lines appear, in order, in one file of generated/, tests/golden/,
    runtime/, or a body in specs/ (`...` lines stand for omitted code). Only
    reviewing-generated-code.md's "Before and after" section quotes history."""
    texts = _generated_texts()
    stale = []
    for doc in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        text = doc.read_text()
        if doc.name == "reviewing-generated-code.md":
            start = text.index("## Before and after")
            text = text[:start] + text[text.index("\n## ", start + 1) :]
        for block in re.findall(r"```c\n(.*?)```", text, re.S):
            parts = [_lstrip_lines(p).strip("\n") for p in re.split(r"^\s*\.\.\.\s*$", block, flags=re.M) if p.strip()]
            if not any(_in_order(parts, t) for t in texts):
                stale.append(f"{doc.name}: {parts[0].splitlines()[0][:80]}")
    assert not stale, "quoted code differs from the generated or runtime code:\n" + "\n".join(stale)


def _in_order(parts: list, text: str) -> bool:
    at = 0
    for part in parts:
        at = text.find(part, at)
        if at < 0:
            return False
        at += len(part)
    return True
