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
from atipkit.errors import ErrorCode

if TYPE_CHECKING:
    from atipkit.bridge import Compiled
    from atipkit.model import Tool
    from atipkit.search.budget import Budgeted


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
    budget: Annotated[
        int | None,
        Option(
            help="Fit in this many tokens: the commands that best fit --query, and a "
            "depth-1 overview of the rest.",
            min=1,
        ),
    ] = None,
    query: Annotated[
        str | None, Option(help="The task the commands are for (with --budget).")
    ] = None,
) -> Document:
    """Compile ATIP metadata into tool definitions for a model provider.

    The result is the list the provider's request takes as `tools` (with --table, an
    object with `tools` and `table`, which maps each tool name to its command), written
    verbatim by --plain and --text (`atip compile gh.json --plain > tools.json`).
    With --deferred (openai-responses, anthropic only; else exit 2) every command is
    defined but loaded only when a search finds it (`atipkit.bridge.deferred_tools`).
    With --budget the result is an object: `tools` (the commands that fit, the most
    relevant to --query first chosen; the best whole, the next as briefs with their
    required parameters only), `briefs` (the names sent as briefs), `overview` (for
    each tool with commands left out, a depth-1 ATIP document marked partial, whose
    `omitted.safetyAssumption` says what the rest may do) and `tokens` (tools,
    overview, total, budget, and the full compile, counted with tiktoken's cl100k
    encoding); a budget too small for the overview alone
    is exit 2. Provider limits are warnings. An invalid document is a data-format error (exit 65),
    a file or tool that cannot be found is exit 10, a file it may not read exit 30, one
    it cannot read otherwise (a directory) exit 2.
    """
    import json

    from atipkit.bridge import DEFERRED_PROVIDERS
    from atipkit.bridge import compile_tools as compile_documents

    if deferred and provider not in DEFERRED_PROVIDERS:
        raise InputError(
            f"--deferred works with --provider {' or '.join(DEFERRED_PROVIDERS)}, not {provider}",
            code=ErrorCode.USAGE,
            details={"param": "deferred", "provider": provider},
            suggestion=f"Use --provider {' or --provider '.join(DEFERRED_PROVIDERS)}.",
        )
    _check_budget(budget, query, deferred, strategy)
    from atipkit.cli.discover import split

    wanted = split(commands)
    tools = [_select(document(name, ctx), name, wanted, depth) for name in files]
    payload: Any
    if budget is not None:
        fitted = _fit(ctx, tools, provider, strict, budget, query)
        compiled, payload = fitted.compiled, fitted.to_builtins()
    else:
        compiled = compile_documents(
            tools, provider, strict=strict, strategy=strategy, sources=files
        )
        payload = _deferred(compiled, tools) if deferred else compiled.payload()
    for problem in compiled.warnings:
        ctx.warn(f"{problem.location + ': ' if problem.location else ''}{problem.message}")
    if table:
        names = {name: _jsonable(path) for name, path in compiled.table.items()}
        payload = {**payload, "table": names} if budget else {"tools": payload, "table": names}
    return Document(json.dumps(payload, indent=2, ensure_ascii=False) + "\n")


def _deferred(compiled: Compiled, tools: list[Tool]) -> list[dict[str, Any]]:
    """The deferred tools; a compiled command named as the search tool is the document's
    conflict with --deferred, not a bug."""
    from atipkit.bridge import SEARCH_TOOL, deferred_tools

    try:
        return deferred_tools(compiled, tools)
    except ValueError:  # the provider is checked and the tools are the compile's: the name
        raise InputError(
            f"a command compiles to {SEARCH_TOOL!r}, the name of --deferred's search tool",
            code=ErrorCode.USAGE,
            details={"param": "deferred", "tool": SEARCH_TOOL},
            suggestion="Compile without --deferred, or leave that command out with --commands.",
        ) from None


def _check_budget(budget: int | None, query: str | None, deferred: bool, strategy: str) -> None:
    conflict = None
    if query is not None and budget is None:
        conflict = "--query ranks commands for --budget; give --budget TOKENS too"
    elif budget is not None and deferred:
        conflict = "--budget and --deferred are two ways to save context; choose one"
    elif budget is not None and strategy != "discrete":
        conflict = "--budget chooses single commands; it needs --strategy discrete"
    if conflict:
        raise InputError(conflict, code=ErrorCode.USAGE, details={"param": "budget"})


def _fit(
    ctx: Context,
    tools: list[Tool],
    provider: Any,
    strict: bool,
    budget: int,
    query: str | None,
) -> Budgeted:
    from atipkit.cli._errors import missing_module

    try:
        from atipkit.search.budget import BudgetTooSmall, fit_budget

        fitted = fit_budget(tools, provider, budget, query=query, strict=strict)
    except ImportError as exc:
        raise missing_module(exc, "--budget", "pip install 'atipkit[search]'") from None
    except BudgetTooSmall as exc:
        raise InputError(
            str(exc),
            code=ErrorCode.BAD_VALUE,
            details={"param": "budget", "needed": exc.needed},
            suggestion=f"Give --budget {exc.needed} or more, or fewer tools (--commands).",
        ) from None
    tokens = fitted.tokens
    ctx.info(
        f"{len(fitted.compiled.tools)} command(s), {len(fitted.briefs)} of them as briefs, "
        f"in {tokens.total} of {budget} tokens (the full compile: {tokens.full})"
    )
    return fitted


def _select(tool: Tool, name: str, wanted: list[str] | None, depth: int | None) -> Tool:
    from atipkit.partial import select

    try:
        return select(tool, commands=wanted, depth=depth)
    except KeyError as exc:
        raise InputError(
            f"--commands: {exc.args[0]}",
            code=ErrorCode.BAD_VALUE,
            details={"param": "commands", "file": name},
            suggestion="Name commands the tool has; `--depth 1 --table` lists the top-level ones.",
        ) from None


def _jsonable(path: object) -> object:
    if isinstance(path, dict):
        return {action: " ".join(p) for action, p in path.items()}
    return " ".join(path)  # type: ignore[arg-type]  # a command path
