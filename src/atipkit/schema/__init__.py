"""The canonical JSON Schema (draft 2020-12) of ATIP metadata and shims, and checking
documents against it with messages a person can act on.

The schema files next to this module are the contract for other implementations too;
`atip schema` prints them. Checking uses jsonschema-rs (see bench/validate.py for the
comparison with the reference `jsonschema` package, which the tests use as a cross-check).

A schema node may carry `errorMessage`: any failure below it is reported once, at the
instance location of that node, with that message. That is how a bad flag is reported as
`$.commands.x.options[2].flags: expected a list of strings starting with '-'` rather than
as a regex failure at `flags[0]`.
"""

from __future__ import annotations

import difflib
import functools
import json
from importlib import resources
from typing import Any, Literal

from atipkit._jsontext import json_type
from atipkit.problems import PathPart, Problem, error, json_path

__all__ = [
    "METADATA_SCHEMA_ID",
    "SCHEMA_FILES",
    "Kind",
    "check",
    "document_kind",
    "first_line",
    "load_schema",
    "parameter_validator",
    "pattern_validator",
    "schema_text",
]

Kind = Literal["metadata", "shim"]

SCHEMA_FILES: dict[Kind, str] = {
    "metadata": "atip-0.6.schema.json",
    "shim": "atip-0.6-shim.schema.json",
}
METADATA_SCHEMA_ID = "https://atip.dev/schema/0.6.json"

# Keywords whose subschema applies to a child of the instance (one path step deeper).
_INSTANCE_STEP = {
    "properties",
    "patternProperties",
    "additionalProperties",
    "items",
    "prefixItems",
    "propertyNames",
    "contains",
    "unevaluatedProperties",
    "unevaluatedItems",
    "dependentSchemas",
}
_NAMED_STEP = {"properties", "patternProperties", "prefixItems", "dependentSchemas"}


def schema_text(kind: Kind = "metadata") -> str:
    """The shipped schema file, exactly as published."""
    return resources.files(__package__).joinpath(SCHEMA_FILES[kind]).read_text("utf-8")


@functools.cache
def load_schema(kind: Kind = "metadata") -> dict[str, Any]:
    schema: dict[str, Any] = json.loads(schema_text(kind))
    return schema


def document_kind(data: Any) -> Kind:
    """A document with a `binary` block is a shim (RFC 0.6 §4.5); anything else metadata."""
    return "shim" if isinstance(data, dict) and "binary" in data else "metadata"


@functools.cache
def _validator(kind: Kind) -> Any:
    import jsonschema_rs

    # Both kinds are checked against the main file, so every error's schema location is a
    # path inside that one document (the shim file only points into it).
    root = load_schema("metadata")
    return jsonschema_rs.validator_for({**root, "$ref": f"#/$defs/{kind}"})


@functools.lru_cache(maxsize=1024)
def pattern_validator(regex: str) -> Any:
    """A jsonschema-rs validator of strings against a document's `pattern`, read as JSON
    Schema and every model provider read it (ECMA 262): linear time for what a regular
    expression without backreferences can say, bounded backtracking for the rest (past
    the bound a value does not match). `ValueError` when `regex` is no regular
    expression (`(`), or not text (a lone surrogate)."""
    return parameter_validator({"type": "string", "pattern": regex})


def parameter_validator(schema: dict[str, Any]) -> Any:
    """A jsonschema-rs validator for a JSON Schema a document gives (an argument's or
    option's `schema`), never fetching anything its `$ref`s name: a document must not
    make atipkit reach the network. `ValueError` when it is not a usable schema."""
    import jsonschema_rs

    try:
        return jsonschema_rs.validator_for(schema, offline=True)
    except jsonschema_rs.ReferencingError as exc:  # not a ValueError
        raise ValueError(str(exc)) from None


def first_line(error: ValueError) -> str:
    """The reason of a `ValueError` from `parameter_validator`, on one line (jsonschema-rs
    explains on several)."""
    return str(error).strip().split("\n", 1)[0]


def check(data: Any, kind: Kind | None = None) -> list[Problem]:
    """Every schema problem of a decoded document, deduplicated. Its nesting must have
    been bounded first (`_jsontext.decode` or `check_depth`): jsonschema-rs and the walk
    below recurse."""
    kind = kind or document_kind(data)
    validator = _validator(kind)
    if validator.is_valid(data):
        return []
    # jsonschema-rs drops empty keys from instance paths (`commands[""].description`
    # comes back as `commands.description`). The root command is keyed "", so re-check a
    # copy whose empty keys are a sentinel no schema keyword matches, and map it back.
    keyed = _rename_empty_keys(data)
    problems: dict[tuple[str, str], Problem] = {}
    for err in validator.iter_errors(keyed):
        for problem in _problems(err, keyed):
            problems.setdefault((problem.location, problem.message), problem)
    return list(problems.values())


_EMPTY_KEY = "\x00atipkit:empty-key\x00"


def _rename_empty_keys(value: Any) -> Any:
    if isinstance(value, dict):
        return {(k or _EMPTY_KEY): _rename_empty_keys(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_rename_empty_keys(v) for v in value]
    return value


def _path(parts: list[PathPart]) -> str:
    return json_path("" if p == _EMPTY_KEY else p for p in parts)


def _problems(err: Any, data: Any) -> list[Problem]:
    schema = load_schema("metadata")
    instance = list(err.instance_path)
    keyword_path = list(err.schema_path)
    custom = _custom_message(schema, keyword_path, instance)
    if custom is not None:
        location, message = custom
        return [error("schema.invalid", message, _path(location))]
    kind = err.kind.as_dict()
    name = type(err.kind).__name__
    here = _path(instance)
    if name == "Required":
        return [error("schema.required", f"missing required field '{kind['property']}'", here)]
    if name == "AdditionalProperties":
        allowed = _node(schema, keyword_path[:-1]).get("properties", {})
        return [_unknown_field(instance, key, allowed) for key in kind["unexpected"]]
    value = _at(data, instance)
    if name == "Type":
        expected = " or ".join(kind["types"])
        return [error("schema.type", f"expected {expected}, got {json_type(value)}", here)]
    if name in ("Enum", "Constant"):
        options = kind["options"] if name == "Enum" else [kind["expected_value"]]
        allowed = ", ".join(json.dumps(o) for o in options)
        return [error("schema.enum", f"expected one of {allowed}, got {_show(value)}", here)]
    if name == "MinItems":
        return [error("schema.min-items", f"expected at least {kind['limit']} item(s)", here)]
    if name == "MinLength":
        return [error("schema.min-length", "expected a non-empty string", here)]
    if name in ("Minimum", "Maximum"):
        sign = "≥" if name == "Minimum" else "≤"
        return [
            error("schema.range", f"expected a number {sign} {kind['limit']}, got {value}", here)
        ]
    return [error(f"schema.{name.lower()}", err.message, here)]


def _custom_message(
    schema: dict[str, Any], keyword_path: list[PathPart], instance: list[PathPart]
) -> tuple[list[PathPart], str] | None:
    """The outermost `errorMessage` on the way to the failing keyword, and the instance
    location of the node that carries it."""
    node: Any = schema
    for depth, part in enumerate(keyword_path):
        if isinstance(node, dict) and "errorMessage" in node:
            steps = _instance_steps(keyword_path[depth:])
            return instance[: len(instance) - steps], node["errorMessage"]
        node = node[part] if isinstance(node, dict) else node[int(part)]
    return None


def _instance_steps(keyword_path: list[PathPart]) -> int:
    """How many instance path steps a schema path below a node descends."""
    steps, i = 0, 0
    while i < len(keyword_path):
        part = keyword_path[i]
        if part in _INSTANCE_STEP:
            steps += 1
            if part in _NAMED_STEP:
                i += 1
        i += 1
    return steps


def _node(schema: dict[str, Any], keyword_path: list[PathPart]) -> Any:
    node: Any = schema
    for part in keyword_path:
        node = node[part] if isinstance(node, dict) else node[int(part)]
    return node


def _at(data: Any, instance: list[PathPart]) -> Any:
    for part in instance:
        data = data[part]
    return data


def _unknown_field(instance: list[PathPart], key: str, allowed: dict[str, Any]) -> Problem:
    message = f"unknown field {('' if key == _EMPTY_KEY else key)!r}"
    close = difflib.get_close_matches(key, list(allowed), n=1, cutoff=0.75)
    if close:
        message += f" (did you mean {close[0]!r}?)"
    else:
        message += "; custom fields must start with 'x-'"
    return error("schema.unknown-field", message, _path([*instance, key]))


def _show(value: Any, limit: int = 60) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 1] + "…"
