"""An MCP tool's `inputSchema` as ATIP options: one option a property.

ATIP's type system (RFC 0.6 §3.7) says a plain string, integer, number, boolean, string
enum or list of strings exactly. Anything more (objects, arrays of anything else, unions,
formats, patterns, bounds, titles) keeps its JSON Schema in the option's `schema` field,
beside the nearest ATIP `type` (`string` where nothing is near), so nothing the server
said is lost and a compile can give the model the server's own schema back.

Each option's schema stands alone: local `$ref`s (`#/$defs/...`, any `#/...` pointer into
the input schema) are inlined, because an option is compiled into another document where
those pointers would point nowhere. What cannot stand alone is refused with the reason
(`NotDescribable`): a recursive `$ref`, a `$ref` to another document, a schema nested
deeper than `MAX_DEPTH` or growing past `MAX_NODES` once inlined.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import unquote

from atipkit import _jsontext
from atipkit.bridge.names import numbered
from atipkit.interop.mcp.errors import NotDescribable
from atipkit.model import UNSET, Option, UnsetType
from atipkit.typetable import SCALARS, AtipType, fits, json_schema

MAX_DEPTH = _jsontext.MAX_DEPTH
"""How deep a property's schema may nest (after inlining), in schemas: the limit of all
JSON atipkit reads, which the document's own check then applies to the JSON levels."""
MAX_NODES = 50_000
"""How many schema objects one tool's options may hold once `$ref`s are inlined (a chain
of references to references grows exponentially)."""

# Keywords whose value is a schema, a list of schemas, or a map of name → schema (2020-12,
# and the draft-07 spellings servers still send). Everything else is data, copied as is.
_ONE = frozenset(
    {
        "additionalProperties",
        "additionalItems",
        "contains",
        "not",
        "if",
        "then",
        "else",
        "propertyNames",
        "unevaluatedItems",
        "unevaluatedProperties",
        "contentSchema",
        "items",
    }
)
_LIST = frozenset({"allOf", "anyOf", "oneOf", "prefixItems", "items"})
_MAP = frozenset({"properties", "patternProperties", "dependentSchemas"})
_CONTAINERS = frozenset({"$defs", "definitions"})
"""Dropped from an inlined schema: every reference into them is inlined."""
_ANNOTATIONS = frozenset(
    {"description", "title", "default", "examples", "deprecated", "readOnly", "writeOnly"}
)
_FLAG_SAFE = re.compile(r"[^A-Za-z0-9_.-]")


class _Inliner:
    """Inlines the local `$ref`s of one tool's input schema, counting what it builds."""

    def __init__(self, tool: str, root: dict[str, Any]) -> None:
        self.tool = tool
        self.root = root
        self.nodes = 0

    def fail(self, where: str, reason: str) -> NotDescribable:
        return NotDescribable(self.tool, f"{where}: {reason}")

    def inline(self, schema: Any, where: str, stack: tuple[str, ...] = (), depth: int = 0) -> Any:
        if isinstance(schema, bool):
            return schema
        if not isinstance(schema, dict):
            raise self.fail(where, f"a schema must be an object or a boolean, not {_kind(schema)}")
        if depth > MAX_DEPTH:
            raise self.fail(where, f"the schema nests deeper than {MAX_DEPTH} levels")
        self.nodes += 1
        if self.nodes > MAX_NODES:
            raise self.fail(where, f"the schema grows past {MAX_NODES} objects once inlined")
        ref = schema.get("$ref")
        if ref is not None:
            return self._follow(schema, ref, where, stack, depth)
        out: dict[str, Any] = {}
        for key, value in schema.items():
            if key in _CONTAINERS:
                continue
            here = f"{where}.{key}"
            if key in _MAP and isinstance(value, dict):
                out[key] = {
                    k: self.inline(v, f"{here}.{k}", stack, depth + 1) for k, v in value.items()
                }
            elif key in _LIST and isinstance(value, list):
                out[key] = [
                    self.inline(v, f"{here}[{i}]", stack, depth + 1) for i, v in enumerate(value)
                ]
            elif key in _ONE and isinstance(value, dict | bool):
                out[key] = self.inline(value, here, stack, depth + 1)
            else:
                out[key] = value
        return out

    def _follow(
        self, schema: dict[str, Any], ref: Any, where: str, stack: tuple[str, ...], depth: int
    ) -> Any:
        if not isinstance(ref, str) or not ref.startswith("#"):
            raise self.fail(
                where, f"$ref {ref!r} points outside the input schema (only '#/...' is read)"
            )
        if ref in stack:
            raise self.fail(
                where,
                f"$ref {ref!r} is recursive; an ATIP option's schema must stand alone, "
                "and a recursive one cannot be written out",
            )
        target = self.inline(
            _pointer(self.root, ref, lambda why: self.fail(where, why)),
            where,
            (*stack, ref),
            depth + 1,
        )
        siblings = {k: v for k, v in schema.items() if k != "$ref" and k not in _CONTAINERS}
        if not siblings:
            return target
        siblings = self.inline(siblings, where, stack, depth)
        if isinstance(target, dict) and all(k in _ANNOTATIONS or k not in target for k in siblings):
            # keywords apply together: where none collide, one object says the same
            return {**target, **siblings}
        return {"allOf": [target], **siblings}


def _pointer(root: dict[str, Any], ref: str, fail: Any) -> Any:
    """The schema a local `$ref` (`#` or `#/a/b`, RFC 6901) names."""
    node: Any = root
    fragment = unquote(ref[1:])
    if fragment in ("", "/"):
        return root
    if not fragment.startswith("/"):
        raise fail(f"$ref {ref!r} is not a JSON pointer ('#/...'); anchors are not read")
    for token in fragment[1:].split("/"):
        token = token.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and token in node:
            node = node[token]
        elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
            node = node[int(token)]
        else:
            raise fail(f"$ref {ref!r} points at nothing in the input schema")
    return node


def _kind(value: Any) -> str:
    return {
        dict: "an object",
        list: "a list",
        str: "a string",
        bool: "a boolean",
        type(None): "null",
    }.get(type(value), "a number")


# -- the input schema as options -------------------------------------------------------------


def options(tool: str, input_schema: Any) -> tuple[list[Option], dict[str, Any]]:
    """The options of MCP tool `tool`, and what of its input schema no option holds (its
    other top-level keywords: `additionalProperties`, `$defs`, `anyOf`, ...), to be kept
    in the command's `x-mcp`."""
    if not isinstance(input_schema, dict):
        raise NotDescribable(tool, f"inputSchema must be an object, not {_kind(input_schema)}")
    inliner = _Inliner(tool, input_schema)
    root = input_schema
    if "$ref" in root:
        root = inliner.inline(root, "inputSchema")
        if not isinstance(root, dict):
            raise NotDescribable(tool, "inputSchema's $ref does not name an object schema")
    kind = root.get("type", "object")
    if kind != "object":
        raise NotDescribable(tool, f"inputSchema must be of type 'object', not {kind!r}")
    properties = root.get("properties", {})
    if not isinstance(properties, dict):
        raise NotDescribable(tool, "inputSchema.properties must be an object")
    required = root.get("required", [])
    if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
        raise NotDescribable(tool, "inputSchema.required must be a list of property names")
    # a required name without a property: JSON Schema's "present, any value"
    named = {**properties, **{r: True for r in required if r not in properties}}
    flags: set[str] = set()
    out = []
    for prop, schema in named.items():
        where = f"inputSchema.properties.{prop}"
        if not prop:
            raise NotDescribable(tool, f"{where}: a property needs a name")
        inlined = inliner.inline(schema, where)
        if inlined is False:
            raise NotDescribable(tool, f"{where}: the schema `false` accepts no value")
        out.append(option(prop, {} if inlined is True else inlined, prop in required, flags))
    extras = {k: v for k, v in input_schema.items() if k not in ("type", "properties", "required")}
    return out, extras


def option(name: str, schema: dict[str, Any], required: bool, taken: set[str]) -> Option:
    """One property as an option: flag `--<name>`, the nearest ATIP type, and the JSON
    Schema itself wherever ATIP's type system cannot say it exactly."""
    description = schema.get("description")
    atip_type, enum = _nearest(schema)
    default = schema.get("default", UNSET)
    if default is not UNSET and not _fits(default, atip_type, enum):
        default = UNSET  # kept in `schema`, which a compile uses as the parameter's schema
    said = {k: v for k, v in schema.items() if k not in ("description", "default")}
    exact = said == _rendered(atip_type, enum) and ("default" not in schema or default is not UNSET)
    if not isinstance(description, str):
        description = UNSET
        exact = exact and "description" not in schema
    kept: dict[str, Any] | UnsetType = UNSET
    if not exact:
        kept = {k: v for k, v in schema.items() if k != "description" or description is UNSET}
        if atip_type == "enum":  # a compile reads `schema` for strings, not for enums
            atip_type = "string"
    return Option(
        name=name,
        flags=[_flag(name, taken)],
        type=atip_type,
        description=description,
        required=required,
        default=default,
        enum=enum if enum is not None else UNSET,
        schema=kept,
    )


def _nearest(schema: dict[str, Any]) -> tuple[Any, list[Any] | None]:
    """The ATIP type nearest to `schema`, and its enum where ATIP can hold it."""
    kind = schema.get("type")
    if isinstance(kind, list):
        rest = [k for k in kind if k != "null"]
        kind = rest[0] if len(rest) == 1 else None
    if not isinstance(kind, str):  # a type JSON Schema does not know: kept in `schema`
        kind = None
    enum = schema.get("enum")
    if kind in SCALARS:
        values = enum if isinstance(enum, list) and enum else None
        if values is not None and not all(_fits(v, kind, None) for v in values):
            values = None
        if kind == "string" and values is not None and schema.get("type") == "string":
            return "enum", values
        return kind, values
    if kind == "array":
        return "array", None
    if kind is None and isinstance(enum, list) and enum and all(isinstance(v, str) for v in enum):
        return "string", enum
    return "string", None


def _rendered(atip_type: AtipType, enum: list[Any] | None) -> dict[str, Any]:
    """What a compile writes for a plain option of this type (`atipkit.bridge.params`),
    without its description and default: a property saying exactly this needs no
    `schema`."""
    out = json_schema(atip_type)
    if enum is not None:
        out["enum"] = enum
    return out


def _fits(value: Any, atip_type: str, enum: list[Any] | None) -> bool:
    """Whether ATIP can hold `value` as a default of that type (the semantic checks'
    rule: no null, the right JSON type, one of the enum)."""
    if value is None:
        return False
    if atip_type == "array":
        return isinstance(value, list) and all(isinstance(v, str) for v in value)
    return fits(value, atip_type) and (enum is None or value in enum)


def _flag(name: str, taken: set[str]) -> str:
    """`--<name>`, made of characters a command line keeps together, unique."""
    return numbered("--" + (_FLAG_SAFE.sub("-", name).strip("-") or "option"), taken, sep="-")
