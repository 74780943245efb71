"""What this library knows of the protocol itself: versions and feature ids (RFC 0.6 §3.2.1).

SPEC-NOTES 1: documents of any 0.x version are read; a minor version newer than the one we
implement is read with a warning (its unknown fields are ignored, not rejected); a major
version we do not know is refused.
"""

from __future__ import annotations

import re
from typing import Any

import msgspec

from atipkit.problems import Problem, error

#: The protocol version this library implements and writes.
PROTOCOL_VERSION = "0.6"
_IMPLEMENTED = (0, 6)

#: Feature ids of RFC 0.6 §3.2.1 and the version that introduced each.
FEATURES: dict[str, tuple[int, int]] = {
    "partial-discovery": (0, 3),
    "interactive-effects": (0, 3),
    "trust-v1": (0, 4),
    "patterns-v1": (0, 4),
    "trust-integrity": (0, 5),
    "trust-provenance": (0, 5),
    "content-addressable": (0, 6),
}

_VERSION = re.compile(r"(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(?:\.(0|[1-9][0-9]*))?\Z")


class ProtocolVersion(msgspec.Struct, frozen=True):
    """A declared ATIP version, compared by (major, minor)."""

    major: int
    minor: int
    text: str

    @property
    def is_supported(self) -> bool:
        return self.major == _IMPLEMENTED[0]

    @property
    def is_newer(self) -> bool:
        """A 0.x newer than the one implemented: readable, with a warning."""
        return self.is_supported and (self.major, self.minor) > _IMPLEMENTED

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}"


def parse_version(text: str) -> ProtocolVersion | None:
    """`"0.6"` or `"0.6.1"` → ProtocolVersion; anything else → None."""
    match = _VERSION.match(text)
    if match is None:
        return None
    return ProtocolVersion(int(match.group(1)), int(match.group(2)), text)


def needs_newer_agent(min_agent_version: str) -> bool:
    """Whether a document's `minAgentVersion` asks for more than this library implements
    (decision 405). One that cannot be read as a version counts as asking for more: an
    agent cannot show it is new enough."""
    wanted = parse_version(min_agent_version)
    return wanted is None or (wanted.major, wanted.minor) > _IMPLEMENTED


def declared_version(document: Any) -> ProtocolVersion | None:
    """The version a decoded document declares, in either form of `atip`; None if it
    declares none that can be read."""
    atip = document.get("atip") if isinstance(document, dict) else None
    text = atip.get("version") if isinstance(atip, dict) else atip
    return parse_version(text) if isinstance(text, str) else None


def unsupported(version: ProtocolVersion) -> Problem:
    """The problem reported for a major version this library does not implement."""
    return error(
        "version.unsupported",
        f"ATIP {version.text} is not supported; atipkit reads 0.x documents "
        f"(it implements {PROTOCOL_VERSION})",
        "$.atip",
    )
