"""HTTP servers: `atip serve`.

Each thing served is an ASGI app built by its own module (`serve.registry` for a static
registry, `serve.tdp` for the Tool Discovery Protocol, which can pass what is not its own
to another app, so one server gives both; `serve.mcp` for MCP, with `serve.deferred` its
deferred mode), and `listen` + `run` serve any of them with uvicorn. Starlette and
uvicorn come with the `serve` extra and are imported only here, when a server starts, so
`import atipkit` stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from atipkit.errors import AtipError

if TYPE_CHECKING:
    import socket

__all__ = ["INSTALL_HINT", "ServeError", "json_error", "listen", "require_extra", "run", "url"]

INSTALL_HINT = "pip install 'atipkit[serve]'"


class ServeError(AtipError):
    """A server cannot start: the `serve` extra is missing, or the address is unusable
    (then `errno` says why: in use, not allowed, not an address of this machine)."""

    def __init__(self, message: str, errno: int | None = None) -> None:
        super().__init__(message)
        self.errno = errno


def require_extra() -> None:
    """`ServeError` naming the extra when starlette or uvicorn is not installed."""
    try:
        import starlette  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError as exc:
        raise ServeError(
            f"atip serve needs the serve extra ({exc.name} is missing): {INSTALL_HINT}"
        ) from None


def json_error(status: int, code: str, message: str, headers: dict[str, str] | None = None) -> Any:
    """The JSON error answer every server here gives, `{"error": code, "message": ...}`,
    never cached (a starlette `Response`)."""
    import json

    from starlette.responses import Response

    body = json.dumps({"error": code, "message": message}).encode() + b"\n"
    return Response(
        body,
        status_code=status,
        media_type="application/json",
        headers={"Cache-Control": "no-store", **(headers or {})},
    )


def listen(host: str, port: int) -> socket.socket:
    """A listening socket; port 0 picks a free one (read it from `getsockname`). Binding
    here rather than in uvicorn lets the caller say where it listens before serving."""
    import socket  # here and below: `atipkit.serve`'s stdio servers need neither

    try:
        family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0][0]
        return socket.create_server((host, port), family=family, backlog=128)
    except OSError as exc:
        message = f"cannot listen on {host}:{port}: {exc.strerror or exc}"
        raise ServeError(message, exc.errno) from None


def url(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    return f"http://[{host}]:{port}/" if ":" in host else f"http://{host}:{port}/"


def run(app: Any, sock: socket.socket, *, quiet: bool = False, grace: int | None = None) -> None:
    """Serve `app` on `sock` until SIGINT or SIGTERM, then return: being stopped is how a
    server ends, not a failure. (uvicorn shuts down gracefully, then raises the signal
    again for the handler that was there before it; the one put there here only notes
    it, so the process neither dies of SIGTERM nor reports Ctrl-C as an error.)

    uvicorn's logs, the request log included, go to stderr: stdout belongs to the
    command's own output. `quiet` keeps only warnings and no request log (an app's
    stderr is its own); `grace` bounds the graceful shutdown in seconds (MCP's open
    event streams would hold it forever)."""
    import contextlib
    import copy
    import signal

    import uvicorn
    from uvicorn.config import LOGGING_CONFIG

    logging = copy.deepcopy(LOGGING_CONFIG)
    logging["handlers"]["access"]["stream"] = "ext://sys.stderr"
    config = uvicorn.Config(
        app,
        log_config=logging,
        log_level="warning" if quiet else "info",
        access_log=not quiet,
        server_header=False,
        timeout_graceful_shutdown=grace,
    )
    stops = (signal.SIGINT, signal.SIGTERM)
    previous = {s: signal.signal(s, lambda _signum, _frame: None) for s in stops}
    try:
        with contextlib.closing(sock):
            uvicorn.Server(config).run(sockets=[sock])
    finally:
        for stop, handler in previous.items():
            signal.signal(stop, handler)
