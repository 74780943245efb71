"""The hostile-executable corpus (tests/fixtures/hostile, its README says what each
entry does): written out as executables for one scan, with the test's marker, listener
ports and directories in place of the templates' placeholders."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import NamedTuple

from tests.helpers import minimal

TEMPLATES = Path(__file__).parent / "fixtures" / "hostile"


class Corpus(NamedTuple):
    bin: Path
    expect: dict[str, set[str]]
    """Each entry's expected outcome: {"found"}, {"stealer"}, or the probe failure kinds
    it may end with."""

    @property
    def good(self) -> list[str]:
        return sorted(n for n, e in self.expect.items() if e == {"found"})

    @property
    def stealers(self) -> list[str]:
        return sorted(n for n, e in self.expect.items() if e == {"stealer"})

    @property
    def hostile(self) -> list[str]:
        return sorted(n for n, e in self.expect.items() if e - {"found", "stealer"})


def build(root: Path, *, mark: str, port: int, port6: int, home: Path, outside: Path) -> Corpus:
    """Write the corpus into `root/bin-<mark>` (the marker in every path, so that every
    process running one of them carries it)."""
    bin_dir = root / f"bin-{mark}"
    bin_dir.mkdir(mode=0o755)
    expect = {}
    for template in sorted(TEMPLATES.iterdir()):
        if template.name == "README.md":
            continue
        text = template.read_text()
        found = re.search(r"^# expect: (.+)$", text, re.MULTILINE)
        assert found, template
        expect[template.name] = set(found.group(1).split("|"))
        name = template.name
        text = re.sub(
            r"@DOC(?::([\w-]+))?@",
            lambda m, name=name: json.dumps(minimal(name=m.group(1) or name)),
            text,
        )
        replacements = {
            "@PYDOC@": repr(minimal(name=template.name)),
            # the interpreter itself, not a venv's link to it: a venv under /tmp or
            # $HOME is hidden in the sandbox, and the programs need only the stdlib
            "@PY@": os.path.realpath(sys.executable),
            "@MARK@": mark,
            "@PORT@": str(port),
            "@PORT6@": str(port6),
            "@HOME@": str(home),
            "@OUTSIDE@": str(outside),
        }
        for placeholder, value in replacements.items():
            text = text.replace(placeholder, value)
        path = bin_dir / template.name
        path.write_text(text)
        path.chmod(0o755)
    return Corpus(bin_dir, expect)
