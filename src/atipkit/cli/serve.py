"""`atip serve`: serve a built registry over HTTP (`--registry`), the Tool Discovery
Protocol (`--tdp`), or both from one server. Each is an app of `atipkit.serve`, chosen
here by option."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from atipkit.app import (
    InputError,
    Option,
    Suggestion,
)
from atipkit.cli import _errors as errors
from atipkit.cli import app
from atipkit.cli._effects import serves_tools
from atipkit.cli._guard import AllowHost, AllowOrigin
from atipkit.cli._resolve import read_document
from atipkit.errors import ErrorCode

if TYPE_CHECKING:
    import socket

    from atipkit.model import Tool

_NEITHER = Suggestion(
    "Give --registry DIR to serve a built registry, --tdp to serve the Tool Discovery "
    "Protocol (GET /api/v1/tools), or both.",
    example="atip serve --tdp",
)


def _text(started: dict[str, str]) -> str:
    lines = []
    if "registry" in started:
        lines.append(f"serving the registry {started['registry']} at {started['url']}")
    if "tdp" in started:
        lines.append(f"serving the Tool Discovery Protocol at {started['tdp']}")
    return "\n".join(lines) + " (Ctrl-C to stop)\n"


@app.command(effects=serves_tools(), text=_text)
def serve(
    registry: Annotated[
        Path | None,
        Option(
            help="The registry directory to serve (what atip registry build wrote).",
            file_okay=False,
        ),
    ] = None,
    tdp: Annotated[
        bool,
        Option(
            help="Serve the Tool Discovery Protocol: GET /api/v1/tools and "
            "/api/v1/tools/{name} (the registry's tools, or those of --tool)."
        ),
    ] = False,
    tool: Annotated[
        list[Path],
        Option(
            help="With --tdp: serve this ATIP document's tools instead of the registry's "
            "(repeatable).",
            dir_okay=False,
        ),
    ] = [],  # noqa: B006 - the framework copies defaults, never mutates them
    scenario: Annotated[
        str | None,
        Option(
            help="With --tdp: the scenario's name in the manifest (default: atip).", min_length=1
        ),
    ] = None,
    x_atip: Annotated[
        bool,
        Option(
            help="With --tdp: give each tool its exact ATIP facts under x-atip (--no-x-atip "
            "for consumers that refuse unknown fields)."
        ),
    ] = True,
    host: Annotated[str, Option(help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[
        int, Option(help="Port to listen on; 0 picks a free one.", min=0, max=65535)
    ] = (8000),
    allow_host: AllowHost = [],  # noqa: B006 - the framework copies defaults
    allow_origin: AllowOrigin = [],  # noqa: B006
) -> Iterator[dict[str, str]]:
    """Serve a static registry, the Tool Discovery Protocol, or both, until interrupted.

    --registry: the registry's files with ETag and Last-Modified (304 answers), HEAD, its
    content types and Cache-Control, JSON 404s, no directory listings. --tdp: the
    manifest of the registry's tools (each resolved as atip run does; rebuilt when the
    registry or a tool changes) or of the --tool documents (two of one name are both
    served, the second named as a compile names it, and a warning logged), at GET
    /api/v1/tools and /api/v1/tools/{name}, with Cache-Control public, max-age=60,
    OPTIONS, a JSON 404 for an unknown tool and 503 while the tools cannot be read. Only
    requests whose Host is a loopback name, the address listened on (any IP address when
    that is 0.0.0.0 or ::) or an --allow-host name are answered (a guard against DNS
    rebinding), and requests from web pages only from the server's own origin or an
    --allow-origin one, which alone get CORS headers; others are 403. Both together: the
    manifest under /api/v1/tools, the registry everywhere else. The result is one record,
    where it listens ({registry, tdp, url}), given as soon as it listens with --jsonl,
    --plain or text output (JSON output, the envelope, comes when the server stops).
    Requests are logged on stderr. Exit status: 0 stopped (Ctrl-C or SIGTERM), 2 neither
    --registry nor --tdp (or --tool, --scenario, --no-x-atip without --tdp, or an
    --allow-host or --allow-origin that cannot be one), 10 the directory or a --tool file
    does not exist, 20 cannot listen on the address, 30 a
    --tool file may not be read, 40 the serve extra is missing, 65 a --tool file is not a
    valid ATIP document.
    """
    from atipkit import serve as servers

    if not tdp and (tool or scenario or not x_atip):
        raise InputError(
            "--tool, --scenario and --no-x-atip go with --tdp",
            code=ErrorCode.BAD_VALUE,
            suggestion=Suggestion("Add --tdp.", example="atip serve --tdp --tool gh.json"),
        )
    if registry is None and not tdp:
        raise InputError("Missing option '--registry' or '--tdp'.", suggestion=_NEITHER)
    if registry is not None:
        errors.require_directory(
            registry, "--registry", "Give the directory atip registry build wrote."
        )
    tool = list(dict.fromkeys(tool))  # a file named twice is served once
    from atipkit.app.served import guard_rules, listen  # asyncio: only when a server starts

    access = guard_rules(host, allow_host, allow_origin)
    documents = [read_document(path, "--tool") for path in tool]
    try:
        servers.require_extra()
    except servers.ServeError as exc:
        raise errors.missing_extra(str(exc), servers.INSTALL_HINT) from None
    asgi: Any = None
    started: dict[str, str] = {}
    if registry is not None:
        from atipkit.serve.registry import registry_app

        started["registry"] = os.path.abspath(registry)
        asgi = registry_app(started["registry"])
    if tdp:
        asgi = _tdp_app(documents, tool, scenario, x_atip, asgi)
    from atipkit.serve.guard import guard, json_refusal

    asgi = guard(asgi, access, json_refusal, ("GET", "HEAD", "OPTIONS"))
    sock = listen(host, port)
    url = servers.url(sock)
    if tdp:
        from atipkit.interop.tdp import ENDPOINT

        started["tdp"] = url.rstrip("/") + ENDPOINT
    started["url"] = url
    return _serving(asgi, sock, started)


def _tdp_app(
    documents: list[Tool], files: list[Path], scenario: str | None, x_atip: bool, fallback: Any
) -> Any:
    from atipkit.interop.tdp import atip_scenario
    from atipkit.serve.tdp import ToolSource, tdp_app

    names = list(dict.fromkeys(d.name for d in documents))
    described = ", ".join(names) if names else "the tools of this machine's ATIP registry"
    source = ToolSource(files, scenario=atip_scenario(described, scenario), extensions=x_atip)
    return tdp_app(source, fallback=fallback)


def _serving(asgi: Any, sock: socket.socket, started: dict[str, str]) -> Iterator[dict[str, str]]:
    """Say where it listens, then serve until stopped: a stream, so output that writes
    items as they come tells the caller the URL before the server blocks."""
    from atipkit import serve as servers

    yield started
    servers.run(asgi, sock)
