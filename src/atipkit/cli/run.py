"""`atip run`: run one tool call under a policy, as an agent would."""

from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from atipkit.app import (
    AuthError,
    Context,
    DataFormatError,
    DependencyError,
    InputError,
    NotFoundError,
    Option,
    Suggestion,
    TimeoutExpired,
    ToolError,
)
from atipkit.cli import app
from atipkit.cli._effects import runs_anything
from atipkit.cli._policy import audit_path, load_policy
from atipkit.cli._resolve import bad_registry, resolve
from atipkit.errors import ErrorCode

if TYPE_CHECKING:
    from atipkit.binding import Bound
    from atipkit.bridge.calls import ToolCall
    from atipkit.bridge.compile import Provider
    from atipkit.execute.context import ToolContext
    from atipkit.execute.executor import Outcome
    from atipkit.model import Tool
    from atipkit.policy import Decision, Evidence


def _text(result: dict[str, Any]) -> str:
    """What the command printed (its filtered output, or why it failed); nothing for a
    denial, which the error line states. A dry run prints its plan: the command line
    quoted for a shell (or the MCP request), ready to paste."""
    if result.get("dry_run"):
        return "".join(_planned(action) + "\n" for action in result.get("actions", []))
    report = result
    if not isinstance(report, dict) or report.get("decision") == "deny":
        return ""
    text = str(report.get("text") or "")
    return text if not text or text.endswith("\n") else text + "\n"


def _planned(action: dict[str, Any]) -> str:
    if action.get("action") == "call":  # a tools/call of an MCP server
        return f"{action.get('target', '')} <- {json.dumps(action['details']['request'])}"
    return str(action.get("target", ""))


@app.command(effects=runs_anything(), dry_run=True, text=_text)
def run(
    call: Annotated[
        str,
        Option(
            help="The call as JSON, or - for stdin: {name, arguments} or a provider's "
            "tool call (OpenAI, Anthropic, Gemini)."
        ),
    ],
    ctx: Context,
    tool: Annotated[
        list[str],
        Option(
            help="An ATIP document or tool name the call may name (repeatable; default: "
            "every tool in the registry)."
        ),
    ] = [],  # noqa: B006 - the framework copies defaults, never mutates them
    policy: Annotated[Path | None, Option(help="A policy file (JSON).", dir_okay=False)] = None,
    audit: Annotated[
        Path | None,
        Option(help="Append the decision to this JSONL audit log.", dir_okay=False),
    ] = None,
    stdin: Annotated[str | None, Option(help="Data for the command's stdin.")] = None,
    context: Annotated[
        Path | None,
        Option(
            help="A toolContext file (RFC §10.3) shared with other agents: the call's "
            "command is added to it; the result's toolContext is what the policy's "
            "delegation lets this agent see.",
            dir_okay=False,
        ),
    ] = None,
) -> dict[str, Any]:
    """Run one tool call: map it to its command, apply the policy, build argv, run it.

    What the policy wants confirmed is asked at the terminal; --yes answers yes (never
    to what the policy denies). With --dry-run nothing runs and nothing is asked: the
    plan is the command line quoted for a shell (with --json: the decision, the argv
    and that line). Failures: the call is not a tool call or does not fit the command
    (exit 65), a tool or file named does not exist (10), confirmation needed with no
    terminal and no --yes (2), denied by the policy or declined (30), the command
    failed (40) or timed out (50); each failure's result is the report.
    """
    import msgspec

    from atipkit.bridge import compile_tools, parse_tool_calls
    from atipkit.execute import AuditLog, Executor
    from atipkit.interop.callers import remote_callers

    provider, response = _as_response(sys.stdin.read() if call == "-" else call)
    documents, executables, evidence, _, _ = _documents(tool, ctx)
    rules = load_policy(policy)
    audit = audit_path(rules, audit)
    if context is not None:
        _shared(context, None)  # a context that cannot be used stops the call before it runs
    compiled = compile_tools(documents, provider)
    parsed = next(iter(parse_tool_calls(provider, response, compiled)), None)
    if parsed is None:
        raise DataFormatError("no tool call found in --call", details={"param": "call"})
    unanswered: list[ToolError] = []

    def confirm(tool_call: ToolCall, decision: Decision) -> bool:
        what = " ".join([tool_call.tool or tool_call.name, *(tool_call.path or ())])
        try:
            return ctx.confirm(f"Run {what}? ({'; '.join(decision.reasons)})")
        except InputError as exc:  # no terminal, no --yes: the executor denies and audits
            unanswered.append(exc)
            return False

    executor = Executor(
        documents,
        policy=rules,
        confirm=confirm,
        audit=AuditLog(audit) if audit else None,
        executables=executables,
        evidence=evidence,
        remote=remote_callers(documents),
    )
    outcome = executor.execute(parsed, stdin=stdin, dry_run=ctx.dry_run)
    report = outcome.report()
    if context is not None:
        shared = _shared(context, outcome, executor.tools.get(outcome.call.tool or ""))
        for narrower in rules.chain():
            shared = shared.delegated(narrower.delegation)
        report["toolContext"] = msgspec.to_builtins(shared)
    reasons = outcome.decision.reasons
    ctx.info(
        f"decision: {outcome.decision.action}" + (f" ({'; '.join(reasons)})" if reasons else "")
    )
    if outcome.request is not None:  # a tool of an MCP server: a tools/call, not argv
        where = " ".join(outcome.invocation.argv) if outcome.invocation else ""
        ctx.info(f"request: {json.dumps(outcome.request)} to {where}")
        if ctx.dry_run:
            ctx.plan("call", where, request=outcome.request)
    elif outcome.invocation:
        ctx.info(f"argv: {json.dumps(outcome.invocation.argv)}")
        if ctx.dry_run:
            ctx.plan("run", shlex.join(outcome.invocation.argv), argv=outcome.invocation.argv)
    _raise_for(outcome, report, compiled.bindings, unanswered)
    return report


def _shared(path: Path, outcome: Outcome | None, tool: Tool | None = None) -> ToolContext:
    """The toolContext in `path` (`outcome` recorded in it when given): a file that
    cannot be read or is not a context is an error of its own (exit 10, 30 or 65)."""
    from atipkit.cli._resolve import document_error, file_error
    from atipkit.errors import DocumentError
    from atipkit.execute.context import read_context_file, record

    try:
        return read_context_file(path) if outcome is None else record(path, outcome, tool)
    except OSError as exc:
        raise file_error(exc, str(path), "Name a toolContext file (JSON).", "--context") from None
    except DocumentError as exc:
        advice = Suggestion('Give {"toolContext": {availableTools, authenticatedTools, ...}}.')
        raise document_error(exc, f"--context {path}: not a toolContext", path, advice) from None


def _raise_for(
    outcome: Outcome, report: dict[str, Any], bindings: Any, unanswered: list[ToolError]
) -> None:
    """The error an unsuccessful outcome means, carrying the report."""
    if not outcome.is_error:
        return
    call = outcome.call
    if not call.ok:
        if call.name not in bindings:
            raise NotFoundError(
                f"no tool function {call.name!r} among the tools given",
                suggestion="Name a function of the tools given with --tool (atip compile "
                "lists them).",
                details={"name": call.name},
                result=report,
            )
        raise DataFormatError(
            f"the call does not fit {call.name}: {call.error}",
            suggestion="Fix the call's arguments to match the tool's parameters.",
            result=report,
        )
    decision = outcome.decision
    if decision.action == "deny":
        if unanswered:
            first = unanswered[0]
            raise InputError(
                f"the policy wants this call confirmed ({'; '.join(decision.reasons)}), and "
                "there is no terminal to ask",
                code=first.code,
                suggestion=first.suggestion,
                result=report,
            )
        declined = outcome.stopped == "unconfirmed"
        raise AuthError(
            ("not confirmed: " if declined else "denied by policy: ")
            + "; ".join(r.removeprefix("not confirmed: ") for r in decision.reasons),
            code=ErrorCode.DECLINED if declined else ErrorCode.DENIED,
            details={"decision": decision.action, "reasons": decision.reasons},
            result=report,
        )
    if outcome.stopped == "invalid-arguments":
        raise DataFormatError(
            f"invalid arguments for {call.name}",
            suggestion="The result's text is an ATDF error naming each parameter to fix.",
            result=report,
        )
    if outcome.stopped == "not-started" and outcome.invocation is None:
        # nothing to start: the document cannot say how (an x-mcp that is not readable)
        raise DataFormatError(
            outcome.text,
            suggestion="Fix the document's x-mcp, or import the server again with atip import mcp.",
            result=report,
        )
    result = outcome.result
    if result is None:
        if outcome.stopped == "input-refused":
            raise InputError(
                outcome.text,
                code=ErrorCode.MISSING_INPUT,
                suggestion="Give the command's input with --stdin, or none if it reads none.",
                result=report,
            )
        raise DependencyError(outcome.text, result=report)
    if result.timed_out:
        raise TimeoutExpired(
            f"{result.argv[0]} timed out after {result.seconds:.1f} s", result=report
        )
    if outcome.request is not None:
        tool = outcome.request["params"]["name"]
        raise DependencyError(
            f"the MCP tool {tool} on {result.argv[0]} reported an error",
            details={"isError": True},
            result=report,
        )
    raise DependencyError(
        f"{result.argv[0]} exited with status {result.exit_code}",
        details={"exitCode": result.exit_code},
        result=report,
    )


def _as_response(text: str) -> tuple[Provider, Any]:
    """A single call in any provider's shape → (provider, a response holding it)."""
    from atipkit import _jsontext
    from atipkit.errors import DocumentError

    try:
        obj = _jsontext.decode(text, "--call")
    except DocumentError as exc:
        raise DataFormatError(
            f"{exc}",
            suggestion='Give the call as JSON: {"name": ..., "arguments": {...}}.',
            details={"param": "call"},
        ) from None
    if isinstance(obj, dict):
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
    raise DataFormatError(
        "--call is not a tool call: expected {name, arguments} or a provider's tool call",
        details={"param": "call"},
    )


def _documents(tools: list[str], ctx: Context) -> Bound:
    """The tools a call may name, the binary each one's calls run and what atipkit
    established about each (`atipkit.binding`, `Resolved.evidence`): an executable file
    is resolved (registry, probe, shim), any other file is read as an ATIP document
    (evidence: given), a bare name is resolved on PATH and in the registry. Registry
    entries that no longer resolve are skipped with a warning; a tool named with --tool
    must resolve. Two tools of one name are both kept, the second under its key, with a
    warning naming both."""
    from atipkit.binding import bind
    from atipkit.errors import DocumentError
    from atipkit.model import is_tool_name, load
    from atipkit.policy import Evidence
    from atipkit.registry.local import LocalRegistry, RegistryError

    named = list(tools)
    try:
        names = named or sorted(LocalRegistry().read().tools)
    except RegistryError as exc:
        raise bad_registry(exc) from None
    entries: list[tuple[Tool, str, Evidence]] = []
    for name in names:
        if not named and not is_tool_name(name):  # a hand-made entry: never a path
            ctx.warn(f"skipped {name!r}: not a tool name")
            continue
        if os.path.isfile(name) and not os.access(name, os.X_OK):
            try:
                entries.append((load(name), name, Evidence(origin="given")))
            except DocumentError as exc:
                raise DataFormatError(f"--tool {name}: {exc}") from None
            continue
        try:
            resolved = resolve(
                name,
                ctx,
                no_metadata=Suggestion(
                    "Name an ATIP document or a tool on PATH that has metadata.", example=None
                ),
            )
        except NotFoundError as exc:
            if not named:
                ctx.warn(f"skipped {name}: {exc.message}")
                continue
            raise
        source = name if named else f"registry entry {name}"
        entries.append((resolved.tool, source, resolved.evidence))
    bound = bind(entries)
    for line in bound.clashes:
        ctx.warn(line)
    return bound
