"""The human review of crawled shims (RFC 0.6 §4.10.1, step 5): with `--review`, a
crawl queues each shim it generates instead of publishing it; a person lists the queue,
reads each shim against what is published for the same tool and platform, and
approves it (it goes where crawl output goes: `shims/sha256/<hex>.json` in the output
folder) or rejects it (kept, with the reason, so that the next crawl does not queue the
same binary again).

The queue lives in the output folder, in `.review/`: `queue/<hex>.queued` and
`rejected/<hex>.rejected`, JSON `ReviewEntry`s holding the shim and what it was made from.
Dot-directory and suffixes keep them out of `atip registry build` and `atip validate
DIR`. Every change is one atomic write or rename, under a lock, in an order that a
kill at any point can only leave an entry to be approved or rejected again: approving
writes the shim, then deletes the entry; rejecting writes the rejection, then deletes
the entry. Approving an `inferred` shim promotes it to `community` (§4.10.4: inferred
shims "require human verification before being promoted"), and records when in
`_generation.reviewed`.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal

import msgspec

from atipkit.crawl.errors import ReviewError

DIRECTORY = ".review"
Kind = Literal["queue", "rejected"]
QUEUED: Kind = "queue"
REJECTED: Kind = "rejected"
_SUFFIX = {QUEUED: ".queued", REJECTED: ".rejected"}
_HEX = re.compile(r"(sha256:)?(?P<hex>[0-9a-f]{6,64})\Z")


class ReviewEntry(msgspec.Struct, kw_only=True, omit_defaults=True):
    """A shim awaiting review (or rejected): the document, the binary's hash, and what
    the crawl made it from. `replaces` is the published shim of the same tool, source
    and platform when it was queued, if any; `reason` and `rejected` say why and when
    it was rejected."""

    tool: str
    source: str
    platform: str
    version: str
    origin: str
    hash: str
    shim: str
    queued: str
    document: dict[str, Any]
    replaces: str | None = None
    rejected: str | None = None
    reason: str | None = None

    def summary(self) -> dict[str, Any]:
        """The entry without the document, for lists."""
        data: dict[str, Any] = msgspec.to_builtins(self)
        data.pop("document")
        return data


def _folder(out: Path, kind: Kind) -> Path:
    return out / DIRECTORY / kind


def _path(out: Path, kind: Kind, hash_: str) -> Path:
    return _folder(out, kind) / f"{hash_.removeprefix('sha256:')}{_SUFFIX[kind]}"


@contextmanager
def _locked(out: Path) -> Iterator[None]:
    from filelock import FileLock

    (out / DIRECTORY).mkdir(parents=True, exist_ok=True)
    with FileLock(str(out / DIRECTORY / "lock")):
        yield


def _write(path: Path, entry: ReviewEntry) -> None:
    from atipkit._atomic import write_atomic

    write_atomic(path, msgspec.json.format(msgspec.json.encode(entry)) + b"\n")


def _read(path: Path) -> ReviewEntry:
    try:
        return msgspec.json.decode(path.read_bytes(), type=ReviewEntry)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise ReviewError(f"{path}: a damaged review entry ({exc})", "invalid") from None


def holds(out: Path, hash_: str, kind: Kind = QUEUED) -> bool:
    """Whether the binary `hash_` has an entry of `kind`."""
    return _path(out, kind, hash_).is_file()


def queue(out: Path, entry: ReviewEntry) -> None:
    """Add `entry` to the queue (replacing an entry for the same binary)."""
    with _locked(out):
        _write(_path(out, QUEUED, entry.hash), entry)


def entries(out: Path, kind: Kind = QUEUED, tool: str | None = None) -> list[ReviewEntry]:
    """The entries of `kind`, oldest first; a damaged one is a `ReviewError`."""
    folder = _folder(out, kind)
    found = [_read(p) for p in folder.glob(f"*{_SUFFIX[kind]}")] if folder.is_dir() else []
    return sorted(
        (e for e in found if tool is None or e.tool == tool), key=lambda e: (e.queued, e.hash)
    )


def find(out: Path, key: str, kind: Kind = QUEUED) -> ReviewEntry:
    """The entry a hash names: `sha256:<hex>`, `<hex>`, or a unique prefix of 6+ digits."""
    match = _HEX.match(key.lower())
    if match is None:
        reason = f"{key[:80]!r} is not a binary's sha256 (or 6+ digits of one)"
        raise ReviewError(reason, "not-a-hash")
    folder = _folder(out, kind)
    prefix = match["hex"]
    paths = sorted(folder.glob(f"{prefix}*{_SUFFIX[kind]}")) if folder.is_dir() else []
    if not paths:
        where = "the review queue" if kind == QUEUED else "the rejected shims"
        raise ReviewError(f"no shim in {where} for sha256:{prefix}", "missing")
    if len(paths) > 1:
        shown = ", ".join(p.stem[:12] for p in paths[:5])
        raise ReviewError(f"sha256:{prefix} names {len(paths)} queued shims: {shown}", "ambiguous")
    return _read(paths[0])


def diff(out: Path, entry: ReviewEntry) -> str:
    """A unified diff from the published shim the entry replaces (or from nothing) to
    the queued one, both as indented JSON with sorted keys."""
    before: list[str] = []
    label = "(nothing published)"
    if entry.replaces and (out / entry.replaces).is_file():
        label = entry.replaces
        published = json.loads((out / entry.replaces).read_bytes())
        before = _lines(published)
    after = _lines(entry.document)
    return "".join(difflib.unified_diff(before, after, label, f"{entry.shim} (queued)"))


def _lines(document: Any) -> list[str]:
    return [f"{line}\n" for line in json.dumps(document, indent=2, sort_keys=True).splitlines()]


def approve(out: Path, key: str, now: str) -> tuple[ReviewEntry, bool]:
    """Publish a queued shim (see the module's docstring): the entry, and whether the
    shim was written (False: a shim for that binary was already published, and kept)."""
    from atipkit._atomic import write_atomic
    from atipkit.model import dumps
    from atipkit.validation import validate

    with _locked(out):
        entry = find(out, key)
        target = out / entry.shim
        written = not target.is_file()
        if written:
            document = promoted(entry.document, now)
            report = validate(document, source=target.name)
            if not report.ok or report.tool is None:
                first = report.errors[0].format() if report.errors else "invalid"
                raise ReviewError(f"the queued shim {entry.shim} is invalid: {first}", "invalid")
            write_atomic(target, dumps(report.tool) + b"\n")
        _path(out, QUEUED, entry.hash).unlink(missing_ok=True)
    return entry, written


def promoted(document: dict[str, Any], now: str) -> dict[str, Any]:
    """The shim as a person approved it: `inferred` becomes `community`, and
    `_generation.reviewed` says when."""
    out = dict(document)
    trust = dict(out.get("trust") or {})
    if trust.get("source") == "inferred":
        trust["source"] = "community"
    out["trust"] = trust
    out["_generation"] = {**(out.get("_generation") or {}), "reviewed": now}
    return out


def reject(out: Path, key: str, reason: str, now: str) -> ReviewEntry:
    """Move a queued shim to the rejected ones, with `reason`."""
    with _locked(out):
        entry = find(out, key)
        rejected = msgspec.structs.replace(entry, rejected=now, reason=reason)
        _write(_path(out, REJECTED, entry.hash), rejected)
        _path(out, QUEUED, entry.hash).unlink(missing_ok=True)
    return rejected
