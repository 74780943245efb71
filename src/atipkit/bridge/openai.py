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
    """What in a strict schema exceeds OpenAI's documented limits, or its rules for
    schemas a parameter states itself (an MCP tool's, a JSON option's): every property of
    a stated type, every object's properties all required (empty when none)."""
    properties = enum_values = 0
    deepest = 0
    untyped: list[str] = []
    optional: list[str] = []
    stack: list[tuple[dict[str, Any], int]] = [(schema, 1)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        children = node.get("properties", {})
        if set(children) - set(node.get("required", [])):
            optional.append(", ".join(sorted(set(children) - set(node.get("required", [])))))
        for key, child in children.items():
            properties += 1
            if not any(k in child for k in ("type", "anyOf", "enum", "const", "$ref")):
                untyped.append(key)
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
    if untyped:
        out.append(f"properties of no stated type ({', '.join(sorted(untyped))})")
    if optional:
        out.append(f"nested properties that are not required ({'; '.join(optional)})")
    return out
