"""The MCP gateway: ATIP tools for agents that only speak MCP (`atip mcp serve`).

    atip mcp serve --only gh,kubectl            # stdio: one MCP tool a command
    atip mcp serve --all --policy policy.json   # every tool in the registry
    atip mcp serve --all --deferred             # search_tools, get_tool_schema, call_tool
    atip mcp serve --tool imported.json --transport http --port 8080

What a client sees, and why:

- Tools come from the bridge's MCP compiler (`atipkit.bridge.compile_tools(..., "mcp")`),
  the same names, input schemas, safety suffixes and hints that `atip compile --provider
  mcp` prints, so a command is described once for every consumer. A call is mapped back
  through the compile's bindings, never by splitting the name.
- A call runs through `atipkit.execute.Executor`: the policy decides (`--policy`), argv is
  built from the command's own arguments and options, the command runs with its declared
  timeout, and its output goes through the result filter (secrets redacted, terminal
  escapes stripped, long output cut in the middle) before the client sees it. The answer
  is the filtered text, `isError` when the command failed or did not run, and
  `structuredContent` with what happened: decision, reasons, argv, exit code.
- What the policy wants confirmed (a destructive command, a billable one over budget) is
  asked through MCP elicitation, when the client offers it: the human at the client says
  yes or no. A client that cannot be asked gets a denial that says how to allow the call
  (`--yes` when starting the gateway, or a policy that allows it). Nothing the policy
  denies runs, `--yes` or not.
- The list follows the registry: the gateway checks `registry.json` and the `--tool`
  files every `interval` seconds, rebuilds the catalog when they change, and tells clients
  when the list of tools changed — `notifications/tools/list_changed` to handshake-era
  sessions that have listed tools, a `ToolsListChanged` event on `subscriptions/listen`
  streams (2026-07-28).
- `tools/list` is paginated (`PAGE_SIZE` tools a page; a cursor names the catalog it came
  from, so a cursor from before a change is refused, not silently misread).

Deferred mode lists three tools instead: `search_tools` (words → the best matching
commands, each with its name, title, description and hints: `atipkit.search`),
`get_tool_schema` (a name → the tool definition, as `tools/list` would give it) and
`call_tool` (a name and its arguments → the same answer as calling the tool directly).
"""

from __future__ import annotations

import difflib
import functools
import json
import os
import sys
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from atipkit.errors import AtipError

if TYPE_CHECKING:
    from mcp.server.lowlevel import Server
    from mcp.types import CallToolResult

    from atipkit.bridge.calls import ToolCall
    from atipkit.bridge.result_filter import ResultFilter
    from atipkit.execute.executor import Outcome
    from atipkit.execute.policy import Decision
    from atipkit.model import Tool
    from atipkit.policy import Policy
    from atipkit.registry.local import LocalRegistry
    from atipkit.search import KeywordIndex

__all__ = [
    "CALL_TOOL",
    "PAGE_SIZE",
    "SCHEMA_TOOL",
    "SEARCH_TOOL",
    "Catalog",
    "Gateway",
    "GatewayError",
    "Loaded",
    "Selection",
    "Unavailable",
    "load",
]

SEARCH_TOOL = "search_tools"
SCHEMA_TOOL = "get_tool_schema"
CALL_TOOL = "call_tool"
DEFERRED_TOOLS = (SEARCH_TOOL, SCHEMA_TOOL, CALL_TOOL)
SEARCH_LIMIT = 10
PAGE_SIZE = 500
"""Tools a `tools/list` page: a gateway over a whole machine may offer thousands."""
INTERVAL = 2.0
"""Seconds between two looks at the registry and the `--tool` files."""


class GatewayError(AtipError):
    """The gateway cannot offer what it was asked to: two tools of one name."""


class Unavailable(GatewayError):
    """A tool or file the selection names cannot be had: `cause` says why (`ToolNotFound`,
    `NoMetadata`, `RegistryError`, `DocumentError`, `OSError`), `name` which one."""

    def __init__(self, name: str, cause: Exception) -> None:
        super().__init__(f"{name}: {cause}")
        self.name = name
        self.cause = cause


# What to offer ------------------------------------------------------------------------


@dataclass(frozen=True)
class Selection:
    """Which tools the gateway offers: tools named on PATH or in the registry (`names`),
    every tool of the registry (`every`), and ATIP documents (`files`)."""

    names: tuple[str, ...] = ()
    every: bool = False
    files: tuple[Path, ...] = ()

    def __post_init__(self) -> None:
        if not (self.names or self.every or self.files):
            raise ValueError("a selection names tools, files, or every tool")


class Loaded(NamedTuple):
    """The tools of one look at the selection, where to run each, and what was left out
    (a registry entry that no longer resolves: one line each, for the log)."""

    tools: list[Tool]
    executables: dict[str, str]
    skipped: list[str]


def load(selection: Selection, registry: LocalRegistry | None = None) -> Loaded:
    """The tools `selection` names, now. A named tool or file that cannot be had raises
    `Unavailable`, two tools of one name `GatewayError`; with `every`, a registry entry
    that no longer resolves is skipped and reported."""
    from atipkit.model import load as load_document
    from atipkit.registry.local import LocalRegistry
    from atipkit.resolve import NoMetadata, ToolNotFound, resolve_tool

    registry = registry or LocalRegistry()
    tools: list[Tool] = []
    executables: dict[str, str] = {}
    skipped: list[str] = []
    origin: dict[str, str] = {}

    def add(tool: Tool, where: str, path: str | None = None) -> None:
        if tool.name in origin:
            if where.startswith("registry"):
                return  # named explicitly as well: the explicit one stays
            raise GatewayError(f"two tools named {tool.name!r}: {origin[tool.name]} and {where}")
        origin[tool.name] = where
        tools.append(tool)
        if path:
            executables[tool.name] = path

    for file in selection.files:
        try:
            document = load_document(file)
        except (AtipError, OSError) as exc:
            raise Unavailable(str(file), exc) from exc
        add(document, str(file))
    for name in selection.names:
        try:
            resolved = resolve_tool(name, registry=registry)
        except (AtipError, OSError) as exc:
            raise Unavailable(name, exc) from exc
        add(resolved.tool, name, resolved.path)
    if selection.every:
        try:
            entries = registry.read().tools
        except AtipError as exc:
            raise Unavailable(str(registry.index_path), exc) from exc
        for name in sorted(entries):
            if name in origin:
                continue
            try:
                resolved = resolve_tool(name, registry=registry)
            except (ToolNotFound, NoMetadata) as exc:
                skipped.append(f"{name}: {exc}")
                continue
            add(resolved.tool, f"registry entry {name}", resolved.path)
    return Loaded(tools, executables, skipped)


def fingerprint(selection: Selection, registry: LocalRegistry) -> tuple[Any, ...]:
    """What changes when the tools may have: the registry index and the `--tool` files
    (identity, size and modification time; a file that is gone is `None`)."""

    def stat(path: Path) -> tuple[int, int, int, int] | None:
        try:
            found = os.stat(path)
        except OSError:
            return None
        return (found.st_dev, found.st_ino, found.st_size, found.st_mtime_ns)

    watched = [registry.index_path] if (selection.names or selection.every) else []
    return tuple(stat(Path(p)) for p in [*watched, *selection.files])


# One version of the tool list ---------------------------------------------------------

Ask = Callable[["ToolCall", "Decision"], bool]


class Catalog:
    """The tools of one `Loaded`: their MCP definitions, the name table back to commands,
    search, and the executor that runs calls. Immutable once built: a change of the
    registry builds a new one, and calls in progress finish with the one they began in."""

    def __init__(
        self,
        loaded: Loaded,
        *,
        policy: Policy | None = None,
        result_filter: ResultFilter | None = None,
        version: int = 0,
    ) -> None:
        from atipkit.bridge import compile_tools
        from atipkit.execute import Executor

        self.version = version
        self.loaded = loaded
        self.compiled = compile_tools(loaded.tools, "mcp")
        self.definitions = {d["name"]: d for d in self.compiled.tools}
        self.names = list(self.definitions)
        self._asker = threading.local()
        self._sdk: dict[bool, dict[str, Any]] = {False: {}, True: {}}
        self.executor = Executor(
            loaded.tools,
            policy=policy,
            result_filter=result_filter,
            executables=loaded.executables,
            confirm=self._confirm,
        )

    @functools.cached_property
    def deferred(self) -> list[dict[str, Any]]:
        """The three tools of deferred mode over this catalog."""
        return deferred_definitions(self)

    @property
    def warnings(self) -> list[str]:
        return [f"{w.path}: {w.message}" if w.path else w.message for w in self.compiled.warnings]

    def sdk_tools(self, definitions: list[dict[str, Any]], *, deferred: bool) -> list[Any]:
        """The SDK's `Tool` objects of `definitions` (this catalog's tools, or its deferred
        three), each validated once: lists are asked for often, definitions never change."""
        import mcp.types as types

        cache = self._sdk[deferred]
        out = []
        for definition in definitions:
            found = cache.get(definition["name"])
            if found is None:
                found = cache[definition["name"]] = types.Tool.model_validate(definition)
            out.append(found)
        return out

    def same_tools(self, other: Catalog) -> bool:
        """Whether a client would see the same list from both."""
        return self.definitions == other.definitions

    # Search ---------------------------------------------------------------------------

    @functools.cached_property
    def index(self) -> KeywordIndex:
        """The words of each tool: its command, its description, its parameters."""
        from atipkit.search import KeywordIndex

        documents = []
        for flat in self.compiled.flat:
            target = next(iter(flat.binding.targets.values()))
            properties = flat.input_schema.get("properties", {})
            documents.append(
                {
                    "name": " ".join([target.tool, *target.path]),
                    "text": flat.summary,
                    "params": " ".join(
                        f"{key} {schema.get('description', '')}"
                        for key, schema in properties.items()
                    ),
                }
            )
        return KeywordIndex(documents, {"name": 3.0, "text": 2.0, "params": 1.0}, self.names)

    def search(self, query: str, limit: int = SEARCH_LIMIT) -> list[dict[str, Any]]:
        """The tools sharing words with `query`, best first: name, title, description
        and hints of each, not the schema (`get_tool_schema` gives that)."""
        out = []
        for index in self.index.search(query, limit):
            definition = self.definitions[self.names[index]]
            out.append(
                {key: definition[key] for key in ("name", "title", "description", "annotations")}
            )
        return out

    def near(self, name: str) -> list[str]:
        return difflib.get_close_matches(name, self.names, n=3)

    # Calls ----------------------------------------------------------------------------

    def call(
        self, name: str, arguments: dict[str, Any], ask: Ask | None = None
    ) -> tuple[Outcome, dict[str, Any]]:
        """Run tool `name` with `arguments` (blocking: call it from a worker thread).
        `ask` is asked about what the policy wants confirmed; without it, such calls are
        denied. Answers the executor's outcome and the report for `structuredContent`."""
        from atipkit.bridge import parse_tool_calls

        [call] = parse_tool_calls("mcp", {"name": name, "arguments": arguments}, self.compiled)
        self._asker.value = ask
        try:
            outcome = self.executor.execute(call)
        finally:
            self._asker.value = None
        return outcome, report(outcome)

    def _confirm(self, call: ToolCall, decision: Decision) -> bool:
        ask: Ask | None = getattr(self._asker, "value", None)
        return ask is not None and ask(call, decision)


def report(outcome: Outcome) -> dict[str, Any]:
    """What happened to a call, for machines: the same fields as `atip run`'s result."""
    call = outcome.call
    return {
        "call": {"name": call.name, "tool": call.tool, "command": list(call.path or ())},
        "decision": outcome.decision.action,
        "reasons": outcome.decision.reasons,
        "argv": outcome.invocation.argv if outcome.invocation else None,
        "exitCode": outcome.result.exit_code if outcome.result else None,
        "isError": outcome.is_error,
        "stopped": outcome.stopped,
        "text": outcome.text,
    }


# The deferred tools -------------------------------------------------------------------

_NAME = {"type": "string", "minLength": 1, "description": "A name from search_tools."}
SEARCH_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "query": {
            "type": "string",
            "minLength": 1,
            "description": "Words from what the command does, its name or its parameters.",
        },
        "limit": {
            "type": "integer",
            "minimum": 1,
            "maximum": 50,
            "default": SEARCH_LIMIT,
            "description": "At most this many tools.",
        },
    },
    "required": ["query"],
    "additionalProperties": False,
}
NAME_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"name": _NAME},
    "required": ["name"],
    "additionalProperties": False,
}
CALL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": _NAME,
        "arguments": {
            "type": "object",
            "default": {},
            "description": "The tool's arguments, as its input schema says (get_tool_schema).",
        },
    },
    "required": ["name"],
    "additionalProperties": False,
}
_DEFERRED_INPUTS = {SEARCH_TOOL: SEARCH_SCHEMA, SCHEMA_TOOL: NAME_SCHEMA, CALL_TOOL: CALL_SCHEMA}
_LOOKUP_HINTS = {
    "readOnlyHint": True,
    "destructiveHint": False,
    "idempotentHint": True,
    "openWorldHint": False,
}


def deferred_definitions(catalog: Catalog) -> list[dict[str, Any]]:
    """The three tools of deferred mode. `call_tool` may run any tool, so its hints and
    safety suffix are those of all tools together (the worst case)."""
    from atipkit.bridge.mcp import annotations
    from atipkit.bridge.safety import combine, suffix

    combined = combine([flat.effects for flat in catalog.compiled.flat])
    count = len(catalog.names)
    tools = sorted({t.name for t in catalog.loaded.tools})
    shown = ", ".join(tools[:8]) + (f" and {len(tools) - 8} more" if len(tools) > 8 else "")
    call_text = (
        f"Run one of the {count} commands by name: find it with {SEARCH_TOOL}, read its "
        f"input schema with {SCHEMA_TOOL}, pass its arguments here."
    )
    return [
        {
            "name": SEARCH_TOOL,
            "title": "Search the command-line tools",
            "description": f"Find commands of {shown or 'no tools'} ({count} in all) by words "
            "from what they do, their names or their parameters. Answers the best matches "
            "first, each with its name, description and hints.",
            "inputSchema": SEARCH_SCHEMA,
            "annotations": {"title": "Search the command-line tools", **_LOOKUP_HINTS},
        },
        {
            "name": SCHEMA_TOOL,
            "title": "Get a command's schema",
            "description": "The full tool definition of one command (input schema, hints), "
            "by the name search_tools gave.",
            "inputSchema": NAME_SCHEMA,
            "annotations": {"title": "Get a command's schema", **_LOOKUP_HINTS},
        },
        {
            "name": CALL_TOOL,
            "title": "Run a command",
            "description": f"{call_text} {suffix(combined)}".strip(),
            "inputSchema": CALL_SCHEMA,
            "annotations": {"title": "Run a command", **annotations(combined)},
        },
    ]


def _problem(schema: dict[str, Any], value: Any) -> str | None:
    """The first thing `schema` refuses in `value`, with where, or None."""
    import jsonschema_rs

    validator = jsonschema_rs.validator_for(schema)
    errors = sorted(validator.iter_errors(value), key=lambda e: list(map(str, e.instance_path)))
    if not errors:
        return None
    first = errors[0]
    where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in first.instance_path)
    return f"arguments{where}: {first.message}"


# The server ---------------------------------------------------------------------------


@dataclass
class Gateway:
    """A live gateway: the current catalog, how to rebuild it, and who to tell when its
    tool list changes."""

    selection: Selection
    policy: Policy | None = None
    result_filter: ResultFilter | None = None
    deferred: bool = False
    yes: bool = False
    """Confirm what the policy wants confirmed without asking (never what it denies)."""
    registry: LocalRegistry | None = None
    log: Callable[[str], None] = field(default=lambda line: print(line, file=sys.stderr))
    catalog: Catalog = field(init=False)
    _seen: tuple[Any, ...] = field(init=False, default=())
    _sessions: dict[int, Any] = field(init=False, default_factory=dict)
    _bus: Any = field(init=False, default=None)

    def __post_init__(self) -> None:
        from atipkit.registry.local import LocalRegistry

        self.registry = self.registry or LocalRegistry()
        loaded = load(self.selection, self.registry)
        self._seen = fingerprint(self.selection, self.registry)
        self.catalog = self._build(loaded, 0)

    def _build(self, loaded: Loaded, version: int) -> Catalog:
        for line in loaded.skipped:
            self.log(f"skipped {line}")
        catalog = Catalog(
            loaded, policy=self.policy, result_filter=self.result_filter, version=version
        )
        for line in catalog.warnings:
            self.log(f"warning: {line}")
        return catalog

    # Keeping up with the registry -----------------------------------------------------

    def reload(self) -> bool:
        """Look at the registry and files again (blocking); True when the tool list a
        client sees changed. A look that fails keeps the catalog there was, and says why."""
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
        catalog = self._build(loaded, self.catalog.version + 1)
        if catalog.same_tools(self.catalog):
            return False
        self.catalog = catalog
        self.log(f"the tool list changed: {len(catalog.names)} tools")
        return True

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

    def listing(
        self, catalog: Catalog, cursor: str | None
    ) -> tuple[list[dict[str, Any]], str | None]:
        """One page of `catalog`'s tool list, and the cursor of the next (None at the end)."""
        if self.deferred:
            return catalog.deferred, None
        start = 0
        if cursor is not None:
            version, _, offset = cursor.partition(":")
            if version != str(catalog.version) or not offset.isdigit():
                raise ValueError(
                    f"cursor {cursor!r} is not one this gateway gave, or the tool list "
                    "changed since: list again from the start"
                )
            start = int(offset)
        names = catalog.names[start : start + PAGE_SIZE]
        end = start + len(names)
        following = f"{catalog.version}:{end}" if end < len(catalog.names) else None
        return [catalog.definitions[n] for n in names], following

    def input_schema(self, name: str) -> dict[str, Any] | None:
        if self.deferred:
            return _DEFERRED_INPUTS.get(name)
        found = self.catalog.definitions.get(name)
        return None if found is None else found["inputSchema"]

    async def call(self, ctx: Any, name: str, arguments: dict[str, Any]) -> CallToolResult:
        """Answer a tools/call: a tool of the catalog, or one of the deferred three."""
        catalog = self.catalog
        if self.deferred:
            if name not in DEFERRED_TOOLS:
                raise _unknown(name, DEFERRED_TOOLS)
            return await self._deferred(ctx, catalog, name, arguments)
        if name not in catalog.definitions:
            raise _unknown(name, catalog.names)
        return await self._run(ctx, catalog, name, arguments)

    async def _deferred(
        self, ctx: Any, catalog: Catalog, tool: str, arguments: dict[str, Any]
    ) -> CallToolResult:
        problem = _problem(_DEFERRED_INPUTS[tool], arguments)
        if problem is not None:
            return _error(problem)
        if tool == SEARCH_TOOL:
            found = catalog.search(arguments["query"], arguments.get("limit", SEARCH_LIMIT))
            return _answer({"tools": found})
        name = arguments["name"]
        if name not in catalog.definitions:
            close = catalog.near(name)
            hint = f"; did you mean {', '.join(close)}?" if close else ""
            return _error(
                f"no tool is called {name!r}{hint} Find names with {SEARCH_TOOL}.",
                {"name": name, "did_you_mean": close},
            )
        if tool == SCHEMA_TOOL:
            return _answer(catalog.definitions[name])
        return await self._run(ctx, catalog, name, arguments.get("arguments", {}))

    async def _run(
        self, ctx: Any, catalog: Catalog, name: str, arguments: dict[str, Any]
    ) -> CallToolResult:
        import anyio
        import mcp.types as types

        ask = self._asker(ctx)
        outcome, structured = await anyio.to_thread.run_sync(catalog.call, name, arguments, ask)
        text = outcome.text
        if outcome.stopped == "unconfirmed" and not self.yes and not _can_elicit(ctx):
            text += (
                " (this MCP client cannot be asked to confirm: the gateway asks through "
                "elicitation. Start it with --yes, or with a policy that allows the call.)"
            )
            structured["text"] = text
        return types.CallToolResult(
            content=[types.TextContent(text=text)],
            structured_content=structured,
            is_error=outcome.is_error,
        )

    def _asker(self, ctx: Any) -> Ask | None:
        """How this call's confirmations are answered: yes with `--yes`; else the human
        at the client, through elicitation, if the client offers it; else nobody."""
        if self.yes:
            return lambda _call, _decision: True
        if not _can_elicit(ctx):
            return None
        import anyio.from_thread

        def ask(call: ToolCall, decision: Decision) -> bool:
            what = " ".join([call.tool or call.name, *(call.path or ())])
            message = f"Run {what}? The policy asks: {'; '.join(decision.reasons)}."
            schema = {
                "type": "object",
                "properties": {
                    "confirm": {"type": "boolean", "title": f"Run {what}", "default": False}
                },
                "required": ["confirm"],
            }
            answer = anyio.from_thread.run(ctx.session.elicit_form, message, schema, ctx.request_id)
            return answer.action == "accept" and (answer.content or {}).get("confirm") is True

        return ask

    # The MCP server -------------------------------------------------------------------

    def server(self) -> Server:
        """The low-level MCP server of this gateway."""
        import mcp.types as types
        from mcp.server.lowlevel import NotificationOptions, Server
        from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler
        from mcp.shared.exceptions import MCPError

        from atipkit._version import __version__

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
                tools=catalog.sdk_tools(tools, deferred=gateway.deferred),
                next_cursor=following,
            )

        async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> CallToolResult:
            arguments = {} if params.arguments is None else dict(params.arguments)
            return await gateway.call(ctx, params.name, arguments)

        class _Server(Server):  # type: ignore[type-arg]
            def create_initialization_options(self, notification_options=None, *a, **k):  # type: ignore[no-untyped-def]
                # the handshake era's listChanged is claimed here, since the tool list
                # follows the registry (streamable HTTP asks without options)
                options = notification_options or NotificationOptions(tools_changed=True)
                return super().create_initialization_options(options, *a, **k)

        catalog = self.catalog
        tools = sorted({t.name for t in catalog.loaded.tools})
        how = (
            f"find a command with {SEARCH_TOOL}, read its schema with {SCHEMA_TOOL}, run it "
            f"with {CALL_TOOL}"
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
        return _Server(
            "atip-gateway",
            version=__version__,
            title="ATIP gateway",
            description="Command-line tools described by ATIP, as MCP tools.",
            instructions=instructions,
            website_url="https://atip.dev",
            get_tool_input_schema=self.input_schema,
            on_list_tools=list_tools,
            on_call_tool=call_tool,
            on_subscriptions_listen=ListenHandler(self._bus),
        )

    def serve_stdio(self, interval: float = INTERVAL) -> None:
        """Serve one client over stdin/stdout until it goes, watching the registry every
        `interval` seconds (0: never). stdout carries protocol only: the SDK points the
        process's stdout at stderr while it serves."""
        import anyio

        anyio.run(self._stdio, self.server(), interval, backend="asyncio")

    async def _stdio(self, server: Server, interval: float) -> None:
        import anyio
        from mcp.server.stdio import stdio_server

        async with anyio.create_task_group() as tasks:
            if interval > 0:
                tasks.start_soon(self.watch, interval)
            async with stdio_server() as (read, write):
                await server.run(read, write, server.create_initialization_options())
            tasks.cancel_scope.cancel()

    def http_app(self, host: str = "127.0.0.1", interval: float = INTERVAL) -> Any:
        """The ASGI app of streamable HTTP at `/mcp` (serve it with `atipkit.serve.run`),
        watching the registry every `interval` seconds (0: never) while it runs. The SDK
        guards loopback `host`s against DNS rebinding."""
        import contextlib

        import anyio

        web = self.server().streamable_http_app(host=host)
        inner = web.router.lifespan_context
        gateway = self

        @contextlib.asynccontextmanager
        async def lifespan(app: Any) -> Any:
            async with inner(app) as state, anyio.create_task_group() as tasks:
                if interval > 0:
                    tasks.start_soon(gateway.watch, interval)
                yield state
                tasks.cancel_scope.cancel()

        web.router.lifespan_context = lifespan
        return web


def _can_elicit(ctx: Any) -> bool:
    session = getattr(ctx, "session", None)
    capabilities = getattr(session, "client_capabilities", None)
    return (
        capabilities is not None
        and capabilities.elicitation is not None
        and bool(getattr(session, "can_send_request", False))
    )


def _unknown(name: str, known: Iterable[str]) -> Exception:
    import mcp.types as types
    from mcp.shared.exceptions import MCPError

    close = difflib.get_close_matches(name, list(known), n=3)
    return MCPError(types.INVALID_PARAMS, f"Unknown tool: {name}", {"did_you_mean": close})


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
