"""What the gateway offers: tools named on PATH or in the registry, every tool the
registry knows, ATIP documents; loaded now, and a fingerprint that says when to load
again."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from atipkit.errors import AtipError

if TYPE_CHECKING:
    from atipkit.model import Tool
    from atipkit.registry.local import LocalRegistry


class GatewayError(AtipError):
    """The gateway cannot offer what it was asked to: two tools of one name."""


class Unavailable(GatewayError):
    """A tool or file the selection names cannot be had: `cause` says why (`ToolNotFound`,
    `NoMetadata`, `RegistryError`, `DocumentError`, `OSError`), `name` which one."""

    def __init__(self, name: str, cause: Exception) -> None:
        super().__init__(f"{name}: {cause}")
        self.name = name
        self.cause = cause


@dataclass(frozen=True)
class Selection:
    """Which tools the gateway offers: tools named on PATH or in the registry (`names`),
    every tool of the registry (`every`), and ATIP documents (`files`)."""

    names: tuple[str, ...] = ()
    every: bool = False
    files: tuple[Path, ...] = ()

    def __post_init__(self) -> None:
        if not (self.names or self.every or self.files):
            raise ValueError("a selection names tools, files, or every tool")


class Loaded(NamedTuple):
    """The tools of one look at the selection, where to run each, and what was left out
    (a registry entry that no longer resolves: one line each, for the log)."""

    tools: list[Tool]
    executables: dict[str, str]
    skipped: list[str]


def load(selection: Selection, registry: LocalRegistry | None = None) -> Loaded:
    """The tools `selection` names, now. A named tool or file that cannot be had raises
    `Unavailable`, two tools of one name `GatewayError`; with `every`, a registry entry
    that no longer resolves is skipped and reported."""
    from atipkit.model import load as load_document
    from atipkit.registry.local import LocalRegistry
    from atipkit.resolve import NoMetadata, ToolNotFound, resolve_tool

    registry = registry or LocalRegistry()
    tools: list[Tool] = []
    executables: dict[str, str] = {}
    skipped: list[str] = []
    origin: dict[str, str] = {}

    def add(tool: Tool, where: str, path: str | None = None) -> None:
        if tool.name in origin:
            raise GatewayError(f"two tools named {tool.name!r}: {origin[tool.name]} and {where}")
        origin[tool.name] = where
        tools.append(tool)
        if path:
            executables[tool.name] = path

    for file in selection.files:
        try:
            document = load_document(file)
        except (AtipError, OSError) as exc:
            raise Unavailable(str(file), exc) from exc
        add(document, str(file))
    for name in selection.names:
        try:
            resolved = resolve_tool(name, registry=registry)
        except (AtipError, OSError) as exc:
            raise Unavailable(name, exc) from exc
        add(resolved.tool, name, resolved.path)
    if selection.every:
        try:
            entries = registry.read().tools
        except AtipError as exc:
            raise Unavailable(str(registry.index_path), exc) from exc
        for name in sorted(entries):
            if name in origin:
                continue  # named explicitly as well: offered once
            try:
                resolved = resolve_tool(name, registry=registry)
            except (ToolNotFound, NoMetadata) as exc:
                skipped.append(f"{name}: {exc}")
                continue
            add(resolved.tool, f"registry entry {name}", resolved.path)
    return Loaded(tools, executables, skipped)


def fingerprint(selection: Selection, registry: LocalRegistry) -> tuple[Any, ...]:
    """What changes when the tools may have: the registry index and the `--tool` files
    (identity, size and modification time; a file that is gone is `None`)."""

    def stat(path: Path) -> tuple[int, int, int, int] | None:
        try:
            found = os.stat(path)
        except OSError:
            return None
        return (found.st_dev, found.st_ino, found.st_size, found.st_mtime_ns)

    watched = [registry.index_path] if (selection.names or selection.every) else []
    return tuple(stat(Path(p)) for p in [*watched, *selection.files])
