"""Who may talk to a server atip runs: the `Host` a request names and the web page
(`Origin`) it comes from. One guard for every server (`atip serve`, the MCP gateway, an
app's HTTP API and MCP over HTTP), so the rules are the same everywhere:

- `Host` (port aside) must be a loopback name (`localhost`, `127.x.y.z`, `::1`), the
  address the server is bound to, a name given with `--allow-host`, or, for a server
  bound to every address (`0.0.0.0`, `::`), any IP address. A web page can make a browser
  reach a loopback server under a name of its own (DNS rebinding); the page's name
  is then the `Host`, and it is refused. An IP address cannot be rebound.
- A request that carries an `Origin` comes from a web page: it is answered only when
  the page is the server's own (the origin is the `Host` it asked for) or its origin was
  given with `--allow-origin` (`*`: any). Requests without one (curl, agents, SDKs)
  are not browsers' cross-origin requests and pass.
- CORS headers are sent only for origins given with `--allow-origin`: a page of another
  origin can then read the answers, and preflights (`OPTIONS`) are answered for it.

The guard is ASGI middleware over HTTP and websocket requests alike (a page may open a
websocket to any address, and the browser sends its `Origin` but asks no preflight);
each server says how a refusal is worded (`refuse`), so a refusal looks like the server's
other errors, and a websocket it refuses is closed before it is accepted (403).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Awaitable, Callable, Iterable, MutableMapping, Sequence
from typing import Any
from urllib.parse import urlsplit

from atipkit.errors import AtipError

ASGIApp = Callable[[MutableMapping[str, Any], Any, Any], Awaitable[None]]
Refuse = Callable[[int, str, str, dict[str, Any]], Any]
"""`(status, code, message, details)` → an ASGI response: how a server words a refusal."""

WILDCARDS = frozenset({"0.0.0.0", "::", ""})
PREFLIGHT_MAX_AGE = "600"


class GuardError(AtipError, ValueError):
    """An `--allow-host` or `--allow-origin` value that cannot be one."""


def host_name(host: str) -> str:
    """The name in a `Host` header, lower case, without its port or IPv6 brackets."""
    host = host.strip().lower()
    if host.startswith("["):
        return host[1 : host.find("]")] if "]" in host else host
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def _is_ip(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


def origin_of(value: str) -> str:
    """`scheme://host[:port]` of an origin as browsers send it, lower case, the default
    port left out (`*` and `null`, the origin of sandboxed pages and files, as they are);
    `GuardError` for what is not one (a path, no scheme, no host)."""
    text = value.strip()
    if text in ("*", "null"):
        return text
    parts = urlsplit(text)
    try:
        port = parts.port
    except ValueError:
        port = -1
    if (
        parts.scheme not in ("http", "https")
        or not parts.hostname
        or port == -1
        or parts.path not in ("", "/")
        or parts.query
        or parts.fragment
        or parts.username is not None
    ):
        raise GuardError(
            f"{value!r} is not an origin: expected scheme://host[:port], such as "
            "http://localhost:3000 (or * for any)"
        )
    default = {"http": 80, "https": 443}[parts.scheme]
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    return f"{parts.scheme}://{host}" + (f":{port}" if port not in (None, default) else "")


class Rules:
    """What the guard lets through, for a server bound to `bound`."""

    def __init__(
        self, bound: str, *, hosts: Iterable[str] = (), origins: Iterable[str] = ()
    ) -> None:
        bound_name = host_name(bound) if bound.startswith("[") else bound.strip().lower()
        self.any_address = bound_name in WILDCARDS
        self.hosts = {host_name(h) for h in hosts if h.strip()}
        for name in self.hosts:
            if not name or "/" in name or " " in name:
                raise GuardError(f"{name!r} is not a host name")
        if not self.any_address:
            self.hosts.add(bound_name)
        self.origins = {origin_of(o) for o in origins}

    def host_allowed(self, name: str) -> bool:
        from atipkit._http import is_loopback_host  # the rules are made for stdio too

        if name in self.hosts or is_loopback_host(name):
            return True
        return self.any_address and _is_ip(name)

    def origin_allowed(self, origin: str, host: str) -> bool:
        """Whether a page of `origin` may be answered, asked as `host` (its `Host`)."""
        if "*" in self.origins:
            return True
        try:
            normal = origin_of(origin)
        except GuardError:  # garbage
            return False
        if normal in self.origins:
            return True
        own = urlsplit(normal).netloc
        return own in (host.strip().lower(), _without_default_port(host.strip().lower()))

    def cors_origin(self, origin: str) -> str | None:
        """The `Access-Control-Allow-Origin` to send a page of `origin`, if any."""
        if "*" in self.origins:
            return "*"
        try:
            normal = origin_of(origin)
        except GuardError:
            return None
        return origin if normal in self.origins else None


def _without_default_port(host: str) -> str:
    return host.removesuffix(":80").removesuffix(":443")


def guard(app: ASGIApp, rules: Rules, refuse: Refuse, methods: Sequence[str]) -> ASGIApp:
    """`app` behind `rules`: refusals by `refuse`, CORS headers for the allowed origins,
    preflights answered with `methods`."""

    async def guarded(scope: MutableMapping[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] not in ("http", "websocket"):  # lifespan
            await app(scope, receive, send)
            return
        headers = _headers(scope)
        host = headers.get("host", "")
        name = host_name(host)
        origin = headers.get("origin")
        if not host or not rules.host_allowed(name):
            refusal = (
                "host-not-allowed",
                f"Host {name!r} is not served here (a guard against DNS rebinding); "
                "call it by a loopback name or its address, or start it with --allow-host",
                {"host": name},
            )
        elif origin is not None and not rules.origin_allowed(origin, host):
            refusal = (
                "origin-not-allowed",
                f"requests from web pages of {origin!r} are not answered here; start the "
                "server with --allow-origin to let a page call it",
                {"origin": origin},
            )
        else:
            refusal = None
        if refusal is not None and scope["type"] == "websocket":
            # closed before it is accepted: the server answers the handshake with 403
            await send({"type": "websocket.close", "code": 1008})
            return
        if refusal is not None:
            await refuse(403, *refusal)(scope, receive, send)
            return
        if origin is None or scope["type"] == "websocket":  # no CORS for websockets
            await app(scope, receive, send)
            return
        allow = rules.cors_origin(origin)
        if allow is None:  # the server's own page
            await app(scope, receive, send)
            return
        cors = [
            (b"access-control-allow-origin", allow.encode("latin-1")),
            (b"access-control-expose-headers", b"*"),
        ]
        wanted = headers.get("access-control-request-method")
        if scope["method"] == "OPTIONS" and wanted is not None:
            asked = headers.get("access-control-request-headers")
            preflight = [
                *cors,
                (b"vary", b"Origin"),
                (b"access-control-allow-methods", ", ".join(methods).encode()),
                (b"access-control-max-age", PREFLIGHT_MAX_AGE.encode()),
                (b"allow", ", ".join(methods).encode()),
                *([(b"access-control-allow-headers", asked.encode("latin-1"))] if asked else []),
            ]
            await send({"type": "http.response.start", "status": 204, "headers": preflight})
            await send({"type": "http.response.body", "body": b""})
            return

        async def with_cors(message: MutableMapping[str, Any]) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": _with_cors(message.get("headers", []), cors)}
            await send(message)

        await app(scope, receive, with_cors)

    return guarded


def _with_cors(
    headers: Iterable[tuple[bytes, bytes]], cors: list[tuple[bytes, bytes]]
) -> list[tuple[bytes, bytes]]:
    """A response's headers with the CORS ones in place of any it had, and `Origin`
    added to its `Vary` (the answer depends on who asked)."""
    vary = [b"Origin"]
    kept = []
    for key, value in headers:
        name = key.lower()
        if name == b"vary":
            vary[:0] = [v.strip() for v in value.split(b",") if v.strip().lower() != b"origin"]
        elif not name.startswith(b"access-control-"):
            kept.append((key, value))
    return [*kept, *cors, (b"vary", b", ".join(vary))]


def _headers(scope: MutableMapping[str, Any]) -> dict[str, str]:
    """The request's headers by lower-case name (the first of each)."""
    out: dict[str, str] = {}
    for key, value in scope.get("headers", []):
        out.setdefault(key.decode("latin-1").lower(), value.decode("latin-1"))
    return out


def json_refusal(status: int, code: str, message: str, details: dict[str, Any]) -> Any:
    """A refusal as `atip serve`'s servers word errors (`atipkit.serve.json_error`)."""
    from atipkit.serve import json_error

    return json_error(status, code, message)


def mcp_security() -> Any:
    """The MCP SDK's transport settings for a server behind this guard: its own Host and
    Origin check off (it accepts `Origin: http://localhost:<any port>`, and none at all
    for a server bound elsewhere than a loopback name), its other checks on."""
    from mcp.server.transport_security import TransportSecuritySettings

    return TransportSecuritySettings(enable_dns_rebinding_protection=False)
