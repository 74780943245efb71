"""The app's commands as MCP tools, and the server that answers for them (PRD §11, §19.3).

    tool mcp serve                       # stdio: one tool a command
    tool mcp serve --transport http --port 8080
    tool mcp serve --deferred            # large apps: search_tools, get_tool_schema, run_tool
    tool mcp export                      # what tools/list answers, as JSON

What a client sees, and why:

- A command is a tool named by its path joined with `_` (`pr create` → `pr_create`),
  through the bridge's one name table (`atipkit.bridge.names`): at most 64 characters of
  `[A-Za-z0-9_-]`, within MCP's limits (SPEC-NOTES 21) and also within those of the model
  APIs that MCP clients hand tools on to. A call is mapped back through the table, never
  by splitting the name. Hidden commands are not listed, but answer when called by name,
  as they do on the command line.
- `inputSchema` is the command's own input schema, unchanged; the annotations are the
  hints `--schema` shows, plus `title`; the description carries the bridge's safety suffix.
- A call runs through `invoke.call`, the pipeline the CLI and HTTP use, so it answers
  with the same envelope: `structuredContent` is `{"ok", "result" | "error", "meta"}`,
  a text block holds the same JSON, and `isError` is `not ok`.
- `outputSchema` describes that envelope, both arms, with the command's declared return
  type as `result`. Clients check successful results against it (the SDK's client
  refuses a result that does not match), so the server checks first, with the same
  validator: a result that does not match its own annotation is a bug in the tool, and is
  answered as an internal error that still carries the result (E5002), never as a
  protocol failure.
- The global flags the HTTP API takes as query parameters (`dry_run`, `limit`, `cursor`,
  `max_items`, `max_bytes`, `response_format`, `idempotency_key`) travel in the request's
  `_meta` under `"atipkit/flags"` (the input schema stays the command's own), and in
  deferred mode also in `run_tool`'s `options`, where a model can set them. An unknown flag
  is refused, not ignored: a misspelt `dry-run` must not run the real thing.
  There is no `yes` among them: a model must not answer its own questions.
- A command that asks (`ctx.confirm`) or needs a human's approval (human in the loop)
  asks the human at the client through elicitation (`atipkit.app.askers`); a client
  that offers none gets HumanHandoff (exit 101), unless the server was started with
  `--yes`, which answers questions (never approvals).
- Each call runs in a daemon thread of its own: the command is synchronous and may block,
  and a call that overruns the command's `timeout` is abandoned there, not awaited, while
  the client gets a TimeoutExpired envelope (exit 50), as over HTTP.
  The tool list never changes, so `listChanged` is never claimed.

Deferred mode (PRD §19.3 item 6) lists three tools instead of one a command, those of
`atipkit.serve.deferred`, which the gateway lists too: `search_tools`, `get_tool_schema`
and `run_tool`, whose answer is the command's envelope. Both transports are
`atipkit.serve.mcp`'s, the gateway's too.
"""

from __future__ import annotations

import copy
import functools
import sys
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from atipkit.app.errors import (
    DependencyError,
    InputError,
    InternalError,
    Suggestion,
    ToolError,
)
from atipkit.errors import ErrorCode
from atipkit.serve import deferred as deferring
from atipkit.serve.deferred import RUN_TOOL, SCHEMA_TOOL, SEARCH_LIMIT, SEARCH_TOOL

if TYPE_CHECKING:
    import socket

    from mcp.server.lowlevel import Server
    from mcp.types import CallToolResult, InputRequiredResult

    from atipkit.app.app import App
    from atipkit.app.askers import _InputNeeded
    from atipkit.app.command import CommandSpec
    from atipkit.app.context import Asker
    from atipkit.app.flags import CallSettings as Settings
    from atipkit.app.invoke import CallOutcome as Outcome
    from atipkit.search import KeywordIndex
    from atipkit.serve.front import Identity

__all__ = [
    "FLAGS_META_KEY",
    "RUN_TOOL",
    "SCHEMA_TOOL",
    "SEARCH_TOOL",
    "AppCatalog",
    "Catalog",
    "Reply",
    "listen_http",
    "serve",
    "tool_definitions",
]

FLAGS_META_KEY = "atipkit/flags"
"""The request `_meta` key that carries a call's global flags."""
MISMATCH_CODE = ErrorCode.RESULT_MISMATCH

Transport = Literal["stdio", "http"]


def tool_definitions(app: App, *, deferred: bool = False) -> list[dict[str, Any]]:
    """The MCP `Tool` objects of `app`, as the JSON tools/list answers with."""
    catalog = AppCatalog(app)
    found = catalog.deferred_definitions() if deferred else catalog.definitions()
    return copy.deepcopy(found)  # they share this module's schemas: the caller's to change


# Schemas --------------------------------------------------------------------------------


def _flags_schema() -> dict[str, Any]:
    from atipkit.app.served import flags_schema

    return flags_schema()


@functools.cache
def _run_schema() -> dict[str, Any]:
    """`run_tool`'s input: the shared one, with the app's flags as `options`."""
    return deferring.run_schema(_flags_schema())


def envelope_schema(result: dict[str, Any] | None) -> dict[str, Any]:
    """The JSON Schema of the envelope whose `result` is `result` (anything if None)."""
    from atipkit.app.schema import envelope_parts, failure_schema, success_schema

    parts = envelope_parts()
    return {
        "type": "object",
        "description": "ok and result, or not ok and error (with exit_code); meta always.",
        "oneOf": [
            success_schema(result or {}, parts["Meta"]),
            failure_schema(parts["Error"], parts["Meta"]),
        ],
    }


def result_schema(spec: CommandSpec) -> dict[str, Any] | None:
    from atipkit.app.schema import envelope_parts
    from atipkit.app.schema import result_schema as of

    return of(spec, envelope_parts()["DryRunPlan"])


def describe(spec: CommandSpec) -> str:
    """The description a model reads: the command's help, then the bridge's safety suffix."""
    from atipkit.bridge.safety import fit, suffix

    text = (spec.description or spec.summary).strip() or spec.display_name
    if spec.deprecated:
        text += " (deprecated)"
    if spec.human_in_the_loop:
        stop = "" if text.endswith((".", "!", "?")) else "."
        text += (
            f"{stop} Needs a human's approval, asked through elicitation; a client that "
            "cannot be asked gets HumanHandoff (exit 101)."
        )
    return fit(text, suffix(spec.atip_effects()), None, "\n" if "\n" in text else " ")[0]


# Replies --------------------------------------------------------------------------------


@dataclass
class Reply:
    """One tools/call answer: the envelope as JSON values, and the same as text; or,
    for a 2026-07-28 session, the question the call needs answered first."""

    envelope: dict[str, Any]
    text: str
    needed: _InputNeeded | None = None

    @property
    def ok(self) -> bool:
        return self.envelope.get("ok") is True

    def result(self) -> CallToolResult | InputRequiredResult:
        import mcp.types as types

        if self.needed is not None:
            return self.needed.request()
        return types.CallToolResult(
            content=[types.TextContent(text=self.text)],
            structured_content=self.envelope,
            is_error=not self.ok,
        )


def _answer(app: App, tool: str, started: float, **outcome: Any) -> Reply:
    """The server's own answer (`result=` or `error=`), as a command's would look."""
    from atipkit.app.served import answer, encoded

    raw = encoded(answer(app, tool, started, **outcome))
    return Reply(_decoded(raw), raw.decode())


def _decoded(raw: bytes) -> dict[str, Any]:
    import msgspec

    envelope: dict[str, Any] = msgspec.json.decode(raw)
    return envelope


# Refusals --------------------------------------------------------------------------------


def _refused(refusal: deferring.Refusal) -> InputError:
    """Deferred mode's refusal, as the app's error (exit 2)."""
    return InputError(
        refusal.message,
        code=refusal.code,
        suggestion=None if refusal.suggestion is None else Suggestion(refusal.suggestion),
        details=refusal.details,
    )


def settings_from(
    flags: Any, where: str = f"_meta[{FLAGS_META_KEY!r}]", *, timeout: float | None = None
) -> Settings:
    """The `Settings` of a call whose global flags came as a JSON object (None: all
    defaults); `where` names them in errors."""
    from atipkit.app.served import settings_from as from_pairs

    if flags is None:
        flags = {}
    if not isinstance(flags, dict):
        raise InputError(f"{where}: expected an object of flags", code=ErrorCode.USAGE)
    return from_pairs(flags.items(), where=where, timeout=timeout)


# The catalog ----------------------------------------------------------------------------


_FIELD_WEIGHTS = {"name": 3.0, "text": 2.0, "params": 1.0}


class AppCatalog:
    """An app's commands as MCP tools: the name table both ways, the definitions, search,
    and calls. Built once a server; commands are fixed by then."""

    def __init__(self, app: App) -> None:
        from atipkit.bridge.names import assign_names

        self.app = app
        self.specs = list(app.walk())
        names = assign_names(spec.path for spec in self.specs)
        self.name_of = {spec.path: names[spec.path] for spec in self.specs}
        self.by_name = {names[spec.path]: spec for spec in self.specs}
        self.visible = [spec for spec in self.specs if not spec.hidden]
        self._results: dict[tuple[str, ...], dict[str, Any] | None] = {}
        self._checkers: dict[tuple[str, ...], Any] = {}

    # Definitions ------------------------------------------------------------------------

    @functools.cached_property
    def _definitions(self) -> dict[str, dict[str, Any]]:
        return {self.name_of[spec.path]: self._definition(spec) for spec in self.specs}

    def _definition(self, spec: CommandSpec) -> dict[str, Any]:
        from atipkit.app.schema import hints

        self._results[spec.path] = result_schema(spec)
        return {
            "name": self.name_of[spec.path],
            "title": spec.display_name,
            "description": describe(spec),
            "inputSchema": spec.signature.input_schema(),
            "outputSchema": envelope_schema(self._results[spec.path]),
            "annotations": {"title": spec.display_name, **hints(spec)},
        }

    def prepare(self, *, search: bool) -> None:
        """Build every definition (hidden commands' too) and, for `search`, the index now:
        a command that cannot be defined fails at start, and calls in worker threads then
        only read what is built."""
        _ = self._definitions
        if search:
            _ = self._index

    def definition(self, spec: CommandSpec) -> dict[str, Any]:
        return self._definitions[self.name_of[spec.path]]

    def definitions(self) -> list[dict[str, Any]]:
        """One tool a visible command, in definition order."""
        return [self.definition(spec) for spec in self.visible]

    def deferred_definitions(self) -> list[dict[str, Any]]:
        """The three tools of deferred mode (`atipkit.serve.deferred`), with the
        envelope as each one's output schema."""
        from atipkit.bridge.safety import combine

        app = self.app.name
        return deferring.definitions(
            searched=f"commands of {app}",
            search_title=f"Search the commands of {app}",
            run_title=f"Run a command of {app}",
            count=len(self.visible),
            effects=combine([spec.atip_effects() for spec in self.visible]),
            run_input=_run_schema(),
            run_answer=" Answers with the command's envelope: {ok, result | error, meta}.",
            outputs={
                SEARCH_TOOL: envelope_schema(deferring.SEARCH_RESULT_SCHEMA),
                SCHEMA_TOOL: envelope_schema({"type": "object"}),
                RUN_TOOL: envelope_schema(None),
            },
        )

    def input_schema(self, name: str, *, deferred: bool) -> dict[str, Any] | None:
        """A listed tool's input schema by name (for the SDK's header checks)."""
        if deferred:
            return deferring.input_schema(name, _run_schema())
        spec = self.by_name.get(name)
        return None if spec is None else self.definition(spec)["inputSchema"]

    def definition_of(self, name: str) -> dict[str, Any] | None:
        spec = self.by_name.get(name)
        return None if spec is None else self.definition(spec)

    def command_names(self) -> Iterable[str]:
        return self.by_name

    def find(self, name: str) -> CommandSpec:
        """The command a tool name stands for; `InputError` with near misses otherwise."""
        spec = self.by_name.get(name)
        if spec is None:
            raise _refused(deferring.unknown(name, self.by_name))
        return spec

    # Search -----------------------------------------------------------------------------

    @functools.cached_property
    def _index(self) -> KeywordIndex:
        """The visible commands' words: their path, their help, their parameters."""
        from atipkit.search import KeywordIndex

        documents = [
            {
                "name": " ".join(spec.path),
                "text": f"{spec.summary} {spec.description}",
                "params": " ".join(f"{p.name} {p.help or ''}" for p in spec.signature.params),
            }
            for spec in self.visible
        ]
        keys = [self.name_of[spec.path] for spec in self.visible]
        return KeywordIndex(documents, _FIELD_WEIGHTS, keys)

    def search(self, query: str, limit: int = SEARCH_LIMIT) -> list[dict[str, Any]]:
        """The visible commands that share words with `query`, best first
        (`atipkit.search.KeywordIndex`: name 3, description 2, parameters 1). Ties go by
        name."""
        out = []
        for index in self._index.search(query, limit):
            definition = self.definition(self.visible[index])
            out.append({key: definition[key] for key in ("name", "title", "description")})
            out[-1]["annotations"] = definition["annotations"]
        return out

    # Calls ------------------------------------------------------------------------------

    async def run(
        self,
        spec: CommandSpec,
        arguments: Any,
        flags: Any,
        where: str | None = None,
        asker: Asker | None = None,
    ) -> Reply:
        """Call `spec` (in a thread of its own, within its timeout: `served.run_call`);
        `asker` answers its questions."""
        from atipkit.app.served import run_call

        started = time.perf_counter()
        try:
            settings = settings_from(
                flags, *(() if where is None else (where,)), timeout=spec.timeout
            )
        except ToolError as exc:
            return _answer(self.app, spec.tool_name, started, error=exc)
        return self.reply(spec, await run_call(spec, arguments, settings, asker))

    def reply(self, spec: CommandSpec, outcome: Outcome) -> Reply:
        """The answer to a call, checked against the outputSchema the client will check it
        against: a mismatch is the tool's bug, reported as one (E5002) with the result."""
        from atipkit.app.askers import _InputNeeded
        from atipkit.app.served import encoded

        if isinstance(outcome.error, _InputNeeded):
            return Reply({}, "", outcome.error)
        raw = encoded(outcome)
        envelope = _decoded(raw)
        if envelope.get("ok") is True:
            problem = self._mismatch(spec, envelope)
            if problem is not None:
                outcome.error = InternalError(
                    f"{spec.display_name} ran, but its result does not match its declared "
                    f"return type: {problem}",
                    code=MISMATCH_CODE,
                    suggestion=Suggestion(
                        "The command's return annotation does not describe what it returned: "
                        "a bug in the tool; report it. The result is in error.details.result.",
                        action="abort",
                    ),
                    details={"result": envelope.get("result"), "schema_error": problem},
                )
                raw = encoded(outcome)
                envelope = _decoded(raw)
        return Reply(envelope, raw.decode())

    def _mismatch(self, spec: CommandSpec, envelope: dict[str, Any]) -> str | None:
        """What the client's validator (`jsonschema`, as the SDK uses it) finds wrong with
        `envelope`, or None. Only commands that declare a return type can fail it, and then
        it is the result that is wrong: the message says what is wrong with it."""
        schema = self.definition(spec)["outputSchema"]  # (also fills `_results`)
        declared = self._results[spec.path]
        if declared is None:
            return None
        checker = self._checkers.get(spec.path)
        if checker is None:
            checker = _checker(schema)
            self._checkers[spec.path] = checker
        problem = _first_error(checker, envelope)
        if problem is None:
            return None
        return _first_error(_checker(declared), envelope.get("result"), "result") or problem

    async def call_deferred(
        self, tool: str, arguments: Any, flags: Any, asker: Asker | None = None
    ) -> Reply:
        """A call of one of the three deferred-mode tools (`deferring.canonical`'s name)."""
        started = time.perf_counter()
        where = f"{self.app.name}.{tool}"
        todo = deferring.handle(tool, arguments, self, _run_schema())
        if isinstance(todo, deferring.Refusal):
            return _answer(self.app, where, started, error=_refused(todo))
        if isinstance(todo, deferring.Answered):
            return _answer(self.app, where, started, result=todo.value)
        merged, at = _with_options(flags, todo.options)
        return await self.run(self.by_name[todo.name], todo.arguments, merged, at, asker)


def _checker(schema: dict[str, Any]) -> Any:
    from jsonschema.validators import validator_for
    from referencing import Registry

    return validator_for(schema)(schema, registry=Registry())


def _first_error(checker: Any, value: Any, root: str = "envelope") -> str | None:
    from jsonschema.exceptions import best_match

    error = best_match(checker.iter_errors(value))
    if error is None:
        return None
    where = root + "".join(f"[{p!r}]" for p in error.absolute_path)
    return f"{where}: {error.message}"


def _with_options(flags: Any, options: Any) -> tuple[Any, str | None]:
    """`run_tool`'s options over the flags of `_meta`, and where errors should point."""
    if options is None:
        return flags, None
    if flags is None:
        return options, "arguments.options"
    if isinstance(flags, dict):
        return {**flags, **options}, "arguments.options"
    return flags, None  # a malformed `_meta` is reported as such


# The server -----------------------------------------------------------------------------


def build_server(
    app: App, *, deferred: bool = False, yes: bool = False, catalog: AppCatalog | None = None
) -> Server:
    """The low-level MCP server of `app`, its definitions built (`AppCatalog.prepare`;
    `catalog`, when given, is one prepared already for `deferred`); `yes` answers the
    commands' questions without asking (`--yes`)."""
    import anyio.lowlevel
    import mcp.types as types
    from mcp.server.lowlevel import Server

    from atipkit.app.askers import ElicitingAsker
    from atipkit.app.mcp_library import handlers
    from atipkit.serve.mcp import unknown_tool

    if catalog is None:
        catalog = AppCatalog(app)
        catalog.prepare(search=deferred)
    prepared = catalog
    definitions = _listed(catalog, deferred)
    listing = types.ListToolsResult(tools=[types.Tool.model_validate(d) for d in definitions])

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return listing

    async def call_tool(
        ctx: Any, params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        arguments = {} if params.arguments is None else params.arguments
        flags = (ctx.meta or {}).get(FLAGS_META_KEY)
        asker = ElicitingAsker(
            ctx,
            anyio.lowlevel.current_token(),
            yes=yes,
            responses=params.input_responses,
            state=params.request_state,
        )
        if deferred:
            tool = deferring.canonical(params.name)
            if tool is not None:
                return (await prepared.call_deferred(tool, arguments, flags, asker)).result()
            known: Iterable[str] = deferring.TOOLS
        else:
            spec = prepared.by_name.get(params.name)
            if spec is not None:
                return (await prepared.run(spec, arguments, flags, asker=asker)).result()
            known = prepared.by_name
        raise unknown_tool(params.name, known)

    identity = _identity(app, catalog, deferred)
    return Server(
        identity.name,
        **identity.server_fields(),
        get_tool_input_schema=lambda name: prepared.input_schema(name, deferred=deferred),
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        **handlers(app),  # its resources and prompts, if it has any
    )


def _listed(catalog: AppCatalog, deferred: bool) -> list[dict[str, Any]]:
    return catalog.deferred_definitions() if deferred else catalog.definitions()


def _identity(app: App, catalog: AppCatalog, deferred: bool) -> Identity:
    """What `app`'s server says of itself at `initialize`: the SDK server's fields, and
    the stdio front's answer before the SDK is imported."""
    from atipkit.serve.front import Identity

    count = len(catalog.visible)
    if deferred:
        how = (
            f"{count} commands are reached through three tools: {SEARCH_TOOL} finds a command "
            f"by words, {SCHEMA_TOOL} gives its input schema, {RUN_TOOL} runs it."
        )
    else:
        how = f"Each of the {count} tools is one command."
    instructions = (
        f"{app.description.rstrip('.')}. {how} Every call answers with an envelope in "
        "structuredContent: {ok: true, result, meta} or {ok: false, error: {code, message, "
        "suggestion, is_retryable, exit_code}, meta}; error.suggestion says what to change."
    ).lstrip(". ")
    return Identity(
        app.name,
        version=app.version,
        title=app.name,
        description=app.description or None,
        instructions=instructions,
        website_url=app.homepage,
    )


def serve(
    app: App,
    *,
    transport: Transport | None = None,
    host: str = "127.0.0.1",
    port: int = 8000,
    deferred: bool = False,
    allow_hosts: Sequence[str] = (),
    allow_origins: Sequence[str] = (),
    yes: bool = False,
) -> None:
    """Serve `app`'s commands, resources and prompts over MCP (`atipkit.serve.mcp`)
    until the client goes (stdio) or the process is stopped (http: streamable HTTP at
    `/mcp`, `listen_http`). `transport` defaults to the app's `mcp_transport`; `yes`
    answers the commands' questions without asking (`--yes`). Over stdio, stdout
    carries protocol only (whatever a command prints goes to stderr); diagnostics go to
    stderr."""
    transport = transport or app.mcp_transport  # type: ignore[assignment]  # checked by App
    if transport not in ("stdio", "http"):
        raise ValueError(f"unknown transport {transport!r}; expected 'stdio' or 'http'")
    if transport == "stdio":
        from atipkit.serve import mcp as serving

        _require_sdk()
        catalog = AppCatalog(app)
        catalog.prepare(search=deferred)
        build = functools.partial(build_server, app, deferred=deferred, yes=yes, catalog=catalog)
        if app.resources or app.prompts:  # capabilities the stdio front does not write
            serving.serve_stdio(build())
            return
        from atipkit.serve.front import Front

        listed = _listed(catalog, deferred)
        front = Front(
            _identity(app, catalog, deferred),
            listing=lambda _cursor: (listed, None),  # one page, whatever the cursor
            build=build,
        )
        serving.serve_stdio(front)
        return
    from atipkit import serve as servers
    from atipkit._http import is_loopback_host

    sock, web = listen_http(
        app,
        host=host,
        port=port,
        deferred=deferred,
        allow_hosts=allow_hosts,
        allow_origins=allow_origins,
        yes=yes,
    )
    sys.stderr.write(f"{app.name}: MCP over streamable HTTP at {servers.url(sock)}mcp\n")
    if not is_loopback_host(host):
        sys.stderr.write(
            f"warning: {host} is not a loopback address: anyone who reaches it can run the "
            "commands (there is no authentication)\n"
        )
    sys.stderr.flush()
    servers.run(web, sock, quiet=True, grace=5)


def listen_http(
    app: App,
    *,
    host: str,
    port: int,
    deferred: bool = False,
    allow_hosts: Sequence[str] = (),
    allow_origins: Sequence[str] = (),
    yes: bool = False,
) -> tuple[socket.socket, Any]:
    """The listening socket and the ASGI app of `app`'s MCP server over streamable HTTP
    at `/mcp`, behind `atipkit.serve.guard` (it answers loopback names, the address and
    `allow_hosts` as `Host`, and web pages only of `allow_origins`); serve them with
    `atipkit.serve.run`. Listening first lets a caller say where before it serves."""
    from atipkit.app.served import guard_rules, listen
    from atipkit.serve import mcp as serving

    rules = guard_rules(host, allow_hosts, allow_origins)
    _require_sdk()
    server = build_server(app, deferred=deferred, yes=yes)
    sock = listen(host, port)
    return sock, serving.http_app(server, host, rules)


def _require_sdk() -> None:
    from atipkit._mcp_sdk import SdkUnavailable, require_sdk

    try:
        require_sdk("serving MCP")
    except SdkUnavailable as exc:
        raise DependencyError(
            str(exc),
            suggestion="pip install 'atipkit[mcp]'",
            details={"package": "mcp", "found": exc.found},
        ) from None


Catalog = AppCatalog
"""The name before 0.2, when the gateway had a `Catalog` too; kept for a release."""
