"""The time as atipkit records it: UTC, to the second, `2026-01-31T12:00:00Z`.

Written into the registry, shims, audit lines and crawl state alike; it lives at the
bottom so that none of them imports another layer for a timestamp.
"""

from __future__ import annotations

import datetime as dt


def utcnow() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def timestamp(moment: dt.datetime | None = None) -> str:
    return (moment or utcnow()).strftime("%Y-%m-%dT%H:%M:%SZ")
