"""`--idempotency-key`: a retry that cannot do the work twice.

The first call with a key runs and its outcome is kept (success, or a failure a retry
would meet again); a later call with the same key and the same arguments answers that
outcome without running, marked `meta.replayed: true`; the same key with other arguments
is a conflict (exit 20), because the key was meant for another request. Outcomes a retry
may change (timeouts, temporary failures) are not kept. Records live for 24 hours in
`$XDG_STATE_HOME/<app>/idempotency/`, written atomically; concurrent calls with one key
are serialized by a lock file, so the second waits for the first and replays it.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from atipkit.app.errors import ConflictError
from atipkit.errors import ErrorCode

__all__ = ["TTL_SECONDS", "IdempotencyStore"]

TTL_SECONDS = 24 * 3600


def state_dir(app: str) -> Path:
    value = os.environ.get("XDG_STATE_HOME")
    base = Path(value) if value and os.path.isabs(value) else Path.home() / ".local/state"
    return base / app


class IdempotencyStore:
    def __init__(self, directory: Path, *, ttl: float = TTL_SECONDS) -> None:
        self.directory = directory
        self.ttl = ttl

    def _path(self, tool: str, key: str) -> Path:
        name = hashlib.sha256(f"{tool}\0{key}".encode()).hexdigest()
        return self.directory / f"{name}.json"

    @contextmanager
    def hold(self, tool: str, key: str) -> Iterator[Path]:
        """The record's path, locked against other calls with this key meanwhile."""
        from filelock import FileLock

        path = self._path(tool, key)
        path.parent.mkdir(parents=True, exist_ok=True)
        with FileLock(str(path) + ".lock"):
            yield path

    def recall(self, path: Path, fingerprint: str) -> dict[str, Any] | None:
        """The kept outcome for this key, if it is fresh; a conflict if it was kept for
        other arguments."""
        import json

        try:
            record = json.loads(path.read_bytes())
        except (OSError, ValueError):  # absent, or half a file from a crash: not kept
            return None
        if not isinstance(record, dict) or time.time() - record.get("created", 0) > self.ttl:
            return None
        if record.get("fingerprint") != fingerprint:
            raise ConflictError(
                "this idempotency key was used with other arguments",
                code=ErrorCode.KEY_REUSED,
                suggestion="Use a new key for a new request; reuse a key only to retry.",
            )
        outcome = record.get("outcome")
        return outcome if isinstance(outcome, dict) else None

    def keep(self, path: Path, fingerprint: str, outcome: dict[str, Any]) -> None:
        from atipkit._atomic import write_atomic
        from atipkit.app.output import encode

        record = {"created": time.time(), "fingerprint": fingerprint, "outcome": outcome}
        write_atomic(path, encode(record), mode=0o600)
