"""Partial discovery done on the client side (RFC 0.6 §3.1.1, SPEC-NOTES 9).

A tool that does not declare `partial-discovery` hands over its whole document; `select`
cuts it down exactly as a native tool would answer `--commands=a,b --depth=N`, and fills
in `partial`, `filter`, `totalCommands`, `includedCommands` and `omitted`, so an agent
can tell what it is not seeing.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from atipkit.model import (
    Command,
    Omitted,
    OmittedReason,
    PartialFilter,
    Tool,
    count_commands,
)

__all__ = ["select"]


def select(tool: Tool, *, commands: Sequence[str] | None = None, depth: int | None = None) -> Tool:
    """The part of `tool` with the named command subtrees (top-level names, or paths as
    space-separated words) down to `depth` levels (1 = top-level commands only).

    Returns `tool` itself when nothing would be left out. Raises `KeyError` naming a
    command that does not exist and `ValueError` for a depth below 1.
    """
    if depth is not None and depth < 1:
        raise ValueError(f"depth must be 1 or more, got {depth}")
    kept = tool.commands
    if commands:
        kept = _subtrees(tool.commands, [tuple(c.split()) for c in commands])
    if depth is not None:
        kept = _cut(kept, depth)
    total = tool.total_commands if tool.partial and tool.total_commands else None
    total = total if total is not None else count_commands(tool)
    selected = msgspec.structs.replace(tool, commands=kept)
    included = count_commands(selected)
    if included == count_commands(tool):
        return tool
    reason: OmittedReason = "filtered" if commands else "depth-limited"
    assumption = tool.omitted.safety_assumption if tool.omitted else "unknown"
    return msgspec.structs.replace(
        selected,
        partial=True,
        filter=PartialFilter(commands=list(commands) if commands else None, depth=depth),
        total_commands=total,
        included_commands=included,
        omitted=Omitted(reason=reason, safety_assumption=assumption),
    )


def _subtrees(
    commands: dict[str, Command], paths: list[tuple[str, ...]], above: tuple[str, ...] = ()
) -> dict[str, Command]:
    """The commands on the way to each path, each path's whole subtree, nothing else."""
    out: dict[str, Command] = {}
    for key, command in commands.items():
        below = [p[1:] for p in paths if p and p[0] == key]
        if not below:
            continue
        if any(not rest for rest in below):
            out[key] = command
        else:
            out[key] = msgspec.structs.replace(
                command, commands=_subtrees(command.commands, below, (*above, key))
            )
    for path in paths:
        if path and path[0] not in commands:
            raise KeyError(f"no command {' '.join((*above, *path))!r}")
    return out


def _cut(commands: dict[str, Command], depth: int) -> dict[str, Command]:
    if depth == 1:
        return {
            k: msgspec.structs.replace(c, commands={}) if c.commands else c
            for k, c in commands.items()
        }
    return {
        k: msgspec.structs.replace(c, commands=_cut(c.commands, depth - 1)) if c.commands else c
        for k, c in commands.items()
    }
