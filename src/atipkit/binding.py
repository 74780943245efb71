"""What a call runs: the binary its tool was described from, pinned by path and hash.

A tool resolved on PATH or from the registry is described by one binary, hashed when it
was resolved. Its calls run that file (its real path, never its name looked up on PATH
again) and only while it is still that binary: `Pinned.changed` says why not, so a binary
replaced since it was described is never run as if it were the one described. The
check costs a `stat`; the file is hashed again only when the `stat` differs (a touched
but unchanged file still runs).

`bind` puts the tools of one session together (`atip run`, the MCP gateway): each under
its key (`bridge.names.tool_keys`: its name, unless an earlier tool has that name), with
the executable its calls run, and a line for each name claimed twice.
"""

from __future__ import annotations

import os
import stat as statmod
from collections.abc import Iterable
from typing import TYPE_CHECKING, NamedTuple

import msgspec

if TYPE_CHECKING:
    from atipkit.model import Tool

Fingerprint = tuple[int, int, int, int, int]
"""A file's device, inode, size, modification and change time (ns): a write, a rename
over it, a `touch` that puts an old mtime back all change one of them."""


def fingerprint(stat: os.stat_result) -> Fingerprint:
    return (stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns)


class Pinned(msgspec.Struct, frozen=True, kw_only=True):
    """The executable a tool's calls run: its real `path`, the `hash` (`sha256:<hex>`) of
    the binary its metadata describes, and the file's `state` when that hash was taken
    (taken before hashing, so a change during the hashing shows as a change)."""

    path: str
    hash: str
    state: Fingerprint | None = None

    def changed(self) -> str | None:
        """Why `path` is no longer the binary described (gone, or other content), or None
        when it still is."""
        from atipkit.trust.digest import sha256_file

        try:
            stat = os.stat(self.path)
        except OSError as exc:
            return f"{self.path} is gone since its metadata was read ({exc.strerror or exc})"
        if self.state is not None and fingerprint(stat) == self.state:
            return None
        if not statmod.S_ISREG(stat.st_mode):  # a FIFO put there would block the hashing
            return f"{self.path} is no longer a regular file since its metadata was read"
        try:
            now = sha256_file(self.path)
        except OSError as exc:
            return f"{self.path} cannot be read to check it ({exc.strerror or exc})"
        if now == self.hash:
            return None
        return (
            f"{self.path} changed since its metadata was read (sha256 {_short(now)}, "
            f"described {_short(self.hash)}): look at the tool again before running it"
        )


def _short(hash_: str) -> str:
    return hash_.removeprefix("sha256:")[:12]


class Bound(NamedTuple):
    """The tools of one session as an `Executor` takes them: the documents (each keeps
    its own name), the executable of each by key, where each came from, and one line for
    each name claimed twice."""

    tools: list[Tool]
    executables: dict[str, Pinned]
    sources: list[str]
    clashes: list[str]


def bind(entries: Iterable[tuple[Tool, str, Pinned | None]]) -> Bound:
    """`(tool, source, pinned)` in the order given → `Bound`. A tool given again with
    the same name and executable (`--tool gh --tool /usr/bin/gh`) is the same tool and
    kept once; any other tool whose name an earlier one has is kept under its own key,
    and reported."""
    from atipkit.bridge.names import name_clashes, tool_keys

    tools: list[Tool] = []
    sources: list[str] = []
    pins: list[Pinned | None] = []
    seen: set[tuple[str, str]] = set()
    for tool, source, pinned in entries:
        if pinned is not None:
            if (tool.name, pinned.path) in seen:
                continue
            seen.add((tool.name, pinned.path))
        tools.append(tool)
        sources.append(source)
        pins.append(pinned)
    executables = {
        key: pinned
        for key, pinned in zip(tool_keys(tools), pins, strict=True)
        if pinned is not None
    }
    return Bound(tools, executables, sources, name_clashes(tools, sources))
