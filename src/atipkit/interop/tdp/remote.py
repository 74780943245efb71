"""A manifest over HTTP: where a scenario serves it (`ENDPOINT`), how long it may be
kept (`CACHE_CONTROL` for servers, `DEFAULT_TTL` for clients), and `fetch`, which GETs
and parses it with the in-process cache the spec asks of consumers.

The HTTP client is imported only when a manifest is fetched.
"""

from __future__ import annotations

import re
import threading
import time
from typing import NamedTuple

from atipkit import _jsontext
from atipkit.errors import DocumentError, MalformedJSON
from atipkit.interop.tdp.errors import ManifestError, ManifestStatusError
from atipkit.interop.tdp.model import ToolManifest
from atipkit.interop.tdp.reader import parse
from atipkit.problems import error

ENDPOINT = "/api/v1/tools"
CACHE_CONTROL = "public, max-age=60"
DEFAULT_TTL = 60.0
"""Seconds a fetched manifest is reused when the server states no max-age (the spec's TTL)."""


class _Kept(NamedTuple):
    """A manifest `fetch` keeps: until when it is fresh, and the validators to ask the
    server whether it changed since (`If-None-Match`, `If-Modified-Since`)."""

    fresh_until: float
    manifest: ToolManifest
    ttl: float
    etag: str | None
    last_modified: str | None


_cache: dict[str, _Kept] = {}
_cache_lock = threading.Lock()
_MAX_AGE = re.compile(r"(?:^|,)\s*max-age\s*=\s*\"?([0-9]+)\"?\s*(?:,|$)", re.IGNORECASE)


def manifest_url(url: str) -> str:
    """The manifest's address: a base URL (no path, or `/`) gets `/api/v1/tools`; any
    other URL is taken as the manifest's own. Raises `ValueError` for anything but
    http and https."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    if parts.scheme.lower() not in ("http", "https") or not parts.netloc:
        raise ValueError(f"{url}: expected an http or https URL")
    if parts.path in ("", "/"):
        return urlunsplit(parts._replace(path=ENDPOINT))
    return url


def clear_cache() -> None:
    """Forget every manifest `fetch` remembers."""
    with _cache_lock:
        _cache.clear()


def fetch(
    url: str,
    *,
    timeout: float = 10.0,
    refresh: bool = False,
    max_bytes: int = _jsontext.MAX_DOCUMENT_BYTES,
) -> ToolManifest:
    """GET a scenario's manifest (`manifest_url(url)`) and parse it.

    Caching as the spec asks of consumers, by the server's `Cache-Control` (RFC 9111): a
    manifest is reused in this process for its `max-age`, or 60 seconds when it states
    none; once stale, or at once with `no-cache` or `refresh=True`, it is revalidated
    with its `ETag` and `Last-Modified` — a 304 keeps it (the same object), fresh again;
    `no-store` keeps nothing. `timeout` bounds the whole exchange.

    Raises `ValueError` for a URL that is not http(s), `NetworkError` when the server
    cannot be reached or answers too slowly, `ManifestStatusError` for a status other
    than 200 (with the `message` of a JSON error body), `ResponseTooLarge` past
    `max_bytes`, and what `parse` raises for a body that is not a manifest."""
    from atipkit._http import Fetcher, entity_tag, http_date

    target = manifest_url(url)
    now = time.monotonic()
    with _cache_lock:
        kept = _cache.get(target)
    if kept is not None and not refresh and kept.fresh_until > now:
        return kept.manifest
    headers = {"Accept": "application/json"}
    if kept is not None and kept.etag:
        headers["If-None-Match"] = kept.etag
    if kept is not None and kept.last_modified:
        headers["If-Modified-Since"] = kept.last_modified
    with Fetcher(connect_timeout=timeout, read_timeout=timeout, deadline=timeout) as client:
        response = client.get(target, max_bytes=max_bytes, headers=headers)
    stated = response.headers.get("cache-control")
    if response.status == 304 and kept is not None:  # unchanged: kept, fresh again
        ttl = kept.ttl if stated is None else _ttl(stated)
        etag = entity_tag(response.headers.get("etag")) or kept.etag
        _keep(target, _Kept(now + ttl, kept.manifest, ttl, etag, kept.last_modified), stated)
        return kept.manifest
    if response.status != 200:
        raise ManifestStatusError(response.url, response.status, _error_detail(response.content))
    content_type = response.headers.get("content-type", "")
    try:
        parsed = parse(response.content, source=response.url)
    except MalformedJSON as exc:
        problem = exc.problems[0]
        said = f" (Content-Type: {content_type})" if content_type else ""
        reason = f"not JSON{said}: {problem.message}"
        raise ManifestError([error(problem.code, reason, problem.location)], response.url) from None
    ttl = _ttl(stated or "")
    etag = entity_tag(response.headers.get("etag"))
    modified = http_date(response.headers.get("last-modified"))
    _keep(target, _Kept(now + ttl, parsed, ttl, etag, modified), stated)
    return parsed


def _keep(target: str, kept: _Kept, cache_control: str | None) -> None:
    """Keep `kept` as the server's `Cache-Control` allows: never with `no-store` (and
    what was kept is forgotten); otherwise while it is fresh, or — stale at once
    (`no-cache`, `max-age=0`) — while it has a validator to revalidate it with."""
    with _cache_lock:
        if "no-store" in (cache_control or "").lower():
            _cache.pop(target, None)
        elif kept.ttl > 0 or kept.etag or kept.last_modified:
            _cache[target] = kept
        else:
            _cache.pop(target, None)


def _ttl(cache_control: str) -> float:
    """Seconds a manifest is fresh: 0 with `no-store` or `no-cache` (asked again, or
    revalidated, every time), the `max-age`, else the spec's 60."""
    directives = cache_control.lower()
    if "no-store" in directives or "no-cache" in directives:
        return 0.0
    match = _MAX_AGE.search(cache_control)
    return float(match.group(1)) if match else DEFAULT_TTL


def _error_detail(content: bytes) -> str:
    """The `message` of a JSON error body (ours, and many servers', say why), cut short."""
    try:
        body = _jsontext.decode(content[:65536])
    except DocumentError:
        return ""
    message = body.get("message") if isinstance(body, dict) else None
    return " ".join(str(message).split())[:300] if message else ""
