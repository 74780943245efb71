"""Shim lookup: the shim a binary's hash (or, in the 0.1 form, its name) finds in the
user's and the system's directories, then in remote registries.

Part of the registry, not of resolution: `resolve` layers what it finds with overrides
and patterns, `infer.coverage` asks whether a binary already has one before inferring
another, `scan` and the search index ask which files it would read.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from atipkit import paths
from atipkit.errors import AtipError
from atipkit.model import Tool, from_dict
from atipkit.registry.local import LocalRegistry

if TYPE_CHECKING:
    from atipkit.registry.remote import RemoteRegistries


def is_inferred(tool: Tool) -> bool:
    """Whether a shim says it was inferred (`trust.source`), not written by someone."""
    return bool(tool.trust and tool.trust.source == "inferred")


def find_shim(
    registry: LocalRegistry,
    hash_: str | None,
    name: str,
    origins: dict[str, str] | None = None,
    *,
    remote: RemoteRegistries | None = None,
) -> Tool | None:
    """A shim for this binary: by hash (local, system, then `remote` registries), then the
    unversioned 0.1 form by name. Shims that are invalid or name another binary are skipped
    and noted in `origins` (`rejected:<where>`); a remote shim's registry is
    `origins["registry"]`."""
    origins = {} if origins is None else origins
    by_hash, by_name = shim_paths(registry, hash_, name)
    if hash_:
        found = _first_shim(by_hash, hash_, origins)
        if found is not None:
            return for_name(found, name, origins)
        if remote is not None:
            lookup = remote.lookup(hash_)
            origins.update({f"rejected:{a.url}": a.reason for a in lookup.rejected})
            if lookup.tool is not None and lookup.registry:
                origins["metadata"] = f"remote:{lookup.url or lookup.registry}"
                origins["registry"] = lookup.registry
                if lookup.verified:
                    origins["signature"] = lookup.verified
                if lookup.trust:
                    origins["trust"] = lookup.trust
                return lookup.tool
    return _first_shim(by_name, hash_, origins)


def for_name(tool: Tool, name: str, origins: dict[str, str] | None = None) -> Tool:
    """The document of `name` in a binary's shim: its own where the shim holds one under
    `_names` (another name of a multi-call binary, documented otherwise than the first:
    decision 276), else the shim's, without `_names`. One that is not a valid document of
    the same binary is left out, and noted in `origins` (`rejected:_names.<name>`)."""
    named = tool.extensions.get("_names")
    if named is None:
        return tool
    extensions = {k: v for k, v in tool.extensions.items() if k != "_names"}
    own = named.get(name) if isinstance(named, dict) else None
    if own is not None:
        try:
            found = from_dict(own)
        except (AtipError, ValueError) as exc:
            why = str(exc).split("\n")[0]
        else:  # a document without a binary (UNSET, never None) is not of the same one
            mine, theirs = found.binary, tool.binary
            if mine and theirs and mine.hash == theirs.hash:
                return found
            why = "another binary's"
        if origins is not None:
            origins[f"rejected:_names.{name}"] = why
    return msgspec.structs.replace(tool, extensions=extensions)


def shim_paths(
    registry: LocalRegistry, hash_: str | None, name: str
) -> tuple[list[Path], list[Path]]:
    """The local files `find_shim` reads, in its order: by hash (the user's directory,
    then the system's; none without a hash), and the unversioned 0.1 form by name."""
    roots = [registry.data_dir, *reversed(paths.system_dirs())]
    by_hash = []
    if hash_:
        hex_name = registry.shim_path(hash_).name
        by_hash = [root / "shims" / "sha256" / hex_name for root in roots]
    return by_hash, [root / "shims" / f"{name}.json" for root in roots]


def _first_shim(candidates: list[Path], hash_: str | None, origins: dict[str, str]) -> Tool | None:
    from atipkit.validation import validate_file  # the schema: not for a search's load

    for path in candidates:
        if not path.is_file():
            continue
        report = validate_file(path)
        if report.tool is None or not report.ok:
            origins[f"rejected:{path}"] = report.errors[0].message if report.errors else "invalid"
            continue
        binary = report.tool.binary
        if binary and hash_ and binary.hash != hash_:
            origins[f"rejected:{path}"] = "binary.hash is another binary's"
            continue
        origins["metadata"] = f"shim:{path}"
        return report.tool
    return None
