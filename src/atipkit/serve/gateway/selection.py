"""What the gateway offers: tools named on PATH or in the registry, every tool the
registry knows, ATIP documents; loaded now, and a fingerprint that says when to load
again."""

from __future__ import annotations

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
    from atipkit.resolve import resolve_registry, resolve_tool

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
            everything, skipped = resolve_registry(registry, exclude=set(origin))
        except AtipError as exc:
            raise Unavailable(str(registry.index_path), exc) from exc
        for resolved in everything:
            add(resolved.tool, f"registry entry {resolved.name}", resolved.path)
    return Loaded(tools, executables, skipped)


def fingerprint(selection: Selection, registry: LocalRegistry) -> tuple[Any, ...]:
    """What changes when the tools may have: the registry and the binaries it records
    (when tools come from it), and the `--tool` files; a registry that cannot be read is
    a state of its own (the next look says why)."""
    from atipkit.resolve import file_state, registry_state

    state: Any = ()
    if selection.names or selection.every:
        try:
            state = registry_state(registry)
        except AtipError as exc:
            state = str(exc)
    return (state, *(file_state(path) for path in selection.files))
