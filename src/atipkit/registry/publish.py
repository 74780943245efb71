"""`atip registry publish`: upload a built registry to object storage or a directory.

The target is a directory or an fsspec URL (`s3://bucket/prefix`, `gs://…`, `file://…`,
`memory://…`); the filesystem package of its protocol (s3fs, gcsfs, …) must be installed,
and its credentials come from its usual environment (`AWS_*`, `GOOGLE_APPLICATION_
CREDENTIALS`, …). atipkit never prints them.

Only what changed is uploaded: the target is listed once and each file compared by the
checksum the store keeps (S3's ETag, the MD5 of a single-part upload; GCS's `md5Hash`), or
by size and content where there is none. Uploads go in an order that keeps the registry
consistent for a client reading it meanwhile: shims and their signatures first, then the
catalog, coverage and page that list them, the manifest last. Each object gets the
`Content-Type` and `Cache-Control` of `layout`, in the form its filesystem takes them.

Nothing is ever deleted: a shim is named by the hash of a binary that exists forever, and
a client may hold its URL; removing it from DEST removes it from the catalog only.
"""

from __future__ import annotations

import base64
import hashlib
import os
import re
from collections.abc import Iterator, Mapping
from itertools import groupby
from pathlib import Path
from typing import Any

import msgspec

from atipkit._atomic import write_atomic
from atipkit.errors import AtipError
from atipkit.registry import layout

INSTALL_HINT = "pip install 'atipkit[publish]' s3fs (or gcsfs, adlfs, ...)"
_S3 = {"s3", "s3a"}
_GCS = {"gs", "gcs"}
_LOCAL = {"file", "local", "memory"}
"""Stores where HTTP headers do not apply: the web server in front of them sets them."""
_MD5_HEX = re.compile(r"[0-9a-f]{32}\Z")


class PublishError(AtipError):
    """Publishing failed."""


class BadTarget(PublishError):
    """The registry or the target cannot be used as given: not a built registry, an unknown
    protocol, a filesystem package that is not installed, a bad storage option."""


class MissingPackage(BadTarget):
    """fsspec, or the filesystem package of the target's protocol, is not installed."""


class PublishFailed(PublishError):
    """The store refused or failed: a missing bucket, denied access, a network error.
    `uploaded` lists what had been sent before (it stays: by the upload order, the
    registry there is still consistent, and a rerun sends only the rest)."""

    def __init__(self, message: str, uploaded: list[Upload]) -> None:
        super().__init__(message)
        self.uploaded = uploaded


class Upload(msgspec.Struct, frozen=True, kw_only=True):
    path: str
    size: int
    content_type: str
    cache_control: str


class PublishReport(msgspec.Struct, kw_only=True):
    target: str
    """The target as given, with any `user:password@` removed."""
    dry_run: bool
    uploaded: list[Upload] = []
    """In upload order; with `dry_run`, what would be uploaded."""
    unchanged: int = 0
    unchanged_bytes: int = 0
    warnings: list[str] = []

    @property
    def uploaded_bytes(self) -> int:
        return sum(u.size for u in self.uploaded)

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": True,
            "target": self.target,
            "dryRun": self.dry_run,
            "uploaded": [msgspec.to_builtins(u) for u in self.uploaded],
            "uploadedBytes": self.uploaded_bytes,
            "unchanged": self.unchanged,
            "unchangedBytes": self.unchanged_bytes,
            "warnings": self.warnings,
        }


def redact(target: str) -> str:
    return re.sub(r"//[^/@]*@", "//", target)


def upload_order(path: str) -> tuple[int, str, str]:
    """Signatures before their shims (a client that requires one never finds a shim
    without it), shims before what lists them, the manifest last; within each step, files
    of one content type together, so they go in one batch."""
    if path.startswith(layout.SHIMS + "/"):
        step = 1 if path.endswith(".json") else 0
    else:
        step = 3 if path == layout.MANIFEST else 2
    return step, layout.content_type(path), path


def registry_files(dest: str | os.PathLike[str]) -> dict[str, bytes]:
    """Every file of a built registry, by its path in the registry, in upload order.
    Dotfiles are left out, except the manifest's `.well-known`."""
    root = Path(dest)
    if not (root / layout.MANIFEST).is_file():
        raise BadTarget(
            f"{root}: not a built registry (no {layout.MANIFEST}); run atip registry build"
        )
    found: list[str] = []
    for top, dirs, names in os.walk(root):
        at_root = Path(top) == root
        dirs[:] = [d for d in dirs if not d.startswith(".") or (at_root and d == ".well-known")]
        found += [
            (Path(top) / n).relative_to(root).as_posix() for n in names if not n.startswith(".")
        ]
    return {rel: (root / rel).read_bytes() for rel in sorted(found, key=upload_order)}


def open_target(
    target: str,
    *,
    endpoint_url: str | None = None,
    storage_options: Mapping[str, Any] | None = None,
) -> tuple[Any, str]:
    """The fsspec filesystem of `target` and the path of the registry in it."""
    try:
        import fsspec.core
    except ImportError:
        raise MissingPackage(f"publishing needs fsspec: {INSTALL_HINT}") from None
    protocol = fsspec.core.split_protocol(target)[0] or "file"
    options = dict(storage_options or {})
    if endpoint_url:
        if protocol in _LOCAL:
            raise BadTarget(f"--endpoint-url is for object storage, not {protocol}: targets")
        options["endpoint_url"] = endpoint_url
    try:
        fs, path = fsspec.core.url_to_fs(target, skip_instance_cache=True, **options)
    except ImportError as exc:  # fsspec knows the protocol; its package is missing
        raise MissingPackage(f"{redact(target)}: {exc}; {INSTALL_HINT}") from None
    except ValueError as exc:  # "Protocol not known: xyz"
        raise BadTarget(f"{redact(target)}: {exc}") from None
    except TypeError as exc:  # a storage option the filesystem does not take
        raise BadTarget(f"{redact(target)}: bad storage option: {exc}") from None
    return fs, str(path)


def _protocols(fs: Any) -> set[str]:
    return {fs.protocol} if isinstance(fs.protocol, str) else set(fs.protocol)


def header_kwargs(protocols: set[str], path: str) -> dict[str, Any] | None:
    """`Content-Type` and `Cache-Control` the way the filesystem's `pipe_file` takes them;
    None where it has no way."""
    content_type, cache_control = layout.content_type(path), layout.cache_control(path)
    if protocols & _S3:
        return {"ContentType": content_type, "CacheControl": cache_control}
    if protocols & _GCS:
        return {
            "content_type": content_type,
            "fixed_key_metadata": {"cache_control": cache_control},
        }
    return None


def _same(fs: Any, path: str, info: Mapping[str, Any] | None, data: bytes) -> bool:
    if info is None or info.get("size") != len(data):
        return False
    etag = str(info.get("ETag") or info.get("etag") or "").strip('"')
    if _MD5_HEX.match(etag):
        return etag == hashlib.md5(data, usedforsecurity=False).hexdigest()
    if md5 := info.get("md5Hash"):
        return base64.b64decode(md5) == hashlib.md5(data, usedforsecurity=False).digest()
    return bool(fs.cat_file(path) == data)


def _listing(fs: Any, root: str) -> dict[str, Mapping[str, Any]]:
    prefix = root.rstrip("/") + "/"
    listed = fs.find(root, detail=True)
    return {path.removeprefix(prefix): info for path, info in listed.items()}


def _batches(uploads: list[Upload]) -> Iterator[list[Upload]]:
    """Consecutive uploads of one step and one set of headers, to send together."""
    for _key, members in groupby(uploads, key=lambda u: upload_order(u.path)[:2]):
        yield list(members)


def publish(
    dest: str | os.PathLike[str],
    target: str,
    *,
    dry_run: bool = False,
    endpoint_url: str | None = None,
    storage_options: Mapping[str, Any] | None = None,
) -> PublishReport:
    """Upload what changed of the registry built in `dest` to `target` (see the module
    docstring). `BadTarget` before anything is sent; `PublishFailed` when the store fails,
    with what was uploaded before staying uploaded (a consistent registry, by the order)."""
    files = registry_files(dest)
    fs, root = open_target(target, endpoint_url=endpoint_url, storage_options=storage_options)
    protocols = _protocols(fs)
    report = PublishReport(target=redact(target), dry_run=dry_run)
    if not protocols & (_S3 | _GCS | _LOCAL):
        report.warnings.append(
            f"{sorted(protocols)[0]}: atipkit cannot set Content-Type and Cache-Control on "
            "this store; configure them where it is served"
        )
    sent: list[Upload] = []
    try:
        try:
            remote = _listing(fs, root)
        except TypeError as exc:  # s3fs and others apply storage options at the first request
            raise BadTarget(f"{redact(target)}: bad storage option: {exc}") from None
        for rel, data in files.items():
            path = f"{root.rstrip('/')}/{rel}"
            if _same(fs, path, remote.get(rel), data):
                report.unchanged += 1
                report.unchanged_bytes += len(data)
            else:
                report.uploaded.append(
                    Upload(
                        path=rel,
                        size=len(data),
                        content_type=layout.content_type(rel),
                        cache_control=layout.cache_control(rel),
                    )
                )
        if dry_run:
            return report
        for batch in _batches(report.uploaded):
            paths = {f"{root.rstrip('/')}/{u.path}": files[u.path] for u in batch}
            if "file" in protocols:  # a directory a web server may be reading: atomically
                for path, data in paths.items():  # no fsync: a rerun compares and heals
                    write_atomic(path, data, durable=False)
            else:
                fs.pipe(paths, **(header_kwargs(protocols, batch[0].path) or {}))
            sent += batch
    except PublishError:
        raise
    except Exception as exc:  # fsspec backends raise their own types; the cause is chained
        message = f"{redact(target)}: {type(exc).__name__}: {exc}"
        raise PublishFailed(message, sent) from exc
    return report
