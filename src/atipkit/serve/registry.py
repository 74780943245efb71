"""A built static registry over HTTP, for development and tests: what a production file
host (nginx, S3, a CDN) would do, in one process.

- GET and HEAD of the registry's files, `/` being `index.html`; the `Content-Type` and
  `Cache-Control` of `layout`;
- a strong ETag (from the content, so it survives a rebuild that changed nothing) and
  `Last-Modified`; `If-None-Match`, else `If-Modified-Since`, answer 304 (RFC 9110 §13);
- 404 as JSON for anything else: no directory listings, no dotfiles but `.well-known`, no
  way out of the directory (`..`, encoded or not, and symlinks leading out are refused).
"""

from __future__ import annotations

import email.utils
import hashlib
import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from atipkit.registry import layout
from atipkit.serve import json_error

if TYPE_CHECKING:
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response

_METHODS = ("GET", "HEAD")


class _Files:
    """The files under `root`, with each one's ETag remembered while it is unchanged."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._etags: dict[Path, tuple[tuple[int, int, int], str]] = {}
        self._lock = threading.Lock()

    def find(self, url_path: str) -> Path | None:
        """The file a decoded URL path names, or None for anything not to be served."""
        if url_path in ("", "/"):
            url_path = "/" + layout.INDEX_HTML
        parts = url_path.split("/")[1:]
        for i, part in enumerate(parts):
            if part in ("", ".", "..") or "\\" in part or "\0" in part:
                return None
            if part.startswith(".") and not (i == 0 and part == ".well-known"):
                return None
        try:
            path = self.root.joinpath(*parts).resolve(strict=True)
        except (OSError, RuntimeError):
            return None
        if not path.is_relative_to(self.root) or not path.is_file():
            return None
        return path

    def read(self, path: Path) -> tuple[bytes, str, os.stat_result]:
        with open(path, "rb") as f:
            stat = os.fstat(f.fileno())
            data = f.read()
        key = (stat.st_size, stat.st_mtime_ns, stat.st_ino)
        with self._lock:
            known = self._etags.get(path)
            if known is None or known[0] != key:
                known = (key, '"' + hashlib.sha256(data).hexdigest()[:32] + '"')
                self._etags[path] = known
        return data, known[1], stat


def _not_modified(request: Request, etag: str, mtime: float) -> bool:
    if_none_match = request.headers.get("if-none-match")
    if if_none_match is not None:
        tags = {t.strip().removeprefix("W/") for t in if_none_match.split(",")}
        return "*" in tags or etag in tags
    if_modified_since = request.headers.get("if-modified-since")
    if if_modified_since:
        try:
            since = email.utils.parsedate_to_datetime(if_modified_since).timestamp()
        except (TypeError, ValueError):
            return False
        return int(mtime) <= since
    return False


def registry_app(root: str | os.PathLike[str]) -> Starlette:
    """An ASGI app serving the registry built in `root`."""
    from starlette.applications import Starlette
    from starlette.responses import Response
    from starlette.routing import Route

    files = _Files(Path(root).resolve(strict=True))

    def serve(request: Request) -> Response:  # sync: Starlette runs it in a thread
        if request.method not in _METHODS:
            return json_error(
                405, "method-not-allowed", "only GET and HEAD", {"Allow": ", ".join(_METHODS)}
            )
        path = files.find(request.scope["path"])  # percent-decoded (ASGI)
        if path is None:
            return json_error(404, "not-found", "no such file in this registry")
        data, etag, stat = files.read(path)
        rel = path.relative_to(files.root).as_posix()
        headers = {
            "ETag": etag,
            "Last-Modified": email.utils.formatdate(stat.st_mtime, usegmt=True),
            "Cache-Control": layout.cache_control(rel),
        }
        if _not_modified(request, etag, stat.st_mtime):
            return Response(status_code=304, headers=headers)
        headers["Content-Type"] = layout.content_type(rel)
        if request.method == "HEAD":
            return Response(headers={**headers, "Content-Length": str(len(data))})
        return Response(data, headers=headers)

    methods = ["GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"]
    return Starlette(routes=[Route("/{path:path}", serve, methods=methods)])
