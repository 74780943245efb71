"""OpenAI function tools: Chat Completions and the Responses API (RFC 0.6 §8.1)."""

from __future__ import annotations

from typing import Any

from atipkit.bridge import params
from atipkit.bridge.flatten import FlatTool

MAX_DESCRIPTION = 1024  # UTF-16 code units (SPEC-NOTES 18)
MAX_TOOLS = 128
MAX_STRICT_PROPERTIES = 5000
MAX_STRICT_DEPTH = 10
MAX_STRICT_ENUM_VALUES = 1000


def parameters(tool: FlatTool, *, strict: bool) -> dict[str, Any]:
    return params.strict(tool.input_schema) if strict else tool.input_schema


def chat_tool(tool: FlatTool, description: str, *, strict: bool) -> dict[str, Any]:
    """`{"type": "function", "function": {...}}` for Chat Completions."""
    return {
        "type": "function",
        "function": {
            "name": tool.name,
            "description": description,
            "parameters": parameters(tool, strict=strict),
            "strict": strict,
        },
    }


def responses_tool(tool: FlatTool, description: str, *, strict: bool) -> dict[str, Any]:
    """The flat function tool of the Responses API."""
    return {
        "type": "function",
        "name": tool.name,
        "description": description,
        "parameters": parameters(tool, strict=strict),
        "strict": strict,
    }


def strict_limits(schema: dict[str, Any]) -> list[str]:
    """What in a strict schema exceeds OpenAI's documented limits (empty when none)."""
    properties = enum_values = 0
    deepest = 0
    stack: list[tuple[dict[str, Any], int]] = [(schema, 1)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        for child in node.get("properties", {}).values():
            properties += 1
            stack.append((child, depth + 1))
        if isinstance(node.get("items"), dict):
            stack.append((node["items"], depth + 1))
        enum_values += len(node.get("enum", []))
    out = []
    if properties > MAX_STRICT_PROPERTIES:
        out.append(f"{properties} properties (limit {MAX_STRICT_PROPERTIES})")
    if deepest > MAX_STRICT_DEPTH:
        out.append(f"{deepest} levels of nesting (limit {MAX_STRICT_DEPTH})")
    if enum_values > MAX_STRICT_ENUM_VALUES:
        out.append(f"{enum_values} enum values (limit {MAX_STRICT_ENUM_VALUES})")
    return out
