"""`atip run`: run one tool call under a policy, as an agent would."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import click

from atipkit.cli import EXIT_INVALID, EXIT_OK, EXIT_USAGE
from atipkit.cli._effects import runs_anything
from atipkit.introspect.click import AtipCommand

EXIT_DENIED = 3


@click.command(cls=AtipCommand, effects=runs_anything())
@click.option(
    "--call",
    "call_text",
    required=True,
    help="The call as JSON, or - for stdin: {name, arguments} or a provider's "
    "tool call (OpenAI, Anthropic, Gemini).",
)
@click.option(
    "--tool",
    "tools",
    multiple=True,
    help="An ATIP document or tool name the call may name (repeatable; default: "
    "every tool in the registry).",
)
@click.option(
    "--policy", "policy_file", type=click.Path(dir_okay=False), help="A policy file (JSON)."
)
@click.option(
    "--yes", is_flag=True, help="Confirm what the policy wants confirmed (never what it denies)."
)
@click.option("--dry-run", is_flag=True, help="Print the decision and argv; run nothing.")
@click.option(
    "--audit",
    "audit_file",
    type=click.Path(dir_okay=False),
    help="Append the decision to this JSONL audit log.",
)
@click.option("--stdin", "stdin_text", help="Data for the command's stdin.")
@click.option("--json", "as_json", is_flag=True, help="Print the outcome as JSON.")
@click.pass_context
def run_command(
    ctx: click.Context,
    call_text: str,
    tools: tuple[str, ...],
    policy_file: str | None,
    yes: bool,
    dry_run: bool,
    audit_file: str | None,
    stdin_text: str | None,
    as_json: bool,
) -> None:
    """Run one tool call: map it to its command, apply the policy, build argv, run it.

    Exit status: 0 the command ran and succeeded, 1 it failed or the call is invalid,
    2 usage error, 3 denied by the policy (or not confirmed).
    """
    from atipkit.bridge import compile_tools, parse_tool_calls
    from atipkit.errors import AtipError
    from atipkit.execute import AuditLog, Executor
    from atipkit.policy import Policy

    text = sys.stdin.read() if call_text == "-" else call_text
    try:
        provider, response = _as_response(json.loads(text))
    except (ValueError, TypeError) as exc:
        raise click.BadParameter(f"not a tool call: {exc}", param_hint="--call") from None
    try:
        documents, executables = _documents(tools)
        policy = Policy.from_json(Path(policy_file).read_bytes()) if policy_file else Policy()
    except (OSError, ValueError, AtipError) as exc:
        click.echo(f"atip run: {exc}", err=True)
        ctx.exit(EXIT_USAGE)
    compiled = compile_tools(documents, provider)
    [call] = parse_tool_calls(provider, response, compiled)[:1] or [None]
    if call is None:
        raise click.BadParameter("no tool call found", param_hint="--call")
    executor = Executor(
        documents,
        policy=policy,
        confirm=(lambda *_: True) if yes else None,
        audit=AuditLog(audit_file) if audit_file else None,
        executables=executables,
    )
    outcome = executor.execute(call, stdin=stdin_text, dry_run=dry_run)
    if as_json:
        click.echo(
            json.dumps(
                {
                    "call": {
                        "name": call.name,
                        "tool": call.tool,
                        "command": list(call.path or ()),
                    },
                    "decision": outcome.decision.action,
                    "reasons": outcome.decision.reasons,
                    "argv": outcome.invocation.argv if outcome.invocation else None,
                    "exitCode": outcome.result.exit_code if outcome.result else None,
                    "isError": outcome.is_error,
                    "text": outcome.text,
                },
                indent=2,
                ensure_ascii=False,
            )
        )
    else:
        reasons = f" ({'; '.join(outcome.decision.reasons)})" if outcome.decision.reasons else ""
        click.echo(f"decision: {outcome.decision.action}{reasons}", err=True)
        if outcome.invocation:
            click.echo(f"argv: {json.dumps(outcome.invocation.argv)}", err=True)
        if not dry_run or outcome.is_error:
            click.echo(outcome.text, nl=not outcome.text.endswith("\n"))
    if outcome.decision.action == "deny":
        ctx.exit(EXIT_DENIED)
    ctx.exit(EXIT_INVALID if outcome.is_error else EXIT_OK)


def _as_response(obj: Any) -> tuple[str, Any]:
    """A single call in any provider's shape → (provider, a response holding it)."""
    if not isinstance(obj, dict):
        raise TypeError("expected a JSON object")
    if "function" in obj:
        return "openai", {"tool_calls": [obj]}
    if obj.get("type") == "tool_use":
        return "anthropic", {"content": [obj]}
    if obj.get("type") == "function_call":
        return "openai-responses", {"output": [obj]}
    if "function_call" in obj or "functionCall" in obj:
        return "gemini", {"parts": [obj]}
    if "name" in obj:
        return "mcp", obj
    raise ValueError("expected {name, arguments} or a provider's tool call")


def _documents(tools: tuple[str, ...]) -> tuple[list[Any], dict[str, str]]:
    """The tools a call may name, and where to run each: an executable file is resolved
    (registry, probe, shim), any other file is read as an ATIP document, a bare name is
    resolved on PATH and in the registry."""
    from atipkit.model import load
    from atipkit.registry.local import LocalRegistry
    from atipkit.resolve import resolve_tool

    documents, executables = [], {}
    for name in list(tools) or sorted(LocalRegistry().read().tools):
        if os.path.isfile(name) and not os.access(name, os.X_OK):
            documents.append(load(name))
            continue
        resolved = resolve_tool(name)
        documents.append(resolved.tool)
        if resolved.path:
            executables[resolved.tool.name] = resolved.path
    return documents, executables
