"""MCP servers as ATIP tools: describe a server's tools, and run them.

    from atipkit.interop.mcp import Endpoint, import_server, call

    tool = import_server(Endpoint.stdio(["python", "server.py"]))   # an ATIP `Tool`
    result = call(tool, ("search",), {ParamRef("option", "query"): "eggs"})

- `endpoint`: how to reach a server (a command for stdio, a URL for streamable HTTP),
  recorded in the document's `x-mcp`;
- `session`: the official SDK's client, one connection an exchange, under a deadline;
  `fetch` reads the server's self-description and every page of its tools;
- `describe`: that listing as an ATIP document (pure); `schemas`: input schemas as
  options;
- `call`: a command's `tools/call` request (pure), sending it (`send`), both at once
  (`call`), and `McpCaller`, which an `atipkit.execute.Executor` is given to send the
  calls of every tool whose `x-mcp` names a server.

Nothing here imports the SDK until a server is contacted.
"""

from __future__ import annotations

from atipkit.interop.mcp.call import (
    DEFAULT_TIMEOUT,
    CallResult,
    McpCall,
    McpCaller,
    call,
    endpoint_of,
    is_mcp,
    request,
    result_of,
    send,
)
from atipkit.interop.mcp.describe import (
    EXTENSION,
    MCP_DEFAULTS,
    Listing,
    check_tool_name,
    describe,
    effects,
)
from atipkit.interop.mcp.endpoint import Endpoint
from atipkit.interop.mcp.errors import (
    BadExtension,
    McpError,
    MissingVariable,
    NotDescribable,
    SdkMissing,
    ServerFailed,
    ServerNotFound,
    ServerTimeout,
)
from atipkit.interop.mcp.session import FETCH_TIMEOUT, fetch
from atipkit.model import Tool

__all__ = [
    "DEFAULT_TIMEOUT",
    "EXTENSION",
    "FETCH_TIMEOUT",
    "MCP_DEFAULTS",
    "BadExtension",
    "CallResult",
    "Endpoint",
    "Listing",
    "McpCall",
    "McpCaller",
    "McpError",
    "MissingVariable",
    "NotDescribable",
    "SdkMissing",
    "ServerFailed",
    "ServerNotFound",
    "ServerTimeout",
    "call",
    "check_tool_name",
    "describe",
    "effects",
    "endpoint_of",
    "fetch",
    "import_server",
    "is_mcp",
    "request",
    "result_of",
    "send",
]


def import_server(
    endpoint: Endpoint, *, name: str | None = None, timeout: float = FETCH_TIMEOUT
) -> Tool:
    """The ATIP document of the server at `endpoint`: `fetch` within `timeout` seconds,
    then `describe` (`name` overrides the tool's name)."""
    return describe(fetch(endpoint, timeout=timeout), name=name)
