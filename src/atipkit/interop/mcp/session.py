"""Talking to an MCP server with the official SDK (v2): connect, list every tool, call one.

Every exchange is one connection, bounded by one deadline that covers starting the
server, the protocol handshake (the SDK's `auto` mode: `server/discover`, else
`initialize`) and the requests; a server that never answers costs the deadline, plus the
SDK's bounded shutdown of a stdio server (it closes its stdin, then terminates its process
tree). Whatever goes wrong becomes one of `atipkit.interop.mcp.errors`, never an SDK or
transport exception: the server cannot be found, failed (with the end of its stderr), was
too slow, or listed tools that cannot be read.
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import IO, TYPE_CHECKING, Any, TextIO, TypeVar, cast

from atipkit.interop.mcp.describe import MAX_TOOLS, Listing
from atipkit.interop.mcp.endpoint import Endpoint
from atipkit.interop.mcp.errors import (
    McpError,
    NotDescribable,
    SdkMissing,
    ServerFailed,
    ServerNotFound,
    ServerTimeout,
)

if TYPE_CHECKING:
    from mcp import Client

T = TypeVar("T")
FETCH_TIMEOUT = 30.0
"""Seconds for starting a server, the handshake and the listing, unless the caller says."""
MAX_PAGES = 1000
"""`tools/list` pages read before the listing is taken to never end."""
STDERR_TAIL = 2000
"""Characters of a failed stdio server's stderr kept for the message."""


class _State(logging.Handler):
    """What the exchange was doing when it failed, the stdio server's stderr, and the
    SDK's complaints (a server that writes other things than MCP on its stdout, ...), which
    would otherwise go to our stderr."""

    def __init__(self, errlog: IO[str]) -> None:
        super().__init__(logging.WARNING)
        self.phase = "initialize"
        self.errlog = errlog
        self.complaints: list[str] = []
        self.thread = threading.get_ident()  # the exchange's loop runs in this thread

    def emit(self, record: logging.LogRecord) -> None:
        if record.thread != self.thread or len(self.complaints) >= 3:
            return  # another exchange's, in another thread
        text = record.getMessage()
        error = record.exc_info[1] if record.exc_info else None
        inputs = [e.get("input") for e in getattr(error, "errors", list)()[:1]]
        if inputs and isinstance(inputs[0], str):
            text += f": {inputs[0][:100]!r}"
        self.complaints.append(text)

    def said(self) -> str:
        """What the server wrote to stderr last, or what the SDK found wrong, for a
        message: empty when there is nothing."""
        if self.complaints:
            return f"; {self.complaints[0]}"
        last = _last_line(self.stderr())
        return f"; it said: {last}" if last else ""

    def stderr(self) -> str:
        try:
            self.errlog.flush()
            self.errlog.seek(0)
            text = self.errlog.read()
        except (OSError, ValueError):
            return ""
        return text[-STDERR_TAIL:].strip()


def run(
    endpoint: Endpoint,
    exchange: Callable[[Client, _State], Awaitable[T]],
    *,
    timeout: float,
    invalid_is_data: bool = False,
) -> T:
    """Run `exchange` on a fresh connection to `endpoint` within `timeout` seconds, in
    an event loop of its own (call it from any thread that is not running one). An
    answer the SDK cannot read is `NotDescribable` when `invalid_is_data` (a listing),
    else `ServerFailed`."""
    import asyncio

    import anyio

    _require_sdk()
    if timeout <= 0:
        raise ValueError("timeout must be positive")
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        pass  # no loop in this thread: one of our own can run
    else:
        raise RuntimeError(
            "atipkit.interop.mcp runs an event loop of its own: from async code, call it in "
            "a worker thread (anyio.to_thread.run_sync)"
        )
    _check_start(endpoint)
    with tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace") as errlog:
        state = _State(errlog)
        # the SDK's loggers: its package's, and one it names "client"
        sdk_logs = [logging.getLogger(n) for n in ("mcp", "client")]

        async def bounded() -> T:
            with anyio.fail_after(timeout):
                async with _connect(endpoint, errlog, timeout) as client:
                    state.phase = "request"
                    return await exchange(client, state)

        for log in sdk_logs:
            log.addHandler(state)
        try:
            return anyio.run(bounded)
        except Exception as exc:  # SDK, transport and anyio failures, often grouped
            raise _failure(exc, endpoint, state, timeout, invalid_is_data) from None
        finally:
            for log in sdk_logs:
                log.removeHandler(state)


def _require_sdk() -> None:
    from atipkit._mcp_sdk import SdkUnavailable, require_sdk

    try:
        require_sdk("talking to MCP servers")
    except SdkUnavailable as exc:
        raise SdkMissing(str(exc)) from None


def _check_start(endpoint: Endpoint) -> None:
    """A stdio server whose program or directory is missing fails before anything starts,
    with a message that says which."""
    if endpoint.transport != "stdio":
        return
    program = endpoint.command[0]
    cwd = endpoint.cwd
    if cwd is not None and not os.path.isdir(cwd):
        raise ServerFailed(endpoint.where, f"cannot start {program}: no directory {cwd}")
    if os.sep in program:
        path = program if os.path.isabs(program) or cwd is None else os.path.join(cwd, program)
        found = path if os.path.isfile(path) and os.access(path, os.X_OK) else None
    else:
        found = shutil.which(program)
    if found is None:
        raise ServerNotFound(
            endpoint.where, f"{program}: no such command (the MCP server's command line)"
        )


@asynccontextmanager
async def _connect(endpoint: Endpoint, errlog: IO[str], timeout: float) -> AsyncIterator[Client]:
    from mcp import Client
    from mcp.types import Implementation

    from atipkit._version import __version__

    me = Implementation(name="atipkit", version=__version__)
    if endpoint.transport == "stdio":
        from mcp.client.stdio import StdioServerParameters, stdio_client

        params = StdioServerParameters(
            command=endpoint.command[0],
            args=list(endpoint.command[1:]),
            env=endpoint.resolved_env() or None,
            cwd=endpoint.cwd,
        )
        stderr = cast(TextIO, errlog)  # a text-mode TemporaryFile: a TextIOWrapper
        async with Client(stdio_client(params, errlog=stderr), cache=None, client_info=me) as c:
            yield c
        return
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    async with httpx2.AsyncClient(
        headers=endpoint.resolved_headers(), timeout=httpx2.Timeout(timeout)
    ) as http:
        transport = streamable_http_client(endpoint.url, http_client=http)
        async with Client(transport, cache=None, client_info=me) as c:
            yield c


# -- the two exchanges -----------------------------------------------------------------------


async def _listing(client: Client, state: _State, endpoint: Endpoint, max_pages: int) -> Listing:
    info = client.server_info
    listing = Listing(
        endpoint=endpoint,
        protocol_version=client.protocol_version,
        server_info=info.model_dump(mode="json", by_alias=True, exclude_none=True)
        if info
        else None,
        instructions=client.instructions,
    )
    state.phase = "tools/list"
    cursor: str | None = None
    seen: set[str] = set()
    for page in range(1, max_pages + 1):
        result = await client.list_tools(cursor=cursor)
        listing.tools += [
            t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in result.tools
        ]
        if len(listing.tools) > MAX_TOOLS:
            raise NotDescribable(
                None, f"the server lists more than {MAX_TOOLS} tools; at most that many are read"
            )
        cursor = result.next_cursor
        if cursor is None:
            return listing
        if cursor in seen:
            raise NotDescribable(
                None,
                f"tools/list page {page + 1} was asked for with a cursor the server "
                f"gave before ({cursor[:60]!r}); the listing would never end",
            )
        seen.add(cursor)
    raise NotDescribable(None, f"tools/list goes on past {max_pages} pages; stopped there")


def fetch(
    endpoint: Endpoint, *, timeout: float = FETCH_TIMEOUT, max_pages: int = MAX_PAGES
) -> Listing:
    """Connect to the server, and read what it says about itself and every tool it lists
    (all pages, following `nextCursor`), within `timeout` seconds."""

    async def exchange(client: Client, state: _State) -> Listing:
        return await _listing(client, state, endpoint, max_pages)

    return run(endpoint, exchange, timeout=timeout, invalid_is_data=True)


def call_tool(
    endpoint: Endpoint, name: str, arguments: dict[str, Any], *, timeout: float
) -> dict[str, Any]:
    """Call tool `name` (its MCP name) with `arguments`; the `CallToolResult` as JSON."""

    async def exchange(client: Client, state: _State) -> dict[str, Any]:
        state.phase = f"tools/call {name}"
        result = await client.call_tool(name, arguments)
        return result.model_dump(mode="json", by_alias=True, exclude_none=True)

    return run(endpoint, exchange, timeout=timeout)


# -- failures ------------------------------------------------------------------------------


_OURS = ("builtins", "mcp", "mcp_types", "httpx2", "httpcore", "anyio", "asyncio", "pydantic")
"""Where the exceptions of an exchange come from; any other comes from outside it."""


def _leaves(exc: BaseException) -> list[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for inner in exc.exceptions for leaf in _leaves(inner)]
    return [exc]


def _failure(
    exc: Exception, endpoint: Endpoint, state: _State, timeout: float, invalid_is_data: bool
) -> McpError:
    """The one error that `exc` (perhaps a group of them) means."""
    import httpx2
    from mcp.shared.exceptions import MCPError
    from pydantic import ValidationError

    leaves = _leaves(exc)
    for leaf in leaves:
        if isinstance(leaf, McpError):  # raised by the exchange itself, already ours
            return leaf
        if not type(leaf).__module__.startswith(_OURS):
            # not the exchange's: a caller's signal handler (a deadline), say; it goes on
            raise leaf
    where = endpoint.where
    stderr = state.stderr()
    for leaf in leaves:
        if isinstance(leaf, TimeoutError | httpx2.TimeoutException):
            return ServerTimeout(where, timeout, stderr=stderr, said=state.said())
    for leaf in leaves:
        if isinstance(leaf, ValidationError):
            first = leaf.errors()[0] if leaf.errors() else {"loc": (), "msg": str(leaf)}
            loc = ".".join(str(p) for p in first.get("loc", ()))
            what = f"{state.phase} answer is not valid MCP: {loc}: {first.get('msg')}"
            if invalid_is_data and state.phase == "tools/list":
                return NotDescribable(None, f"the {what}" + _which_tool(first.get("loc", ())))
            return ServerFailed(where, f"{where}: the {what}", stderr=stderr)
    leaf = leaves[0]
    if isinstance(leaf, MCPError):
        reason = f"{leaf.error.message} (MCP error {leaf.error.code})"
    elif isinstance(leaf, OSError):
        reason = leaf.strerror or str(leaf) or type(leaf).__name__
    else:
        reason = str(leaf) or type(leaf).__name__
    return ServerFailed(
        where, f"{where}: {state.phase} failed: {reason}{state.said()}", stderr=stderr
    )


def _which_tool(loc: Any) -> str:
    """` (tool N of the page)` for a location like `('tools', 3, 'inputSchema')`."""
    parts = list(loc)
    if len(parts) > 1 and parts[0] == "tools" and isinstance(parts[1], int):
        return f" (tool {parts[1] + 1} of its page)"
    return ""


def _last_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    return lines[-1].strip()[:300] if lines else ""
