"""The search index of this machine: every command of every tool in the local registry,
kept in the cache directory (`<cache>/search/`) and brought up to date when the
registry changes.

Whether anything changed is known from file states alone (no file is read, not even
registry.json, while nothing changed): the index depends on each tool's registry entry,
the state of its binary and of every file its document is layered from — its stored
metadata or the shim files `find_shim` would look at, its override — and the pattern
files of the system and the user. While none changed, a search loads the saved index and
queries it. When one changed, the documents of each tool whose fingerprint is the same
are reused — only new or changed tools are read and analysed again (every tool, when a
pattern file changed) — and the BM25 index, which takes milliseconds to build, is
rebuilt from them. Nothing is run and no remote registry is asked: a tool whose binary
changed since it was recorded is left out until `atip scan` records it again, and said
so; a shim from a remote registry is read from the cache, while that registry is still
configured.

The check of a saved index is the whole of a search's cost beside the query, so it is
made of what a process has anyway (decision 582): the state saved with the index lists
every file and directory the index depends on — registry.json, each tool's binary and
the files its document is layered from where they exist, the directories where they
would appear, the pattern files — and the state each had; a search stats the same list
and compares the two arrays. Only when they differ are msgspec, the registry's model
and the documents imported, to bring the index up to date.
"""

from __future__ import annotations

import contextlib
import os
import time
from array import array
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from atipkit import paths
from atipkit.search import cachefile
from atipkit.search.index import CommandIndex

if TYPE_CHECKING:
    from atipkit.registry.local import LocalRegistry

_FORMAT = 5  # 5: the state lists what it watched (decision 582); 4: BM25F documents
_STATE = "state.bin"
_STATE_KIND = "search-state"
_MISSING = (0, 0, 0, 0)
_U64 = (1 << 64) - 1


@dataclass
class IndexReport:
    """How the index was had: loaded as saved, or brought up to date."""

    tools: int
    commands: int
    updated: bool
    read: int = 0  # tools whose metadata was read and analysed again
    reused: int = 0  # tools whose documents were kept from the last update
    skipped: list[str] = field(default_factory=list)  # "name: why", for entries left out
    seconds: float = 0.0
    unsaved: str | None = None  # why the index could not be kept in the cache, if not


def index_dir() -> Path:
    return paths.cache_dir() / "search"


def machine_index(
    registry: LocalRegistry | None = None,
    directory: Path | None = None,
    *,
    rebuild: bool = False,
) -> tuple[CommandIndex, IndexReport]:
    """The index of every command in `registry` (default: the user's), up to date.

    Raises `RegistryError` when registry.json cannot be read; a damaged or missing
    cache is rebuilt, never an error, and a cache directory that cannot be written (a
    read-only home) gives an index built in memory, with the reason in `unsaved`.
    `rebuild` builds the index again even where the saved one loads (the kept documents
    are reused as ever): for damage only a query finds, `index.DamagedIndex`."""
    start = time.monotonic()
    directory = directory or index_dir()
    data_dir = registry.data_dir if registry else paths.data_dir()
    saved = None if rebuild else _load(directory, _Key.now(data_dir))
    if saved is None:
        saved = _brought_up_to_date(registry, directory, rebuild=rebuild)
    index, report = saved
    report.seconds = time.monotonic() - start
    return index, report


def _brought_up_to_date(
    registry: LocalRegistry | None, directory: Path, *, rebuild: bool
) -> tuple[CommandIndex, IndexReport]:
    from filelock import FileLock

    from atipkit.registry.local import LocalRegistry
    from atipkit.search import refresh

    registry = registry or LocalRegistry()
    found = refresh.sources(registry)
    key = _Key.now(registry.data_dir, found.watched)
    try:
        directory.mkdir(parents=True, exist_ok=True)
        with FileLock(str(directory / "update.lock")):
            # another process may have just done it
            saved = None if rebuild else _load(directory, key)
            if saved is not None:
                return saved
            updated = refresh.update(registry, directory, found)
            key.save(directory, len(found.entries) - len(updated.skipped), updated.skipped)
            for legacy in ("index.msgpack", "state.json"):  # format 4's, replaced
                with contextlib.suppress(OSError):
                    (directory / legacy).unlink()
    except OSError as exc:
        updated = refresh.update(registry, directory, found, save=False)
        unsaved: str | None = f"{directory}: {exc.strerror or exc}"
    else:
        unsaved = None
    report = IndexReport(
        tools=len(found.entries) - len(updated.skipped),
        commands=len(updated.commands),
        updated=True,
        read=updated.read,
        reused=updated.reused,
        skipped=updated.skipped,
        unsaved=unsaved,
    )
    return updated.commands, report


class _Key:
    """What a saved index was built from: the registry and configuration in force, and
    the state of every file and directory it depends on (`refresh.sources`'s `watched`),
    as four unsigned integers each (device, inode, size, mtime; zeros when missing)."""

    def __init__(self, where: list[str], watched: list[str], states: array[int]) -> None:
        self.where, self.watched, self.states = where, watched, states

    @classmethod
    def now(cls, data_dir: Path, watched: list[str] | None = None) -> _Key:
        """The key of this moment: of `watched` when given, else of the paths the saved
        state lists (`_load` reads them)."""
        where = [
            str(data_dir),
            str(paths.config_dir()),
            os.environ.get("ATIP_REGISTRIES", ""),
        ]
        return cls(where, watched or [], _observe(watched or []))

    def save(self, directory: Path, tools: int, skipped: list[str]) -> None:
        watched = "\0".join(self.watched).encode("utf-8", "surrogateescape")
        cachefile.write(
            directory / _STATE,
            _STATE_KIND,
            _FORMAT,
            {"where": self.where, "tools": tools, "skipped": skipped},
            {"watched": watched, "states": bytes(self.states)},
        )


def _observe(watched: list[str]) -> array[int]:
    """The state of each of `watched`: one stat each, in the loop a search of a
    1 500-tool machine spends most of its check in."""
    states = array("Q")
    add, stat = states.extend, os.stat
    for path in watched:
        try:
            found = stat(path)
        except (OSError, ValueError):
            add(_MISSING)
            continue
        add((found.st_dev, found.st_ino, found.st_size, found.st_mtime_ns & _U64))
    return states


def _load(directory: Path, key: _Key) -> tuple[CommandIndex, IndexReport] | None:
    """The saved index, if it was built under `key` (a key without paths: the paths the
    state lists, observed now). The entries left out then are left out still, and said
    so again."""
    try:
        saved = cachefile.read(directory / _STATE, _STATE_KIND, _FORMAT)
        meta = saved.meta
        if meta.get("where") != key.where:
            return None
        watched = bytes(saved.section("watched")).decode("utf-8", "surrogateescape")
        listed = watched.split("\0") if watched else []
        if key.watched and listed != key.watched:
            return None
        states = key.states if key.watched else _observe(listed)
        if saved.section("states") != states.tobytes():
            return None
        tools, skipped = meta["tools"], meta["skipped"]
        if type(tools) is not int or not (
            isinstance(skipped, list) and all(isinstance(s, str) for s in skipped)
        ):
            return None
        index = CommandIndex.load(directory)
    except (OSError, ValueError, KeyError):
        return None
    return index, IndexReport(tools=tools, commands=len(index), updated=False, skipped=skipped)
