"""What can go wrong while crawling, one type per kind, all under `CrawlError`.

A `CrawlManifestError` is the operator's to fix before anything runs (exit status 2); the
others belong to one artifact of one tool, which fails while the crawl goes on (exit
status 1).
"""

from __future__ import annotations

from typing import Literal

from atipkit.errors import AtipError


class CrawlError(AtipError):
    """Base class of the crawler's errors."""


class CrawlManifestError(CrawlError):
    """A tool manifest that cannot be used: `file: field: reason`, on one line."""

    def __init__(self, file: str, field: str, reason: str) -> None:
        super().__init__(f"{file}: {field}: {reason}" if field else f"{file}: {reason}")
        self.file = file
        self.field = field
        self.reason = reason


ManifestError = CrawlManifestError
"""`CrawlManifestError` by its name before decision 391, kept for a release."""


class ManifestNotFound(CrawlManifestError):
    """No manifest for the tool named."""


class NotAToolName(CrawlManifestError):
    """A tool name that cannot name a manifest (a path, a space, a shell character)."""


class SourceError(CrawlError):
    """A source that did not give what it was asked for: a release, a package, a file."""


class IntegrityError(SourceError):
    """A download whose digest differs from the one its source published."""


class UnusableArtifact(SourceError):
    """An artifact that is what its source published, but whose binary is not the file
    users run (brew rewrites a bottle's binaries when it pours them): its platform is
    skipped with the reason, not failed, since no manifest change would help."""


class ArchiveError(CrawlError):
    """An archive refused while extracting: `member` is the offending entry, if any."""

    def __init__(self, reason: str, member: str = "") -> None:
        super().__init__(f"{member}: {reason}" if member else reason)
        self.member = member
        self.reason = reason


class ReviewError(CrawlError):
    """A review step that cannot be done (`atip review`): `kind` says why, for exit
    statuses — no such queued shim, a prefix naming two, not a hash, a damaged entry."""

    def __init__(
        self, message: str, kind: Literal["missing", "ambiguous", "not-a-hash", "invalid"]
    ) -> None:
        super().__init__(message)
        self.kind = kind
