"""The documentation site's generated reference (docs/hooks/reference.py) says what the
code does: the CLI reference is `atip COMMAND --help` of every command, run as a real
process, and the error reference holds every exit status and code the code defines.
(`mkdocs build --strict` itself runs in .ci/run, with the docs extra.)"""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from functools import cache
from pathlib import Path
from types import ModuleType

import pytest

from tests.helpers import atip_run, machine_env

ROOT = Path(__file__).parent.parent


@cache
def hook() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "docs_reference", ROOT / "docs/hooks/reference.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


_SECTION = re.compile(r"^## (atip(?: [^\n]+)?)\n\n(`{3,})text\n(.*?)^\2$", re.M | re.S)


@cache
def cli_sections() -> dict[str, str]:
    """The generated page, read back: each `## atip ...` heading and its code block."""
    page = hook().cli_reference()
    sections = {name: text for name, _, text in _SECTION.findall(page)}
    assert len(sections) == page.count("\n## ")
    return sections


@pytest.mark.parametrize("command", sorted(cli_sections()))
def test_cli_reference_is_the_commands_help(command: str, tmp_path):
    done = atip_run(machine_env(tmp_path, COLUMNS="80"), *command.split()[1:], "--help")
    assert done.returncode == 0, done.stderr
    assert cli_sections()[command] == done.stdout


def _listed(help_text: str) -> list[str]:
    """The commands a group's `--help` lists under `Commands:`."""
    block = help_text.partition("\nCommands:\n")[2]
    return [line.split()[0] for line in block.splitlines() if line.startswith("  ")]


def test_cli_reference_has_every_command_help_lists():
    sections = cli_sections()
    groups = {name: _listed(text) for name, text in sections.items() if "\nCommands:\n" in text}
    assert {"atip", "atip registry", "atip shim"} <= set(groups)
    expected = {"atip"} | {f"{group} {child}" for group, kids in groups.items() for child in kids}
    assert set(sections) == expected


def test_errors_reference_has_every_status_and_code():
    from atipkit.app.errors import ExitCode, ToolError
    from atipkit.errors import ErrorCode

    page = hook().errors_reference()
    statuses = {v for k, v in vars(ExitCode).items() if k.isupper()}
    assert len(statuses) >= 10
    for status in statuses:
        assert re.search(rf"^\| {status} \| `[A-Z_]+` \| [^|]+ \| [^|]+ \|$", page, re.M), status
    assert f"| `{ToolError.__name__}` | `{ToolError.default_code}` |" in page
    assert len(ErrorCode) >= 27
    for code in ErrorCode:
        row = re.search(rf"^\| `{code.value}` \| `{code.name}` \| (.+) \|$", page, re.M)
        assert row is not None, code
        assert row.group(1).strip(), code  # with its meaning


def test_api_reference_is_the_packages_that_declare_their_api():
    modules = hook().api_modules()
    assert modules[0] == "atipkit"
    for name in ("atipkit.app", "atipkit.bridge", "atipkit.search", "atipkit.execute"):
        assert name in modules
    for lazy in ("atipkit.registry", "atipkit.trust", "atipkit.introspect"):  # no __all__
        assert lazy in modules
    assert "atipkit.cli" not in modules  # the command, not an API
    for module in modules:
        assert f"::: {module}\n" in hook().api_page(module)
    # griffe reads no __all__ of a lazy package: its page lists the names for it
    assert "        - scan\n" in hook().api_page("atipkit")
    assert "        - App\n" in hook().api_page("atipkit.app")
    assert "members" not in hook().api_page("atipkit.bridge")


def test_errors_reference_leads_to_the_problem_codes():
    """The problem codes are a page written by hand (no code holds their meanings); the
    generated page links to it, and the link is one the strict build resolves."""
    page = hook().errors_reference()
    assert "](problem-codes.md)" in page
    assert (ROOT / "docs/reference/problem-codes.md").is_file()


def test_the_hook_writes_the_code_pages_from_a_fresh_process(tmp_path):
    done = subprocess.run(
        [sys.executable, str(ROOT / "docs/hooks/reference.py")],
        env=machine_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    pages = json.loads(done.stdout)
    assert pages == hook().generated_pages()
    assert set(pages) == {"reference/cli.md", "reference/errors.md"}
