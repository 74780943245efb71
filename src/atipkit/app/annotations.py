"""Behavioral annotations (PRD §7.2, §7.3), combined with `|`:

    @app.command(annotations=ReadOnly | Idempotent | ClosedWorld)

They become the command's ATIP `effects` (and through them the MCP tool hints and the
safety flags every provider sees). What an annotation does not say stays unknown, and an
agent assumes the worst of the unknown: a command without `ClosedWorld` may use the
network, one without `ReadOnly` may write.
"""

from __future__ import annotations

import enum
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from atipkit.model import Effects

__all__ = [
    "Annotation",
    "ClosedWorld",
    "Destructive",
    "Idempotent",
    "OpenWorld",
    "ReadOnly",
    "effects_of",
]


class Annotation(enum.Flag):
    NONE = 0
    READ_ONLY = enum.auto()
    """Reads only: writes, deletes and changes nothing (implies idempotent)."""
    IDEMPOTENT = enum.auto()
    """Running it twice with the same arguments does what running it once does."""
    DESTRUCTIVE = enum.auto()
    """May delete or overwrite data that cannot be got back."""
    OPEN_WORLD = enum.auto()
    """Talks to the network, or to things outside the machine."""
    CLOSED_WORLD = enum.auto()
    """Uses no network."""


ReadOnly = Annotation.READ_ONLY
Idempotent = Annotation.IDEMPOTENT
Destructive = Annotation.DESTRUCTIVE
OpenWorld = Annotation.OPEN_WORLD
ClosedWorld = Annotation.CLOSED_WORLD


def check(annotations: Annotation, where: str) -> None:
    from atipkit.app.errors import DefinitionError

    if ReadOnly in annotations and Destructive in annotations:
        raise DefinitionError(f"{where}: ReadOnly and Destructive contradict each other")
    if OpenWorld in annotations and ClosedWorld in annotations:
        raise DefinitionError(f"{where}: OpenWorld and ClosedWorld contradict each other")


def effects_of(annotations: Annotation) -> Effects:
    """The ATIP effects the annotations state, and nothing they do not."""
    from atipkit.model import UNSET, Effects, FilesystemEffects

    read_only = ReadOnly in annotations
    network = True if OpenWorld in annotations else False if ClosedWorld in annotations else UNSET
    return Effects(
        filesystem=FilesystemEffects(write=False, delete=False) if read_only else UNSET,
        network=network,
        idempotent=True if (read_only or Idempotent in annotations) else UNSET,
        destructive=True if Destructive in annotations else False if read_only else UNSET,
        reversible=False if Destructive in annotations else UNSET,
    )
