"""The name of a tool found on PATH: its file name, whatever its metadata says.

RFC 0.6 §3.2 has a document's `name` be the "command name (matches executable)", and
the registry is keyed by the executable's file name (§4.3). atipkit trusts that one: a
document whose own `name` differs is recorded, and given, under the file name, its
`name` rewritten to it. Otherwise any executable on PATH could print another tool's
document and take that tool's name, its functions and the policy rules written for it.

The difference is reported (`Renamed`): a warning when the document names another tool,
a note when the other name is one of this binary's own, an alias:
- the binary's real file name (`python3` links to `python3.11`, which says `python3.11`);
- a name that, on PATH, is this same file or a copy of it (`vi` and `vim` both link to
  `vim.basic`, which says `vim`);
- the name in a shim found by this binary's hash: the shim was written for exactly this
  binary, whatever its author called it.
"""

from __future__ import annotations

import os
import shutil

import msgspec

from atipkit.errors import AtipError
from atipkit.model import Tool, is_tool_name


class Renamed(msgspec.Struct, frozen=True, kw_only=True):
    """A tool whose metadata calls it otherwise than its file name: `name` is the file
    name (what atipkit calls it), `claimed` the metadata's, `path` the executable."""

    name: str
    claimed: str
    path: str | None
    alias: bool

    @property
    def message(self) -> str:
        if self.alias:
            return (
                f"{self.name}: its metadata calls it {self.claimed!r}, another name of the "
                f"same binary; it is called {self.name!r}"
            )
        return (
            f"{self.name} ({self.path}) claims the name {self.claimed!r} in its metadata; it "
            f"is not that tool: it is called {self.name!r}"
        )


class BadToolName(AtipError, ValueError):
    """A file name that cannot be a tool's name."""


def check_file_name(name: str) -> None:
    """Raises `BadToolName` for a file name no tool can be called by (empty, or holding
    whitespace, control characters or a backslash): a tool's name becomes a function name,
    a process name and a file name, and its metadata's `name` must be valid."""
    if not is_tool_name(name):
        raise BadToolName(
            f"{name!r} cannot be a tool's name (no whitespace, control characters, / or \\)"
        )


def renamed(
    claimed: str,
    name: str,
    real: str | None,
    hash_: str | None,
    *,
    by_hash: bool = False,
    search_path: str | None = None,
) -> Renamed | None:
    """What to report of metadata naming itself `claimed` for the executable `real`
    (hash `hash_`) found as `name`: None when the names agree. `by_hash`: the metadata is
    a shim found by the binary's hash. `search_path` is where an alias is looked for
    (default: PATH)."""
    if claimed == name:
        return None
    alias = by_hash or _alias(claimed, real, hash_, search_path)
    return Renamed(name=name, claimed=claimed, path=real, alias=alias)


def _alias(claimed: str, real: str | None, hash_: str | None, search_path: str | None) -> bool:
    if real is None:
        return False
    if claimed == os.path.basename(real):
        return True
    found = shutil.which(claimed, path=search_path)
    if found is None:
        return False
    other = os.path.realpath(found)
    if other == real:
        return True
    try:
        if not hash_ or os.path.getsize(other) != os.path.getsize(real):
            return False
        from atipkit.trust.digest import file_digest  # remembered while the file is unchanged

        return file_digest(other) == hash_
    except OSError:
        return False


def named(tool: Tool, name: str) -> Tool:
    """`tool` under `name` (unchanged when it already is)."""
    return tool if tool.name == name else msgspec.structs.replace(tool, name=name)
