"""Reading a manifest (`parse`): JSON in either shape → `ToolManifest`.

The snake_case JSON the spec shows, and the proto3 JSON the reference server sends
(camelCase keys, zero values left out, `default` values and example inputs wrapped as
`google.protobuf.Value`/`Struct`). Because that server drops zero values, an absent
field reads as its zero value in both shapes (`idempotent` absent is `false`), so the
two shapes of one manifest give the same `ToolManifest`. Everything is checked on the way
in, and every error names its JSON path in the document's own spelling.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from atipkit import _jsontext
from atipkit.interop.tdp.effects import atip_effects
from atipkit.interop.tdp.errors import ManifestError, UnsupportedProtocol
from atipkit.interop.tdp.model import (
    Category,
    Example,
    Metadata,
    Scenario,
    ToolDefinition,
    ToolManifest,
)
from atipkit.problems import PathPart, error, json_path

SUPPORTED_MAJOR = 1
"""The major protocol version this reader knows; another changes the response schema."""
MAX_DEPTH = _jsontext.MAX_DEPTH
"""Deepest nesting of objects and arrays a manifest may have (schemas, wrapped values):
the one limit of all JSON atipkit reads."""
MAX_TOOLS = 20_000

_FIELDS: dict[str, tuple[str, ...]] = {
    "manifest": ("protocol_version", "scenario", "tools", "categories", "generated_at"),
    "scenario": ("name", "version", "description", "base_url"),
    "tool": ("name", "description", "category", "parameters", "metadata"),
    "metadata": (
        "enabled_by_default",
        "requires_approval",
        "timeout_seconds",
        "rate_limit_per_minute",
        "cost_estimate",
        "long_running",
        "idempotent",
        "tags",
        "examples",
    ),
    "example": ("description", "input"),
    "category": ("id", "name", "description", "icon"),
}
_SCHEMA_NAMES = {
    "min_length": "minLength",
    "max_length": "maxLength",
    "additional_properties": "additionalProperties",
    "min_items": "minItems",
    "max_items": "maxItems",
}
"""JSON Schema keywords as a proto message's snake_case field names would spell them."""
_EMPTY_IS_ABSENT = frozenset({"description", "enum", "properties", "required", "pattern", "format"})
"""Schema keywords whose empty value means the same as leaving them out."""
_VERSION = re.compile(r"(0|[1-9][0-9]*)(?:\.(0|[1-9][0-9]*)){0,2}\Z")


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


_VALUE_KINDS = {
    spelled: kind
    for kind in ("string", "number", "bool", "list", "struct", "null")
    for spelled in (f"{kind}_value", f"{kind}Value")
}
"""`google.protobuf.Value`'s fields in either spelling → the kind of value each holds."""


def parse(data: bytes | str | Mapping[str, Any], *, source: str | None = None) -> ToolManifest:
    """Read a manifest from JSON text or decoded JSON, in the snake_case shape or the
    proto3 camelCase shape (SPEC-NOTES 22); `source` names it in errors.

    Raises `MalformedJSON` or `DocumentTooLarge` for text that is not JSON, too big or
    nested deeper than `MAX_DEPTH` (decoded data too), `UnsupportedProtocol` for a major
    protocol_version other than 1, and `ManifestError` naming the JSON path of anything
    else that is wrong."""
    if isinstance(data, bytes | str):
        data = _jsontext.decode(data, source, max_bytes=_jsontext.MAX_DOCUMENT_BYTES)
    elif isinstance(data, Mapping):
        data = dict(data)
        _jsontext.check_depth(data, source)
    reader = _Reader(source)
    return reader.manifest(reader.object(data, []))


class _Reader:
    """Reads one manifest, knowing its shape (camelCase or snake_case) and where it is."""

    def __init__(self, source: str | None) -> None:
        self.source = source
        self.camel = False

    def fail(self, where: list[PathPart], message: str, code: str = "tdp.invalid") -> ManifestError:
        return ManifestError([error(code, message, json_path(where))], self.source)

    def expected(self, where: list[PathPart], what: str, value: Any) -> ManifestError:
        """`expected <what>, got <the JSON type of value>` at `where`."""
        return self.fail(where, f"expected {what}, got {_jsontext.json_type(value)}")

    # -- shapes and limits -------------------------------------------------------------

    def object(self, value: Any, where: list[PathPart]) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.expected(where, "an object", value)
        return value

    def array(self, value: Any, where: list[PathPart]) -> list[Any]:
        if not isinstance(value, list):
            raise self.expected(where, "an array", value)
        return value

    def field(
        self, obj: dict[str, Any], name: str, where: list[PathPart]
    ) -> tuple[list[PathPart], Any] | None:
        """The field `name` in either spelling, with its path; None when absent."""
        spellings = dict.fromkeys((name, _camel(name)))
        found = [key for key in spellings if key in obj]
        if len(found) > 1:
            raise self.fail(
                [*where, found[1]], f"{found[0]!r} and {found[1]!r} are one field; give it once"
            )
        return ([*where, found[0]], obj[found[0]]) if found else None

    def unknown(self, obj: dict[str, Any], kind: str) -> tuple[dict[str, Any], dict[str, Any]]:
        """(x-* keys, other unknown keys) of an object, verbatim."""
        known = {s for name in _FIELDS[kind] for s in (name, _camel(name))}
        extensions = {k: v for k, v in obj.items() if k not in known and k.startswith("x-")}
        extra = {k: v for k, v in obj.items() if k not in known and not k.startswith("x-")}
        return extensions, extra

    def extra(self, obj: dict[str, Any], kind: str) -> dict[str, Any]:
        """Every unknown key of an object, x-* keys first, for the types that keep them in
        one `extra`."""
        extensions, extra = self.unknown(obj, kind)
        return {**extensions, **extra}

    # -- typed fields ---------------------------------------------------------------------

    def string(
        self, obj: dict[str, Any], name: str, where: list[PathPart], *, required: bool = False
    ) -> str:
        """The string field `name`, "" when absent; `required`: present and not blank."""
        found = self.field(obj, name, where)
        if found is None and not required:
            return ""
        if found is None or (required and found[1] == ""):
            spelled = _camel(name) if self.camel else name
            raise self.fail([*where, spelled], f"missing {spelled!r}: expected a non-empty string")
        path, value = found
        if not isinstance(value, str):
            raise self.expected(path, "a string", value)
        if required and not value.strip():
            raise self.fail(path, "expected a non-empty string")
        return value

    def boolean(self, obj: dict[str, Any], name: str, where: list[PathPart]) -> bool:
        found = self.field(obj, name, where)
        if found is None:
            return False
        path, value = found
        if not isinstance(value, bool):
            raise self.expected(path, "true or false", value)
        return value

    def count(self, obj: dict[str, Any], name: str, where: list[PathPart]) -> int:
        """A non-negative integer; proto3 JSON may write integers as strings."""
        found = self.field(obj, name, where)
        if found is None:
            return 0
        path, value = found
        number: Any = value
        digits = isinstance(value, str) and value.isdigit()
        if digits or (isinstance(value, float) and value.is_integer()):
            number = int(value)
        if isinstance(number, bool) or not isinstance(number, int) or number < 0:
            got = (
                repr(value) if isinstance(value, int | float | str) else _jsontext.json_type(value)
            )
            raise self.fail(path, f"expected a non-negative integer, got {got}")
        return number

    def strings(self, obj: dict[str, Any], name: str, where: list[PathPart]) -> list[str]:
        found = self.field(obj, name, where)
        if found is None:
            return []
        path, value = found
        for index, item in enumerate(self.array(value, path)):
            if not isinstance(item, str):
                raise self.expected([*path, index], "a string", item)
        return list(value)

    def objects(self, obj: dict[str, Any], name: str, where: list[PathPart]) -> list[Any]:
        found = self.field(obj, name, where)
        if found is None:
            return []
        path, value = found
        return [
            (([*path, i]), self.object(item, [*path, i]))
            for i, item in enumerate(self.array(value, path))
        ]

    # -- the document ---------------------------------------------------------------------

    def manifest(self, root: dict[str, Any]) -> ToolManifest:
        snake, camel = "protocol_version" in root, "protocolVersion" in root
        if not (snake or camel):
            raise self.fail(
                ["protocol_version"],
                "missing 'protocol_version' (or 'protocolVersion'): not a Tool Discovery "
                "Protocol manifest",
            )
        self.camel = camel
        version = self.string(root, "protocol_version", [], required=True)
        self._check_version(version)
        found = self.field(root, "scenario", [])
        if found is None:
            raise self.fail(["scenario"], "missing 'scenario': expected an object with a name")
        scenario = self.scenario(self.object(found[1], found[0]), found[0])
        tools_found = self.field(root, "tools", [])
        tools: list[ToolDefinition] = []
        if tools_found is not None:
            path, value = tools_found
            items = self.array(value, path)
            if len(items) > MAX_TOOLS:
                raise self.fail(path, f"{len(items)} tools; the limit is {MAX_TOOLS}")
            seen: dict[str, int] = {}
            for index, item in enumerate(items):
                tool = self.tool(self.object(item, [*path, index]), [*path, index])
                if tool.name in seen:
                    raise self.fail(
                        [*path, index, "name"],
                        f"tool name {tool.name!r} is also the name of "
                        f"{json_path([*path, seen[tool.name]])}",
                    )
                seen[tool.name] = index
                tools.append(tool)
        categories = [
            self.category(item, where) for where, item in self.objects(root, "categories", [])
        ]
        extensions, extra = self.unknown(root, "manifest")
        return ToolManifest(
            protocol_version=version,
            scenario=scenario,
            tools=tools,
            categories=categories,
            generated_at=self.string(root, "generated_at", []),
            extensions=extensions,
            extra=extra,
        )

    def _check_version(self, version: str) -> None:
        where: list[PathPart] = ["protocolVersion" if self.camel else "protocol_version"]
        if not _VERSION.match(version):
            raise self.fail(where, f'expected a version such as "1.0", got {version!r}')
        major = int(version.split(".")[0])
        if major != SUPPORTED_MAJOR:
            problem = error(
                "tdp.unsupported-version",
                f"protocol version {version} is not supported: this reader knows "
                f"{SUPPORTED_MAJOR}.x, and a major version changes the response schema",
                json_path(where),
            )
            raise UnsupportedProtocol([problem], self.source)

    def scenario(self, obj: dict[str, Any], where: list[PathPart]) -> Scenario:
        return Scenario(
            name=self.string(obj, "name", where, required=True),
            version=self.string(obj, "version", where),
            description=self.string(obj, "description", where),
            base_url=self.string(obj, "base_url", where),
            extra=self.extra(obj, "scenario"),
        )

    def category(self, obj: dict[str, Any], where: list[PathPart]) -> Category:
        return Category(
            id=self.string(obj, "id", where, required=True),
            name=self.string(obj, "name", where),
            description=self.string(obj, "description", where),
            icon=self.string(obj, "icon", where),
            extra=self.extra(obj, "category"),
        )

    def tool(self, obj: dict[str, Any], where: list[PathPart]) -> ToolDefinition:
        name = self.string(obj, "name", where, required=True)
        found = self.field(obj, "parameters", where)
        if found is None:
            parameters: dict[str, Any] = {"type": "object", "properties": {}}
        else:
            parameters = self.parameters(found[1], found[0])
        found = self.field(obj, "metadata", where)
        metadata = Metadata() if found is None else self.metadata(found[1], found[0])
        extensions, extra = self.unknown(obj, "tool")
        if "x-atip" in extensions:
            self._check_atip(extensions["x-atip"], [*where, "x-atip"])
        return ToolDefinition(
            name=name,
            description=self.string(obj, "description", where),
            category=self.string(obj, "category", where),
            parameters=parameters,
            metadata=metadata,
            extensions=extensions,
            extra=extra,
        )

    def _check_atip(self, value: Any, where: list[PathPart]) -> None:
        """`x-atip` is ours: if it is there, its effects must be ATIP effects."""
        obj = self.object(value, where)
        if "effects" in obj:
            atip_effects(obj["effects"], [*where, "effects"], self.source)

    def metadata(self, value: Any, where: list[PathPart]) -> Metadata:
        obj = self.object(value, where)
        examples = []
        for path, item in self.objects(obj, "examples", where):
            found = self.field(item, "input", path)
            given: dict[str, Any] = {}
            if found is not None:
                given = self.struct(found[1], found[0])
            examples.append(
                Example(
                    description=self.string(item, "description", path),
                    input=given,
                    extra=self.extra(item, "example"),
                )
            )
        return Metadata(
            enabled_by_default=self.boolean(obj, "enabled_by_default", where),
            requires_approval=self.boolean(obj, "requires_approval", where),
            timeout_seconds=self.count(obj, "timeout_seconds", where),
            rate_limit_per_minute=self.count(obj, "rate_limit_per_minute", where),
            cost_estimate=self.string(obj, "cost_estimate", where),
            long_running=self.boolean(obj, "long_running", where),
            idempotent=self.boolean(obj, "idempotent", where),
            tags=self.strings(obj, "tags", where),
            examples=examples,
            extra=self.extra(obj, "metadata"),
        )

    # -- JSON Schema and wrapped values ---------------------------------------------------

    def parameters(self, value: Any, where: list[PathPart]) -> dict[str, Any]:
        obj = self.object(value, where)
        if self.camel and _is_struct(obj) and "type" not in obj:
            obj = self.object(self.struct(obj, where), where)
        schema = self.schema(obj, where)
        kind = schema.get("type", "object")
        if kind != "object":
            raise self.fail([*where, "type"], f'expected "object", got {kind!r}')
        schema["type"] = "object"
        schema.setdefault("properties", {})
        for key in schema["properties"]:
            if not key:
                raise self.fail([*where, "properties", key], "a parameter needs a non-empty name")
        return schema

    def schema(self, obj: dict[str, Any], where: list[PathPart]) -> dict[str, Any]:
        """One JSON Schema: JSON Schema's key names, `default` (and wrapped `enum`
        values) unwrapped in the proto3 shape, nested schemas read alike."""
        out: dict[str, Any] = {}
        for key, value in obj.items():
            name = _SCHEMA_NAMES.get(key, key)
            path = [*where, key]
            if name in out:
                raise self.fail(path, f"{key!r} repeats {name!r}; give it once")
            if name == "properties":
                props = self.object(value, path)
                value = {
                    k: self.schema(self.object(v, [*path, k]), [*path, k]) for k, v in props.items()
                }
            elif name == "items" and isinstance(value, dict):
                value = self.schema(value, path)
            elif name == "items" and isinstance(value, list):
                value = [
                    self.schema(self.object(v, [*path, i]), [*path, i]) for i, v in enumerate(value)
                ]
            elif name == "default":
                value = self.value(value, path)
            elif name == "enum":
                value = [self.value(v, [*path, i]) for i, v in enumerate(self.array(value, path))]
            elif name == "required":
                value = self.strings(obj, key, where)
            elif name == "type" and not isinstance(value, str | list):
                raise self.expected(path, "a type name", value)
            if name in _EMPTY_IS_ABSENT and value in ("", [], {}):
                continue  # proto3 leaves these out: an empty one says nothing either way
            out[name] = value
        return out

    def value(self, value: Any, where: list[PathPart]) -> Any:
        """A `google.protobuf.Value` in the proto3 shape (`{"stringValue": "x"}`, ...; a
        plain JSON value is taken as it is); any JSON value in the snake_case shape."""
        if not self.camel or not isinstance(value, dict) or len(value) != 1:
            return value
        [(key, inner)] = value.items()
        kind = _VALUE_KINDS.get(key)
        if kind is None:
            return value
        path = [*where, key]
        if kind == "null":
            return None
        if kind == "string" and not isinstance(inner, str):
            raise self.expected(path, "a string", inner)
        if kind == "bool" and not isinstance(inner, bool):
            raise self.expected(path, "true or false", inner)
        if kind == "number" and (isinstance(inner, bool) or not isinstance(inner, int | float)):
            raise self.expected(path, "a number", inner)
        if kind == "list":
            obj = self.object(inner, path)
            values = obj.get("values", [])
            return [
                self.value(v, [*path, "values", i])
                for i, v in enumerate(self.array(values, [*path, "values"]))
            ]
        if kind == "struct":
            return self.struct(inner, path)
        return inner

    def struct(self, value: Any, where: list[PathPart]) -> dict[str, Any]:
        """A `google.protobuf.Struct` in the proto3 shape (`{"fields": {k: Value}}`; a
        plain object is taken as it is); any object in the snake_case shape."""
        obj = self.object(value, where)
        if not self.camel or not _is_struct(obj):
            return obj
        fields = self.object(obj.get("fields", {}), [*where, "fields"])
        return {k: self.value(v, [*where, "fields", k]) for k, v in fields.items()}


def _is_struct(obj: dict[str, Any]) -> bool:
    return set(obj) == {"fields"} and isinstance(obj["fields"], dict)
