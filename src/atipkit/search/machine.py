"""The search index of this machine: every command of every tool in the local registry,
kept in the cache directory (`<cache>/search/`) and brought up to date when the
registry changes.

Whether anything changed is known from file states alone (no file is read but
registry.json): each tool's fingerprint is its registry entry, the state of its binary,
and that of every file its document is layered from — its stored metadata or the shim
files `find_shim` would look at, its override — and the pattern files of the system and
the user. While the fingerprints are the same, a search loads the saved index and
queries it. When they differ, the documents of each tool whose fingerprint is the same
are reused — only new or changed tools are read and analysed again (every tool, when a
pattern file changed) — and the BM25 index, which takes milliseconds to build, is
rebuilt from them. Nothing is run and no remote registry is asked: a tool whose binary
changed since it was recorded is left out until `atip scan` records it again, and said
so; a shim from a remote registry is read from the cache, while that registry is still
configured.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import msgspec

from atipkit import paths
from atipkit._atomic import write_atomic
from atipkit.errors import AtipError
from atipkit.paths import file_state, pattern_dirs
from atipkit.registry import layout
from atipkit.registry.local import Entry, LocalRegistry
from atipkit.registry.shims import shim_paths
from atipkit.search.documents import CommandDoc, command_documents
from atipkit.search.index import CommandIndex
from atipkit.trust.digest import sha256_hex

_FORMAT = 4  # 4: documents are fields (BM25F) and carry their prose (decisions 290-291)
_STATE = "state.json"
_DOCUMENTS = "documents.msgpack"


class IndexReport(msgspec.Struct, kw_only=True):
    """How the index was had: loaded as saved, or brought up to date."""

    tools: int
    commands: int
    updated: bool
    read: int = 0  # tools whose metadata was read and analysed again
    reused: int = 0  # tools whose documents were kept from the last update
    skipped: list[str] = []  # "name: why", for entries left out
    seconds: float = 0.0
    unsaved: str | None = None  # why the index could not be kept in the cache, if not


class _Cached(msgspec.Struct, array_like=True):
    fingerprint: list[object]
    documents: list[CommandDoc]


class _Documents(msgspec.Struct):
    format: int
    layers: list[object]
    tools: dict[str, _Cached]


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
    registry = registry or LocalRegistry()
    directory = directory or index_dir()
    entries = registry.read().tools
    files = _Files(registry)
    fingerprints = {name: _fingerprint(files, name, entries[name]) for name in entries}
    layers = _layers(registry)
    state = _digest([_FORMAT, fingerprints, layers, [file_state(d) for d in files.missing]])
    saved = None if rebuild else _load(directory, state, len(entries))
    if saved is None:
        from filelock import FileLock  # only to update: a search from the saved index

        try:
            directory.mkdir(parents=True, exist_ok=True)
            with FileLock(str(directory / "update.lock")):
                # another process may have just done it
                saved = None if rebuild else _load(directory, state, len(entries))
                if saved is None:
                    saved = _update(registry, directory, state, entries, fingerprints, layers)
        except OSError as exc:
            saved = _update(registry, directory, state, entries, fingerprints, layers, save=False)
            saved[1].unsaved = f"{directory}: {exc.strerror or exc}"
    index, report = saved
    report.seconds = time.monotonic() - start
    return index, report


class _State(msgspec.Struct):
    """state.json: the digest of what the saved index was built from, and what it left
    out."""

    state: str
    skipped: list[str]


def _digest(state: object) -> str:
    """The sha256 of `state`'s JSON: comparing it costs one encoding, where decoding the
    state saved with the index and comparing it whole cost as much as the rest of a
    search's check on a 1 500-tool registry."""
    import hashlib

    return hashlib.sha256(msgspec.json.encode(state, order="sorted")).hexdigest()


def _load(directory: Path, state: str, entries: int) -> tuple[CommandIndex, IndexReport] | None:
    """The saved index, if it was built from `state` (the entries left out then are
    left out still, and said so again: each of the `entries` is indexed or left out)."""
    try:
        saved = msgspec.json.decode((directory / _STATE).read_bytes(), type=_State)
        if saved.state != state:
            return None
        index = CommandIndex.load(directory)
    except (OSError, ValueError, msgspec.DecodeError):
        return None
    report = IndexReport(tools=entries - len(saved.skipped), commands=len(index), updated=False)
    report.skipped = saved.skipped
    return index, report


def _update(
    registry: LocalRegistry,
    directory: Path,
    state: str,
    entries: dict[str, Entry],
    fingerprints: dict[str, list[object]],
    layers: list[object],
    *,
    save: bool = True,
) -> tuple[CommandIndex, IndexReport]:
    """The index of `entries`, reusing the documents of each tool whose fingerprint is
    the one it had at the last update. The fingerprints were taken before any file is
    read: a file that changes meanwhile shows as a change at the next search."""
    from atipkit.resolve import load_recorded  # to read a tool: a search needs no resolution

    # as they read back from the documents' cache, to compare
    fingerprints, layers = _jsonable(fingerprints), _jsonable(layers)
    cache = _read_documents(directory, layers)
    kept: dict[str, _Cached] = {}
    report = IndexReport(tools=0, commands=0, updated=True)
    for name in sorted(entries):
        entry = entries[name]
        try:
            fingerprint = fingerprints[name]
            cached = cache.tools.get(name)
            if cached is not None and cached.fingerprint == fingerprint:
                kept[name] = cached
                report.reused += 1
                continue
            tool = load_recorded(registry, name, entry)
        except (AtipError, OSError, ValueError) as exc:
            report.skipped.append(f"{name}: {exc}")
            continue
        if tool is None:
            report.skipped.append(
                f"{name}: its binary changed since it was recorded, or its metadata is gone "
                "(atip scan records it again)"
            )
            continue
        kept[name] = _Cached(fingerprint, command_documents(tool))
        report.read += 1
    documents = [doc for cached in kept.values() for doc in cached.documents]
    index = CommandIndex.from_documents(documents)
    report.tools, report.commands = len(kept), len(index)
    if not save:
        return index, report
    index.save(directory)
    write_atomic(
        directory / _DOCUMENTS,
        msgspec.msgpack.encode(_Documents(format=_FORMAT, layers=layers, tools=kept)),
    )
    saved = _State(state=state, skipped=report.skipped)
    write_atomic(directory / _STATE, msgspec.json.encode(saved))
    return index, report


def _read_documents(directory: Path, layers: object) -> _Documents:
    """The documents of the last update, unless a pattern file changed since (then
    every tool is read again: any of them may be layered differently; an override is
    one tool's, in its fingerprint)."""
    try:
        cached = msgspec.msgpack.decode((directory / _DOCUMENTS).read_bytes(), type=_Documents)
    except (OSError, msgspec.DecodeError, msgspec.ValidationError):
        cached = None
    if cached is None or cached.format != _FORMAT or cached.layers != layers:
        return _Documents(format=_FORMAT, layers=[], tools={})
    return cached


class _Files:
    """Where the files of each tool are: the registry's own paths for a sample hash and
    name, kept as templates, so a fingerprint costs string replacements and stats, not
    the pathlib objects that would cost more than the rest of a search over a thousand
    tools.

    A template whose directory does not exist (the system's shim directories, the
    overrides of a user who has none) is not stat'ed for every tool: the directory's own
    state is part of the index's state instead (`missing`), and its appearance brings
    the index up to date like any change. A file its directory's listing lacks (most
    tools have no shim by name, no override) is not stat'ed either: one listing of each
    directory per check answers for all of them (`state`)."""

    _HEX = "0" * 64
    _NAME = "\0"

    def __init__(self, registry: LocalRegistry) -> None:
        sample = f"sha256:{self._HEX}"
        by_hash, by_name = shim_paths(registry, sample, self._NAME)
        self.missing: list[str] = []
        self.metadata = str(registry.metadata_path(sample))
        self.shims = self._present([str(path) for path in by_hash + by_name])
        self.remote = [str(paths.cache_dir() / layout.shim_path(sample))]
        # which remote registries are trusted: the same for every tool, stat'ed once
        self.registries = [
            file_state(paths.config_dir() / "registries.json"),
            os.environ.get("ATIP_REGISTRIES", ""),
        ]
        self.override = self._present([str(registry.override_path(sample))])
        self._listings: dict[str, frozenset[str] | None] = {}

    def state(self, path: str) -> object:
        """`file_state(path)`, without a stat when its directory's listing lacks it."""
        directory, name = os.path.split(path)
        if directory not in self._listings:
            try:
                self._listings[directory] = frozenset(os.listdir(directory))
            except OSError:  # stat'ed one by one, as before
                self._listings[directory] = None
        listing = self._listings[directory]
        if listing is not None and name not in listing:
            return None
        return file_state(path)

    def _present(self, templates: list[str]) -> list[str]:
        kept = []
        for template in templates:
            directory = os.path.dirname(template)
            if self._NAME not in directory and not os.path.isdir(directory):
                if directory not in self.missing:
                    self.missing.append(directory)
                continue
            kept.append(template)
        return kept

    def of(self, name: str, entry: Entry) -> list[str]:
        """The files `load_recorded` may read for `entry` (registries.json aside: see
        `registries`)."""
        if not entry.hash:
            return []
        try:
            hex_digits = sha256_hex(entry.hash)
        except ValueError:  # not a hash: reading the tool says so, and leaves it out
            return []
        templates = [self.metadata] if entry.source == "native" else list(self.shims)
        if entry.shim_registry:  # the cached copy, read while its registry is trusted
            templates += self.remote
        templates += self.override
        return [t.replace(self._HEX, hex_digits).replace(self._NAME, name) for t in templates]


def _fingerprint(files: _Files, name: str, entry: Entry) -> list[object]:
    """What a tool's documents depend on, besides the pattern files: its entry, the
    state of its binary (`load_recorded` leaves out a binary changed since it was
    recorded), and that of each file its document may be read from."""
    recorded = [entry.hash, entry.source, entry.path, entry.size, entry.mtime_ns, entry.inode]
    states = [file_state(entry.path), *(files.state(f) for f in files.of(name, entry))]
    if entry.shim_registry:  # its cached copy is read while that registry is trusted
        states.append(files.registries)
    return [*recorded, entry.shim_registry, states]


def _layers(registry: LocalRegistry) -> list[object]:
    """The pattern files of the system and the user, each directory's `*.json` by name
    (a file edited in place, without a rename, changes its own state only), and the
    registries' cached patterns indexes, layered too — with, when there are any, what
    decides which registries are read and how far they are trusted (registries.json):
    a change there changes every tool's patterns."""
    layers: list[object] = []
    cached = paths.cache_dir() / "registries"
    for directory, suffix in [
        *((d, ".json") for d in pattern_dirs(registry.data_dir)),
        (cached, ".patterns.json"),
    ]:
        try:
            files = sorted(p for p in directory.iterdir() if p.name.endswith(suffix))
        except OSError:
            files = []
        layers.append([str(directory), [(p.name, file_state(p)) for p in files]])
    if files:  # the registries' patterns
        registries = paths.config_dir() / "registries.json"
        layers.append([file_state(registries), os.environ.get("ATIP_REGISTRIES", "")])
    return layers


def _jsonable(value: object) -> Any:
    """`value` as it reads back from JSON (tuples become lists), for comparisons."""
    return msgspec.json.decode(msgspec.json.encode(value))
