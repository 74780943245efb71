"""`atip app serve FILE.py`: an `atipkit.app` tool served over MCP from its Python file,
with no glue (PRD §19.3 item 1; `atipkit.app.loading`, `atipkit.app.mcp`)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

from atipkit.app import Argument, Context, Option
from atipkit.cli import app
from atipkit.cli._effects import runs_anything
from atipkit.cli._guard import AllowHost, AllowOrigin

if TYPE_CHECKING:
    from atipkit.app import App

apps_group = app.group("app", help="Serve a tool written with atipkit.app from its Python file.")


def _text(started: dict[str, Any]) -> str:
    return (
        f"serving {started['app']} {started['version']} over MCP at {started['url']} "
        "(Ctrl-C to stop)\n"
    )


@apps_group.command("serve", effects=runs_anything(), text=_text)
def serve(
    ctx: Context,
    file: Annotated[
        Path, Argument(help="The Python file that defines the app (App(...)).", dir_okay=False)
    ],
    app_name: Annotated[
        str | None,
        Option("--app", help="The app's variable name, when the file defines several."),
    ] = None,
    transport: Annotated[
        Literal["stdio", "http"] | None,
        Option(help="stdio, or streamable HTTP at /mcp (default: the app's mcp_transport)."),
    ] = None,
    http: Annotated[bool, Option(help="Same as --transport http.")] = False,
    host: Annotated[str, Option(help="Address to listen on (http).")] = "127.0.0.1",
    port: Annotated[
        int, Option(help="Port to listen on (http); 0 picks a free one.", min=0, max=65535)
    ] = 8000,
    deferred: Annotated[
        bool,
        Option(help="List search_tools, get_tool_schema and run_tool instead of every command."),
    ] = False,
    allow_host: AllowHost = [],  # noqa: B006 - the framework copies defaults
    allow_origin: AllowOrigin = [],  # noqa: B006
) -> Iterator[dict[str, Any]]:
    """Serve the app a Python file defines over MCP: its commands as tools, its resources
    and prompts as themselves.

    The file needs no `if __name__ == "__main__"` block and no MCP code: it is imported
    (its directory first on the module path), and its one App (or the one --app names)
    is served as `python FILE mcp serve` would serve it. Over stdio (the default, or the
    app's mcp_transport) stdout carries the protocol only; over http (--http) the result
    is one record, where it listens ({url, app, version}), given as soon as it listens.
    A command that asks for confirmation asks the client's user through elicitation;
    --yes answers yes instead (never to a human-in-the-loop approval). Exit status: 0
    stopped, 2 the file defines no app or several, or a bad option, 10 no such file, 20
    cannot listen on the address, 40 the mcp extra is missing, 65 the file fails to
    import (the message names the exception and its line).
    """
    from atipkit.app.loading import load_app

    served = load_app(file, app_name)
    chosen = "http" if http else transport or served.mcp_transport
    if chosen == "stdio":
        from atipkit.app.mcp import serve as serve_mcp

        serve_mcp(served, transport="stdio", deferred=deferred, yes=ctx.settings.yes)
        # The session was the output: an envelope after it would be noise on a pipe
        # that carried protocol, so the command ends here, with status 0.
        raise SystemExit(0)
    return _serving(served, ctx, host, port, deferred, allow_host, allow_origin)


def _serving(
    served: App,
    ctx: Context,
    host: str,
    port: int,
    deferred: bool,
    allow_host: list[str],
    allow_origin: list[str],
) -> Iterator[dict[str, Any]]:
    """Say where it listens, then serve until stopped (a stream, so the URL comes out
    before the server blocks)."""
    from atipkit import serve as servers
    from atipkit._http import is_loopback_host
    from atipkit.app.mcp import listen_http

    sock, web = listen_http(
        served,
        host=host,
        port=port,
        deferred=deferred,
        allow_hosts=allow_host,
        allow_origins=allow_origin,
        yes=ctx.settings.yes,
    )
    if not is_loopback_host(host):
        ctx.warn(
            f"{host} is not a loopback address: anyone who reaches it can run the app's "
            "commands (there is no authentication)"
        )
    yield {"url": servers.url(sock) + "mcp", "app": served.name, "version": served.version}
    servers.run(web, sock)
