"""The site's reference pages, generated at build time from the code, so they cannot drift.

An MkDocs hook (`hooks:` in mkdocs.yml): `on_config` fills the nav's API section and
`on_files` adds the generated pages, those read from the running code written by this file
run as a script in a fresh process. Each page is read from the one place its facts live:

- reference/cli.md: `atip COMMAND --help` of every command, captured by running the very
  command tree `atip` runs (`atipkit.cli.app`), at the width a pipe gets (80 columns);
- reference/errors.md: the exit statuses (`atipkit.app.docs.facts.exit_codes`, which reads
  `ExitCode`), the `ToolError` classes with their codes, and every error code (the
  members of `atipkit.errors.ErrorCode` and their meanings); the problem codes of
  documents, compiles and policies are a page of their own, reference/problem-codes.md;
- reference/api/*.md: one mkdocstrings page for `atipkit` and for each package whose
  `__init__` declares `__all__` (its public API).

The functions are plain, so tests/test_docs_site.py imports this file and checks the CLI
reference against `atip COMMAND --help` run as a real process.
"""

from __future__ import annotations

import ast
import contextlib
import io
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click

SRC = Path(__file__).resolve().parents[2] / "src"
HELP_COLUMNS = "80"
"""What `--help` is wrapped to: a pipe's width, as `atip COMMAND --help | less` shows it."""


# The CLI reference ---------------------------------------------------------------------


def command_paths() -> list[tuple[str, ...]]:
    """Every command `atip --help` lists, depth first, in `--help`'s order; `()` is atip."""
    from atipkit.cli import cli

    def walk(
        command: click.Command, path: tuple[str, ...], ctx: click.Context
    ) -> Iterator[tuple[str, ...]]:
        yield path
        if isinstance(command, click.Group):
            for name in command.list_commands(ctx):
                child = command.get_command(ctx, name)
                if child is not None and not child.hidden:
                    yield from walk(child, (*path, name), click.Context(child, ctx, name))

    return list(walk(cli, (), click.Context(cli, info_name="atip")))


def help_text(path: tuple[str, ...]) -> str:
    """`atip PATH --help` as a pipe gets it, run in this process through `App.main`."""
    from atipkit.cli import app

    out = io.StringIO()
    saved = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = HELP_COLUMNS
    try:
        with contextlib.redirect_stdout(out):
            status = app.main([*path, "--help"])
    finally:
        if saved is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = saved
    if status != 0:
        raise RuntimeError(f"atip {' '.join(path)} --help exited {status}")
    return out.getvalue()


def _fenced(text: str) -> list[str]:
    from atipkit.app.docs.markdown import _fenced as fenced  # the fence outlasts the text's

    return fenced(text, "text")


def cli_reference() -> str:
    """The page: one section a command, its `--help` verbatim."""
    lines = [
        "# CLI reference",
        "",
        "Every command of `atip`, as `atip COMMAND --help` prints it. This page is generated "
        "when the site is built, from the command tree `atip` runs, and a test compares it "
        "with the real command's output: it cannot drift. For the exit statuses and error "
        "codes see [Exit statuses and error codes](errors.md).",
    ]
    for path in command_paths():
        lines += ["", f"## {' '.join(('atip', *path))}", "", *_fenced(help_text(path))]
    return "\n".join(lines) + "\n"


# Exit statuses and error codes ---------------------------------------------------------


def _cell(text: str) -> str:
    from atipkit.app.docs.markdown import _cell as cell  # one line, `|` escaped

    return cell(text)


def _first_paragraph(doc: str | None) -> str:
    return _cell((doc or "").strip().split("\n\n")[0])


def _tool_errors() -> list[type]:
    """`ToolError` and its public subclasses, depth first: each parent before its own."""
    from atipkit.app.errors import ToolError

    def walk(cls: type) -> Iterator[type]:
        yield cls
        for sub in cls.__subclasses__():
            if not sub.__name__.startswith("_"):
                yield from walk(sub)

    return list(dict.fromkeys(walk(ToolError)))


def error_codes() -> list[tuple[str, str, str]]:
    """`(code, NAME, meaning)` of every member of `atipkit.errors.ErrorCode`, the one home
    of the codes errors carry (the framework's and atip's own)."""
    from atipkit.errors import ErrorCode

    return sorted((code.value, code.name, _cell(code.meaning)) for code in ErrorCode)


def errors_reference() -> str:
    """The page: exit statuses, the error classes and every error code."""
    from atipkit.app.docs.facts import exit_codes

    lines = [
        "# Exit statuses and error codes",
        "",
        "Generated when the site is built from the code that defines them. Every command of "
        "`atip`, and of any tool built on `atipkit.app`, fails with one JSON envelope whose "
        "`error` carries a stable `code`, a `category`, `is_retryable` and the `exit_code`; "
        "the exit status alone already says what kind of failure it was.",
        "",
        "## Exit statuses",
        "",
        "From `atipkit.app.errors.ExitCode`.",
        "",
        "| Status | Name | Meaning | What to do |",
        "|---|---|---|---|",
    ]
    lines += [
        f"| {value} | `{name}` | {_cell(meaning)} | {_cell(action)} |"
        for value, name, meaning, action in exit_codes()
    ]
    lines += [
        "",
        "## Error classes",
        "",
        "What a command raises (`atipkit.app.errors`): the class fixes the category, the exit "
        "status and whether a retry may help; `code` is the default, which a raise may "
        "override.",
        "",
        "| Class | Code | Category | Exit | Retryable | When |",
        "|---|---|---|---|---|---|",
    ]
    for cls in _tool_errors():
        lines.append(
            f"| `{cls.__name__}` | `{cls.default_code}` | {cls.category.value} "
            f"| {cls.exit_code} | {'yes' if cls.retryable else 'no'} "
            f"| {_first_paragraph(cls.__doc__)} |"
        )
    lines += [
        "",
        "## Error codes",
        "",
        "Every code an error carries (`atipkit.errors.ErrorCode`): the framework's and the "
        "ones `atip` adds. Agents branch on them, so they never change meaning.",
        "",
        "| Code | Name | Meaning |",
        "|---|---|---|",
    ]
    lines += [f"| `{code}` | `{name}` | {meaning} |" for code, name, meaning in error_codes()]
    lines += [
        "",
        "The codes of problems found in documents, compiles and policies (`schema.type`, "
        "`openai.strict-limit`, `policy.destructive`, ...) are on "
        "[Problem codes](problem-codes.md).",
    ]
    return "\n".join(lines) + "\n"


# The API reference ---------------------------------------------------------------------


def api_modules() -> list[str]:
    """`atipkit`, then each package whose `__init__` declares its API (`__all__`, or
    the TYPE_CHECKING exports `lazy_exports` loads), by name."""
    packages = sorted(
        p.parent.name
        for p in (SRC / "atipkit").glob("*/__init__.py")
        if not p.parent.name.startswith("_") and _declares_all(p)
    )
    return ["atipkit", *(f"atipkit.{name}" for name in packages)]


def _declares_all(path: Path) -> bool:
    text = path.read_text("utf-8")
    if "= lazy_exports(__name__, __file__" in text:
        return True
    tree = ast.parse(text)
    return any(
        isinstance(node, ast.Assign | ast.AnnAssign)
        and any(
            isinstance(t, ast.Name) and t.id == "__all__"
            for t in (node.targets if isinstance(node, ast.Assign) else [node.target])
        )
        for node in tree.body
    )


def api_page(module: str) -> str:
    """The page of `module`; a package whose names load lazily lists them for griffe,
    which reads no `__all__` there (its TYPE_CHECKING exports: `atipkit._exports`)."""
    page = f"# `{module}`\n\n::: {module}\n"
    init = SRC.joinpath(*module.split("."), "__init__.py")
    if "= lazy_exports(__name__, __file__" in init.read_text("utf-8"):
        from atipkit._exports import declared_exports

        names = sorted(declared_exports(init.read_text("utf-8"), str(init)))
        page += "    options:\n      members:\n" + "".join(f"        - {n}\n" for n in names)
    return page


def api_uri(module: str) -> str:
    return f"reference/api/{module}.md"


# The hook ------------------------------------------------------------------------------

API_SECTION = "API reference"


def on_config(config: Any) -> Any:
    """Fill the nav's (empty) API reference section with the generated pages."""
    for entry in config["nav"] or []:
        if isinstance(entry, dict) and API_SECTION in entry:
            entry[API_SECTION] = [{m: api_uri(m)} for m in api_modules()]
    return config


def generated_pages() -> dict[str, str]:
    """The pages read from the running code: the CLI and the error reference."""
    return {"reference/cli.md": cli_reference(), "reference/errors.md": errors_reference()}


def on_files(files: Any, config: Any) -> Any:
    """Add the generated pages. The code's pages come from a fresh process: `mkdocs serve`
    rebuilds when src/ changes, and this process keeps the atipkit it imported first."""
    from mkdocs.exceptions import PluginError
    from mkdocs.structure.files import File

    done = subprocess.run(
        [sys.executable, __file__],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    if done.returncode != 0:
        raise PluginError(f"{Path(__file__).name} failed:\n{done.stderr}")
    pages: dict[str, str] = json.loads(done.stdout)
    pages |= {api_uri(m): api_page(m) for m in api_modules()}
    for uri, content in pages.items():
        files.append(File.generated(config, uri, content=content))
    return files


if __name__ == "__main__":
    json.dump(generated_pages(), sys.stdout)
