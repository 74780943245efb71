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
    from atipkit.policy import Evidence
    from atipkit.registry.local import LocalRegistry


class GatewayError(AtipError):
    """The gateway cannot offer what it was asked to."""


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
    """The tools of one look at the selection (`atipkit.binding.bind`: two of one name
    are both offered, the second under its key), the binary each tool's calls run and
    what atipkit established about each tool (`Resolved.evidence`) by key, what was left
    out (a registry entry that no longer resolves: one line each, for the log), where
    each tool came from, and what to say of metadata that claimed a name not its own
    (`atipkit.naming`)."""

    tools: list[Tool]
    executables: dict[str, str]
    skipped: list[str]
    sources: tuple[str, ...] = ()
    renamed: tuple[str, ...] = ()
    evidence: dict[str, Evidence] = {}  # noqa: RUF012 - a NamedTuple default, never mutated


def load(selection: Selection, registry: LocalRegistry | None = None) -> Loaded:
    """The tools `selection` names, now: the files, the names, then the registry's. A
    named tool or file that cannot be had raises `Unavailable`; with `every`, a registry
    entry that no longer resolves is skipped and reported. A registry entry that is a
    tool already named is offered once."""
    from atipkit.binding import bind
    from atipkit.model import load as load_document
    from atipkit.policy import Evidence
    from atipkit.registry.local import LocalRegistry
    from atipkit.resolve import Resolved, resolve_registry, resolve_tool

    registry = registry or LocalRegistry()
    entries: list[tuple[Tool, str, Evidence]] = []
    skipped: list[str] = []
    renamed: list[str] = []

    def add(resolved: Resolved, where: str) -> None:
        entries.append((resolved.tool, where, resolved.evidence))
        if resolved.renamed is not None and not resolved.renamed.alias:
            renamed.append(resolved.renamed.message)

    for file in selection.files:
        try:
            document = load_document(file)
        except (AtipError, OSError) as exc:
            raise Unavailable(str(file), exc) from exc
        entries.append((document, str(file), Evidence(origin="given")))
    for name in selection.names:
        try:
            add(resolve_tool(name, registry=registry), name)
        except (AtipError, OSError) as exc:
            raise Unavailable(name, exc) from exc
    if selection.every:
        try:
            everything, skipped = resolve_registry(registry)
        except AtipError as exc:
            raise Unavailable(str(registry.index_path), exc) from exc
        for resolved in everything:
            add(resolved, f"registry entry {resolved.name}")
    bound = bind(entries)
    return Loaded(
        bound.tools,
        bound.executables,
        skipped,
        tuple(bound.sources),
        tuple(renamed),
        bound.evidence,
    )


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
