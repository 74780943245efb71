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
def test_readme_python_examples_run(block: str, tmp_path, monkeypatch):
    for variable in ("XDG_DATA_HOME", "XDG_CONFIG_HOME", "ATIP_CACHE_DIR"):
        monkeypatch.setenv(variable, str(tmp_path / variable))  # not the user's registry
    monkeypatch.chdir(ROOT)
    exec(compile(block, "README.md", "exec"), {})


FAMILIES = (
    "json",
    "io",
    "schema",
    "version",
    "features",
    "binary",
    "trust",
    "flags",
    "options",
    "arguments",
    "enum",
    "default",
    "description",
    "effects",
    "auth",
    "command",
    "partial",
    "pattern",
    "openai",
    "anthropic",
    "policy",
)
CODE = re.compile(r'"((?:' + "|".join(FAMILIES) + r')\.[a-z-]+)"')


def emitted_codes() -> set[str]:
    codes: set[str] = set()
    for path in SOURCES:
        codes |= set(CODE.findall(path.read_text("utf-8")))
    # not codes: a file name, and where an MCP tool's own arguments go wrong
    return codes - {"model.invalid", "schema.json", "arguments.options"}


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
        [ruff, "check", "src", "tests", "bench", "examples"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout
