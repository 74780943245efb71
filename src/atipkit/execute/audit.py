"""The audit log: one JSON line per decision — tool, argv, decision, exit code, duration.

Lines are appended with a single `write` on a file opened with O_APPEND, so concurrent
writers (parallel calls, several agents) never interleave within a line.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import msgspec

from atipkit._clock import timestamp


class AuditLog:
    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)

    def record(self, **fields: Any) -> None:
        line = msgspec.json.encode({"time": timestamp(), **fields}) + b"\n"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, line)
        finally:
            os.close(fd)

    def read(self) -> list[dict[str, Any]]:
        try:
            lines = self.path.read_bytes().splitlines()
        except FileNotFoundError:
            return []
        return [msgspec.json.decode(line) for line in lines if line.strip()]
