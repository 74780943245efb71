"""Bringing the machine's search index up to date: the tools whose files changed are
read and analysed again, the documents of the rest are reused (`documents.msgpack`), and
the BM25 index is rebuilt from them.

Apart from `machine`, which only checks the saved index: this is where msgspec, the
registry's model and the documents are imported, and a search of an up-to-date index
never imports it (decision 582).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, NamedTuple

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
_DOCUMENTS = "documents.msgpack"


class _Cached(msgspec.Struct, array_like=True):
    fingerprint: list[object]
    documents: list[CommandDoc]


class _Documents(msgspec.Struct):
    format: int
    layers: list[object]
    tools: dict[str, _Cached]


class IndexSources(NamedTuple):
    """What an update reads, taken before any file is read: a file that changes
    meanwhile shows as a change at the next search."""

    entries: dict[str, Entry]
    fingerprints: dict[str, list[object]]  # each tool's: when equal, its documents are kept
    layers: list[object]  # the pattern files: when they change, every tool is read again
    watched: list[str]  # every file and directory the index depends on (`machine`)


class Updated(NamedTuple):
    commands: CommandIndex
    read: int  # tools whose metadata was read and analysed again
    reused: int  # tools whose documents were kept from the last update
    skipped: list[str]  # "name: why", for entries left out


def sources(registry: LocalRegistry) -> IndexSources:
    """What the index of `registry` depends on. Raises `RegistryError` when
    registry.json cannot be read."""
    entries = registry.read().tools
    files = _Files(registry)
    fingerprints = {name: _fingerprint(files, name, entries[name]) for name in entries}
    layers, layered = _layers(registry)
    watched = [str(registry.index_path)]
    absent: set[str] = set(files.missing)
    for name, entry in entries.items():
        watched.append(entry.path)
        for path in files.of(name, entry):
            if files.listed(path):
                watched.append(path)
            else:  # its directory changes when it appears
                absent.add(os.path.dirname(path))
    watched += sorted(absent)
    watched.append(str(paths.config_dir() / "registries.json"))
    watched += layered
    return IndexSources(entries, fingerprints, layers, [p for p in watched if "\0" not in p])


def update(
    registry: LocalRegistry, directory: Path, found: IndexSources, *, save: bool = True
) -> Updated:
    """The index of `found.entries`, reusing the documents of each tool whose
    fingerprint is the one it had at the last update; saved in `directory` with the
    documents unless not `save`."""
    from atipkit.resolve import load_recorded  # to read a tool: a search needs no resolution

    # as they read back from the documents' cache, to compare
    fingerprints, layers = _jsonable(found.fingerprints), _jsonable(found.layers)
    cache = _read_documents(directory, layers)
    kept: dict[str, _Cached] = {}
    read, reused, skipped = 0, 0, []
    for name in sorted(found.entries):
        entry = found.entries[name]
        try:
            fingerprint = fingerprints[name]
            cached = cache.tools.get(name)
            if cached is not None and cached.fingerprint == fingerprint:
                kept[name] = cached
                reused += 1
                continue
            tool = load_recorded(registry, name, entry)
        except (AtipError, OSError, ValueError) as exc:
            skipped.append(f"{name}: {exc}")
            continue
        if tool is None:
            skipped.append(
                f"{name}: its binary changed since it was recorded, or its metadata is gone "
                "(atip scan records it again)"
            )
            continue
        kept[name] = _Cached(fingerprint, command_documents(tool))
        read += 1
    documents = [doc for cached in kept.values() for doc in cached.documents]
    index = CommandIndex.from_documents(documents)
    if save:
        index.save(directory)
        write_atomic(
            directory / _DOCUMENTS,
            msgspec.msgpack.encode(_Documents(format=_FORMAT, layers=layers, tools=kept)),
        )
    return Updated(index, read, reused, skipped)


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

    def listed(self, path: str) -> bool:
        """Whether `path` may exist: its directory's listing has it, or could not be had
        (then it is stat'ed, as before)."""
        directory, name = os.path.split(path)
        if directory not in self._listings:
            try:
                self._listings[directory] = frozenset(os.listdir(directory))
            except OSError:
                self._listings[directory] = None
        listing = self._listings[directory]
        return listing is None or name in listing

    def state(self, path: str) -> object:
        """`file_state(path)`, without a stat when its directory's listing lacks it."""
        return file_state(path) if self.listed(path) else None

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


def _layers(registry: LocalRegistry) -> tuple[list[object], list[str]]:
    """The pattern files of the system and the user, each directory's `*.json` by name
    (a file edited in place, without a rename, changes its own state only), and the
    registries' cached patterns indexes, layered too — with, when there are any, what
    decides which registries are read and how far they are trusted (registries.json):
    a change there changes every tool's patterns. Second, the paths of those
    directories and files, to watch."""
    layers: list[object] = []
    watched: list[str] = []
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
        watched += [str(directory), *map(str, files)]
    if files:  # the registries' patterns
        registries = paths.config_dir() / "registries.json"
        layers.append([file_state(registries), os.environ.get("ATIP_REGISTRIES", "")])
    return layers, watched


def _jsonable(value: object) -> Any:
    """`value` as it reads back from JSON (tuples become lists), for comparisons."""
    return msgspec.json.decode(msgspec.json.encode(value))
