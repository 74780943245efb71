"""The search index of this machine: every command of every tool in the local registry,
kept in the cache directory (`<cache>/search/`) and brought up to date when the
registry changes.

Whether anything changed is known from file states alone: registry.json, every binary it
records, and the directories of overrides and patterns (atomic writes rename files, which
changes their directory). While those are the same, a search loads the saved index and
queries it. When they differ, the documents of each tool are reused as long as its
binary hash, source and metadata file are the same — only new or changed tools are read
and analysed again — and the BM25 index, which takes milliseconds to build, is rebuilt
from them. Nothing is run and no remote registry is asked: a tool whose binary changed
since it was recorded is left out until `atip scan` records it again, and said so.
"""

from __future__ import annotations

import time
from pathlib import Path

import msgspec

from atipkit import paths
from atipkit._atomic import write_atomic
from atipkit.errors import AtipError
from atipkit.registry.local import Entry, LocalRegistry
from atipkit.resolve import file_state, load_recorded, pattern_dirs, registry_state
from atipkit.search.documents import CommandDoc, command_documents
from atipkit.search.index import CommandIndex

_FORMAT = 1
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
    registry: LocalRegistry | None = None, directory: Path | None = None
) -> tuple[CommandIndex, IndexReport]:
    """The index of every command in `registry` (default: the user's), up to date.

    Raises `RegistryError` when registry.json cannot be read; a damaged or missing
    cache is rebuilt, never an error."""
    from filelock import FileLock

    start = time.monotonic()
    registry = registry or LocalRegistry()
    directory = directory or index_dir()
    state = _jsonable([_FORMAT, registry_state(registry), _layers(registry)])
    saved = _load(directory, state)
    if saved is not None:
        index, tools = saved
        report = IndexReport(tools=tools, commands=len(index), updated=False)
        report.seconds = time.monotonic() - start
        return index, report
    directory.mkdir(parents=True, exist_ok=True)
    with FileLock(str(directory / "update.lock")):
        saved = _load(directory, state)  # another process may have just done it
        if saved is not None:
            index, tools = saved
            report = IndexReport(tools=tools, commands=len(index), updated=False)
        else:
            index, report = _update(registry, directory, state)
    report.seconds = time.monotonic() - start
    return index, report


def _load(directory: Path, state: object) -> tuple[CommandIndex, int] | None:
    try:
        saved = msgspec.json.decode((directory / _STATE).read_bytes())
        if saved.get("state") != state:
            return None
        return CommandIndex.load(directory), int(saved["tools"])
    except (OSError, ValueError, AttributeError, KeyError, TypeError, msgspec.DecodeError):
        return None


def _update(
    registry: LocalRegistry, directory: Path, state: object
) -> tuple[CommandIndex, IndexReport]:
    layers = _jsonable(_layers(registry))
    cache = _read_documents(directory, layers)
    entries = registry.read().tools
    kept: dict[str, _Cached] = {}
    report = IndexReport(tools=0, commands=0, updated=True)
    for name in sorted(entries):
        entry = entries[name]
        try:
            fingerprint = _fingerprint(registry, entry)
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
    index.save(directory)
    write_atomic(
        directory / _DOCUMENTS,
        msgspec.msgpack.encode(_Documents(format=_FORMAT, layers=layers, tools=kept)),
    )
    write_atomic(directory / _STATE, msgspec.json.encode({"state": state, "tools": len(kept)}))
    report.tools, report.commands = len(kept), len(index)
    return index, report


def _read_documents(directory: Path, layers: object) -> _Documents:
    """The documents of the last update, unless overrides or patterns changed since
    (then every tool is read again: any of them may be layered differently)."""
    try:
        cached = msgspec.msgpack.decode((directory / _DOCUMENTS).read_bytes(), type=_Documents)
    except (OSError, msgspec.DecodeError, msgspec.ValidationError):
        cached = None
    if cached is None or cached.format != _FORMAT or cached.layers != layers:
        return _Documents(format=_FORMAT, layers=[], tools={})
    return cached


def _fingerprint(registry: LocalRegistry, entry: Entry) -> list[object]:
    """What a tool's documents depend on, besides the layers."""
    metadata = None
    if entry.hash:
        stored = entry.source == "native"
        path = registry.metadata_path(entry.hash) if stored else registry.shim_path(entry.hash)
        metadata = file_state(path)
    return _jsonable([entry.hash, entry.source, entry.path, metadata])  # type: ignore[return-value]


def _layers(registry: LocalRegistry) -> list[object]:
    overrides = registry.config_dir / "overrides" / "sha256"
    return [file_state(d) for d in [overrides, *pattern_dirs(registry)]]


def _jsonable(value: object) -> object:
    """`value` as it reads back from JSON (tuples become lists), for comparisons."""
    return msgspec.json.decode(msgspec.json.encode(value))
