"""Gemini function declarations: `parameters` in the OpenAPI subset, or the full JSON
Schema in `parameters_json_schema` (SPEC-NOTES 20)."""

from __future__ import annotations

from typing import Any

from atipkit.bridge import params
from atipkit.bridge.flatten import FlatTool


def declaration(flat: FlatTool, description: str, *, json_schema: bool) -> dict[str, Any]:
    if json_schema:
        return {
            "name": flat.name,
            "description": description,
            "parameters_json_schema": flat.input_schema,
        }
    return {
        "name": flat.name,
        "description": description,
        "parameters": params.gemini(flat.input_schema),
    }
