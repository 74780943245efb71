"""`atip serve`: serve a built registry over HTTP (`--registry`). The Tool Discovery
Protocol (`--tdp`) will be a second thing this command serves: each is an app of
`atipkit.serve`, chosen here by option."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from atipkit.app import (
    Option,
)
from atipkit.app.served import listen
from atipkit.cli import _errors as errors
from atipkit.cli import app
from atipkit.cli._effects import serves

if TYPE_CHECKING:
    import socket


def _text(started: dict[str, str]) -> str:
    return f"serving the registry {started['registry']} at {started['url']} (Ctrl-C to stop)\n"


@app.command(effects=serves(), text=_text)
def serve(
    registry: Annotated[
        Path,
        Option(
            help="The registry directory to serve (what atip registry build wrote).",
            file_okay=False,
        ),
    ],
    host: Annotated[str, Option(help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[
        int, Option(help="Port to listen on; 0 picks a free one.", min=0, max=65535)
    ] = (8000),
) -> Iterator[dict[str, str]]:
    """Serve a static registry over HTTP for development, until interrupted.

    ETag and Last-Modified with 304 answers, HEAD, the registry's content types and
    Cache-Control, JSON 404s, no directory listings. The result is one record, where it
    listens ({registry, url}), given as soon as it listens with --jsonl, --plain or text
    output (JSON output, the envelope, comes when the server stops). Requests are logged
    on stderr. Exit status: 0 stopped (Ctrl-C or SIGTERM), 2 no --registry, 10 the
    directory does not exist, 20 cannot listen on the address, 40 the serve extra is
    missing.
    """
    from atipkit import serve as servers

    errors.require_directory(
        registry, "--registry", "Give the directory atip registry build wrote."
    )
    try:
        servers.require_extra()
    except servers.ServeError as exc:
        raise errors.missing_extra(str(exc), servers.INSTALL_HINT) from None
    from atipkit.serve.registry import registry_app

    root = os.path.abspath(registry)
    sock = listen(host, port)
    return _serving(registry_app(root), sock, {"registry": root, "url": servers.url(sock)})


def _serving(asgi: Any, sock: socket.socket, started: dict[str, str]) -> Iterator[dict[str, str]]:
    """Say where it listens, then serve until stopped: a stream, so output that writes
    items as they come tells the caller the URL before the server blocks."""
    from atipkit import serve as servers

    yield started
    servers.run(asgi, sock)
