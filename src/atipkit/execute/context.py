"""Tool state shared between a lead agent and its subagents (RFC 0.6 §10.3 `toolContext`):
which tools there are, which are authenticated, which commands ran and how they ended.

    context = read_context(path.read_bytes(), str(path))       # {"toolContext": {...}}
    context = context.with_outcome(outcome, tool)              # after a call ran
    view = context.delegated(policy.delegation)                # what a subagent is given
    write_atomic(path, view.to_json())

The context is advice, never a permission: a tool it lists as available is still
decided by the policy and its delegation (§10.2), and a subagent's view holds only the
tools its delegation allows and none of the commands it denies. A tool counts as
authenticated when a command of it that needs authentication (§3.8) ran and exited 0,
or when an agent said so; atipkit runs no `checkCommand` to find out.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from atipkit import _jsontext
from atipkit._atomic import write_atomic
from atipkit.errors import DocumentError
from atipkit.model import UNSET, Tool, get_command, is_tool_name
from atipkit.problems import error

if TYPE_CHECKING:
    from atipkit.execute.executor import Outcome
    from atipkit.policy import Delegation

MAX_RECENT = 50
"""The most recent commands a context keeps (the latest): agents share it in every
prompt, and a context read from elsewhere may be hostile."""
MAX_CONTEXT_BYTES = 1024 * 1024


class RecentCommand(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """One command that ran: its tool, its command words (space-joined, as §10.3's
    example writes `"pr list"`) and its exit status."""

    tool: str
    command: str
    exit_code: int


class ToolContext(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """§10.3's `toolContext`."""

    available_tools: list[str] = []
    authenticated_tools: list[str] = []
    recent_commands: list[RecentCommand] = []

    def to_json(self) -> bytes:
        """`{"toolContext": {...}}`, every field written, as §10.3 shows it."""
        return msgspec.json.encode({"toolContext": self}) + b"\n"

    def with_outcome(self, outcome: Outcome, tool: Tool | None = None) -> ToolContext:
        """This context after `outcome`: its command among the recent ones when it ran to
        its end (a call denied, unconfirmed, never started or timed out did not), and its
        tool authenticated
        when the command needs authentication (`tool`'s metadata says so) and exited 0."""
        call, result = outcome.call, outcome.result
        path = call.path
        if result is None or result.exit_code is None or call.tool is None or path is None:
            return self  # did not run, or was stopped before it ended (a timeout)
        ran = RecentCommand(tool=call.tool, command=" ".join(path), exit_code=result.exit_code)
        authenticated = self.authenticated_tools
        if result.exit_code == 0 and tool is not None and _needs_auth(tool, path):
            authenticated = _union(authenticated, [call.tool])
        return msgspec.structs.replace(
            self,
            available_tools=_union(self.available_tools, [call.tool]),
            authenticated_tools=authenticated,
            recent_commands=[*self.recent_commands, ran][-MAX_RECENT:],
        )

    def merged(self, other: ToolContext) -> ToolContext:
        """This context and `other` (a subagent's, come back): tools of both, the recent
        commands of this one, then of the other, the latest `MAX_RECENT` kept."""
        return ToolContext(
            available_tools=_union(self.available_tools, other.available_tools),
            authenticated_tools=_union(self.authenticated_tools, other.authenticated_tools),
            recent_commands=[*self.recent_commands, *other.recent_commands][-MAX_RECENT:],
        )

    def delegated(self, delegation: Delegation | None) -> ToolContext:
        """What a subagent under `delegation` (§10.2) is given: only the tools it may use,
        and only the recent commands of those tools that it is not denied (a command it
        may not run is not one it needs to know ran). None: all of it."""
        if delegation is None:
            return self
        allowed = delegation.allowed_tools

        def kept(name: str) -> bool:
            return allowed is None or name in allowed

        def visible(recent: RecentCommand) -> bool:
            words = [recent.tool, *recent.command.split()]
            return kept(recent.tool) and not any(
                words[: len(prefix.split())] == prefix.split()
                for prefix in delegation.denied_commands
            )

        return ToolContext(
            available_tools=[t for t in self.available_tools if kept(t)],
            authenticated_tools=[t for t in self.authenticated_tools if kept(t)],
            recent_commands=[r for r in self.recent_commands if visible(r)],
        )


def read_context(data: bytes | str | Any, source: str = "<toolContext>") -> ToolContext:
    """A `toolContext` from JSON text or decoded JSON: `{"toolContext": {...}}` or the
    object itself. Read strictly, since another agent wrote it: every tool a tool name,
    every field of its type (a `DocumentError` says where); keys §10.3 does not show are
    left out, and only the latest `MAX_RECENT` recent commands are kept."""
    if isinstance(data, bytes | str):
        raw = data.encode() if isinstance(data, str) else data
        if len(raw) > MAX_CONTEXT_BYTES:
            message = f"{len(raw)} bytes, more than {MAX_CONTEXT_BYTES}"
            raise DocumentError([error("context.invalid", message, "$")], source)
        data = _jsontext.decode(raw, source)
    if isinstance(data, dict) and "toolContext" in data:
        data, where = data["toolContext"], "$.toolContext"
    else:
        where = "$"
    try:
        context = msgspec.convert(data, ToolContext)
    except msgspec.ValidationError as exc:
        message, _, at = str(exc).partition(" - at `$")
        raise DocumentError(
            [error("context.invalid", message, where + at.rstrip("`"))], source
        ) from None
    names = [*context.available_tools, *context.authenticated_tools]
    names += [r.tool for r in context.recent_commands]
    bad = next((name for name in names if not is_tool_name(name)), None)
    if bad is not None:
        message = f"{bad[:80]!r} is not a tool name"
        raise DocumentError([error("context.invalid", message, where)], source)
    return msgspec.structs.replace(context, recent_commands=context.recent_commands[-MAX_RECENT:])


def read_context_file(path: Path) -> ToolContext:
    """The context in file `path`, empty when there is none yet; `OSError` when it cannot
    be read, `DocumentError` when it is not a context (`read_context`)."""
    try:
        raw = _jsontext.read_bytes(path, max_bytes=MAX_CONTEXT_BYTES)
    except FileNotFoundError:
        return ToolContext()
    return read_context(raw, str(path))


def record(path: Path, outcome: Outcome, tool: Tool | None = None) -> ToolContext:
    """The context in file `path` with `outcome` recorded (`with_outcome`), written back
    atomically under a lock, so that agents sharing the file lose none of each other's
    commands (§10.1: reads need no lock, writes are atomic). Raises as
    `read_context_file`."""
    from filelock import FileLock

    with FileLock(f"{path}.lock"):
        current = read_context_file(path)
        updated = current.with_outcome(outcome, tool)
        if updated is not current:
            write_atomic(path, updated.to_json())
    return updated


def _needs_auth(tool: Tool, path: tuple[str, ...]) -> bool:
    """Whether the command at `path` says authentication is required (§3.8), or, when it
    says nothing, its tool."""
    try:
        own = get_command(tool, path).authentication
    except KeyError:
        own = UNSET
    for auth in (own, tool.authentication):
        if auth is not UNSET and auth.required is not UNSET:
            return bool(auth.required)
    return False


def _union(first: list[str], second: list[str]) -> list[str]:
    return list(dict.fromkeys([*first, *second]))
