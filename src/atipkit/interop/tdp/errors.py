"""What goes wrong reading a manifest, and fetching one.

`ManifestError` is a `DocumentError` (the CLI's exit 65) whose first problem names the
JSON path inside the manifest; a server that answers with anything but a manifest is an
HTTP failure (`ManifestStatusError`), not a bad document.
"""

from __future__ import annotations

from atipkit._http import HttpError, StatusError
from atipkit.errors import DocumentError, UnsupportedVersion


class ManifestError(DocumentError):
    """A manifest that cannot be read: `problems[0]` names the JSON path and what was
    expected there."""


class UnsupportedProtocol(ManifestError, UnsupportedVersion):
    """A manifest of a major protocol version this reader does not know."""


class ManifestStatusError(StatusError):
    """The server answered, but not with a manifest (any status but 200)."""

    def __init__(self, url: str, status: int, detail: str = "") -> None:
        HttpError.__init__(self, url, f"HTTP {status}" + (f": {detail}" if detail else ""))
        self.status = status
