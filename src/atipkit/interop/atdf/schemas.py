"""The ATDF schemas shipped with atipkit, which flavour a descriptor is, and checking one
against its schema with one-line problems that name the JSON path.

The four files in `atipkit/schema/atdf/` are the ATDF specification's, unchanged. They are
draft-07; jsonschema-rs checks them (the tests cross-check with the reference `jsonschema`).
`tool_id` and `id` are checked before the schema, because the schema's `oneOf` can only
say that "more than one" or "none" of its branches matched (SPEC-NOTES 24).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from importlib import resources
from typing import Any, Literal

from atipkit._jsontext import json_type
from atipkit.errors import DocumentError
from atipkit.problems import PathPart, Problem, error, json_path

Flavour = Literal["basic", "enhanced"]
SchemaName = Literal["basic", "enhanced", "enriched-response", "error"]

SCHEMA_FILES: dict[SchemaName, str] = {
    "basic": "atdf_schema.json",
    "enhanced": "enhanced_atdf_schema.json",
    "enriched-response": "enriched_response_schema.json",
    "error": "error_atdf.json",
}
#: Keys only the enhanced schema defines: one of them makes a descriptor enhanced.
ENHANCED_KEYS = ("metadata", "localization", "prerequisites", "examples", "feedback")
BASIC_VERSION = "1.0.0"
ENHANCED_VERSION = "2.0.0"
_MAX_MESSAGE = 160


class AtdfError(DocumentError):
    """An ATDF document that cannot be read or converted: `problems[0]` names the JSON
    path (`$[2].how_to_use.inputs[0].type`) and what was expected."""


def schema_text(name: SchemaName) -> str:
    """A shipped schema file, exactly as the ATDF specification publishes it."""
    folder = resources.files("atipkit.schema").joinpath("atdf")
    return folder.joinpath(SCHEMA_FILES[name]).read_text("utf-8")


@functools.cache
def load_schema(name: SchemaName) -> dict[str, Any]:
    schema: dict[str, Any] = json.loads(schema_text(name))
    return schema


@functools.cache
def _validator(name: SchemaName) -> Any:
    import jsonschema_rs

    return jsonschema_rs.validator_for(load_schema(name), validate_formats=True)


def flavour(descriptor: dict[str, Any]) -> Flavour:
    """Enhanced when `schema_version` starts with `2.` or any enhanced key is present
    (SPEC-NOTES 24); basic otherwise."""
    version = descriptor.get("schema_version")
    if isinstance(version, str) and version.startswith("2."):
        return "enhanced"
    return "enhanced" if any(key in descriptor for key in ENHANCED_KEYS) else "basic"


def check_descriptor(
    descriptor: Any, where: Sequence[PathPart] = (), kind: Flavour | None = None
) -> list[Problem]:
    """Every problem of one descriptor against its flavour's schema (or `kind`'s), the
    identifier rule first; locations are JSON paths below `where`."""
    if not isinstance(descriptor, dict):
        return [
            error(
                "atdf.type",
                f"expected an ATDF descriptor (a JSON object), got {json_type(descriptor)}",
                json_path(where),
            )
        ]
    kind = kind or flavour(descriptor)
    problems = _identifier(descriptor, where)
    version = descriptor.get("schema_version")
    if isinstance(version, str) and version.split(".")[0] not in ("1", "2"):
        problems.append(
            error(
                "atdf.version",
                f"schema_version {version!r} is neither 1.x (basic) nor 2.x (enhanced)",
                json_path([*where, "schema_version"]),
            )
        )
    return problems + check(descriptor, kind, where)


def _identifier(descriptor: dict[str, Any], where: Sequence[PathPart]) -> list[Problem]:
    if "tool_id" in descriptor and "id" in descriptor:
        return [
            error(
                "atdf.two-ids",
                "both 'tool_id' and 'id' are given; a descriptor has one of them, never both",
                json_path(where),
            )
        ]
    if "tool_id" not in descriptor and "id" not in descriptor:
        message = "missing required field 'tool_id' (or 'id')"
        return [error("atdf.required", message, json_path(where))]
    return []


def check(instance: Any, name: SchemaName, where: Sequence[PathPart] = ()) -> list[Problem]:
    """Every problem of `instance` against schema `name`, in the validator's order; the
    identifier `oneOf` is left to `check_descriptor`, which words it better."""
    return check_with(_validator(name), instance, where, closed_root=name == "basic")


def compile_schema(schema: dict[str, Any]) -> Any:
    """A jsonschema-rs validator for a schema of atipkit's own (the `x-atip` shape)."""
    import jsonschema_rs

    return jsonschema_rs.validator_for(schema)


def check_with(
    validator: Any, instance: Any, where: Sequence[PathPart] = (), *, closed_root: bool = False
) -> list[Problem]:
    """`check` with any validator. `closed_root`: the basic schema, whose root allows no
    other field; an unknown field there is told where extensions may go."""
    if validator.is_valid(instance):
        return []
    problems: dict[tuple[str, str], Problem] = {}
    for err in validator.iter_errors(instance):
        kind = type(err.kind).__name__
        if kind in ("OneOfMultipleValid", "OneOfNotValid") and not list(err.instance_path):
            continue
        problem = _problem(err, kind, closed_root, where)
        problems.setdefault((problem.location, problem.message), problem)
    return list(problems.values())


def _problem(err: Any, kind: str, closed_root: bool, where: Sequence[PathPart]) -> Problem:
    inside = list(err.instance_path)
    here = json_path([*where, *inside])
    details = err.kind.as_dict()
    if kind == "Required":
        return error("atdf.required", f"missing required field '{details['property']}'", here)
    if kind == "AdditionalProperties":
        unexpected = details["unexpected"][0]
        message = f"unknown field {unexpected!r}"
        if closed_root and not inside:
            message += (
                "; a basic descriptor allows no other fields (an enhanced one, "
                "schema_version 2.x, may carry extensions)"
            )
        return error("atdf.unknown-field", message, json_path([*where, *inside, unexpected]))
    if kind == "Type":
        expected = " or ".join(details["types"])
        return error("atdf.type", f"expected {expected}, got {json_type(err.instance)}", here)
    if kind == "MinLength":
        return error("atdf.min-length", "expected a non-empty string", here)
    if kind in ("Enum", "Constant"):
        options = details["options"] if kind == "Enum" else [details["expected_value"]]
        allowed = ", ".join(json.dumps(o) for o in options)
        return error("atdf.enum", f"expected one of {allowed}", here)
    message = str(err.message)
    if len(message) > _MAX_MESSAGE:
        message = message[: _MAX_MESSAGE - 1] + "…"
    return error(f"atdf.{kind.lower()}", message, here)


def require_valid(
    instance: Any, name: SchemaName, source: str, where: Sequence[PathPart] = ()
) -> None:
    """What atipkit writes must pass its schema before anyone sees it: `AtdfError` if
    not (a bug, or an `x-atdf` extension someone edited into something ATDF forbids)."""
    if name in ("basic", "enhanced"):
        problems = check_descriptor(instance, where, name)
    else:
        problems = check(instance, name, where)
    if problems:
        raise AtdfError(problems, source)
