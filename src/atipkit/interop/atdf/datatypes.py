"""ATIP parameter types and ATDF input types, both ways.

ATDF's `type` is a free string ("string, number, object"); atipkit writes JSON Schema type
names, so any ATDF reader understands them, and says the rest in the enhanced `schema` as
RFC 0.6 §3.7 spells it: `format: file-path | directory-path | uri`, `enum`, `items`,
`default`. Reading, the common spellings of other ATDF writers are understood too
(`int`, `float`, `bool`, `list`); a type ATIP has no word for (`object`) is read as a
string, and the ATDF type is kept in the parameter's `x-atdf` extension.
"""

from __future__ import annotations

from typing import Any

from atipkit.model import UNSET, Argument, AtipType, Option
from atipkit.typetable import FORMATS, TYPES, fits, json_schema

_IN: dict[str, AtipType] = {
    **{name: name for name in TYPES},
    "str": "string",
    "text": "string",
    "int": "integer",
    "float": "number",
    "double": "number",
    "bool": "boolean",
    "list": "array",
    "uri": "url",
}
"""An ATDF type as ATIP names it: ATIP's own names and other writers' spellings."""


def atdf_type(param: Argument | Option) -> str:
    """The ATDF type of a parameter: its JSON type; a variadic one is an array."""
    if param.variadic:
        return "array"
    return TYPES[param.type].json_type


def input_schema(param: Argument | Option) -> dict[str, Any]:
    """The JSON Schema of a parameter as RFC 0.6 §3.7 gives it, for the enhanced
    `schema` of an input (its description is the input's own)."""
    if param.schema and param.type in ("string", "array"):
        base: dict[str, Any] = dict(param.schema)
    else:
        base = json_schema(param.type)
        form = TYPES[param.type].format
        if form:
            base["format"] = form
        if param.enum:
            base["enum"] = list(param.enum)
        pattern = getattr(param, "pattern", UNSET)
        if pattern:
            base["pattern"] = pattern
    schema = {"type": "array", "items": base} if param.variadic else base
    if param.default is not UNSET:
        schema["default"] = param.default
    return schema


class AtdfParameter:
    """What an ATDF input says, in ATIP's terms, and what ATIP cannot say (`foreign`,
    for the `x-atdf` extension)."""

    __slots__ = ("default", "enum", "foreign", "schema", "type")

    def __init__(self, declared: str, schema: dict[str, Any] | None) -> None:
        schema = schema or {}
        self.foreign: dict[str, Any] = {}
        self.enum: list[Any] | None = None
        self.default: Any = UNSET
        self.schema: dict[str, Any] | None = None
        known = _IN.get(declared.strip().lower())
        self.type: AtipType = known or "string"
        if known != declared:
            self.foreign["type"] = declared  # another spelling, or no ATIP word for it
        taken = {"type", "description"}
        form = schema.get("format")
        if self.type == "string" and isinstance(form, str) and form in FORMATS:
            self.type = FORMATS[form]
            taken.add("format")
        enum = schema.get("enum")
        if isinstance(enum, list) and enum:
            if self.type == "string" and all(isinstance(v, str) for v in enum):
                self.type = "enum"
            if all(fits(v, self.type) for v in enum):
                self.enum = list(enum)
                taken.add("enum")
        if self.type == "enum" and self.enum is None:
            self.type = "string"  # an enum type without usable values: plain text
        default = schema.get("default", UNSET)
        if (
            default is not UNSET
            and fits(default, self.type)
            and (self.enum is None or default in self.enum)
        ):
            self.default = default
            taken.add("default")
        rest = {k: v for k, v in schema.items() if k not in taken}
        if not rest:
            return
        if known is not None and self.type in ("string", "array"):
            # constraints ATIP states in a string or array parameter's own schema
            self.schema = {"type": "array" if self.type == "array" else "string", **schema}
        else:
            self.foreign["schema"] = dict(schema)
