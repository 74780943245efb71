"""What a query answers: a `Hit` per command, made from the `CommandEntry` the index
keeps of each document once its terms are counted.

Apart from the index so that the re-ranker (`atipkit.search.rerank`), which the index
calls, can name them without importing the index back. Not msgspec Structs: a search
of a saved index imports no msgspec (decision 582); an entry, of which there are
thousands, is a named tuple.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple


@dataclass(frozen=True, slots=True)
class Hit:
    """One command that matches a query."""

    tool: str
    command: str  # the command path, space-joined; "" for the tool's root command
    name: str  # the command's tool name in a compile (`gh_pr_list`)
    score: float
    description: str


class CommandEntry(NamedTuple):
    """What a hit needs of a document (the terms stay behind once the index is built),
    and the tool's description, which the re-ranker reads the command's with."""

    tool: str
    command: str
    name: str
    description: str
    tool_description: str = ""
