"""Durations as ATIP writes them: a number and a unit (`500ms`, `30s`, `5m`, `1h`, `7d`).

The document schema allows ms, s, m and h (`duration.timeout`); configuration files also
say days (`cacheExpiry: "7d"`, RFC 0.6 §4.6). One parser serves both.
"""

from __future__ import annotations

import re

_DURATION = re.compile(r"([0-9]+(?:\.[0-9]+)?)(ms|s|m|h|d)\Z")
_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}


def parse_duration(text: str) -> float:
    """`"500ms"`, `"30s"`, `"5m"`, `"1h"`, `"7d"` → seconds."""
    match = _DURATION.match(text)
    if match is None:
        raise ValueError(f"not a duration (a number and ms, s, m, h or d): {text!r}")
    return float(match.group(1)) * _UNITS[match.group(2)]
