"""The one way atipkit serves MCP: a low-level SDK `Server` over stdio, or over streamable
HTTP at `/mcp` behind `atipkit.serve.guard`, for `atipkit.app`'s servers and the gateway.

Both transports may run a task beside the server for as long as it serves (the gateway
watches the registry); over HTTP it runs inside the SDK's own lifespan, so it starts
after the session manager and stops before it. HTTP is served by `atipkit.serve.run`,
the uvicorn start-up of every server atipkit runs.

Over stdio, stdout carries protocol only: the SDK points the process's stdout at stderr
while it serves, so whatever a command prints goes there.

Both servers ask the human at the client the same way (`ask_yes_no`): one form
elicitation with a single boolean, to clients that offer elicitation (`can_elicit`).
"""

from __future__ import annotations

import contextlib
import difflib
from collections.abc import Callable, Coroutine, Iterable
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from mcp.server.lowlevel import Server

    from atipkit.serve.front import Front, Handover
    from atipkit.serve.guard import Rules

Background = Callable[[], Coroutine[Any, Any, None]]
"""A task that runs beside the server while it serves, cancelled when it stops."""

__all__ = [
    "Background",
    "ask_yes_no",
    "can_elicit",
    "http_app",
    "in_rounds",
    "serve_stdio",
    "unknown_tool",
    "yes_no_answer",
    "yes_no_schema",
]

Answer = Literal["yes", "no", "cancel"]
"""What the human said: yes, no (declined, or accepted with the box unticked), or
nothing (the question was dismissed)."""


def can_elicit(ctx: Any) -> bool:
    """Whether the client of this request can be asked: it declared elicitation, and
    the connection carries requests from server to client."""
    session = getattr(ctx, "session", None)
    capabilities = getattr(session, "client_capabilities", None)
    return (
        capabilities is not None
        and capabilities.elicitation is not None
        and bool(getattr(session, "can_send_request", False))
    )


INPUT_ROUNDS_VERSION = "2026-07-28"
"""The first protocol revision that asks inside a call's result (`InputRequiredResult`,
answered by calling again) instead of by a request from server to client."""


def in_rounds(ctx: Any) -> bool:
    """Whether this request's session asks through `InputRequiredResult`: the
    2026-07-28 protocol or later, and a client that declared elicitation."""
    from mcp.types.version import is_version_at_least

    version = getattr(ctx, "protocol_version", None)
    capabilities = getattr(getattr(ctx, "session", None), "client_capabilities", None)
    return (
        isinstance(version, str)
        and is_version_at_least(version, INPUT_ROUNDS_VERSION)
        and capabilities is not None
        and capabilities.elicitation is not None
    )


def yes_no_schema(title: str) -> dict[str, Any]:
    """The form of a yes/no question: one boolean, `confirm`, unticked by default."""
    return {
        "type": "object",
        "properties": {"confirm": {"type": "boolean", "title": title, "default": False}},
        "required": ["confirm"],
    }


def yes_no_answer(result: Any) -> Answer:
    """What an `ElicitResult` (or its JSON) says to a `yes_no_schema` form."""
    get = result.get if isinstance(result, dict) else lambda key: getattr(result, key, None)
    content = get("content")
    if get("action") == "accept":
        return "yes" if isinstance(content, dict) and content.get("confirm") is True else "no"
    return "no" if get("action") == "decline" else "cancel"


async def ask_yes_no(ctx: Any, message: str, title: str) -> Answer:
    """Ask the human at the client a yes/no question (`can_elicit` first), with the
    form of `yes_no_schema`."""
    return yes_no_answer(
        await ctx.session.elicit_form(message, yes_no_schema(title), ctx.request_id)
    )


def unknown_tool(name: str, known: Iterable[str]) -> Exception:
    """The protocol's answer to a call of a tool the server never listed: INVALID_PARAMS,
    with the nearest names as `did_you_mean`."""
    import mcp.types as types
    from mcp.shared.exceptions import MCPError

    close = difflib.get_close_matches(name, list(known), n=3)
    return MCPError(types.INVALID_PARAMS, f"Unknown tool: {name}", {"did_you_mean": close})


def serve_stdio(server: Server | Front, background: Background | None = None) -> None:
    """Serve one client over stdin and stdout until it goes. Given a `Front`, the
    handshake and the first tool lists are answered before the SDK is imported
    (`atipkit.serve.front`), unless `ATIP_MCP_FRONT=0`."""
    import atipkit.serve.front as fronts

    handover = None
    if isinstance(server, fronts.Front):
        if not fronts.enabled():
            server = server.build()
        else:
            handover = fronts.run(server)
            if handover is None:
                return  # the client went before asking anything of the SDK
            server = handover.server
    import anyio

    try:
        anyio.run(_stdio, server, background, handover, backend="asyncio")
    finally:
        if handover is not None:
            handover.restore()


async def _stdio(server: Server, background: Background | None, handover: Handover | None) -> None:
    import anyio
    from mcp.server.stdio import stdio_server

    stdin = None if handover is None else anyio.wrap_file(handover.stdin())
    async with anyio.create_task_group() as tasks:
        if background is not None:
            tasks.start_soon(background)
        async with stdio_server(stdin=stdin) as (read, write):
            if handover is not None:
                write = _Dropping(write, handover)
            await server.run(read, write, server.create_initialization_options())
        tasks.cancel_scope.cancel()


class _Dropping:
    """The write stream of a server handed over by the front: the answers to the
    requests the front replayed are dropped, each compared with the front's first."""

    def __init__(self, inner: Any, handover: Handover) -> None:
        self.inner = inner
        self.handover = handover

    async def send(self, item: Any, /) -> None:
        message = getattr(item.message, "root", item.message)
        identifier = getattr(message, "id", None)
        expected = None
        if isinstance(identifier, str):
            expected = self.handover.answered.pop(identifier, None)
        if expected is None or not isinstance(identifier, str):
            await self.inner.send(item)
            return
        sent = item.message.model_dump_json(by_alias=True, exclude_unset=True).encode()
        front = b'{"jsonrpc":"2.0","id":"' + identifier.encode() + b'","result":' + expected + b"}"
        if sent != front:
            self.handover.log(
                "warning: the stdio front answered a request otherwise than the MCP SDK "
                f"does (set ATIP_MCP_FRONT=0 and report it):\n  front: {front.decode()}\n"
                f"  SDK:   {sent.decode()}"
            )

    async def aclose(self) -> None:
        await self.inner.aclose()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def __aenter__(self) -> _Dropping:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


def http_app(server: Server, host: str, rules: Rules, background: Background | None = None) -> Any:
    """The ASGI app of streamable HTTP at `/mcp` (serve it with `atipkit.serve.run`),
    behind `atipkit.serve.guard` with `rules` in place of the SDK's own Host and Origin
    check, which lets any page of `http://localhost:<any port>` call the tools."""
    from atipkit.serve.guard import guard, json_refusal, mcp_security

    web = server.streamable_http_app(host=host, transport_security=mcp_security())
    if background is not None:
        inner = web.router.lifespan_context

        @contextlib.asynccontextmanager
        async def lifespan(app: Any) -> Any:
            import anyio

            async with inner(app) as state, anyio.create_task_group() as tasks:
                tasks.start_soon(background)
                yield state
                tasks.cancel_scope.cancel()

        web.router.lifespan_context = lifespan
    return guard(web, rules, json_refusal, ("GET", "POST", "DELETE", "OPTIONS"))
