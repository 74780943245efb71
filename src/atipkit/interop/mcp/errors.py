"""What can go wrong between atipkit and an MCP server, one type per failure kind.

Each names the server (`where`: its command line or URL) so a one-line message says what
was tried. `atip import mcp` maps them to exit codes: `ServerNotFound` 10, `SdkMissing`
and `ServerFailed` 40, `ServerTimeout` 50, `NotDescribable` 65. `BadExtension` comes
from reading a document's `x-mcp`, so only a call meets it (the executor's `not-started`).
"""

from __future__ import annotations

from atipkit.errors import AtipError


class McpError(AtipError):
    """Base of every failure of `atipkit.interop.mcp`."""


class SdkMissing(McpError):
    """The `mcp` package (the official SDK, version 2) is not installed."""


class BadExtension(McpError, ValueError):
    """A document's `x-mcp` does not say how to reach a server; `path` is the JSON path
    of the fault."""

    def __init__(self, path: str, message: str) -> None:
        self.path = path
        super().__init__(f"{path}: {message}")


class ServerNotFound(McpError):
    """The server's command does not exist (nothing to start)."""

    def __init__(self, where: str, message: str) -> None:
        self.where = where
        super().__init__(message)


class ServerFailed(McpError):
    """The server could not be started or reached, or it did not answer as MCP: it
    exited, refused the connection, answered with an error or with something that is not
    MCP. `stderr` is the end of what a stdio server wrote to its stderr."""

    def __init__(self, where: str, message: str, *, stderr: str = "") -> None:
        self.where = where
        self.stderr = stderr
        super().__init__(message)


class MissingVariable(ServerFailed):
    """An environment value or header of the endpoint names `${NAME}`, and NAME is not
    set in this process's environment."""

    def __init__(self, where: str, name: str, what: str) -> None:
        self.name = name
        super().__init__(where, f"{what} names ${{{name}}}, which is not set")


class ServerTimeout(McpError, TimeoutError):
    """The server did not finish in time (starting, initializing, listing or a call)."""

    def __init__(self, where: str, seconds: float, *, stderr: str = "", said: str = "") -> None:
        self.where = where
        self.seconds = seconds
        self.stderr = stderr
        super().__init__(f"{where}: no answer within {seconds:g} s{said}")


class NotDescribable(McpError, ValueError):
    """The server's tools cannot be described as ATIP: `tool` names the MCP tool (None
    for the listing as a whole) and the message says why."""

    def __init__(self, tool: str | None, reason: str) -> None:
        self.tool = tool
        self.reason = reason
        super().__init__(f"tool {_shown(tool)}: {reason}" if tool is not None else reason)


def _shown(name: str) -> str:
    """A hostile name, made printable on one line and short."""
    text = repr(name)
    return text if len(text) <= 80 else text[:77] + "..."
