"""Finding the metadata of one tool (RFC 0.6 §3.4.2 and §5.1, RFC 0.1 §3.4-3.6).

Order: the registry's cached metadata while the binary is unchanged and the entry fresh,
else a native probe, else a shim for the binary's hash (local, then system directories,
then the unversioned 0.1 `shims/<name>.json`). A user override for the hash is applied on
top as a JSON merge patch, then patterns are layered: the tool's own, system, user and
project files. `Resolved.origins` says where each part came from.

A tool is called by the name it was asked for (a name on PATH, or a path's file name), the
name the registry records it under, whatever its metadata says (`atipkit.naming`): a
metadata `name` that differs is rewritten, and reported in `Resolved.renamed` and
`origins["name"]`. `Resolved.evidence` is what the policy trusts and the executor checks:
where the metadata came from, and the path and hash of the binary it describes.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import msgspec

from atipkit import _jsontext, paths
from atipkit._atomic import write_atomic
from atipkit._clock import timestamp
from atipkit.errors import AtipError
from atipkit.layering import layer_patterns, merge_patch
from atipkit.model import Tool, dumps, from_dict, is_tool_name, to_dict
from atipkit.naming import BadToolName, Renamed, check_file_name, named, renamed
from atipkit.partial import select
from atipkit.paths import FileState, file_state
from atipkit.policy import Evidence
from atipkit.probe import DEFAULT_TIMEOUT, ProbeFailure, probe
from atipkit.registry.local import Entry, LocalRegistry
from atipkit.registry.shims import find_shim, is_inferred
from atipkit.trust.digest import sha256_file

if TYPE_CHECKING:
    from atipkit.policy import TrustRank
    from atipkit.registry.remote import RemoteRegistries


class ToolNotFound(AtipError, LookupError):
    """No executable of that name on PATH, and no shim for it."""


class NoMetadata(AtipError, LookupError):
    """The executable exists, but nothing describes it: no `--agent`, no shim."""

    def __init__(self, message: str, failure: ProbeFailure | None = None) -> None:
        super().__init__(message)
        self.failure = failure


class Resolved(msgspec.Struct, kw_only=True):
    name: str
    tool: Tool
    path: str | None
    hash: str | None
    source: Literal["native", "shim", "inferred"]
    cached: bool
    origins: dict[str, str] = {}
    renamed: Renamed | None = None
    """The metadata called the tool otherwise than `name` (it is called `name` now)."""
    evidence: Evidence = Evidence()
    """What atipkit established about the tool (where its metadata came from, the
    binary's path and hash): what the policy trusts, and what the executor checks the
    binary against before running it."""


def resolve_tool(
    name: str,
    *,
    registry: LocalRegistry | None = None,
    refresh: bool = False,
    commands: Sequence[str] | None = None,
    depth: int | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    project_dir: Path | None = None,
    allow_inferred: bool = False,
    remote: RemoteRegistries | None = None,
) -> Resolved:
    """The metadata of tool `name` (a name on PATH, or a path to an executable).

    Shims are looked up by hash in the local and system directories, then in `remote`
    registries (default: those configured in registries.json or `ATIP_REGISTRIES`).

    With `allow_inferred`, a tool nothing else describes gets an inferred shim (its help
    text and man page, `atipkit.infer`), stored by hash and recorded as `inferred`.

    Raises `ToolNotFound` or `NoMetadata`. With `commands`/`depth`, a tool that declares
    `partial-discovery` is asked for that part; any other is cut down locally.
    """
    registry = registry or LocalRegistry()
    refresh = refresh or paths.refresh_requested()
    tool_name = Path(name).name
    try:
        check_file_name(tool_name)
    except BadToolName as exc:
        raise ToolNotFound(str(exc)) from None
    entry = registry.read().tools.get(tool_name)
    executable = _locate(name)
    if executable is None and entry and os.sep not in name and os.access(entry.path, os.X_OK):
        executable = entry.path  # scanned from a directory that is not on PATH
    real = os.path.realpath(executable) if executable else None
    stat = os.stat(real) if real else None
    hash_: str | None = None
    origins: dict[str, str] = {}
    base: Tool | None = None
    source: Literal["native", "shim", "inferred"] = "native"
    cached = False
    failure: ProbeFailure | None = None

    if real and stat:
        if entry and entry.hash and not refresh and _unchanged(entry, real, stat):
            hash_ = entry.hash
            base = registry.load_metadata(hash_) if entry.source == "native" else None
            if base is None and entry.source in ("shim", "inferred"):
                base = _find_shim(registry, hash_, tool_name, origins, remote, refresh)
            if base is not None:
                source = entry.source if entry.source in ("shim", "inferred") else "native"
                cached = True
                origins.setdefault("metadata", f"registry:{registry.metadata_path(hash_)}")
        hash_ = hash_ or sha256_file(real)
        if base is None:
            result = probe(real, timeout=timeout)
            if result.tool is not None:
                base, source = result.tool, "native"
                registry.store_metadata(hash_, base)
                origins["metadata"] = f"probe:{real}"
            else:
                failure = result.failure
    if base is None:
        base = _find_shim(registry, hash_, tool_name, origins, remote, refresh)
        source = "shim"
        if base is not None and is_inferred(base):
            source = "inferred"
    if base is None and allow_inferred and real and hash_:
        from atipkit.infer.coverage import infer_shim

        # as `atip scan --infer` infers it: the shim a binary gets does not depend on
        # which command inferred it first (a stored shim is never inferred again)
        # run by the path it was found by: a multi-call binary answers as that name
        launch = os.path.abspath(executable or real)
        base, source = infer_shim(launch, tool_name, hash_), "inferred"
        path = registry.shim_path(hash_)
        write_atomic(path, dumps(base))
        origins["metadata"] = f"inferred:{path}"
    if base is None:
        if executable is None:
            raise ToolNotFound(f"no executable {name!r} on PATH and no shim for it")
        reason = f": {failure.message}" if failure else ""
        raise NoMetadata(f"{name} has no ATIP metadata (no --agent{reason}; no shim)", failure)

    served = _registry_patterns(tool_name, remote, origins)
    tool = _layer(base, registry, hash_, tool_name, origins, project_dir, served=served)
    claim = renamed(tool.name, tool_name, real, hash_, by_hash=source != "native")
    if claim is not None:
        origins["name"] = claim.message
    if real and stat and not cached:
        _record(registry, tool_name, real, stat, hash_, source, tool, origins.get("registry"))
    if commands or depth is not None:
        tool = _part(tool, real, source, commands, depth, timeout, origins)
    return Resolved(
        name=tool_name,
        tool=named(tool, tool_name),
        path=real,
        hash=hash_,
        source=source,
        cached=cached,
        origins=origins,
        renamed=claim,
        evidence=evidence_of(source, origins, registry, real, hash_),
    )


def evidence_of(
    source: Literal["native", "shim", "inferred"],
    origins: dict[str, str],
    registry: LocalRegistry,
    path: str | None,
    hash_: str | None,
) -> Evidence:
    """Where resolving found the metadata, as the facts a policy trusts: the binary's own
    `--agent`, atipkit's inference, a registry's shim (with the trust registries.json
    gives that registry and the signer atipkit verified), or a shim file of the user's or
    the system's."""
    if source == "native":
        return Evidence(origin="native", path=path, hash=hash_)
    if source == "inferred":
        return Evidence(origin="inferred", path=path, hash=hash_)
    where = origins.get("metadata", "")
    url = origins.get("registry")
    if where.startswith("remote:") and url:
        signed = origins.get("signature")
        return Evidence(
            origin="registry",
            registry=url,
            registry_trust=_trust_rank(origins.get("trust")),
            signer=signer_of(signed) if signed else None,
            path=path,
            hash=hash_,
        )
    file = Path(where.removeprefix("shim:"))
    mine = file.is_relative_to(registry.data_dir)
    return Evidence(origin="user" if mine else "system", path=path, hash=hash_)


def signer_of(verified: str) -> str:
    """The identity in a remote lookup's `verified` (`sigstore: ID (ISSUER)`,
    `minisign: KEY`, `ssh: PRINCIPAL`)."""
    method, _, who = verified.partition(": ")
    return who.rsplit(" (", 1)[0] if method == "sigstore" else who


def _trust_rank(value: str | None) -> TrustRank | None:
    """The registry's configured trust as the lookup gave it (`Lookup.trust`): the
    settings of the registries actually asked, a library caller's `remote` included."""
    from atipkit.policy import TRUST_ORDER

    return next((rank for rank in TRUST_ORDER if rank == value), None)


def _find_shim(
    registry: LocalRegistry,
    hash_: str | None,
    name: str,
    origins: dict[str, str],
    remote: RemoteRegistries | None,
    refresh: bool,
) -> Tool | None:
    """`find_shim`, with the configured remote registries unless the caller gave some."""
    if remote is not None or not hash_:
        return find_shim(registry, hash_, name, origins, remote=remote)
    configured = _configured_remote(refresh, origins)
    try:
        return find_shim(registry, hash_, name, origins, remote=configured)
    finally:
        if configured is not None:
            configured.close()


def _locate(name: str) -> str | None:
    if os.sep in name:
        return os.path.abspath(name) if os.access(name, os.X_OK) else None
    return shutil.which(name)


def _unchanged(entry: Entry, real: str, stat: os.stat_result) -> bool:
    return entry.path == real and _same_file(entry, stat) and entry.fresh()


def _same_file(entry: Entry, stat: os.stat_result) -> bool:
    """The file `stat` describes is the one `entry` recorded (size, mtime, inode)."""
    return (entry.size, entry.mtime_ns, entry.inode) == (
        stat.st_size,
        stat.st_mtime_ns,
        stat.st_ino,
    )


def _configured_remote(refresh: bool, origins: dict[str, str]) -> RemoteRegistries | None:
    """The registries of registries.json / ATIP_REGISTRIES, or None when there are none.
    A broken configuration is noted, not raised: local discovery must go on without it."""
    from atipkit.registry.config import RegistryConfigError, load_settings
    from atipkit.registry.remote import RemoteRegistries

    try:
        settings = load_settings()
    except RegistryConfigError as exc:
        origins["registries"] = str(exc)
        return None
    return RemoteRegistries(settings, refresh=refresh) if settings.registries else None


def _layer(
    base: Tool,
    registry: LocalRegistry,
    hash_: str | None,
    name: str,
    origins: dict[str, str],
    project_dir: Path | None,
    *,
    served: Sequence[tuple[str, list[dict[str, Any]]]] = (),
    project: bool = True,
) -> Tool:
    """The override for the hash, then the patterns: the tool's own, those the remote
    registries `served` (validated, lowest priority first), then the pattern files of
    the system, the user and (with `project`) the project directory, default the
    working directory. A later layer replaces a pattern of the same name."""
    data = to_dict(base)
    if hash_:
        override = registry.override_path(hash_)
        if override.is_file():
            patch = _jsontext.decode(_jsontext.read_bytes(override), str(override))  # capped
            data = merge_patch(data, patch)
            origins["override"] = str(override)
    project_patterns = (project_dir or Path.cwd()) / ".agent-tools" / "patterns"
    layers: list[tuple[str, list[dict[str, Any]]]] = [("tool", data.get("patterns", [])), *served]
    for directory in pattern_dirs(registry) + ([project_patterns] if project else []):
        layers += _pattern_files(directory, name)
    patterns, pattern_origins = layer_patterns(layers)
    if patterns:
        data["patterns"] = patterns
    origins.update({f"pattern:{k}": v for k, v in pattern_origins.items()})
    return from_dict(data)


def pattern_dirs(registry: LocalRegistry) -> list[Path]:
    """The directories of pattern files every tool is layered with, lowest first (the
    project's, which depends on the working directory, comes after them)."""
    return paths.pattern_dirs(registry.data_dir)


def load_recorded(registry: LocalRegistry, name: str, entry: Entry) -> Tool | None:
    """The document the registry recorded for `name`, with its override and the system
    and user patterns, under `name`, as `resolve_tool` gives it, but without running anything or
    asking a remote registry (a shim one gave is read from the cache, while its registry
    is still configured): None when the recorded binary has changed since (its document
    describes another binary) or the document is gone or invalid.

    For readers of the whole registry that must stay cheap and free of side effects,
    such as the search index; project patterns are left out, since they depend on the
    working directory."""
    if not entry.hash:
        return None
    try:
        if not _same_file(entry, os.stat(entry.path)):
            return None
    except OSError:
        return None
    if entry.source == "native":
        base = registry.load_metadata(entry.hash)
    elif entry.shim_registry:
        with _cache_only() as remote:
            base = find_shim(registry, entry.hash, name, remote=remote)
    else:
        base = find_shim(registry, entry.hash, name)
    if base is None:
        return None
    served = _registry_patterns(name, None, {})
    tool = _layer(base, registry, entry.hash, name, {}, None, served=served, project=False)
    return named(tool, name)


def _registry_patterns(
    name: str, remote: RemoteRegistries | None, origins: dict[str, str]
) -> list[tuple[str, list[dict[str, Any]]]]:
    """The patterns the registries (the caller's, else the configured ones) serve for
    `name`, as layers, read from the cache only: `atip registry fetch` and `list
    --check` fill it (`RemoteRegistries.refresh_patterns`), so resolving asks nobody.
    What was refused is noted in `origins` as `rejected:<url>`; a broken registries.json
    was noted by the shim lookup, or is left to it."""
    from atipkit.registry.config import RegistryConfigError

    try:
        cached = remote.cached() if remote is not None else _cache_only()
    except RegistryConfigError:
        return []
    layers = []
    with cached:
        for layer in cached.patterns(name) if cached.registries else ():
            if layer.notes:
                origins[f"rejected:{layer.source}"] = "; ".join(layer.notes)
            if layer.patterns:
                layers.append((layer.source, layer.patterns))
    return layers


def _cache_only() -> RemoteRegistries:
    """The configured remote registries, offline: a lookup reads the cache and asks
    nobody. Raises `RegistryConfigError` when registries.json cannot be used."""
    from atipkit.registry.config import load_settings
    from atipkit.registry.remote import RemoteRegistries

    return RemoteRegistries(msgspec.structs.replace(load_settings(), offline=True))


def _pattern_files(directory: Path, name: str) -> list[tuple[str, list[dict[str, Any]]]]:
    """Pattern files for tool `name`: `<name>.json` or `<name>-*.json`, holding a list of
    patterns or an object with `patterns`. Files that do not parse are left out."""
    if not directory.is_dir():
        return []
    out = []
    for path in sorted(directory.glob("*.json")):
        if path.stem != name and not path.stem.startswith(f"{name}-"):
            continue
        try:
            data = _jsontext.decode(_jsontext.read_bytes(path), str(path))
        except (OSError, ValueError):  # a DocumentError is a ValueError
            continue
        patterns = data.get("patterns") if isinstance(data, dict) else data
        if isinstance(patterns, list):
            out.append((str(path), [p for p in patterns if isinstance(p, dict)]))
    return out


def _record(
    registry: LocalRegistry,
    name: str,
    real: str,
    stat: os.stat_result,
    hash_: str | None,
    source: Literal["native", "shim", "inferred"],
    tool: Tool,
    shim_registry: str | None,
) -> None:
    with registry.transaction() as index:
        index.tools[name] = Entry(
            path=real,
            hash=hash_,
            source=source,
            shim_registry=shim_registry,
            version=tool.version,
            last_checked=timestamp(),
            size=stat.st_size,
            mtime_ns=stat.st_mtime_ns,
            inode=stat.st_ino,
        )


def _part(
    tool: Tool,
    real: str | None,
    source: str,
    commands: Sequence[str] | None,
    depth: int | None,
    timeout: float,
    origins: dict[str, str],
) -> Tool:
    """Partial discovery (§3.1.1): ask a tool that supports it, cut down any other."""
    if source == "native" and real and "partial-discovery" in tool.atip.features:
        result = probe(real, commands=commands, depth=depth, timeout=timeout)
        if result.tool is not None:
            origins["partial"] = "tool"
            return result.tool
    origins["partial"] = "local"
    return select(tool, commands=commands, depth=depth)


def registry_state(registry: LocalRegistry) -> tuple[FileState, tuple[tuple[str, FileState], ...]]:
    """registry.json's state and that of each binary it records: while it is the same,
    resolving the registry gives the same tools (override and pattern files aside).
    Servers that follow the registry compare it. Raises `RegistryError`."""
    entries = registry.read().tools
    return file_state(registry.index_path), tuple(
        (name, file_state(entries[name].path)) for name in sorted(entries)
    )


def resolve_registry(registry: LocalRegistry) -> tuple[list[Resolved], list[str]]:
    """Every tool of the registry, resolved as `atip run` resolves it, in name order, and
    one line ("name: why") for each entry that no longer resolves, or whose name cannot
    be a tool's (a hand-made `../x` is never resolved as a path): one broken entry never
    hides the others. A registry.json that cannot be read raises `RegistryError`."""
    from atipkit.registry.local import RegistryError

    resolved, skipped = [], []
    for name in sorted(registry.read().tools):
        if not is_tool_name(name):  # a hand-made entry: never a path to resolve
            skipped.append(f"{name!r}: not a tool name")
            continue
        try:
            resolved.append(resolve_tool(name, registry=registry))
        except RegistryError:
            raise
        except (AtipError, OSError, ValueError) as exc:
            skipped.append(f"{name}: {exc}")
    return resolved, skipped


def get_tool(
    name: str,
    *,
    commands: Sequence[str] | None = None,
    depth: int | None = None,
    refresh: bool = False,
) -> Tool:
    """The ATIP metadata of tool `name` (see `resolve_tool` for details and errors)."""
    return resolve_tool(name, commands=commands, depth=depth, refresh=refresh).tool
