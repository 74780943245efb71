"""The Tool Discovery Protocol over HTTP (spec/tool-discovery-protocol-1.0.md): the ATIP
tools of this machine as a scenario's manifest.

- `GET /api/v1/tools`: the manifest (snake_case, `atipkit.interop.tdp.manifest`);
  `GET /api/v1/tools/{name}`: one tool, or a JSON 404;
- `Cache-Control: public, max-age=60` and `Content-Type: application/json`, a strong ETag
  with 304 for `If-None-Match`, HEAD;
- OPTIONS answered with `Allow: GET, HEAD, OPTIONS`; 405 for any other method. No CORS
  headers of its own: `atip serve` puts the server behind `atipkit.serve.guard` (Host
  and Origin allow-lists), which sends them, and answers preflights, only for the
  origins given with `--allow-origin`: the manifest says what this machine can run, and
  no web page may read it unasked;
- 503 with a JSON body while the tools cannot be read (a corrupt registry.json, a --tool
  file gone bad), the spec's "scenario unavailable".

The manifest is built from the local registry (each entry resolved as `atip run` resolves
it) or from the ATIP documents given, once per state of its sources: the registry file
and the binaries it names, or the documents' files. An unchanged state answers from the
cache; any change rebuilds on the next request.

Requests outside `/api/v1/tools` go to `fallback` (the static registry of `atip serve
--registry`, when both are served), or get a JSON 404.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import threading
from collections.abc import Awaitable, Callable, Hashable, Mapping, MutableMapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from atipkit.errors import AtipError
from atipkit.interop import tdp

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.responses import Response

    from atipkit.model import Tool
    from atipkit.registry.local import LocalRegistry

ASGIApp = Callable[
    [MutableMapping[str, Any], Callable[[], Awaitable[Any]], Callable[[Any], Awaitable[None]]],
    Awaitable[None],
]
ALLOWED = ("GET", "HEAD", "OPTIONS")
_PREFIX = tdp.ENDPOINT + "/"
log = logging.getLogger("atipkit.serve.tdp")


class ToolsUnavailable(AtipError):
    """The tools cannot be read now (503); the message says why."""


class Served:
    """One build of the manifest, encoded once: its bytes and ETag, and each tool's."""

    def __init__(self, manifest: dict[str, Any]) -> None:
        self.body, self.etag = _encoded(manifest)
        self.tools = {t["name"]: _encoded(t) for t in manifest["tools"]}


def _encoded(value: Any) -> tuple[bytes, str]:
    body = json.dumps(value, ensure_ascii=False, indent=2).encode() + b"\n"
    return body, '"' + hashlib.sha256(body).hexdigest()[:32] + '"'


class ToolSource:
    """Where the served tools come from: the ATIP documents in `files`, or, when there
    are none, every tool of the local `registry`. `current()` is thread-safe and builds
    only when the sources changed since the last build."""

    def __init__(
        self,
        files: Sequence[str | os.PathLike[str]] = (),
        *,
        registry: LocalRegistry | None = None,
        scenario: tdp.Scenario | Mapping[str, str] | None = None,
        extensions: bool = True,
    ) -> None:
        from atipkit.registry.local import LocalRegistry

        self.files = [Path(f) for f in files]
        self.registry = registry or LocalRegistry()
        self.scenario = scenario
        self.extensions = extensions
        self._lock = threading.Lock()
        self._built: tuple[Hashable, Served] | None = None

    def current(self) -> Served:
        """The manifest for the sources as they are now; `ToolsUnavailable` when they cannot
        be read."""
        with self._lock:
            state = self._state()
            if self._built is not None and self._built[0] == state:
                return self._built[1]
            # keyed by the state before the build: resolving may record tools in the
            # registry, and the next request then rebuilds once from a settled registry
            served = Served(
                tdp.manifest(self._tools(), scenario=self.scenario, extensions=self.extensions)
            )
            self._built = (state, served)
            return served

    # -- the state of the sources, and their tools ---------------------------------------

    def _state(self) -> Hashable:
        from atipkit.registry.local import RegistryError
        from atipkit.resolve import file_state, registry_state

        if self.files:
            return tuple(file_state(f) for f in self.files)
        try:
            return registry_state(self.registry)
        except RegistryError as exc:
            raise ToolsUnavailable(str(exc)) from None

    def _tools(self) -> list[Tool]:
        """The tools to serve; two of one name are both served (the manifest names the
        second after its key, `bridge.names.tool_keys`), and the clash is logged, as is
        metadata that claims a name not its own (`atipkit.naming`)."""
        from atipkit.bridge.names import name_clashes
        from atipkit.registry.local import RegistryError
        from atipkit.resolve import resolve_registry

        if self.files:
            tools = [self._load(f) for f in self.files]
            sources = [str(f) for f in self.files]
        else:
            try:
                resolved, skipped = resolve_registry(self.registry)
            except RegistryError as exc:
                raise ToolsUnavailable(str(exc)) from None
            for line in skipped:  # the others are still served
                log.warning("left out %s", line)
            for claim in (r.renamed for r in resolved):
                if claim is not None and not claim.alias:
                    log.warning("%s", claim.message)
            tools = [r.tool for r in resolved]
            sources = [f"registry entry {r.name}" for r in resolved]
        for line in name_clashes(tools, sources):
            log.warning("%s", line)
        return tools

    def _load(self, path: Path) -> Tool:
        from atipkit.errors import DocumentError
        from atipkit.model import load

        try:
            return load(path)
        except DocumentError as exc:  # names the file
            raise ToolsUnavailable(str(exc)) from None
        except OSError as exc:
            raise ToolsUnavailable(f"{path}: {exc.strerror or exc}") from None


# -- HTTP -------------------------------------------------------------------------------------


def _answer(request: Request, body: bytes, etag: str) -> Response:
    from starlette.responses import Response

    headers = {
        "Cache-Control": tdp.CACHE_CONTROL,
        "ETag": etag,
        "Content-Type": "application/json",
    }
    if_none_match = request.headers.get("if-none-match")
    if if_none_match is not None:
        tags = {t.strip().removeprefix("W/") for t in if_none_match.split(",")}
        if "*" in tags or etag in tags:
            del headers["Content-Type"]
            return Response(status_code=304, headers=headers)
    if request.method == "HEAD":
        return Response(headers={**headers, "Content-Length": str(len(body))})
    return Response(body, headers=headers)


def tdp_app(source: ToolSource, *, fallback: ASGIApp | None = None) -> ASGIApp:
    """An ASGI app serving `source`'s manifest at `/api/v1/tools`; any other path goes to
    `fallback`, or is a JSON 404."""
    from starlette.applications import Starlette
    from starlette.responses import Response
    from starlette.routing import Route

    from atipkit.serve import json_error as _json

    def serve(request: Request) -> Response:  # sync, in a worker thread: it may resolve tools
        path = request.scope["path"]  # percent-decoded (ASGI)
        if path in (tdp.ENDPOINT, _PREFIX):
            name = None
        elif path.startswith(_PREFIX) and "/" not in path[len(_PREFIX) :]:
            name = path[len(_PREFIX) :]
        else:
            return _json(404, "not-found", f"nothing here; the manifest is at {tdp.ENDPOINT}")
        if request.method == "OPTIONS":  # a preflight never gets here (the guard's)
            return Response(status_code=204, headers={"Allow": ", ".join(ALLOWED)})
        if request.method not in ("GET", "HEAD"):
            return _json(
                405,
                "method-not-allowed",
                "only GET, HEAD and OPTIONS",
                {"Allow": ", ".join(ALLOWED)},
            )
        try:
            served = source.current()
        except ToolsUnavailable as exc:
            return _json(503, "unavailable", str(exc), {"Retry-After": "60"})
        if name is None:
            return _answer(request, served.body, served.etag)
        tool = served.tools.get(name)
        if tool is None:
            return _json(404, "not-found", f"no tool named {name!r} in this manifest")
        return _answer(request, *tool)

    class Endpoint:
        """Every method reaches `serve` (a plain function endpoint would let Starlette
        answer methods it was not told of, in its own words)."""

        async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
            from starlette.concurrency import run_in_threadpool
            from starlette.requests import Request

            response = await run_in_threadpool(serve, Request(scope, receive))
            await response(scope, receive, send)

    inner = Starlette(routes=[Route("/{path:path}", Endpoint())])
    if fallback is None:
        return inner

    async def app(scope: MutableMapping[str, Any], receive: Any, send: Any) -> None:
        path = scope.get("path", "")
        if scope["type"] == "http" and path != tdp.ENDPOINT and not path.startswith(_PREFIX):
            await fallback(scope, receive, send)
        else:
            await inner(scope, receive, send)

    return app
