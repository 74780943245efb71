"""The README is part of the product: its examples run, its code table is complete, and
the code it describes is lint-clean."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent
README = (ROOT / "README.md").read_text("utf-8")
SOURCES = list((ROOT / "src" / "atipkit").rglob("*.py"))


@pytest.mark.parametrize(
    "block", re.findall(r"```python\n(.*?)```", README, re.S), ids=lambda b: b.split("\n")[0]
)
def test_readme_python_examples_run(block: str):
    exec(compile(block, "README.md", "exec"), {})


def emitted_codes() -> set[str]:
    codes: set[str] = set()
    for path in SOURCES:
        text = path.read_text("utf-8")
        codes |= set(re.findall(r'(?:error|warning|make)\(\s*"([a-z-]+\.[a-z-]+)"', text))
        codes |= set(re.findall(r'^\s+"([a-z-]+\.[a-z-]+)",$', text, re.M))
    return codes - {"model.invalid"}  # only if schema and model disagree: a bug, not a code


def test_every_problem_code_is_documented():
    codes = emitted_codes()
    assert len(codes) > 40
    missing = sorted(c for c in codes if f"`{c}`" not in README)
    assert not missing


def test_ruff_is_clean():
    ruff = shutil.which("ruff")
    if ruff is None:
        pytest.skip("ruff is not installed (it comes with the test extra)")
    result = subprocess.run(
        [ruff, "check", "src", "tests", "bench"], cwd=ROOT, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout
