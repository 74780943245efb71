"""A TDP tool's parameter schema as ATIP options (`--<name>` each).

JSON Schema can say more than ATIP's option fields (patterns, bounds, nested objects,
unions, allowed extra properties); what an option cannot say is kept in its `schema` or
its `x-tdp`, and what the object schema says beyond its properties is handed back for
the command's `x-tdp`, so nothing of the manifest is lost and the document stays valid.
"""

from __future__ import annotations

from typing import Any

from atipkit.typetable import FORMATS, SCALARS, fits


def to_options(parameters: dict[str, Any]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Each property an option `--<name>`, and what of the object schema options cannot
    say (extra properties allowed, required names that are no property, other keys)."""
    properties: dict[str, Any] = parameters.get("properties", {})
    required = parameters.get("required", [])
    options = [_option(key, schema, key in required) for key, schema in properties.items()]
    leftover: dict[str, Any] = {
        k: v
        for k, v in parameters.items()
        if k not in ("type", "properties", "required", "additionalProperties")
    }
    if parameters.get("additionalProperties") not in (None, False):
        leftover["additionalProperties"] = parameters["additionalProperties"]
    unknown = [name for name in required if name not in properties]
    if unknown:
        leftover["required"] = unknown
    return options, leftover


def _option(key: str, schema: dict[str, Any], required: bool) -> dict[str, Any]:
    """One property as an ATIP option. The JSON type gives the ATIP type (a `format` of
    uri, file-path or directory-path gives url, file, directory as RFC 0.6 §3.7 maps
    them; a string enum gives enum; an object or a union is a string whose `schema` says
    what it is). A schema that says more than ATIP's fields (a pattern, bounds, nested
    properties) is kept whole as the option's `schema`; a default or enum that does not
    fit the ATIP type moves to the option's `x-tdp` rather than make the document
    invalid."""
    kind = schema.get("type")
    if isinstance(kind, list):  # a nullable type: an absent option is the null
        kinds = [k for k in kind if k != "null"]
        kind = kinds[0] if len(kinds) == 1 else None
    enum = schema.get("enum")
    expressed = {"type", "description", "default", "enum"}
    if kind == "string":
        atip_type = FORMATS.get(str(schema.get("format", "")), "string")
        if atip_type != "string":
            expressed.add("format")
        elif isinstance(enum, list) and enum and all(isinstance(v, str) for v in enum):
            atip_type = "enum"
    elif kind in SCALARS or kind == "array":
        atip_type = kind
        if kind == "array" and schema.get("items", {"type": "string"}) == {"type": "string"}:
            expressed.add("items")
    else:  # an object, a union, no type: a string whose schema says what it is
        atip_type = "string"
        expressed = {"description", "default"}
    option: dict[str, Any] = {"name": key, "flags": [f"--{key}"], "type": atip_type}
    x_tdp: dict[str, Any] = {}
    description = schema.get("description")
    if isinstance(description, str):
        option["description"] = description
    elif description is not None:
        x_tdp["description"] = description
    if required:
        option["required"] = True
    if "enum" in expressed and enum is not None:
        if isinstance(enum, list) and enum and all(fits(v, atip_type) for v in enum):
            option["enum"] = enum
        else:
            expressed.discard("enum")
    if "default" in schema:
        default = schema["default"]
        if atip_type == "integer" and isinstance(default, float) and default.is_integer():
            default = int(default)
        if (
            default is not None
            and fits(default, atip_type)
            and default in (option.get("enum") or [default])
        ):
            option["default"] = default
        else:
            x_tdp["default"] = default
    if any(k not in expressed for k in schema):  # said more than ATIP's fields can
        option["schema"] = {k: v for k, v in schema.items() if k not in ("description", "default")}
    if x_tdp:
        option["x-tdp"] = x_tdp
    return option
