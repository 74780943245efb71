"""ATIP's parameter types as JSON Schema and as Python values: the one table of them.

RFC 0.6 §3.7 names nine types; each is a JSON Schema `type` (the path and URL types are
strings with a `format`, `enum` a string with listed values, `array` a list of strings)
and a Python type a decoded value has. A compile (`bridge.params`), the ATDF, TDP and MCP
readers and writers (`interop`), the app framework's type hints (`app.shapes`) and the
semantic checks (`checks.fits`) all read it here, so a type means the same everywhere.

Data and pure functions, with no imports: `import atipkit.app` must not pay for msgspec.
"""

from __future__ import annotations

from typing import Any, Literal, NamedTuple

AtipType = Literal[
    "string", "integer", "number", "boolean", "file", "directory", "url", "enum", "array"
]


class TypeRow(NamedTuple):
    """What one ATIP type is in the other two type systems."""

    json_type: str
    """The JSON Schema `type` of a value."""
    format: str | None
    """The JSON Schema `format` RFC 0.6 §3.7 gives it, if any."""
    python: type
    """The Python type a decoded value has (an `integer` is also a `number`)."""
    kind: str | None
    """What a description says of the value, since `format` is not reliably honoured."""


TYPES: dict[AtipType, TypeRow] = {
    "string": TypeRow("string", None, str, None),
    "file": TypeRow("string", "file-path", str, "file path"),
    "directory": TypeRow("string", "directory-path", str, "directory path"),
    "url": TypeRow("string", "uri", str, "URL"),
    "integer": TypeRow("integer", None, int, None),
    "number": TypeRow("number", None, float, None),
    "boolean": TypeRow("boolean", None, bool, None),
    "enum": TypeRow("string", None, str, None),
    "array": TypeRow("array", None, list, None),
}
FORMATS: dict[str, AtipType] = {
    "file-path": "file",
    "directory-path": "directory",
    "uri": "url",
    "url": "url",
}
"""A string's JSON Schema `format` → the ATIP type it means (`url` as some writers say it)."""
SCALARS = frozenset({"string", "integer", "number", "boolean"})
"""The JSON Schema types that are ATIP types of the same name."""
_OF_PYTHON: dict[type, AtipType] = {
    str: "string",
    int: "integer",
    float: "number",
    bool: "boolean",
    list: "array",
}


def json_schema(atip_type: AtipType) -> dict[str, Any]:
    """The plain JSON Schema a compile gives a parameter of `atip_type`, new each call:
    the type only (an array's items are strings), the kind of string being said in the
    description, since `format` is not reliably honoured."""
    schema: dict[str, Any] = {"type": TYPES[atip_type].json_type}
    if atip_type == "array":
        schema["items"] = {"type": "string"}
    return schema


def from_python(py: type) -> AtipType:
    """The ATIP type of values of Python type `py` (str, int, float, bool, list)."""
    return _OF_PYTHON[py]


def fits(value: Any, atip_type: str) -> bool:
    """Whether a decoded JSON value is of an ATIP type, as the semantic checks count it
    (a boolean is no number, an integer is one; `enum` and the path types are strings)."""
    if atip_type != "boolean" and isinstance(value, bool):
        return False
    python = TYPES[atip_type].python  # type: ignore[index]  # an unknown type: KeyError
    if python is float:
        return isinstance(value, int | float)
    return isinstance(value, python)
