"""Deferred mode's three tools: their names, schemas and definitions. A client of a
machine with thousands of commands lists three tools, searches, reads the one schema it
needs, and calls."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from atipkit.app.mcp import (  # the same lookups as atipkit.app's deferred mode
    LOOKUP_HINTS,
    NAME_SCHEMA,
    SCHEMA_TOOL,
    SEARCH_LIMIT,
    SEARCH_SCHEMA,
    SEARCH_TOOL,
)

if TYPE_CHECKING:
    from atipkit.serve.gateway.catalog import Catalog

__all__ = [
    "CALL_SCHEMA",
    "CALL_TOOL",
    "DEFERRED_INPUTS",
    "DEFERRED_TOOLS",
    "SCHEMA_TOOL",
    "SEARCH_LIMIT",
    "SEARCH_TOOL",
    "deferred_definitions",
    "problem",
]

CALL_TOOL = "call_tool"
DEFERRED_TOOLS = (SEARCH_TOOL, SCHEMA_TOOL, CALL_TOOL)

CALL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": NAME_SCHEMA["properties"]["name"],
        "arguments": {
            "type": "object",
            "default": {},
            "description": "The tool's arguments, as its input schema says (get_tool_schema).",
        },
    },
    "required": ["name"],
    "additionalProperties": False,
}
DEFERRED_INPUTS = {SEARCH_TOOL: SEARCH_SCHEMA, SCHEMA_TOOL: NAME_SCHEMA, CALL_TOOL: CALL_SCHEMA}


def deferred_definitions(catalog: Catalog) -> list[dict[str, Any]]:
    """The three tools of deferred mode. `call_tool` may run any tool, so its hints and
    safety suffix are those of all tools together (the worst case)."""
    from atipkit.bridge.mcp import annotations
    from atipkit.bridge.safety import combine, suffix

    combined = combine([flat.effects for flat in catalog.compiled.flat])
    count = len(catalog.names)
    tools = sorted({t.name for t in catalog.loaded.tools})
    shown = ", ".join(tools[:8]) + (f" and {len(tools) - 8} more" if len(tools) > 8 else "")
    call_text = (
        f"Run one of the {count} commands by name: find it with {SEARCH_TOOL}, read its "
        f"input schema with {SCHEMA_TOOL}, pass its arguments here."
    )
    return [
        {
            "name": SEARCH_TOOL,
            "title": "Search the command-line tools",
            "description": f"Find commands of {shown or 'no tools'} ({count} in all) by words "
            "from what they do, their names, parameters or examples. Answers the best "
            "matches first, each with its name, description and hints.",
            "inputSchema": SEARCH_SCHEMA,
            "annotations": {"title": "Search the command-line tools", **LOOKUP_HINTS},
        },
        {
            "name": SCHEMA_TOOL,
            "title": "Get a command's schema",
            "description": "The full tool definition of one command (input schema, hints), "
            "by the name search_tools gave.",
            "inputSchema": NAME_SCHEMA,
            "annotations": {"title": "Get a command's schema", **LOOKUP_HINTS},
        },
        {
            "name": CALL_TOOL,
            "title": "Run a command",
            "description": f"{call_text} {suffix(combined)}".strip(),
            "inputSchema": CALL_SCHEMA,
            "annotations": {"title": "Run a command", **annotations(combined)},
        },
    ]


def problem(schema: dict[str, Any], value: Any) -> str | None:
    """The first thing `schema` refuses in `value`, with where, or None."""
    import jsonschema_rs

    from atipkit._schema_errors import schema_errors, where

    errors = schema_errors(jsonschema_rs.validator_for(schema), value)
    return f"{where(errors[0].instance_path)}: {errors[0].message}" if errors else None
