"""The Tool Discovery Protocol (spec/tool-discovery-protocol-1.0.md, SPEC-NOTES 22): ATIP
tools as a TDP manifest, and TDP manifests as ATIP documents.

A scenario answers `GET /api/v1/tools` with a manifest: flat tools, each with a JSON Schema
of its parameters and orchestration metadata (approval, timeout, cost, retries).

Writing (`manifest`) goes through the bridge: one TDP tool per invocable command, named by
the bridge's name table with `-` spelled `_` (TDP names are letters, digits and `_`), its
parameters the bridge's neutral JSON Schema, its description the bridge's with the safety
suffix. Metadata is derived from the command's effective effects; the exact ATIP facts
(effects, command path, the name `atip compile` gives) ride along under `x-atip`.

Reading (`parse`, `to_atip`, `fetch`) takes both shapes: the snake_case JSON the document
shows, and the proto3 JSON the reference server sends (camelCase keys, zero values left
out, `default` values and example inputs wrapped as `google.protobuf.Value`/`Struct`).
Because that server drops zero values, an absent field reads as its zero value in both
shapes (`idempotent` absent is `false`), so the two shapes of one manifest give the same
`Manifest` and byte-identical ATIP documents. What ATIP cannot say is kept under `x-tdp`.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import math
import re
import shlex
import threading
import time
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import msgspec

from atipkit import _jsontext
from atipkit._duration import parse_duration
from atipkit._http import HttpError, NetworkError, StatusError
from atipkit.checks import fits
from atipkit.errors import DocumentError, DocumentTooLarge, MalformedJSON, UnsupportedVersion
from atipkit.model import (
    UNSET,
    Effects,
    Tool,
    from_dict,
    get_command,
    is_tool_name,
    to_dict,
)
from atipkit.problems import PathPart, error, json_path

if TYPE_CHECKING:
    from atipkit.bridge.flatten import FlatTool, Target
    from atipkit.model import Command, Option

__all__ = [
    "CACHE_CONTROL",
    "ENDPOINT",
    "PROTOCOL_VERSION",
    "Category",
    "Example",
    "HttpError",
    "Manifest",
    "ManifestError",
    "ManifestStatusError",
    "Metadata",
    "NetworkError",
    "Scenario",
    "ToolDefinition",
    "UnsupportedProtocol",
    "atip_effects",
    "clear_cache",
    "fetch",
    "manifest",
    "manifest_url",
    "parse",
    "tdp_names",
    "to_atip",
]

PROTOCOL_VERSION = "1.0"
SUPPORTED_MAJOR = 1
ENDPOINT = "/api/v1/tools"
CACHE_CONTROL = "public, max-age=60"
DEFAULT_TTL = 60.0
"""Seconds a fetched manifest is reused when the server states no max-age (the spec's TTL)."""
LONG_RUNNING = 30.0
"""A command whose typical duration (else its timeout) reaches this many seconds is
`long_running`."""
MAX_DEPTH = 64
"""Deepest nesting of objects and arrays a manifest may have (schemas, wrapped values)."""
MAX_TOOLS = 20_000
COST_ESTIMATES = ("low", "medium", "high", "variable")
"""The relative costs TDP names; ATIP's `none` is written as `low`."""
ATIP_COST_ESTIMATES = frozenset({"none", *COST_ESTIMATES})
MAX_NAME = 64
_HASH_CHARS = 6


class ManifestError(DocumentError):
    """A manifest that cannot be read: `problems[0]` names the JSON path and what was
    expected there."""


class UnsupportedProtocol(ManifestError, UnsupportedVersion):
    """A manifest of a major protocol version this reader does not know."""


class ManifestStatusError(StatusError):
    """The server answered, but not with a manifest (any status but 200)."""

    def __init__(self, url: str, status: int, detail: str = "") -> None:
        HttpError.__init__(self, url, f"HTTP {status}" + (f": {detail}" if detail else ""))
        self.status = status


# -- the manifest as types (what `parse` returns) -------------------------------------------


class _Struct(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    pass


class Scenario(_Struct):
    """Who serves the tools (`ScenarioInfo`). `extra`: fields this reader does not know."""

    name: str
    version: str = ""
    description: str = ""
    base_url: str = ""
    extra: dict[str, Any] = {}


class Example(_Struct):
    description: str = ""
    input: dict[str, Any] = {}
    extra: dict[str, Any] = {}


class Metadata(_Struct):
    """`ToolMetadata`, zero values for what the manifest leaves out (proto3 semantics)."""

    enabled_by_default: bool = False
    requires_approval: bool = False
    timeout_seconds: int = 0
    rate_limit_per_minute: int = 0
    cost_estimate: str = ""
    long_running: bool = False
    idempotent: bool = False
    tags: list[str] = []
    examples: list[Example] = []
    extra: dict[str, Any] = {}


class ToolDefinition(_Struct):
    """One TDP tool. `parameters` is plain JSON Schema (wrapped values unwrapped, JSON
    Schema's own key names); `extensions` holds its `x-*` keys, `extra` unknown ones."""

    name: str
    description: str = ""
    category: str = ""
    parameters: dict[str, Any] = {}
    metadata: Metadata = msgspec.field(default_factory=Metadata)
    extensions: dict[str, Any] = {}
    extra: dict[str, Any] = {}


class Category(_Struct):
    id: str
    name: str = ""
    description: str = ""
    icon: str = ""
    extra: dict[str, Any] = {}


class Manifest(_Struct):
    """A `ToolManifest`, the same whichever JSON shape it was read from."""

    protocol_version: str
    scenario: Scenario
    tools: list[ToolDefinition] = []
    categories: list[Category] = []
    generated_at: str = ""
    extensions: dict[str, Any] = {}
    extra: dict[str, Any] = {}


# -- writing: ATIP tools → a manifest --------------------------------------------------------


def tdp_names(bridge_names: Iterable[str]) -> dict[str, str]:
    """Bridge name → TDP name: `-` spelled `_`, since TDP names are letters, digits and
    underscores. Where two names meet (`a-b` and `a_b`), the one that needed no rewriting
    keeps it and the other ends in a short hash of its bridge name, so adding a command
    never renames another. Stays within 64 characters, like the bridge's names."""
    wanted: dict[str, list[str]] = {}
    for name in bridge_names:
        wanted.setdefault(name.replace("-", "_"), []).append(name)
    taken = set(wanted)
    out: dict[str, str] = {}
    for plain, group in wanted.items():
        ranked = sorted(group, key=lambda n: (n != plain, n))
        out[ranked[0]] = plain
        for name in ranked[1:]:
            salt = 0
            while (unique := _hashed(plain, name, salt)) in taken:
                salt += 1
            taken.add(unique)
            out[name] = unique
    return out


def _hashed(plain: str, name: str, salt: int) -> str:
    digest = hashlib.sha256((name + "\0" * salt).encode()).hexdigest()[:_HASH_CHARS]
    return f"{plain[: MAX_NAME - _HASH_CHARS - 1].rstrip('_') or '_'}_{digest}"


def manifest(
    tools: Tool | Iterable[Tool],
    *,
    scenario: Scenario | Mapping[str, str] | None = None,
    generated_at: dt.datetime | None = None,
    extensions: bool = True,
    include_hidden: bool = False,
) -> dict[str, Any]:
    """The ToolManifest of `tools` as snake_case JSON-ready data.

    `scenario` (name, version, description, base_url) defaults to the tool itself when
    there is one, else to atipkit. `extensions=False` leaves out the `x-atip` key of each
    tool, for consumers that refuse unknown fields. Raises `ValueError` when two tools
    have one name (their commands would get one TDP name).
    """
    from atipkit.bridge.flatten import flatten
    from atipkit.bridge.names import assign_names

    batch = [tools] if isinstance(tools, Tool) else list(tools)
    by_name: dict[str, Tool] = {}
    for tool in batch:
        if tool.name in by_name:
            raise ValueError(f"two tools are named {tool.name!r}; a manifest needs unique names")
        by_name[tool.name] = tool
    flat = flatten(batch, include_hidden=include_hidden)
    names = tdp_names(f.name for f in flat)
    groups = {f.name: _group(f.binding.targets[""]) for f in flat}
    ordered = list(dict.fromkeys(groups.values()))
    bridge_ids = assign_names(ordered)
    group_ids = tdp_names(bridge_ids[words] for words in ordered)
    category_id = {words: group_ids[bridge_ids[words]] for words in ordered}
    entries = [
        _tool_entry(f, names[f.name], category_id[groups[f.name]], by_name, extensions)
        for f in flat
    ]
    categories = [_category(words, category_id[words], by_name) for words in ordered]
    moment = (generated_at or dt.datetime.now(dt.UTC)).astimezone(dt.UTC)
    return {
        "protocol_version": PROTOCOL_VERSION,
        "scenario": _scenario(scenario, batch),
        "tools": entries,
        "categories": categories,
        "generated_at": moment.strftime("%Y-%m-%dT%H:%M:%SZ"),
    }


def _group(target: Target) -> tuple[str, ...]:
    """The command group a command belongs to: `gh pr create` → `gh pr`; a top-level
    command (and the root) → the tool."""
    return (target.tool, *target.path[:-1]) if len(target.path) > 1 else (target.tool,)


def _scenario(scenario: Scenario | Mapping[str, str] | None, tools: list[Tool]) -> dict[str, str]:
    if scenario is None:
        if len(tools) == 1:
            scenario = {
                "name": tools[0].name,
                "version": tools[0].version,
                "description": tools[0].description,
            }
        else:
            from atipkit._version import __version__

            described = ", ".join(t.name for t in tools) or "none"
            scenario = {
                "name": "atip",
                "version": __version__,
                "description": f"Command-line tools described by ATIP ({described})",
            }
    if isinstance(scenario, Scenario):
        scenario = msgspec.structs.asdict(scenario)
    if not isinstance(scenario, Mapping) or not scenario.get("name"):
        raise ValueError("scenario needs a non-empty 'name'")
    out = {
        "name": str(scenario["name"]),
        "version": str(scenario.get("version") or "0.0.0"),
        "description": str(scenario.get("description") or ""),
    }
    if scenario.get("base_url"):
        out["base_url"] = str(scenario["base_url"])
    return out


def _category(words: tuple[str, ...], id_: str, tools: Mapping[str, Tool]) -> dict[str, str]:
    tool = tools[words[0]]
    group = get_command(tool, words[1:]) if len(words) > 1 else tool
    description = group.description
    return {"id": id_, "name": " ".join(words), "description": description}


def _tool_entry(
    flat: FlatTool, name: str, category: str, tools: Mapping[str, Tool], extensions: bool
) -> dict[str, Any]:
    target = flat.binding.targets[""]
    tool = tools[target.tool]
    command = get_command(tool, target.path)
    entry: dict[str, Any] = {
        "name": name,
        "description": flat.description,
        "category": category,
        "parameters": _parameters(flat.input_schema),
        "metadata": _metadata(flat, tool, command, target),
    }
    if extensions:
        entry["x-atip"] = {
            "name": flat.name,
            "tool": tool.name,
            "version": tool.version,
            "command": list(target.path),
            "parameters": {k: {"kind": r.kind, "name": r.name} for k, r in target.params.items()},
            "effects": _effects_json(flat.effects),
        }
    return entry


def _parameters(schema: dict[str, Any]) -> dict[str, Any]:
    """The bridge's neutral schema, with TDP's one restriction: `enum` lists strings
    (`ParameterSchema.enum` is `string[]`, and a proto consumer cannot read numbers
    there). Other allowed values are said in the description, as for Gemini."""
    out = dict(schema)
    enum = out.get("enum")
    if isinstance(enum, list) and not all(isinstance(v, str) for v in enum):
        del out["enum"]
        allowed = ", ".join(json.dumps(v, ensure_ascii=False) for v in enum)
        out["description"] = f"{out.get('description', '')} (one of {allowed})".strip()
    if isinstance(out.get("properties"), dict):
        out["properties"] = {k: _parameters(v) for k, v in out["properties"].items()}
    if isinstance(out.get("items"), dict):
        out["items"] = _parameters(out["items"])
    return out


def _metadata(flat: FlatTool, tool: Tool, command: Command, target: Target) -> dict[str, Any]:
    effects = flat.effects
    meta: dict[str, Any] = {
        "enabled_by_default": not command.deprecated,
        "requires_approval": _requires_approval(effects),
    }
    if effects.duration and effects.duration.timeout:
        seconds = parse_duration(effects.duration.timeout)
        meta["timeout_seconds"] = max(1, math.ceil(seconds))
    if effects.cost and effects.cost.estimate in ATIP_COST_ESTIMATES:
        estimate = effects.cost.estimate
        meta["cost_estimate"] = "low" if estimate == "none" else estimate
    long_running = _long_running(effects)
    if long_running is not None:
        meta["long_running"] = long_running
    if effects.idempotent is not UNSET:
        meta["idempotent"] = effects.idempotent
    tags = _tags(effects, command)
    if tags:
        meta["tags"] = tags
    examples = []
    for line in command.examples:
        given = _example_input(line, tool, target, flat.input_schema)
        if given is not None:
            examples.append({"description": line, "input": given})
    if examples:
        meta["examples"] = examples
    return meta


def _requires_approval(effects: Effects) -> bool:
    """What a person should approve first: a command that destroys data, cannot be undone
    or costs money, as its effects state (unknown effects do not count)."""
    billable = bool(effects.cost and effects.cost.billable is True)
    return effects.destructive is True or effects.reversible is False or billable


_TYPICAL = re.compile(r"([0-9]+(?:\.[0-9]+)?)\s*(ms|s|m|h|d)\b")


def _long_running(effects: Effects) -> bool | None:
    """From the typical duration (its upper bound: `1-5s` is 5 s), else the timeout;
    None when neither says a time."""
    duration = effects.duration
    if not duration:
        return None
    if duration.typical:
        found = _TYPICAL.findall(duration.typical)
        if found:
            number, unit = found[-1]
            return parse_duration(number + unit) >= LONG_RUNNING
    if duration.timeout:
        return parse_duration(duration.timeout) >= LONG_RUNNING
    return None


def _tags(effects: Effects, command: Command) -> list[str]:
    from atipkit.bridge import safety

    words = {
        safety.DESTRUCTIVE: "destructive",
        safety.NOT_REVERSIBLE: "not-reversible",
        safety.NOT_IDEMPOTENT: "not-idempotent",
        safety.BILLABLE: "billable",
        safety.READ_ONLY: "read-only",
    }
    tags = [words[flag] for flag in safety.flags(effects)]
    if effects.network is True:
        tags.append("network")
    interactive = effects.interactive
    if interactive and (
        interactive.prompts is True
        or interactive.tty is True
        or interactive.stdin in ("required", "password")
    ):
        tags.append("interactive")
    if command.deprecated:
        tags.append("deprecated")
    return tags


def _effects_json(effects: Effects) -> dict[str, Any]:
    """Effects as ATIP writes them (camelCase, extensions in place), by the model's own
    serializer."""
    from atipkit.model import AtipVersion

    carrier = Tool(
        atip=AtipVersion(version="0.6"), name="x", version="0", description="", effects=effects
    )
    out: dict[str, Any] = to_dict(carrier).get("effects", {})
    return out


_BAD = object()


def _example_input(
    line: str, tool: Tool, target: Target, schema: dict[str, Any]
) -> dict[str, Any] | None:
    """The tool call an ATIP example command line stands for, or None when the line
    cannot be read as exactly one call of this command (an unknown flag, bundled short
    flags, a value of the wrong type, a placeholder where a number goes) or the call
    does not satisfy the parameter schema: an example is given only where it is true."""
    from atipkit.bridge.flatten import ParamRef

    try:
        words = shlex.split(line)
    except ValueError:
        return None
    head = [tool.name, *target.path]
    if words[: len(head)] != head:
        return None
    command = get_command(tool, target.path)
    keys = {ref: key for key, ref in target.params.items()}
    flags: dict[str, tuple[str, Option]] = {}
    for kind, specs in (("option", command.options), ("global", tool.global_options)):
        for spec in specs:
            key = keys.get(ParamRef(kind, spec.name))  # type: ignore[arg-type]
            if key is not None:
                for flag in spec.flags:
                    flags.setdefault(flag, (key, spec))
    positional = [
        (keys[ParamRef("argument", a.name)], a)
        for a in command.arguments
        if ParamRef("argument", a.name) in keys
    ]
    values: dict[str, Any] = {}
    rest, index, position, only_positional = words[len(head) :], 0, 0, False
    while index < len(rest):
        word = rest[index]
        index += 1
        if not only_positional and word == "--":
            only_positional = True
            continue
        if not only_positional and word.startswith("-") and len(word) > 1 and not _numeric(word):
            flag, eq, inline = word.partition("=")
            if flag not in flags:
                return None
            key, spec = flags[flag]
            if spec.type == "boolean":
                value = {"true": True, "false": False}.get(inline.lower()) if eq else True
                if value is None:
                    return None
            else:
                if eq:
                    raw = inline
                elif index < len(rest):
                    raw, index = rest[index], index + 1
                else:
                    return None
                value = _typed(raw, spec.type, spec.enum)
            if value is _BAD or not _store(
                values, key, value, spec.variadic or spec.type == "array"
            ):
                return None
            continue
        if position >= len(positional):
            return None
        key, arg = positional[position]
        value = _typed(word, arg.type, arg.enum)
        if value is _BAD or not _store(values, key, value, arg.variadic or arg.type == "array"):
            return None
        if not arg.variadic:
            position += 1
    try:
        import jsonschema_rs

        return values if jsonschema_rs.is_valid(schema, values) else None
    except (ValueError, jsonschema_rs.ValidationError):  # a schema it cannot compile
        return None


def _numeric(word: str) -> bool:
    try:
        float(word)
    except ValueError:
        return False
    return True


def _typed(raw: str, atip_type: str, enum: list[Any] | Any) -> Any:
    value: Any = raw
    if atip_type == "integer":
        try:
            value = int(raw)
        except ValueError:
            return _BAD
    elif atip_type == "number":
        try:
            value = int(raw) if raw.lstrip("-").isdigit() else float(raw)
        except ValueError:
            return _BAD
        if isinstance(value, float) and not math.isfinite(value):
            return _BAD
    elif atip_type == "boolean":
        value = {"true": True, "false": False}.get(raw.lower(), _BAD)
    if enum and atip_type != "array" and value not in enum:
        return _BAD
    return value


def _store(values: dict[str, Any], key: str, value: Any, many: bool) -> bool:
    if many:
        values.setdefault(key, []).append(value)
        return True
    if key in values:
        return False
    values[key] = value
    return True


# -- reading: JSON (either shape) → Manifest --------------------------------------------------

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
_VALUE_KINDS = {
    "stringValue": "string_value",
    "numberValue": "number_value",
    "boolValue": "bool_value",
    "listValue": "list_value",
    "structValue": "struct_value",
    "nullValue": "null_value",
}
_VERSION = re.compile(r"(0|[1-9][0-9]*)(?:\.(0|[1-9][0-9]*)){0,2}\Z")


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def parse(data: bytes | str | Mapping[str, Any], *, source: str | None = None) -> Manifest:
    """Read a manifest from JSON text or decoded JSON, in the snake_case shape or the
    proto3 camelCase shape (SPEC-NOTES 22); `source` names it in errors.

    Raises `MalformedJSON` or `DocumentTooLarge` for text that is not JSON or too big,
    `UnsupportedProtocol` for a major protocol_version other than 1, and `ManifestError`
    naming the JSON path of anything else that is wrong."""
    if isinstance(data, bytes | str):
        if len(data) > _jsontext.MAX_DOCUMENT_BYTES:
            raise DocumentTooLarge(
                [
                    error(
                        "json.too-large",
                        f"document is {len(data):,} bytes or characters; the limit is "
                        f"{_jsontext.MAX_DOCUMENT_BYTES:,}",
                    )
                ],
                source,
            )
        data = _jsontext.decode(data, source)
    if isinstance(data, Mapping) and not isinstance(data, dict):
        data = dict(data)
    reader = _Reader(source)
    root = reader.object(data, [])
    reader.check_depth(root)
    return reader.manifest(root)


class _Reader:
    """Reads one manifest, knowing its shape (camelCase or snake_case) and where it is."""

    def __init__(self, source: str | None) -> None:
        self.source = source
        self.camel = False

    def fail(self, where: list[PathPart], message: str, code: str = "tdp.invalid") -> ManifestError:
        return ManifestError([error(code, message, json_path(where))], self.source)

    # -- shapes and limits -------------------------------------------------------------

    def check_depth(self, root: Any) -> None:
        """Refuse nesting deeper than MAX_DEPTH, naming where it goes too deep. Iterative:
        a hostile document cannot exhaust the stack here."""
        nodes: list[tuple[int, PathPart]] = [(-1, "")]
        stack: list[tuple[Any, int, int]] = [(root, 1, 0)]
        while stack:
            value, depth, node = stack.pop()
            if depth > MAX_DEPTH:
                where: list[PathPart] = []
                while node > 0:
                    parent, key = nodes[node]
                    where.append(key)
                    node = parent
                raise self.fail(
                    where[::-1],
                    f"nested more than {MAX_DEPTH} levels deep; a manifest is not that deep",
                    "tdp.too-deep",
                )
            items = value.items() if isinstance(value, dict) else enumerate(value)
            for key, child in items:
                if isinstance(child, dict | list):
                    nodes.append((node, key))
                    stack.append((child, depth + 1, len(nodes) - 1))

    def object(self, value: Any, where: list[PathPart]) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.fail(where, f"expected an object, got {_jsontext.json_type(value)}")
        return value

    def array(self, value: Any, where: list[PathPart]) -> list[Any]:
        if not isinstance(value, list):
            raise self.fail(where, f"expected an array, got {_jsontext.json_type(value)}")
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

    # -- typed fields ---------------------------------------------------------------------

    def string(
        self, obj: dict[str, Any], name: str, where: list[PathPart], *, required: bool = False
    ) -> str:
        found = self.field(obj, name, where)
        if found is None or (required and found[1] == ""):
            spelled = _camel(name) if self.camel else name
            raise self.fail([*where, spelled], f"missing {spelled!r}: expected a non-empty string")
        path, value = found
        if not isinstance(value, str):
            raise self.fail(path, f"expected a string, got {_jsontext.json_type(value)}")
        if required and not value.strip():
            raise self.fail(path, "expected a non-empty string")
        return value

    def optional_string(self, obj: dict[str, Any], name: str, where: list[PathPart]) -> str:
        return self.string(obj, name, where) if self.field(obj, name, where) else ""

    def boolean(self, obj: dict[str, Any], name: str, where: list[PathPart]) -> bool:
        found = self.field(obj, name, where)
        if found is None:
            return False
        path, value = found
        if not isinstance(value, bool):
            raise self.fail(path, f"expected true or false, got {_jsontext.json_type(value)}")
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
                raise self.fail(
                    [*path, index], f"expected a string, got {_jsontext.json_type(item)}"
                )
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

    def manifest(self, root: dict[str, Any]) -> Manifest:
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
        return Manifest(
            protocol_version=version,
            scenario=scenario,
            tools=tools,
            categories=categories,
            generated_at=self.optional_string(root, "generated_at", []),
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
        extensions, extra = self.unknown(obj, "scenario")
        return Scenario(
            name=self.string(obj, "name", where, required=True),
            version=self.optional_string(obj, "version", where),
            description=self.optional_string(obj, "description", where),
            base_url=self.optional_string(obj, "base_url", where),
            extra={**extensions, **extra},
        )

    def category(self, obj: dict[str, Any], where: list[PathPart]) -> Category:
        extensions, extra = self.unknown(obj, "category")
        return Category(
            id=self.string(obj, "id", where, required=True),
            name=self.optional_string(obj, "name", where),
            description=self.optional_string(obj, "description", where),
            icon=self.optional_string(obj, "icon", where),
            extra={**extensions, **extra},
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
            description=self.optional_string(obj, "description", where),
            category=self.optional_string(obj, "category", where),
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
        extensions, extra = self.unknown(obj, "metadata")
        examples = []
        for path, item in self.objects(obj, "examples", where):
            found = self.field(item, "input", path)
            given: dict[str, Any] = {}
            if found is not None:
                given = self.struct(found[1], found[0])
            ex_extensions, ex_extra = self.unknown(item, "example")
            examples.append(
                Example(
                    description=self.optional_string(item, "description", path),
                    input=given,
                    extra={**ex_extensions, **ex_extra},
                )
            )
        return Metadata(
            enabled_by_default=self.boolean(obj, "enabled_by_default", where),
            requires_approval=self.boolean(obj, "requires_approval", where),
            timeout_seconds=self.count(obj, "timeout_seconds", where),
            rate_limit_per_minute=self.count(obj, "rate_limit_per_minute", where),
            cost_estimate=self.optional_string(obj, "cost_estimate", where),
            long_running=self.boolean(obj, "long_running", where),
            idempotent=self.boolean(obj, "idempotent", where),
            tags=self.strings(obj, "tags", where),
            examples=examples,
            extra={**extensions, **extra},
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
                raise self.fail(path, f"expected a type name, got {_jsontext.json_type(value)}")
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
        kind = (
            key
            if key in _VALUE_KINDS
            else next((camel for camel, snake in _VALUE_KINDS.items() if snake == key), None)
        )
        if kind is None:
            return value
        path = [*where, key]
        if kind == "nullValue":
            return None
        if kind == "stringValue" and not isinstance(inner, str):
            raise self.fail(path, f"expected a string, got {_jsontext.json_type(inner)}")
        if kind == "boolValue" and not isinstance(inner, bool):
            raise self.fail(path, f"expected true or false, got {_jsontext.json_type(inner)}")
        if kind == "numberValue" and (
            isinstance(inner, bool) or not isinstance(inner, int | float)
        ):
            raise self.fail(path, f"expected a number, got {_jsontext.json_type(inner)}")
        if kind == "listValue":
            obj = self.object(inner, path)
            values = obj.get("values", [])
            return [
                self.value(v, [*path, "values", i])
                for i, v in enumerate(self.array(values, [*path, "values"]))
            ]
        if kind == "structValue":
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


def atip_effects(value: Any, where: list[PathPart], source: str | None = None) -> Effects:
    """ATIP effects from JSON (an `x-atip.effects`), checked by the model; errors name
    their path inside the manifest."""
    if not isinstance(value, dict):
        got = _jsontext.json_type(value)
        problem = error("tdp.invalid", f"expected an object, got {got}", json_path(where))
        raise ManifestError([problem], source)
    carrier = {
        "atip": {"version": "0.6"},
        "name": "x",
        "version": "0",
        "description": "",
        "effects": value,
    }
    try:
        tool = from_dict(carrier)
    except DocumentError as exc:
        problem = exc.problems[0]
        location = json_path(where) + problem.location.removeprefix("$.effects")
        raise ManifestError([error("tdp.invalid", problem.message, location)], source) from None
    return tool.effects or Effects()


# -- a manifest → ATIP documents -----------------------------------------------------------

_FORMATS = {"uri": "url", "url": "url", "file-path": "file", "directory-path": "directory"}


def to_atip(manifest: Manifest) -> Tool:
    """The ATIP document of one scenario: each TDP tool a command named as the tool, its
    parameters options (`--name`), its metadata effects where the meaning is the same
    (`idempotent`, `timeout_seconds` → `duration.timeout`, `cost_estimate` →
    `cost.estimate`) or, with `x-atip`, the exact effects it was generated from. The rest
    (approval, enabled, rate limit, tags, examples, categories, base URL) is under `x-tdp`.

    Raises `ManifestError` when the scenario's name cannot name an ATIP tool."""
    scenario = manifest.scenario
    if not is_tool_name(scenario.name):
        raise ManifestError(
            [
                error(
                    "tdp.invalid-name",
                    f"scenario name {scenario.name!r} cannot name an ATIP tool (no spaces, "
                    "slashes or control characters)",
                    "$.scenario.name",
                )
            ]
        )
    commands = {t.name: _command(t) for t in manifest.tools}
    x_tdp: dict[str, Any] = {"protocol_version": manifest.protocol_version}
    if manifest.generated_at:
        x_tdp["generated_at"] = manifest.generated_at
    given = {"version": scenario.version, "base_url": scenario.base_url}
    given = {k: v for k, v in given.items() if v}
    if scenario.extra:
        given["extra"] = scenario.extra
    if given:
        x_tdp["scenario"] = given
    if manifest.categories:
        x_tdp["categories"] = [_category_json(c) for c in manifest.categories]
    extra = {**manifest.extensions, **manifest.extra}
    if extra:
        x_tdp["extra"] = extra
    document = {
        "atip": {"version": "0.6"},
        "name": scenario.name,
        "version": scenario.version or "0.0.0",
        "description": scenario.description
        or f"Tools of the {scenario.name} scenario (Tool Discovery Protocol)",
        "commands": commands,
        "x-tdp": x_tdp,
    }
    return from_dict(document)


def _category_json(category: Category) -> dict[str, Any]:
    out: dict[str, Any] = {"id": category.id}
    for key in ("name", "description", "icon"):
        if getattr(category, key):
            out[key] = getattr(category, key)
    if category.extra:
        out["extra"] = category.extra
    return out


def _command(tool: ToolDefinition) -> dict[str, Any]:
    from atipkit.bridge.safety import suffix

    meta = tool.metadata
    atip = tool.extensions.get("x-atip")
    stated = isinstance(atip, dict) and isinstance(atip.get("effects"), dict)
    description = tool.description
    if stated:
        effects = atip_effects(atip["effects"], ["x-atip", "effects"])  # type: ignore[index]
        tail = suffix(effects)
        if tail and description.endswith(tail):  # the bridge's suffix: compiling adds it again
            description = description[: -len(tail)].rstrip()
        effects_json = _effects_json(effects)
    else:
        effects_json = {"idempotent": meta.idempotent}
        if meta.timeout_seconds:
            effects_json["duration"] = {"timeout": f"{meta.timeout_seconds}s"}
        if meta.cost_estimate in ATIP_COST_ESTIMATES:
            effects_json["cost"] = {"estimate": meta.cost_estimate}
    x_meta: dict[str, Any] = {
        "enabled_by_default": meta.enabled_by_default,
        "requires_approval": meta.requires_approval,
        "long_running": meta.long_running,
    }
    if meta.timeout_seconds and stated:
        x_meta["timeout_seconds"] = meta.timeout_seconds
    if meta.cost_estimate and (stated or meta.cost_estimate not in ATIP_COST_ESTIMATES):
        x_meta["cost_estimate"] = meta.cost_estimate
    if meta.rate_limit_per_minute:
        x_meta["rate_limit_per_minute"] = meta.rate_limit_per_minute
    if meta.tags:
        x_meta["tags"] = meta.tags
    if meta.examples:
        x_meta["examples"] = [_example_json(e) for e in meta.examples]
    if meta.extra:
        x_meta["extra"] = meta.extra
    x_tdp: dict[str, Any] = {"name": tool.name}
    if tool.category:
        x_tdp["category"] = tool.category
    x_tdp["metadata"] = x_meta
    options, leftover = _options(tool.parameters)
    if leftover:
        x_tdp["parameters"] = leftover
    extra = {**tool.extensions, **tool.extra}
    if extra:
        x_tdp["extra"] = extra
    command: dict[str, Any] = {"description": description}
    if options:
        command["options"] = options
    command["effects"] = effects_json
    command["x-tdp"] = x_tdp
    return command


def _example_json(example: Example) -> dict[str, Any]:
    out: dict[str, Any] = {"description": example.description, "input": example.input}
    if example.extra:
        out["extra"] = example.extra
    return out


def _options(parameters: dict[str, Any]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
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
        atip_type = _FORMATS.get(str(schema.get("format", "")), "string")
        if atip_type != "string":
            expressed.add("format")
        elif isinstance(enum, list) and enum and all(isinstance(v, str) for v in enum):
            atip_type = "enum"
    elif kind in ("integer", "number", "boolean", "array"):
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


# -- fetching ---------------------------------------------------------------------------------

_cache: dict[str, tuple[float, Manifest]] = {}
_cache_lock = threading.Lock()
_MAX_AGE = re.compile(r"(?:^|,)\s*max-age\s*=\s*\"?([0-9]+)\"?\s*(?:,|$)", re.IGNORECASE)


def manifest_url(url: str) -> str:
    """The manifest's address: a base URL (no path, or `/`) gets `/api/v1/tools`; any
    other URL is taken as the manifest's own. Raises `ValueError` for anything but
    http and https."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    if parts.scheme.lower() not in ("http", "https") or not parts.netloc:
        raise ValueError(f"{url}: expected an http or https URL")
    if parts.path in ("", "/"):
        return urlunsplit(parts._replace(path=ENDPOINT))
    return url


def clear_cache() -> None:
    """Forget every manifest `fetch` remembers."""
    with _cache_lock:
        _cache.clear()


def fetch(
    url: str,
    *,
    timeout: float = 10.0,
    refresh: bool = False,
    max_bytes: int = _jsontext.MAX_DOCUMENT_BYTES,
) -> Manifest:
    """GET a scenario's manifest (`manifest_url(url)`) and parse it.

    Caching as the spec asks of consumers: a manifest is reused in this process for the
    response's `Cache-Control: max-age`, or 60 seconds when it states none; `no-store`
    and `no-cache` are never reused; `refresh=True` asks again. `timeout` bounds the
    whole exchange.

    Raises `ValueError` for a URL that is not http(s), `NetworkError` when the server
    cannot be reached or answers too slowly, `ManifestStatusError` for a status other
    than 200 (with the `message` of a JSON error body), `ResponseTooLarge` past
    `max_bytes`, and what `parse` raises for a body that is not a manifest."""
    from atipkit._http import Fetcher

    target = manifest_url(url)
    now = time.monotonic()
    if not refresh:
        with _cache_lock:
            hit = _cache.get(target)
        if hit is not None and hit[0] > now:
            return hit[1]
    with Fetcher(connect_timeout=timeout, read_timeout=timeout, deadline=timeout) as client:
        response = client.get(target, max_bytes=max_bytes, headers={"Accept": "application/json"})
    if response.status != 200:
        raise ManifestStatusError(response.url, response.status, _error_detail(response.content))
    content_type = response.headers.get("content-type", "")
    try:
        parsed = parse(response.content, source=response.url)
    except MalformedJSON as exc:
        problem = exc.problems[0]
        said = f" (Content-Type: {content_type})" if content_type else ""
        reason = f"not JSON{said}: {problem.message}"
        raise ManifestError([error(problem.code, reason, problem.location)], response.url) from None
    ttl = _ttl(response.headers.get("cache-control", ""))
    if ttl > 0:
        with _cache_lock:
            _cache[target] = (now + ttl, parsed)
    return parsed


def _ttl(cache_control: str) -> float:
    directives = cache_control.lower()
    if "no-store" in directives or "no-cache" in directives:
        return 0.0
    match = _MAX_AGE.search(cache_control)
    return float(match.group(1)) if match else DEFAULT_TTL


def _error_detail(content: bytes) -> str:
    """The `message` of a JSON error body (ours, and many servers', say why), cut short."""
    try:
        body = _jsontext.decode(content[:65536])
    except DocumentError:
        return ""
    message = body.get("message") if isinstance(body, dict) else None
    return " ".join(str(message).split())[:300] if message else ""
