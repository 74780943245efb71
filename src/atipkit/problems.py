"""Problems found in a document, and the JSON paths that locate them.

A `Problem` is data: validation, loading and (later) compilation all report through it, so
one formatter serves the terminal and one shape serves `--json`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from enum import StrEnum

import msgspec

PathPart = str | int
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"


def json_path(parts: Iterable[PathPart]) -> str:
    """Render a location as a JSONPath: `$.commands.pr.options[2].flags`.

    Keys that are not identifiers (`""`, `dry-run`, `x-acme`) use bracket notation with a
    JSON string, so every path is unambiguous and can be read back.
    """
    out = ["$"]
    for part in parts:
        if isinstance(part, int):
            out.append(f"[{part}]")
        elif _IDENTIFIER.match(part):
            out.append(f".{part}")
        else:
            out.append(f"[{msgspec.json.encode(part).decode()}]")
    return "".join(out)


class Problem(msgspec.Struct, frozen=True):
    """One thing wrong with a document.

    `location` is a JSON path (`$.commands.pr`), `line L, column C` for text that is not
    JSON yet, or empty for the file as a whole. `code` is stable and documented, for
    machines and for suppressions.
    """

    code: str
    message: str
    location: str = "$"
    severity: Severity = Severity.ERROR

    @property
    def is_error(self) -> bool:
        return self.severity is Severity.ERROR

    def format(self, source: str | None = None) -> str:
        """One line: `gh.json: $.commands.pr: message` (warnings say so). Problems about
        the file as a whole (it cannot be read) have no location."""
        parts = [p for p in (source, self.location) if p]
        if self.severity is Severity.WARNING:
            parts.append("warning")
        return ": ".join([*parts, self.message])

    def to_dict(self) -> dict[str, str]:
        return {
            "severity": self.severity.value,
            "location": self.location,
            "code": self.code,
            "message": self.message,
        }


def error(code: str, message: str, location: str = "$") -> Problem:
    return Problem(code, message, location, Severity.ERROR)


def warning(code: str, message: str, location: str = "$") -> Problem:
    return Problem(code, message, location, Severity.WARNING)
