"""Anthropic tools: `input_schema` with `type: "object"` and no top-level combinators."""

from __future__ import annotations

from typing import Any

from atipkit.bridge import params
from atipkit.bridge.flatten import FlatTool

MAX_STRICT_TOOLS = 20
MAX_STRICT_OPTIONAL = 24
MAX_STRICT_UNIONS = 16


def tool(flat: FlatTool, description: str, *, strict: bool) -> dict[str, Any]:
    schema = params.without_defaults(flat.input_schema) if strict else flat.input_schema
    out: dict[str, Any] = {"name": flat.name, "description": description, "input_schema": schema}
    if strict:
        out["strict"] = True
    return out


def optional_count(flat: FlatTool) -> int:
    required = set(flat.input_schema.get("required", []))
    return sum(1 for key in flat.input_schema["properties"] if key not in required)


def union_count(flat: FlatTool) -> int:
    """Parameters whose schema admits more than one type (type arrays, anyOf/oneOf)."""
    return sum(
        1
        for prop in flat.input_schema["properties"].values()
        if isinstance(prop.get("type"), list) or "anyOf" in prop or "oneOf" in prop
    )
