"""`atip compile`: ATIP metadata → a provider's tool definitions."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal

from atipkit.app import (
    Argument,
    Context,
    Document,
    InputError,
    Option,
)
from atipkit.cli import app
from atipkit.cli._effects import resolving
from atipkit.cli._resolve import document
from atipkit.cli.discover import split

if TYPE_CHECKING:
    from atipkit.model import Tool


# Reading documents changes nothing, but a tool *name* is resolved as `atip show` resolves
# it (a probe in the sandbox, the registry, remote registries): the effects are that.
@app.command("compile", effects=resolving(stdin="optional"))
def compile_tools(
    ctx: Context,
    files: Annotated[
        list[str],
        Argument(
            help="ATIP documents, - for stdin, or tool names to resolve (registry, probe, shim)."
        ),
    ],
    provider: Annotated[
        Literal["openai", "openai-responses", "anthropic", "gemini", "gemini-json-schema", "mcp"],
        Option(help="Tool format to produce."),
    ] = "openai",
    strict: Annotated[bool, Option(help="Strict schemas (OpenAI and Anthropic).")] = False,
    strategy: Annotated[
        Literal["discrete", "action"],
        Option(help="One tool per command, or one per group with an 'action' parameter."),
    ] = "discrete",
    commands: Annotated[
        str | None, Option(help="Only these command subtrees (comma-separated).")
    ] = None,
    depth: Annotated[int | None, Option(help="Only commands this deep (1 = top).", min=1)] = None,
    table: Annotated[bool, Option(help="Also give the name → command table.")] = False,
    deferred: Annotated[
        bool,
        Option(
            help="Define every command but load none until the model searches "
            "(openai-responses: namespaces and tool_search; anthropic: defer_loading and "
            "a search tool the agent answers)."
        ),
    ] = False,
) -> Document:
    """Compile ATIP metadata into tool definitions for a model provider.

    The result is the list the provider's request takes as `tools` (with --table, an
    object with `tools` and `table`, which maps each tool name to its command), written
    verbatim by --plain and --text (`atip compile gh.json --plain > tools.json`).
    With --deferred (openai-responses, anthropic only; else exit 2) every command is
    defined but loaded only when a search finds it (`atipkit.bridge.deferred_tools`).
    Provider limits are warnings. An invalid document is a data-format error (exit 65),
    a file or tool that cannot be found is exit 10, a file it may not read exit 30, one
    it cannot read otherwise (a directory) exit 2.
    """
    import json

    from atipkit.bridge import DEFERRED_PROVIDERS, deferred_tools
    from atipkit.bridge import compile_tools as compile_documents

    if deferred and provider not in DEFERRED_PROVIDERS:
        raise InputError(
            f"--deferred works with --provider openai-responses or anthropic, not {provider}",
            code="E1001",
            details={"param": "deferred", "provider": provider},
            suggestion=f"Use --provider {' or --provider '.join(DEFERRED_PROVIDERS)}.",
        )
    wanted = split(commands)
    tools = [_select(document(name, ctx), name, wanted, depth) for name in files]
    compiled = compile_documents(tools, provider, strict=strict, strategy=strategy)
    for problem in compiled.warnings:
        ctx.warn(f"{problem.location + ': ' if problem.location else ''}{problem.message}")
    payload: Any = deferred_tools(compiled, tools) if deferred else compiled.payload()
    if table:
        names = {name: _jsonable(path) for name, path in compiled.table.items()}
        payload = {"tools": payload, "table": names}
    return Document(json.dumps(payload, indent=2, ensure_ascii=False) + "\n")


def _select(tool: Tool, name: str, wanted: list[str] | None, depth: int | None) -> Tool:
    from atipkit.partial import select

    try:
        return select(tool, commands=wanted, depth=depth)
    except KeyError as exc:
        raise InputError(
            f"--commands: {exc.args[0]}",
            code="E1002",
            details={"param": "commands", "file": name},
            suggestion="Name commands the tool has; `--depth 1 --table` lists the top-level ones.",
        ) from None


def _jsonable(path: object) -> object:
    if isinstance(path, dict):
        return {action: " ".join(p) for action, p in path.items()}
    return " ".join(path)  # type: ignore[arg-type]
