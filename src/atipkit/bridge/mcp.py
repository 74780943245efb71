"""MCP `Tool` definitions, with all four annotations always stated.

The hints are derived from effective effects and lean to caution where effects are
unknown, as MCP's own defaults do: a tool is read-only only if it says it writes nothing
and destroys nothing; it is non-destructive only if it says so; it is closed-world only if
it says it uses no network.
"""

# No `from __future__ import annotations` here: it would bind the name of `annotations()`.
from typing import Any

from atipkit.bridge.flatten import FlatTool
from atipkit.model import Effects


def annotations(effects: Effects) -> dict[str, bool]:
    fs = effects.filesystem
    writes_nothing = bool(fs and fs.write is False and fs.delete is not True)
    changes_nothing = not (effects.creates or effects.modifies or effects.deletes)
    read_only = writes_nothing and changes_nothing and effects.destructive is not True
    destructive = not read_only and not (
        effects.destructive is False and (not fs or fs.delete is not True)
    )
    return {
        "readOnlyHint": read_only,
        "destructiveHint": destructive,
        "idempotentHint": effects.idempotent is True or read_only,
        "openWorldHint": effects.network is not False,
    }


def tool(flat: FlatTool, description: str) -> dict[str, Any]:
    return {
        "name": flat.name,
        "title": flat.title,
        "description": description,
        "inputSchema": flat.input_schema,
        "annotations": {"title": flat.title, **annotations(flat.effects)},
    }
