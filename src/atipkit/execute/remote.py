"""Remote callers: tools whose commands run elsewhere than in a local binary, such as an
MCP server's (`atipkit.interop.mcp.McpCaller`).

The executor knows no protocol. Whoever builds it passes the callers it should know
(`Executor(remote=[McpCaller()])`; `atip run` and `atip mcp serve` do): for each tool the
first caller that `claims` it turns a call into a `RemoteCall`, and the call gets the same
decision, confirmation, audit and result filter as a command line's. So this layer never
imports the protocols built on top of it, and a tool no caller claims is a command line,
unless its document says it runs elsewhere (`REMOTE_MARKS`): that one is not run.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from atipkit.bridge.flatten import ParamRef
    from atipkit.model import CommandPath, Tool


REMOTE_MARKS = {"x-mcp": "atipkit.interop.mcp.McpCaller"}
"""Extension keys by which a document (not a shim) says its commands run elsewhere, and
the caller that runs them. Such a tool that no caller given claims is refused, never
taken for a binary of its name: a server's tool `github` must not run a `github` that
happens to be on PATH with the server's arguments."""


class RemoteAnswer(Protocol):
    """What a remote tool answered."""

    @property
    def text(self) -> str: ...

    @property
    def is_error(self) -> bool:
        """The tool said it failed: the outcome is an error, exit status 1."""
        ...

    @property
    def structured_content(self) -> Any: ...

    @property
    def seconds(self) -> float: ...


class RemoteCall(Protocol):
    """One call, ready to send. `request` is what is sent (reported, audited, and shown
    by a dry run); `argv` how the remote is reached (its command line, or its URL);
    `target` names both in a message (`search on stdio:python server.py`)."""

    request: dict[str, Any]
    argv: list[str]
    target: str

    def send(self, *, timeout: float) -> RemoteAnswer:
        """Send the call within `timeout` seconds. Raises `TimeoutError` when the time
        ran out (its `stderr`, when it has one, is kept in the result), and another
        `AtipError` when the remote cannot be reached or does not answer as it should."""
        ...


class RemoteCaller(Protocol):
    """A way to run the tools of one kind of remote."""

    def claims(self, tool: Tool) -> bool:
        """Whether `tool`'s commands run on this caller's remote, not as a binary."""
        ...

    def prepare(self, tool: Tool, path: CommandPath, values: Mapping[ParamRef, Any]) -> RemoteCall:
        """The call of command `path` with `values`. Raises `InvalidArguments` for values
        that do not fit (the model reads the ATDF error), and an `AtipError` when the
        document does not say how to reach the remote."""
        ...
