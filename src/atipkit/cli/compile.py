"""`atip compile`: ATIP metadata → a provider's tool definitions."""

from __future__ import annotations

import json
import os

import click

from atipkit._jsontext import MAX_DOCUMENT_BYTES
from atipkit.cli import EXIT_INVALID, EXIT_OK, EXIT_USAGE
from atipkit.cli._effects import read_only
from atipkit.introspect.click import AtipArgument, AtipCommand


@click.command(cls=AtipCommand, effects=read_only(reads_files=True, stdin="optional"))
@click.argument(
    "files",
    cls=AtipArgument,
    nargs=-1,
    required=True,
    type=click.Path(dir_okay=False, allow_dash=True),
    help="ATIP documents, - for stdin, or tool names to resolve (registry, probe, shim).",
)
@click.option(
    "--provider",
    type=click.Choice(
        ["openai", "openai-responses", "anthropic", "gemini", "gemini-json-schema", "mcp"]
    ),
    default="openai",
    show_default=True,
    help="Tool format to produce.",
)
@click.option("--strict", is_flag=True, help="Strict schemas (OpenAI and Anthropic).")
@click.option(
    "--strategy",
    type=click.Choice(["discrete", "action"]),
    default="discrete",
    show_default=True,
    help="One tool per command, or one per group with an 'action' parameter.",
)
@click.option("--commands", help="Only these command subtrees (comma-separated).")
@click.option("--depth", type=click.IntRange(min=1), help="Only commands this deep (1 = top).")
@click.option("--table", "show_table", is_flag=True, help="Also print the name → command table.")
@click.pass_context
def compile_command(
    ctx: click.Context,
    files: tuple[str, ...],
    provider: str,
    strict: bool,
    strategy: str,
    commands: str | None,
    depth: int | None,
    show_table: bool,
) -> None:
    """Compile ATIP metadata into tool definitions for a model provider.

    Prints JSON on stdout: the list the provider's request takes as `tools` (with
    --table, an object with `tools` and `table`). Warnings about provider limits go to
    stderr. Exit status: 0 compiled, 1 a document is invalid, 2 usage error.
    """
    from atipkit.bridge import compile_tools
    from atipkit.errors import DocumentError
    from atipkit.model import load
    from atipkit.partial import select
    from atipkit.resolve import ToolNotFound, resolve_tool

    tools = []
    for path in files:
        try:
            if path == "-" or os.path.exists(path):
                tool = load(path, max_bytes=MAX_DOCUMENT_BYTES)
            else:
                tool = resolve_tool(path).tool
        except OSError as exc:
            click.echo(f"atip compile: cannot read {path}: {exc.strerror or exc}", err=True)
            ctx.exit(EXIT_USAGE)
        except DocumentError as exc:
            for problem in exc.problems:
                click.echo(problem.format(exc.source), err=True)
            ctx.exit(EXIT_INVALID)
        except LookupError as exc:
            click.echo(f"atip compile: {exc}", err=True)
            ctx.exit(EXIT_USAGE if isinstance(exc, ToolNotFound) else EXIT_INVALID)
        try:
            wanted = [c.strip() for c in commands.split(",") if c.strip()] if commands else None
            tool = select(tool, commands=wanted, depth=depth)
        except KeyError as exc:
            raise click.BadParameter(str(exc.args[0]), param_hint="--commands") from None
        tools.append(tool)
    compiled = compile_tools(tools, provider, strict=strict, strategy=strategy)  # type: ignore[arg-type]
    for problem in compiled.warnings:
        click.echo(
            f"warning: {problem.location + ': ' if problem.location else ''}{problem.message}",
            err=True,
        )
    payload = compiled.payload()
    if show_table:
        table = {name: _jsonable(path) for name, path in compiled.table.items()}
        output = json.dumps({"tools": payload, "table": table}, indent=2, ensure_ascii=False)
    else:
        output = json.dumps(payload, indent=2, ensure_ascii=False)
    click.echo(output)
    ctx.exit(EXIT_OK)


def _jsonable(path: object) -> object:
    if isinstance(path, dict):
        return {action: " ".join(p) for action, p in path.items()}
    return " ".join(path)  # type: ignore[arg-type]
