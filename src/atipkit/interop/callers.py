"""The remote callers an executor of some tools needs (`Executor(remote=...)`): MCP's
when one of them was imported from an MCP server.

`atip run` and the gateway ask here rather than importing `atipkit.interop.mcp`
themselves: that package is imported only when a tool names a server, which keeps the
start of a command line's `atip run` as quick as it was (the package costs about a
seventh of it).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from atipkit.execute.remote import RemoteCaller
    from atipkit.model import Tool

MCP_EXTENSION = "x-mcp"
"""`atipkit.interop.mcp.EXTENSION`, said again so as not to import the package to read it
(a test holds the two equal)."""


def remote_callers(tools: Iterable[Tool]) -> list[RemoteCaller]:
    """The callers `tools` need: `McpCaller` when one has an `x-mcp` (which then decides
    whether it names a server), none otherwise."""
    if not any(MCP_EXTENSION in tool.extensions for tool in tools):
        return []
    from atipkit.interop.mcp import McpCaller

    return [McpCaller()]
