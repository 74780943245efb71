"""The live gateway: the MCP server over the current catalog, kept up with the registry,
telling clients when the tool list changes, asking humans through elicitation."""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from atipkit.errors import AtipError
from atipkit.serve import deferred as deferring
from atipkit.serve.deferred import RUN_TOOL, SCHEMA_TOOL, SEARCH_TOOL
from atipkit.serve.gateway.catalog import RUN_INPUT, Ask, GatewayCatalog
from atipkit.serve.gateway.selection import Loaded, Selection, fingerprint, load

if TYPE_CHECKING:
    from mcp.server.lowlevel import Server
    from mcp.types import CallToolResult

    from atipkit.bridge.calls import ToolCall
    from atipkit.bridge.result_filter import ResultFilter
    from atipkit.execute.audit import AuditLog
    from atipkit.policy import Decision, Policy
    from atipkit.registry.local import LocalRegistry
    from atipkit.serve.front import Identity
    from atipkit.serve.guard import Rules
    from atipkit.serve.mcp import Background

PAGE_SIZE = 500
"""Tools a `tools/list` page: a gateway over a whole machine may offer thousands."""
INTERVAL = 2.0
"""Seconds between two looks at the registry and the `--tool` files."""


@dataclass
class Gateway:
    """A live gateway: the current catalog, how to rebuild it, and who to tell when its
    tool list changes."""

    selection: Selection
    policy: Policy | None = None
    result_filter: ResultFilter | None = None
    audit: AuditLog | None = None
    """Where every call's decision is appended (JSONL), if anywhere."""
    deferred: bool = False
    yes: bool = False
    """Confirm what the policy wants confirmed without asking (never what it denies)."""
    registry: LocalRegistry | None = None
    log: Callable[[str], None] = field(default=lambda line: print(line, file=sys.stderr))
    catalog: GatewayCatalog = field(init=False)
    _seen: tuple[Any, ...] = field(init=False, default=())
    _sessions: dict[int, Any] = field(init=False, default_factory=dict)
    _bus: Any = field(init=False, default=None)

    def __post_init__(self) -> None:
        from atipkit.registry.local import LocalRegistry

        self.registry = self.registry or LocalRegistry()
        loaded = load(self.selection, self.registry)
        self._seen = fingerprint(self.selection, self.registry)
        self.catalog = self._build(loaded, 0)

    def _build(self, loaded: Loaded, version: int, billable_used: int = 0) -> GatewayCatalog:
        for line in loaded.skipped:
            self.log(f"skipped {line}")
        for line in loaded.renamed:
            self.log(f"warning: {line}")
        catalog = GatewayCatalog(
            loaded,
            policy=self.policy,
            result_filter=self.result_filter,
            audit=self.audit,
            version=version,
            billable_used=billable_used,  # the budget is the gateway's, not a catalog's
        )
        for line in catalog.warnings:
            self.log(f"warning: {line}")
        if self.deferred:
            catalog.index  # noqa: B018  (built here, off the event loop, not at the first search)
        return catalog

    # Keeping up with the registry -----------------------------------------------------

    def reload(self) -> bool:
        """Look at the registry and files again (blocking) and serve what is there now;
        True when the tool list a client sees changed. A look that fails keeps the catalog
        there was, and says why."""
        assert self.registry is not None
        seen = fingerprint(self.selection, self.registry)
        if seen == self._seen:
            return False
        try:
            loaded = load(self.selection, self.registry)
        except (AtipError, OSError, ValueError) as exc:
            self.log(f"warning: the tools could not be read again, still offering the last: {exc}")
            self._seen = seen
            return False
        self._seen = fingerprint(self.selection, self.registry)  # resolving may record
        old = self.catalog
        catalog = self._build(loaded, old.version, old.executor.billable_used)
        changed = catalog.definitions != old.definitions
        if changed:
            catalog.version += 1  # cursors of the old list are refused
            self.log(f"the tool list changed: {len(catalog.names)} tools")
        # the new catalog serves from now on even when clients would see the same list: a
        # tool may have moved or been upgraded (its executable) without that showing
        self.catalog = catalog
        return changed

    async def watch(self, interval: float = INTERVAL) -> None:
        """Reload every `interval` seconds and tell clients about each change, until
        cancelled."""
        import anyio

        while True:
            await anyio.sleep(interval)
            if await anyio.to_thread.run_sync(self.reload):
                await self.notify()

    async def notify(self) -> None:
        """Tell every client that may care that the tool list changed."""
        from mcp.server.subscriptions import ToolsListChanged

        if self._bus is not None:
            await self._bus.publish(ToolsListChanged())
        for key, session in list(self._sessions.items()):
            try:
                await session.send_tool_list_changed()
            except Exception:  # the client is gone: nothing to tell
                self._sessions.pop(key, None)

    def _remember(self, session: Any) -> None:
        """A handshake-era session that listed tools is told when they change (modern
        sessions listen on `subscriptions/listen` instead)."""
        from mcp.types.version import HANDSHAKE_PROTOCOL_VERSIONS

        if session.protocol_version in HANDSHAKE_PROTOCOL_VERSIONS:
            connection = getattr(session, "_connection", session)  # one entry a connection
            self._sessions[id(connection)] = session

    # Answers --------------------------------------------------------------------------

    def listing(self, catalog: GatewayCatalog, cursor: str | None) -> tuple[list[Any], str | None]:
        """One page of `catalog`'s tools (the SDK's `Tool`s), and the cursor of the next
        (None at the end)."""
        if self.deferred:
            return catalog.sdk_deferred, None
        start, end, following = self._page(catalog, cursor)
        return catalog.sdk_tools[start:end], following

    def definitions(self, cursor: str | None) -> tuple[list[dict[str, Any]], str | None] | None:
        """The page `listing` gives, as the definitions (the stdio front's listing,
        without the SDK), or None for a cursor that `listing` refuses."""
        catalog = self.catalog
        if self.deferred:
            return catalog.deferred, None
        try:
            start, end, following = self._page(catalog, cursor)
        except ValueError:
            return None
        return list(catalog.definitions.values())[start:end], following

    @staticmethod
    def _page(catalog: GatewayCatalog, cursor: str | None) -> tuple[int, int, str | None]:
        start = 0
        if cursor is not None:
            version, _, offset = cursor.partition(":")
            if version != str(catalog.version) or not offset.isdigit():
                raise ValueError(
                    f"cursor {cursor!r} is not one this gateway gave, or the tool list "
                    "changed since: list again from the start"
                )
            start = int(offset)
        end = min(start + PAGE_SIZE, len(catalog.names))
        end = max(end, start)
        return start, end, f"{catalog.version}:{end}" if end < len(catalog.names) else None

    def input_schema(self, name: str) -> dict[str, Any] | None:
        if self.deferred:
            return deferring.input_schema(name, RUN_INPUT)
        found = self.catalog.definitions.get(name)
        return None if found is None else found["inputSchema"]

    async def call(self, ctx: Any, name: str, arguments: dict[str, Any]) -> CallToolResult:
        """Answer a tools/call: a tool of the catalog, or one of the deferred three (or
        an old name of one, `deferring.ALIASES`). A
        failure of the gateway itself (a bug) is logged whole and answered as an error that
        says so, never with the exception's text: that is the gateway's, not the client's."""
        from mcp.shared.exceptions import MCPError

        try:
            return await self._call(ctx, name, arguments)
        except MCPError:  # the protocol's own answers (an unknown tool)
            raise
        except Exception:
            import traceback

            self.log(
                f"error: tools/call {name!r} failed inside the gateway:\n{traceback.format_exc()}"
            )
            return _error(
                f"the gateway failed to complete this call of {name!r} (an internal error, "
                "logged on the gateway's side); whether the command ran is not known",
                {"name": name},
            )

    async def _call(self, ctx: Any, name: str, arguments: dict[str, Any]) -> CallToolResult:
        from atipkit.serve.mcp import unknown_tool

        catalog = self.catalog
        if self.deferred:
            tool = deferring.canonical(name)
            if tool is None:
                raise unknown_tool(name, deferring.TOOLS)
            return await self._deferred(ctx, catalog, tool, arguments)
        if name not in catalog.definitions:
            raise unknown_tool(name, catalog.names)
        return await self._run(ctx, catalog, name, arguments)

    async def _deferred(
        self, ctx: Any, catalog: GatewayCatalog, tool: str, arguments: dict[str, Any]
    ) -> CallToolResult:
        todo = deferring.handle(tool, arguments, catalog, RUN_INPUT)
        if isinstance(todo, deferring.Refusal):
            hint = f" {todo.suggestion}" if todo.suggestion else ""
            return _error(f"{todo.message}{hint}", todo.details)
        if isinstance(todo, deferring.Answered):
            return _answer(todo.value)
        return await self._run(ctx, catalog, todo.name, todo.arguments)

    async def _run(
        self, ctx: Any, catalog: GatewayCatalog, name: str, arguments: dict[str, Any]
    ) -> CallToolResult:
        import anyio
        import mcp.types as types

        ask = self._asker(ctx)
        outcome = await anyio.to_thread.run_sync(catalog.call, name, arguments, ask)
        report = outcome.report()
        if outcome.stopped == "unconfirmed" and ask is None:
            report["text"] += (
                " (this MCP client cannot be asked to confirm: the gateway asks through "
                "elicitation. Start it with --yes, or with a policy that allows the call.)"
            )
        return types.CallToolResult(
            content=[types.TextContent(text=report["text"])],
            structured_content=report,
            is_error=outcome.is_error,
        )

    def _asker(self, ctx: Any) -> Ask | None:
        """How this call's confirmations are answered: yes with `--yes`; else the human
        at the client, through elicitation, if the client offers it; else nobody."""
        if self.yes:
            return lambda _call, _decision: True
        from atipkit.serve.mcp import ask_yes_no, can_elicit

        if not can_elicit(ctx):
            return None
        import anyio.from_thread

        def ask(call: ToolCall, decision: Decision) -> bool:
            what = " ".join([call.tool or call.name, *(call.path or ())])
            message = f"Run {what}? The policy asks: {'; '.join(decision.reasons)}."
            return anyio.from_thread.run(ask_yes_no, ctx, message, f"Run {what}") == "yes"

        return ask

    # The MCP server -------------------------------------------------------------------

    def server(self) -> Server:
        """The low-level MCP server of this gateway."""
        import mcp.types as types
        from mcp.server.lowlevel import NotificationOptions, Server
        from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler
        from mcp.shared.exceptions import MCPError

        gateway = self
        self._bus = InMemorySubscriptionBus()

        async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
            gateway._remember(ctx.session)
            catalog = gateway.catalog
            cursor = getattr(params, "cursor", None) if params is not None else None
            try:
                tools, following = gateway.listing(catalog, cursor)
            except ValueError as exc:
                raise MCPError(types.INVALID_PARAMS, str(exc)) from None
            return types.ListToolsResult(
                tools=tools,
                next_cursor=following,
            )

        async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> CallToolResult:
            arguments = {} if params.arguments is None else dict(params.arguments)
            return await gateway.call(ctx, params.name, arguments)

        class _Server(Server):
            def create_initialization_options(self, notification_options=None, *a, **k):
                # the handshake era's listChanged is claimed here, since the tool list
                # follows the registry (streamable HTTP asks without options)
                options = notification_options or NotificationOptions(tools_changed=True)
                return super().create_initialization_options(options, *a, **k)

        identity = self.identity()
        return _Server(
            identity.name,
            **identity.server_fields(),
            get_tool_input_schema=self.input_schema,
            on_list_tools=list_tools,
            on_call_tool=call_tool,
            on_subscriptions_listen=ListenHandler(self._bus),
        )

    def identity(self) -> Identity:
        """What the gateway says of itself at `initialize` (the SDK server's fields, and
        the stdio front's answer before the SDK is imported)."""
        from atipkit._version import __version__
        from atipkit.serve.front import Identity

        tools = sorted({t.name for t in self.catalog.loaded.tools})
        how = (
            f"find a command with {SEARCH_TOOL}, read its schema with {SCHEMA_TOOL}, run it "
            f"with {RUN_TOOL}"
            if self.deferred
            else "each tool is one command"
        )
        instructions = (
            f"Command-line tools described by ATIP ({', '.join(tools[:12])}"
            f"{' and more' if len(tools) > 12 else ''}): {how}. A call runs the command under "
            "the gateway's policy and answers with its (filtered) output; the description's "
            "[...] suffix states what a command may destroy or cost. structuredContent says "
            "what happened: decision, reasons, argv, exitCode."
        )
        return Identity(
            "atip-gateway",
            version=__version__,
            title="ATIP gateway",
            description="Command-line tools described by ATIP, as MCP tools.",
            instructions=instructions,
            website_url="https://atip.dev",
            list_changed=True,  # the handshake era's listChanged, as the server claims it
        )

    def serve_stdio(self, interval: float = INTERVAL) -> None:
        """Serve one client over stdin/stdout until it goes (`atipkit.serve.mcp`),
        watching the registry every `interval` seconds (0: never)."""
        from atipkit.serve.front import Front
        from atipkit.serve.mcp import serve_stdio

        front = Front(self.identity(), self.definitions, self.server, self.log)
        serve_stdio(front, self._watcher(interval))

    def http_app(
        self, host: str = "127.0.0.1", interval: float = INTERVAL, rules: Rules | None = None
    ) -> Any:
        """The ASGI app of streamable HTTP at `/mcp` (`atipkit.serve.mcp`; serve it with
        `atipkit.serve.run`), watching the registry every `interval` seconds (0: never)
        while it runs, behind `atipkit.serve.guard` with `rules` (default: those of a
        server on `host` with no other names or origins allowed)."""
        from atipkit.serve.guard import Rules as GuardRules
        from atipkit.serve.mcp import http_app

        return http_app(self.server(), host, rules or GuardRules(host), self._watcher(interval))

    def _watcher(self, interval: float) -> Background | None:
        if interval <= 0:
            return None
        return functools.partial(self.watch, interval)


def _answer(value: dict[str, Any]) -> CallToolResult:
    import mcp.types as types

    return types.CallToolResult(
        content=[types.TextContent(text=json.dumps(value, ensure_ascii=False))],
        structured_content=value,
        is_error=False,
    )


def _error(message: str, details: dict[str, Any] | None = None) -> CallToolResult:
    import mcp.types as types

    return types.CallToolResult(
        content=[types.TextContent(text=message)],
        structured_content={"error": message, **(details or {})},
        is_error=True,
    )
