"""ATIP parameters as JSON Schema (RFC 0.6 §3.7, §8.2 Rules 2 and 4), and the per-provider
dialects: OpenAI strict (SPEC-NOTES 19) and Gemini's OpenAPI subset (SPEC-NOTES 20).

The neutral form is plain JSON Schema. Paths, files and URLs are strings whose kind is said
in the description, because `format` is not reliably honoured. Defaults are said in the
description too, since strict modes do not accept the `default` keyword.
"""

from __future__ import annotations

import functools
import json
import re
from typing import Any

from atipkit.model import UNSET, Argument, Option
from atipkit.typetable import TYPES, json_schema

_KEY = re.compile(r"[^A-Za-z0-9_.-]")


@functools.lru_cache(maxsize=4096)
def property_key(name: str) -> str:
    """A parameter name as a property key every provider accepts (`^[A-Za-z0-9_.-]{1,64}$`)."""
    return (_KEY.sub("_", name) or "_")[:64]


def describe(param: Argument | Option) -> str:
    text = param.description or param.name.replace("-", " ").replace("_", " ")
    kind = TYPES[param.type].kind
    if kind:
        text = f"{text} ({kind})"
    if param.variadic:
        text += ". One or more values"
    if param.default is not UNSET and param.default is not None:
        text += f". Default: {json.dumps(param.default, ensure_ascii=False)}"
    return text


def parameter_schema(param: Argument | Option) -> dict[str, Any]:
    """The neutral JSON Schema of one parameter: its own `schema` when it states one (the
    exact schema of a JSON-valued option, an MCP tool's property, an integer's bounds),
    else the one its ATIP type means."""
    if param.schema is not UNSET:
        base: dict[str, Any] = dict(param.schema)
    else:
        base = json_schema(param.type)
        if param.enum:
            base["enum"] = list(param.enum)
        pattern = getattr(param, "pattern", UNSET)
        if pattern and base["type"] == "string":
            base["pattern"] = pattern
    schema = {"type": "array", "items": base} if param.variadic else base
    schema["description"] = describe(param)
    if param.default is not UNSET:
        schema["default"] = param.default
    return schema


def object_schema(properties: dict[str, dict[str, Any]], required: list[str]) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    schema["additionalProperties"] = False
    return schema


# -- dialects ------------------------------------------------------------------------------


def strict(schema: dict[str, Any]) -> dict[str, Any]:
    """OpenAI strict mode (Rule 2, SPEC-NOTES 19): every property required, optional ones
    nullable (a nullable enum lists `null`), `additionalProperties: false` everywhere,
    arrays with `items`, no `default`."""
    required = set(schema.get("required", []))
    properties = {}
    for key, prop in schema["properties"].items():
        prop = _strip_defaults(prop)
        properties[key] = prop if key in required else _nullable(prop)
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


def without_defaults(schema: dict[str, Any]) -> dict[str, Any]:
    """For strict modes that keep optional parameters optional (Anthropic)."""
    out = dict(schema)
    out["properties"] = {k: _strip_defaults(v) for k, v in schema["properties"].items()}
    return out


def _strip_defaults(schema: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in schema.items() if k != "default"}
    if isinstance(out.get("items"), dict):
        out["items"] = _strip_defaults(out["items"])
    if out.get("type") == "object" or "properties" in out:
        out.setdefault("additionalProperties", False)
    return out


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    out = dict(schema)
    kind = out.get("type")
    if isinstance(kind, str):
        out["type"] = [kind, "null"]
    elif isinstance(kind, list) and "null" not in kind:
        out["type"] = [*kind, "null"]
    if "enum" in out and None not in out["enum"]:
        out["enum"] = [*out["enum"], None]
    return out


_GEMINI_KEEP = {
    "type",
    "description",
    "enum",
    "items",
    "properties",
    "required",
    "nullable",
    "default",
    "pattern",
    "minimum",
    "maximum",
    "min_items",
    "max_items",
    "format",
}


def gemini(schema: dict[str, Any]) -> dict[str, Any]:
    """Gemini's OpenAPI subset (SPEC-NOTES 20): upper-case types, no type arrays (nullable
    instead), no `additionalProperties`, string enums only (other enums are dropped; their
    values stay in the description)."""
    out: dict[str, Any] = {}
    kind = schema.get("type")
    if isinstance(kind, list):
        rest = [k for k in kind if k != "null"]
        kind = rest[0] if rest else "string"
        out["nullable"] = True
    if kind:
        out["type"] = str(kind).upper()
    for key, value in schema.items():
        if key in ("type", "additionalProperties") or key not in _GEMINI_KEEP:
            continue
        if key == "properties":
            out[key] = {k: gemini(v) for k, v in value.items()}
        elif key == "items":
            out[key] = gemini(value)
        elif key == "enum":
            values = [v for v in value if v is not None]
            if out.get("type") == "STRING" and all(isinstance(v, str) for v in values):
                out[key] = values
            else:
                allowed = ", ".join(json.dumps(v) for v in values)
                out["description"] = f"{schema.get('description', '')} (one of {allowed})".strip()
        else:
            out.setdefault(key, value)
    return out
