"""`atip mcp serve`: the MCP gateway (`atipkit.serve.gateway`) on the command line."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

from atipkit.app import Context, InputError, Option, Suggestion
from atipkit.cli import _errors as errors
from atipkit.cli import app
from atipkit.cli._effects import runs_anything
from atipkit.cli._guard import AllowHost, AllowOrigin
from atipkit.cli._resolve import read_document, resolution_error
from atipkit.errors import ErrorCode

if TYPE_CHECKING:
    from atipkit.serve.gateway import Gateway
    from atipkit.serve.guard import Rules

mcp_group = app.group("mcp", help="ATIP tools as MCP tools, for agents that only speak MCP.")


def _text(started: dict[str, Any]) -> str:
    return (
        f"serving {started['tools']} MCP tools ({started['mode']}) at {started['url']} "
        "(Ctrl-C to stop)\n"
    )


@mcp_group.command("serve", effects=runs_anything(), text=_text)
def serve(
    ctx: Context,
    only: Annotated[
        str | None,
        Option(help="Offer these tools (comma-separated names on PATH or in the registry)."),
    ] = None,
    all_tools: Annotated[
        bool, Option("--all", help="Offer every tool in the registry (atip scan records them).")
    ] = False,
    tool: Annotated[
        list[Path],
        Option(help="Offer the tools of this ATIP document (repeatable).", dir_okay=False),
    ] = [],  # noqa: B006 - the framework copies defaults, never mutates them
    policy: Annotated[
        Path | None, Option(help="The policy calls run under (JSON).", dir_okay=False)
    ] = None,
    audit: Annotated[
        Path | None,
        Option(help="Append every call's decision to this JSONL audit log.", dir_okay=False),
    ] = None,
    deferred: Annotated[
        bool,
        Option(help="List search_tools, get_tool_schema and run_tool instead of every command."),
    ] = False,
    transport: Annotated[
        Literal["stdio", "http"], Option(help="stdio, or streamable HTTP at /mcp.")
    ] = "stdio",
    host: Annotated[str, Option(help="Address to listen on (http).")] = "127.0.0.1",
    port: Annotated[
        int, Option(help="Port to listen on (http); 0 picks a free one.", min=0, max=65535)
    ] = 8000,
    interval: Annotated[
        float,
        Option(
            help="Seconds between looks at the registry for changed tools (0: never).",
            min=0,
            max=3600,
        ),
    ] = 2.0,
    max_output: Annotated[
        int,
        Option(
            help="Characters of a command's output a client gets at most (head and tail kept).",
            min=100,
        ),
    ] = 50_000,
    allow_host: AllowHost = [],  # noqa: B006 - the framework copies defaults
    allow_origin: AllowOrigin = [],  # noqa: B006
) -> Iterator[dict[str, Any]]:
    """Serve ATIP tools over MCP until the client goes (stdio) or until interrupted (http).

    Each command of the tools named (--only, --all, --tool) is an MCP tool, compiled as
    `atip compile --provider mcp` compiles it; a call runs the command under --policy,
    through the result filter (secrets redacted, output cut to --max-output). What the
    policy wants confirmed is asked through MCP elicitation when the client offers it;
    --yes confirms it without asking. The tool list follows the registry: clients are
    told when it changes. Two tools of one name (a --tool document and a registry entry)
    are both offered, the second's commands named after its key, and a warning says so; a
    tool's calls run the binary it was described from, and only while it still is that
    binary. With --deferred the client sees three tools (search_tools,
    get_tool_schema, run_tool) instead of thousands. Over stdio, stdout carries the
    protocol only and nothing else is printed on it; over http the result is one record,
    where it listens ({url, tools, mode}), given as soon as it listens; only requests
    whose Host is a loopback name, the address listened on or an --allow-host name, and
    from web pages only of an --allow-origin origin, are answered (others are 403: a page
    must not run this machine's commands). Exit status: 0 stopped, 2 no tools named or a
    bad option, 10 a named tool or file does not exist or
    has no metadata, 20 cannot listen on the address, 30 no permission to read a --tool
    file, 40 the mcp or serve extra is missing, 65 a --tool file or --policy is not what
    it should be, or the registry cannot be read.
    """
    from atipkit.app.served import guard_rules
    from atipkit.serve.gateway import Gateway, Selection, Unavailable

    _require_extras(transport, deferred)
    access = guard_rules(host, allow_host, allow_origin)
    from atipkit.cli.discover import split

    names = split(only) or []
    if not (names or all_tools or tool):
        raise InputError(
            "name the tools to offer: --only NAMES, --all, or --tool FILE",
            code=ErrorCode.USAGE,
            suggestion=Suggestion(
                "Offer every tool the registry knows, or a few by name.",
                example="atip mcp serve --only gh,kubectl",
            ),
        )
    from atipkit.bridge.result_filter import ResultFilter
    from atipkit.cli._policy import audit_path, load_policy

    for path in tool:  # each file's own error, before the gateway reads them all
        read_document(path, "--tool")
    selection = Selection(tuple(dict.fromkeys(names)), all_tools, tuple(dict.fromkeys(tool)))
    rules = load_policy(policy)
    log = audit_path(rules, audit)
    audit_log = None
    if log:  # the executor's modules are imported when the first call needs them
        from atipkit.execute.audit import AuditLog

        audit_log = AuditLog(log)
    try:
        gateway = Gateway(
            selection,
            policy=rules,
            result_filter=ResultFilter(max_chars=max_output),
            audit=audit_log,
            deferred=deferred,
            yes=ctx.settings.yes,
            log=_logger(ctx),
        )
    except Unavailable as exc:
        raise resolution_error(exc.cause, exc.name) or exc.cause from None
    if transport == "http" and not _loopback(host):
        ctx.warn(
            f"{host} is not a loopback address: anyone who reaches it can run the tools' "
            "commands, under the policy (there is no authentication)"
        )
    if transport == "stdio":
        gateway.serve_stdio(interval)
        # The session was the output: an envelope after it would be noise on a pipe
        # that carried protocol, so the command ends here, with status 0.
        raise SystemExit(0)
    return _serving(gateway, host, port, interval, access)


def _loopback(host: str) -> bool:
    from atipkit._http import is_loopback_host

    return is_loopback_host(host)


def _serving(
    gateway: Gateway, host: str, port: int, interval: float, access: Rules
) -> Iterator[dict[str, Any]]:
    """Say where it listens, then serve until stopped (a stream, so the URL comes out
    before the server blocks)."""
    from atipkit import serve as servers
    from atipkit.app.served import listen

    sock = listen(host, port)
    web = gateway.http_app(host, interval, access)
    yield {
        "url": servers.url(sock) + "mcp",
        "tools": len(gateway.catalog.names),
        "mode": "deferred" if gateway.deferred else "one tool a command",
    }
    servers.run(web, sock)


def _logger(ctx: Context) -> Callable[[str], None]:
    """Where the gateway's lines go (a tool skipped, a name claimed twice, the list
    changed): stderr as they happen, whatever the output format, since stdout carries the
    protocol (stdio) or the one record (http) and no envelope follows; nowhere with -q."""
    if ctx.settings.quiet:
        return lambda _line: None
    return lambda line: print(line, file=sys.stderr, flush=True)


def _require_extras(transport: str, deferred: bool) -> None:
    from importlib.util import find_spec

    from atipkit._mcp_sdk import SdkUnavailable, require_sdk

    try:
        require_sdk("atip mcp serve")
    except SdkUnavailable as exc:
        raise errors.missing_extra(str(exc), "pip install 'atipkit[mcp]'") from None
    if deferred and find_spec("Stemmer") is None:  # search_tools stems with PyStemmer
        raise errors.missing_extra(
            f"atip mcp serve --deferred needs {errors.package_of('Stemmer')}",
            "pip install 'atipkit[mcp]'",
        )
    if transport == "http":
        from atipkit import serve as servers

        try:
            servers.require_extra()
        except servers.ServeError as exc:
            raise errors.missing_extra(str(exc), servers.INSTALL_HINT) from None
