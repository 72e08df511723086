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
