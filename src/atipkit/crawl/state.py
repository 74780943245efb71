"""What the crawler last saw, per tool, source and platform: `.crawl-state` in the output
folder, JSON under a name that is neither a shim's nor a `*.json` file's, so that neither
`atip registry build` (which skips dotfiles) nor `atip validate DIR` (which reads every
`*.json`) takes it for a document.

It lets `--check` say what is new without downloading, and a crawl skip a download when
the source publishes the same digest as last time and the shim is still there. Only a
published digest proves the artifact unchanged: a URL may serve other bytes tomorrow, so
an artifact without one is downloaded again (and its shim found "known" by hash). The
file is a convenience, not a record: missing or damaged, it costs downloads, never
shims. It is written atomically under a lock, after every artifact, so a crawl stopped
half-way keeps what it learned.
"""

from __future__ import annotations

from pathlib import Path

import msgspec

from atipkit.crawl.artifacts import Artifact

STATE_FILE = ".crawl-state"


class Seen(msgspec.Struct, kw_only=True, frozen=True, omit_defaults=True):
    """An artifact as last crawled: what the source said, and the shim it gave."""

    version: str
    url: str
    hash: str
    shim: str
    checked: str
    digest: str | None = None


class State(msgspec.Struct, kw_only=True):
    version: int = 1
    tools: dict[str, dict[str, dict[str, Seen]]] = {}

    def seen(self, tool: str, source: str, platform: str) -> Seen | None:
        return self.tools.get(tool, {}).get(source, {}).get(platform)


def read_state(out: Path) -> State:
    try:
        return msgspec.json.decode((out / STATE_FILE).read_bytes(), type=State)
    except (OSError, msgspec.DecodeError, msgspec.ValidationError):
        return State()


def unchanged(seen: Seen | None, artifact: Artifact, out: Path, *, queued: bool = False) -> bool:
    """Whether the source publishes what was crawled last time, and its shim is there
    (or, with `queued`, awaiting review)."""
    from atipkit.crawl import review

    return (
        seen is not None
        and artifact.digest is not None
        and seen.digest == artifact.digest
        and ((out / seen.shim).is_file() or (queued and review.holds(out, seen.hash)))
    )


def remember(out: Path, tool: str, source: str, platform: str, seen: Seen) -> None:
    from filelock import FileLock

    from atipkit._atomic import write_atomic

    out.mkdir(parents=True, exist_ok=True)
    with FileLock(str(out / f"{STATE_FILE}.lock")):
        state = read_state(out)
        state.tools.setdefault(tool, {}).setdefault(source, {})[platform] = seen
        write_atomic(out / STATE_FILE, msgspec.json.format(msgspec.json.encode(state)) + b"\n")
