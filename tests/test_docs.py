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
# The pages of the documentation site (mkdocs.yml): their examples run as the README's do.
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def python_blocks() -> list[tuple[str, str]]:
    """`(file, block)` for every Python code block of the README and the site's pages."""
    return [
        (str(page.relative_to(ROOT)), block)
        for page in PAGES
        for block in re.findall(r"```python\n(.*?)```", page.read_text("utf-8"), re.S)
    ]


@pytest.mark.parametrize(
    ("page", "block"),
    python_blocks(),
    ids=lambda value: value if value.endswith(".md") else value.split("\n")[0],
)
def test_python_examples_run(page: str, block: str, tmp_path, monkeypatch):
    for variable in ("XDG_DATA_HOME", "XDG_CONFIG_HOME", "ATIP_CACHE_DIR"):
        monkeypatch.setenv(variable, str(tmp_path / variable))  # not the user's registry
    monkeypatch.chdir(ROOT)
    exec(compile(block, page, "exec"), {})


def test_every_guide_has_examples():
    guides = sorted((ROOT / "docs" / "guides").glob("*.md"))
    assert len(guides) == 3
    assert {page for page, _ in python_blocks()} >= {str(g.relative_to(ROOT)) for g in guides}


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
    # not codes: file names, and where an MCP tool's own arguments go wrong
    return codes - {"model.invalid", "schema.json", "policy.json", "arguments.options"}


def test_every_problem_code_is_documented():
    page = (ROOT / "docs/reference/problem-codes.md").read_text("utf-8")
    codes = emitted_codes()
    assert len(codes) > 40
    missing = sorted(c for c in codes if f"`{c}`" not in page)
    assert not missing


def test_ruff_is_clean():
    ruff = shutil.which("ruff")
    if ruff is None:
        pytest.skip("ruff is not installed (it comes with the test extra)")
    result = subprocess.run(
        [ruff, "check", "src", "tests", "bench", "examples", "docs"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout
