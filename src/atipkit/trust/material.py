"""Where verification reads signature bundles and provenance from (issue 19, item 6).

A document names its material (`trust.integrity.signature.bundle`, `trust.provenance.url`),
but it does not choose which files atipkit reads: a shim from a registry naming
`/proc/self/environ` or `~/.aws/credentials` as its bundle made `atip verify` read that
file and quote its first and last characters in the parse error. Material is read only
from

- beside the binary: `<binary>.sigstore.json`, `.sigstore`, `.bundle`, `.intoto.json`;
- an `https://` URL the document names, fetched through `_http.Fetcher` (its size cap,
  deadline and same-origin redirects) when `Sources.fetch` allows it, kept in the cache
  directory under the sha256 of the URL, and verified offline like the rest;
- a path relative to the user's own metadata file (`atip verify --metadata FILE`), inside
  that file's directory.

Anything else — an absolute path, `~`, `file:`, `http:`, a path out of the directory, a
path in a document that is not the user's file — is refused without being touched, and
the check says why. Only regular files are read (never a FIFO or a device), within a size
cap, and no message quotes what was read.
"""

from __future__ import annotations

import hashlib
import os
import stat
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import msgspec

from atipkit import paths

if TYPE_CHECKING:
    from atipkit._http import Fetcher

BUNDLE_MAX_BYTES = 1024 * 1024
PROVENANCE_MAX_BYTES = 4 * 1024 * 1024
FETCH_SECONDS = 10.0
CACHE_SECONDS = 24 * 3600
"""How long a fetched copy is used without asking again (the registries' TTL). Past it,
when fetching is not allowed or fails, the copy is still used, whatever its age."""


@dataclass(frozen=True)
class Sources:
    """What a verification may read besides the binary's own directory."""

    metadata_file: Path | None = None
    """The user's own metadata file: paths relative to its directory may be read."""
    fetch: bool = False
    """Whether `https://` URLs the document names may be fetched (a copy fetched before
    is used either way)."""
    fetcher: Fetcher | None = None
    """The client to fetch with (one with its own TLS roots, say); made when needed."""
    cache_dir: Path | None = None
    """Where fetched copies are kept (default: `$ATIP_CACHE_DIR/trust`)."""


class Material(msgspec.Struct, frozen=True):
    """What was found for one check: its bytes, or why there are none."""

    where: str
    """Where it was read from, or would have been: a path or a URL."""
    data: bytes | None = None
    problem: str = ""
    """Why `data` is None, in words that never quote a file."""


def find(
    binary: Path, suffixes: Sequence[str], named: str | None, sources: Sources, max_bytes: int
) -> Material | None:
    """The material beside `binary` (`<binary><suffix>`, the first that exists), else what
    the document `named`; None when there is neither."""
    for suffix in suffixes:
        beside = Path(f"{binary}{suffix}")
        if os.path.lexists(beside):
            return _local(beside, max_bytes)
    if not named:
        return None
    try:
        scheme = urlsplit(named).scheme.lower()
    except ValueError:  # an unclosed [, say
        return Material(named[:200], problem="is not read: not a URL nor a path")
    if "\x00" in named:
        return Material(named[:200], problem="is not read: not a URL nor a path")
    if scheme == "https":
        return _remote(named, sources, max_bytes)
    if scheme or named.startswith(("/", "~")) or os.path.isabs(named):
        return Material(
            named[:200],
            problem=f"is not read: the metadata names {_kind(named)}; material is read "
            "beside the binary, from an https URL, or relative to a --metadata file",
        )
    if sources.metadata_file is None:
        return Material(
            named[:200],
            problem="is not read: a relative path is read only from a metadata file given "
            "with --metadata, never from a resolved or fetched document",
        )
    home = sources.metadata_file.resolve().parent
    target = (home / named).resolve()
    if not target.is_relative_to(home):
        return Material(named[:200], problem=f"is not read: it leads out of {home}")
    return _local(target, max_bytes)


def _kind(named: str) -> str:
    scheme = urlsplit(named).scheme.lower()
    if scheme:
        return f"a {scheme[:20]}: URL (only https is fetched)"
    return "an absolute path" if not named.startswith("~") else "a path in a home directory"


def _local(path: Path, max_bytes: int) -> Material:
    """A regular file within `max_bytes`; never a FIFO, a device or a directory, which
    are refused before they are opened."""
    where = str(path)
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return Material(where, problem="is not read: not a regular file")
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        with os.fdopen(fd, "rb") as f:
            if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):  # swapped since the stat
                return Material(where, problem="is not read: not a regular file")
            data = f.read(max_bytes + 1)
    except OSError as exc:
        return Material(where, problem=f"cannot be read: {exc.strerror or type(exc).__name__}")
    if len(data) > max_bytes:
        return Material(where, problem=f"is not read: larger than {max_bytes} bytes")
    return Material(where, data)


def _remote(url: str, sources: Sources, max_bytes: int) -> Material:
    """A URL's content: a fresh cached copy, else fetched (when allowed), else an older
    cached copy."""
    from atipkit._atomic import write_atomic

    cache = (sources.cache_dir or paths.cache_dir() / "trust") / hashlib.sha256(
        url.encode()
    ).hexdigest()
    kept = _local(cache, max_bytes).data if cache.is_file() else None
    if kept is not None and (
        not sources.fetch or time.time() - cache.stat().st_mtime < CACHE_SECONDS
    ):
        return Material(url, kept)
    if not sources.fetch:
        return Material(url, problem="is not fetched here (offline, or not asked to fetch)")
    data, problem = _fetch(url, sources, max_bytes)
    if data is None and kept is not None:  # verified like a fresh one: better than none
        return Material(url, kept)
    if data is None:
        return Material(url, problem=problem)
    write_atomic(cache, data, durable=False)
    return Material(url, data)


def _fetch(url: str, sources: Sources, max_bytes: int) -> tuple[bytes | None, str]:
    from atipkit._http import Fetcher, HttpError

    try:
        if sources.fetcher is not None:
            response = sources.fetcher.get(url, max_bytes=max_bytes)
        else:
            with Fetcher(read_timeout=FETCH_SECONDS, deadline=FETCH_SECONDS) as fetcher:
                response = fetcher.get(url, max_bytes=max_bytes)
    except HttpError as exc:
        return None, f"cannot be fetched: {str(exc).removeprefix(f'{url}: ')}"
    if response.status != 200:
        return None, f"cannot be fetched: HTTP {response.status}"
    return response.content, ""
